# Double-precision GRU on noisy sine waves, full-batch LBFGS, with a checkpoint round-trip.
# Usage:  python sine_gru.py            (GPU)
#         python sine_gru.py --no-cuda  (CPU)
import argparse
import json

import numpy as np
import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="sine GRU")
parser.add_argument("--no-cuda", action="store_true", help="train on the CPU")
parser.add_argument("--gpu-id", type=int, default=0)
parser.add_argument("--iters", type=int, default=3)
parser.add_argument("--hidden", type=int, default=24)
parser.add_argument("--ckpt", type=str, default="sine_gru.pt")
args = parser.parse_args()

use_cuda = not args.no_cuda
device = f"cuda:{args.gpu_id}" if use_cuda else "cpu"

torch.manual_seed(1)
torch.cuda.manual_seed_all(1)
if use_cuda:
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

# ---- data (numpy, float64) -------------------------------------------------
rs = np.random.RandomState(1)
t = np.linspace(0, 6 * np.pi, 72)
phase = rs.uniform(0, 2 * np.pi, size=(16, 1))
freq = rs.uniform(0.8, 1.2, size=(16, 1))
waves = np.sin(freq * t[None, :] + phase) + 0.02 * rs.randn(16, 72)
waves = waves.astype(np.float64)
x_np, y_np = waves[:, :-1, None], waves[:, 1:, None]

X = torch.from_numpy(x_np).to(device)
Y = torch.from_numpy(y_np).to(device)
X_train, Y_train, X_test, Y_test = X[4:], Y[4:], X[:4], Y[:4]


class SineGRU(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h)


model = SineGRU(args.hidden).double().to(device)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=8, history_size=10)
loss_fn = nn.MSELoss()

train_losses = []
for it in range(args.iters):
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(X_train), Y_train)
        loss.backward()
        return loss
    loss = optimizer.step(closure)
    train_losses.append(round(loss.item(), 9))
    print(f"iter {it}: loss {loss.item():.8f}")

torch.save({"model": model.state_dict(), "hidden": args.hidden}, args.ckpt)

# reload the checkpoint onto whatever device we are on now
state = torch.load(args.ckpt, map_location=device)
restored = SineGRU(state["hidden"]).double().to(device)
restored.load_state_dict(state["model"])
restored.eval()
with torch.no_grad():
    pred = restored(X_test)
    test_loss = loss_fn(pred, Y_test).item()
pred_np = pred.squeeze(-1).cpu().numpy()
assert pred_np.dtype == np.float64
np.save("gru_pred.npy", pred_np)
if use_cuda:
    torch.cuda.synchronize()
    print(f"allocated: {torch.cuda.memory_allocated() / 1024:.1f} KiB")
print("RESULT " + json.dumps({"train_loss": train_losses, "test_loss": round(test_loss, 9),
                              "pred": [round(float(v), 6) for v in pred_np[0, -3:]]}))
