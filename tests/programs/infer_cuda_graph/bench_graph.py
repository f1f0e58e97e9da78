"""
Eager vs. CUDA-graph inference latency for a small fp16 MLP-mixer style block stack.

    python bench_graph.py --batch-size 32 --iters 50
"""
import argparse
import json

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--tokens", type=int, default=16)
parser.add_argument("--dim", type=int, default=64)
parser.add_argument("--depth", type=int, default=3)
parser.add_argument("--warmup", type=int, default=3)
parser.add_argument("--iters", type=int, default=20)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self, tokens, dim, depth, num_classes=10):
        super().__init__()
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.blocks(x).mean(dim=1))


torch.manual_seed(args.seed)
torch.cuda.manual_seed(args.seed)
device = torch.device("cuda:0")
print(f"device: {torch.cuda.get_device_name(device)}, capability {torch.cuda.get_device_capability(device)}")

model = Mixer(args.tokens, args.dim, args.depth).eval().to(device).half()

g_cpu = torch.Generator().manual_seed(args.seed)
batches = [torch.randn(args.batch_size, args.tokens, args.dim, generator=g_cpu).half() for _ in range(4)]
static_input = torch.empty(args.batch_size, args.tokens, args.dim, device=device, dtype=torch.float16)

with torch.inference_mode():
    # warm up on a side stream, as required before capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(args.warmup):
            static_input.copy_(batches[0].to(device, non_blocking=True))
            model(static_input)
    torch.cuda.current_stream().wait_stream(s)

    # capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = model(static_input)

    # eager timing
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    x = batches[1].to(device)
    start.record()
    for _ in range(args.iters):
        eager_out = model(x)
    end.record()
    torch.cuda.synchronize()
    eager_ms = start.elapsed_time(end) / args.iters

    # graph replay timing
    static_input.copy_(x)
    start.record()
    for _ in range(args.iters):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    graph_ms = start.elapsed_time(end) / args.iters
    print(f"eager {eager_ms:.3f} ms/iter, graph {graph_ms:.3f} ms/iter, speedup {eager_ms / graph_ms:.2f}x")

    max_diff = (static_output.float() - eager_out.float()).abs().max().item()
    print(f"max |graph - eager| = {max_diff:.3e}")

    # run every batch through the graph
    checksums = []
    for b in batches:
        static_input.copy_(b.to(device, non_blocking=True))
        graph.replay()
        checksums.append(round(static_output.float().sum().item(), 3))
    torch.cuda.synchronize()

print(f"memory allocated {torch.cuda.memory_allocated(device) / 2**20:.2f} MiB")
print("RESULT " + json.dumps({"checksums": checksums,
                              "logits0": [round(v, 3) for v in static_output[0, :4].float().cpu().tolist()]}))
