"""
Small tabular regression benchmark that runs wherever it lands:
CUDA if present, then Apple MPS, otherwise CPU.
"""
import json
import time

import numpy as np
import torch
import torch.nn as nn

SEED = 2024
EPOCHS = 4
BATCH_SIZE = 64
LR = 3e-3


def get_device():
    if torch.cuda.is_available():
        device = "cuda"
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        device = "mps"
    else:
        device = "cpu"
    return device


def make_data(n=2048, d=16):
    rng = np.random.RandomState(SEED)
    X = rng.randn(n, d).astype(np.float32)
    w = rng.randn(d, 1).astype(np.float32)
    y = np.tanh(X @ w) + 0.1 * np.sin(3 * X[:, :1]) + 0.05 * rng.randn(n, 1).astype(np.float32)
    return torch.from_numpy(X), torch.from_numpy(y.astype(np.float32))


class MLP(nn.Module):
    def __init__(self, d_in=16, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def main():
    device = get_device()
    device_type = "cuda" if "cuda" in device else "cpu"
    print(f"Using device: {device}")
    if device == "cuda":
        print(torch.cuda.get_device_name(0))
        torch.backends.cudnn.benchmark = True

    torch.manual_seed(SEED)
    torch.cuda.manual_seed(SEED)
    np.random.seed(SEED)

    X, y = make_data()
    n_train = 1792
    train_ds = torch.utils.data.TensorDataset(X[:n_train], y[:n_train])
    val_X, val_y = X[n_train:].to(device), y[n_train:].to(device)
    loader = torch.utils.data.DataLoader(train_ds, batch_size=BATCH_SIZE, shuffle=True,
                                         pin_memory=(device == "cuda"),
                                         generator=torch.Generator().manual_seed(SEED))

    model = MLP().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    # fp16 + GradScaler on GPU, plain fp32 elsewhere
    use_amp = device_type == "cuda"
    amp_dtype = torch.float16
    scaler = torch.amp.GradScaler(device_type, enabled=use_amp)
    loss_fn = nn.MSELoss()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    history = []
    for epoch in range(EPOCHS):
        model.train()
        running, seen = 0.0, 0
        for xb, yb in loader:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device_type, dtype=amp_dtype, enabled=use_amp):
                pred = model(xb)
                loss = loss_fn(pred.float(), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            running += loss.item() * xb.size(0)
            seen += xb.size(0)
        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(val_X), val_y).item()
        history.append(round(val_loss, 6))
        print(f"epoch {epoch}: train {running / seen:.5f} val {val_loss:.5f}")

    if device == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    print(f"training took {elapsed:.2f}s")
    if device == "cuda":
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 1e6:.2f} MB, "
              f"currently allocated: {torch.cuda.memory_allocated() / 1e6:.2f} MB")

    with torch.no_grad():
        sample = model(val_X[:4]).squeeze(1).float().cpu().tolist()
    print("RESULT " + json.dumps({"val_loss": history, "pred": [round(v, 5) for v in sample]}))


if __name__ == "__main__":
    main()
