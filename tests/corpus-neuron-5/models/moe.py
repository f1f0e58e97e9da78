# target: neuron
"""Sparse mixture-of-experts block (token-choice top-k routing), as in Mixtral."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, ffn: int, num_experts: int = 8, top_k: int = 2):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(hidden, ffn) for _ in range(num_experts)])

    def forward(self, hidden_states: torch.Tensor):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device
        )
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)

        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])  # expect: compilation
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)  # may: compilation
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]  # may: compilation
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


class CapacityMoeBlock(SparseMoeBlock):
    """Drops tokens above capacity; the GPU version compacts the kept tokens."""

    def __init__(self, hidden: int, ffn: int, num_experts: int = 8, top_k: int = 1, capacity_factor: float = 1.25):
        super().__init__(hidden, ffn, num_experts, top_k)
        self.capacity_factor = capacity_factor

    def forward(self, x: torch.Tensor):
        b, s, h = x.shape
        x = x.view(-1, h)
        probs = F.softmax(self.gate(x), dim=-1)
        gate_val, expert = probs.max(dim=-1)
        capacity = int(self.capacity_factor * x.size(0) / self.num_experts)
        one_hot = F.one_hot(expert, self.num_experts)
        position = torch.cumsum(one_hot, dim=0) * one_hot
        overflow = (position > capacity).any(dim=-1)
        kept = x[~overflow]  # expect: compilation
        kept_expert = expert[~overflow]  # expect: compilation
        active = torch.bincount(kept_expert, minlength=self.num_experts).nonzero().squeeze(-1)  # expect: compilation
        out = torch.zeros_like(x)
        for e in active.tolist():
            sel = kept_expert == e
            out[~overflow] += torch.zeros_like(kept).masked_scatter(sel[:, None], self.experts[e](kept[sel]))  # expect: compilation
        token_ids = torch.arange(x.size(0), device=x.device).repeat_interleave(self.top_k)  # ok
        dense_dispatch = one_hot.to(x.dtype) * (~overflow).unsqueeze(-1).to(x.dtype)  # ok
        return (out * gate_val[:, None]).view(b, s, h), token_ids, dense_dispatch
