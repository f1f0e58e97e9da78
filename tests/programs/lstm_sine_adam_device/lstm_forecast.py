"""
Sine-wave forecasting with nn.LSTM in float64 (double precision), trained with Adam.

    python lstm_forecast.py                 # on cuda:0
    python lstm_forecast.py --device cpu
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def build_dataset(n_series=16, length=64, period=20.0, seed=2):
    rng = np.random.RandomState(seed)
    offsets = rng.randint(-4 * int(period), 4 * int(period), n_series).reshape(n_series, 1)
    t = np.arange(length)[None, :] + offsets
    amp = 1.0 + 0.2 * rng.rand(n_series, 1)
    return (amp * np.sin(t / period)).astype(np.float64)


class Forecaster(nn.Module):
    def __init__(self, hidden=32, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, future=0):
        out, state = self.lstm(x.unsqueeze(-1))
        y = self.head(out).squeeze(-1)
        preds = [y]
        last = y[:, -1:]
        for _ in range(future):
            out, state = self.lstm(last.unsqueeze(-1), state)
            last = self.head(out).squeeze(-1)
            preds.append(last)
        return torch.cat(preds, dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=2e-2)
    parser.add_argument("--future", type=int, default=24)
    parser.add_argument("--out-dir", type=str, default=".")
    args = parser.parse_args()

    device = torch.device(args.device)
    np.random.seed(0)
    torch.manual_seed(0)
    if device.type == "cuda":
        torch.cuda.manual_seed(0)
        torch.backends.cudnn.deterministic = True

    data = build_dataset()
    train_x = torch.from_numpy(data[4:, :-1]).to(device)
    train_y = torch.from_numpy(data[4:, 1:]).to(device)
    test_x = torch.from_numpy(data[:4, :-1]).to(device)
    test_y = torch.from_numpy(data[:4, 1:]).to(device)
    assert train_x.dtype == torch.float64

    model = Forecaster().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.MSELoss()

    history = []
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(train_x), train_y)
        loss.backward()
        optimizer.step()
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            model.eval()
            with torch.no_grad():
                test_loss = criterion(model(test_x), test_y).item()
            history.append(round(test_loss, 8))
            print(f"epoch {epoch:3d} train {loss.item():.6f} test {test_loss:.6f}")

    model.eval()
    with torch.no_grad():
        pred = model(test_x, future=args.future).cpu().numpy()
    np.save(os.path.join(args.out_dir, "forecast.npy"), pred)
    torch.save(model.state_dict(), os.path.join(args.out_dir, "lstm_forecaster.pt"))
    if device.type == "cuda":
        print(f"max memory allocated: {torch.cuda.max_memory_allocated(device) / 2**20:.2f} MiB")
    print("RESULT " + json.dumps({"test_loss": history, "forecast_tail": [round(float(v), 6) for v in pred[0, -4:]]}))


if __name__ == "__main__":
    main()
