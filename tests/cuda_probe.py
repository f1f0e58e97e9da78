"""The CUDA probe: run a program as if this CPU-only host had one CUDA GPU, and say where it stopped.

The Python-level queries a program asks before it touches a GPU (`torch.cuda.is_available`,
`device_count`, `is_bf16_supported`, `get_device_capability`, `torch.accelerator.*`,
`torch.distributed.is_nccl_available`, ...) are patched to describe one CUDA device. Real CUDA work
is not faked: on this CPU-only build the program fails at its first real CUDA operation ("Torch
not compiled with CUDA enabled", NCCL not built in, a dummy CUDA class). A rewrite that keeps the
GPU path reaches the same kind of failure as the original; one that broke it fails earlier, in plain
Python, or runs to the end on the CPU although a GPU was reported.

`mp.spawn(fn, nprocs=N)` runs `fn(0, ...)` in this process (the patches do not reach child
processes) and refuses `nprocs < 1`, which would train nothing. Programs meant for `torchrun` run
as rank 0 of a world of 1.

    python cuda_probe.py REPORT.json ENTRY [ARGS...]

ENTRY is a `.py` file or an `.ipynb` notebook (code cells in order, magics skipped). REPORT.json
gets {"status": "cuda" | "ok" | "error", "type": ..., "message": ..., "line": ...}.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import traceback
from types import SimpleNamespace

# Messages of failures that mean "this really needed the GPU" on a CPU-only PyTorch build.
CUDA_FAILURES = re.compile(
    r"not compiled with CUDA|CUDA support|dummy base class|_cuda_|NCCL|nccl|No CUDA GPUs|NVIDIA driver|"
    r"Cannot access accelerator device|CUDA error|cuda runtime|CUDA is not available|torch\.cuda\.|"
    r"Could not run '.*' with arguments from the 'CUDA' backend|device type cuda|support for cuda devices|CUDA",
)


class ProbeStop(Exception):
    """A run the probe refuses to call a success (for example `mp.spawn(nprocs=0)`)."""


def patch_torch():
    import torch
    import torch.distributed
    import torch.multiprocessing

    cuda = torch.device("cuda")
    props = SimpleNamespace(name="NVIDIA H100 80GB HBM3 (probe)", major=9, minor=0, total_memory=80 * 1024**3,
                            multi_processor_count=132)
    fake_cuda = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "is_bf16_supported": lambda *a, **k: True,
        "get_device_name": lambda *a, **k: props.name,
        "get_device_capability": lambda *a, **k: (9, 0),
        "get_device_properties": lambda *a, **k: props,
        "is_initialized": lambda: True,
        "get_arch_list": lambda: ["sm_90"],
    }
    for name, fake in fake_cuda.items():
        setattr(torch.cuda, name, fake)
    torch.backends.cuda.is_built = lambda: True
    fake_accelerator = {
        "is_available": lambda: True,
        "current_accelerator": lambda check_available=False: cuda,
        "device_count": lambda: 1,
        "current_device_index": lambda: 0,
        "current_device_idx": lambda: 0,
        "set_device_index": lambda device: None,
        "set_device_idx": lambda device: None,
    }
    for name, fake in fake_accelerator.items():
        setattr(torch.accelerator, name, fake)
    torch.distributed.is_nccl_available = lambda: True

    def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
        if nprocs < 1:
            raise ProbeStop(f"mp.spawn(nprocs={nprocs}): no process would run")
        fn(0, *args)

    torch.multiprocessing.spawn = spawn


def run_notebook(path: str) -> None:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        lines = [line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("!", "%")) else line
                 for line in cell.source.splitlines()]
        exec(compile("\n".join(lines), f"{path}:cell {number}", "exec"), namespace)  # noqa: S102


def classify(exc: BaseException, entry: str) -> dict:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.basename(entry).split(".")[0] in f.filename
              or f.filename.startswith(os.path.dirname(os.path.abspath(entry)))]
    line = frames[-1].lineno if frames else None
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SystemExit):
        code = exc.code
        if code in (None, 0):
            return {"status": "ok"}
        return {"status": "error", "type": "SystemExit", "message": str(code)[:500], "line": line}
    if isinstance(exc, ProbeStop):
        return {"status": "error", "type": "ProbeStop", "message": str(exc), "line": line}
    status = "cuda" if CUDA_FAILURES.search(text) else "error"
    return {"status": status, "type": type(exc).__name__, "message": str(exc)[:500], "line": line}


def main(argv: list[str]) -> int:
    report, entry, *args = argv
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    patch_torch()
    sys.argv = [entry, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(entry)))
    try:
        if entry.endswith(".ipynb"):
            run_notebook(entry)
        else:
            runpy.run_path(entry, run_name="__main__")
        result = {"status": "ok"}
    except BaseException as exc:  # noqa: BLE001 - where the program stopped is the measurement
        result = classify(exc, entry)
    with open(report, "w") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
