import subprocess

import numpy as np
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # expect: device
STATS = {"cuda": 0, "cpu": 0}  # ok


def gpu_name():
    return torch.cuda.get_device_name(0)  # expect: runtime


def report():
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)  # expect: environment
    return out.stdout


def predict(model, batch):
    with torch.inference_mode():
        x = torch.from_numpy(np.asarray(batch, dtype=np.float32)).to(DEVICE)  # ok
        if x.device.type == "cuda":  # expect: device
            x = x.half()  # ok
        return model(x).float()  # ok


def precise(x):
    return x.to(torch.float64)  # expect: precision


def spectrum(x):
    return torch.view_as_complex(x)  # expect: precision
