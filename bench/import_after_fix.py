"""Do real packages still import after `fix`? With torch installed, and without it where it is optional.

    .venv-test/bin/python bench/import_after_fix.py [--unsafe-fixes] [--packages transformers diffusers]

A rewrite must not break a program that ran before. Libraries such as transformers import torch
only where it is available (`if is_torch_available(): import torch`, inside functions), so a
module-level `import torch`, `DEVICE = torch...` or helper added by `fix` breaks them on a
machine without torch, and one that reads `torch` where it is not bound breaks them everywhere.

The script builds `bench/.venv-import` (gitignored) with the packages and their dependencies
(torch 2.13.0 CPU; timm is left out: its torchvision needs the CUDA build of torch), copies each
installed package to a scratch folder, runs `fix --write` on the copy with this Python (the test
environment), and imports every module the fix changed, from the original and from the fixed
copy, each in a fresh interpreter of the import environment: once as installed and once with
`import torch` made to fail (`sys.modules["torch"] = None`). It prints per package how many
modules changed, how many import in both, and every module that imported before the fix and
not after (exit 1 if there is one). Nothing of the scanned tree runs except these imports of the
pinned, installed packages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV = HERE / ".venv-import"
PINS = {"transformers": "transformers==5.23.0", "diffusers": "diffusers==0.42.1"}
EXTRA = ["torch==2.13.0", "accelerate==1.15.0"]
IMPORT = r'''
import importlib, json, os, sys, warnings
warnings.simplefilter("ignore")
if os.environ.get("NRN_NO_TORCH"):
    sys.modules["torch"] = None
name = sys.argv[1]
try:
    importlib.import_module(name)
    print("NRN_RESULT" + json.dumps(None))
except BaseException as exc:
    print("NRN_RESULT" + json.dumps(f"{type(exc).__name__}: {str(exc)[:160]}"))
'''


def python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv(packages: list[str]) -> None:
    stamp = VENV / f".done-{'-'.join(sorted(packages))}"
    if stamp.exists():
        return
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *EXTRA,
                    *(PINS[p] for p in packages)], check=True)
    # torchvision, if a dependency pulled it in, is the CUDA build: it breaks `import` on CPU torch.
    subprocess.run([str(python()), "-m", "pip", "uninstall", "--quiet", "-y", "torchvision"], check=False)
    stamp.touch()


def site_packages() -> Path:
    out = subprocess.run([str(python()), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def modules_changed(original: Path, fixed: Path) -> list[str]:
    names = []
    for path in sorted(fixed.rglob("*.py")):
        before = original / path.relative_to(fixed)
        if before.exists() and before.read_bytes() != path.read_bytes():
            parts = list(path.relative_to(fixed.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join(parts))
    return names


def imports(root: Path, name: str, no_torch: bool) -> str | None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tempfile.gettempdir(), "PYTHONPATH": str(root),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if no_torch:
        env["NRN_NO_TORCH"] = "1"
    proc = subprocess.run([str(python()), "-c", IMPORT, name], cwd=root, capture_output=True, text=True, timeout=600, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("NRN_RESULT")]
    return json.loads(lines[-1][len("NRN_RESULT"):]) if lines else f"interpreter exited {proc.returncode}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", nargs="*", default=list(PINS), choices=list(PINS))
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
    args = parser.parse_args()
    ensure_venv(args.packages)
    site = site_packages()
    broken_total = 0
    with tempfile.TemporaryDirectory(prefix="nrn-import-") as scratch:
        original, fixed = Path(scratch) / "original", Path(scratch) / "fixed"
        for package in args.packages:
            for where in (original, fixed):
                shutil.copytree(site / package, where / package, ignore=shutil.ignore_patterns("__pycache__"))
        command = [sys.executable, "-m", "migrator", "fix", *args.packages, "--write"]
        if args.unsafe_fixes:
            command.append("--unsafe-fixes")
        done = subprocess.run(command, cwd=fixed, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        summary = [line for line in done.stdout.splitlines() if " fixed, " in line]
        print(f"fix {' '.join(command[3:])}: " + (summary[-1].strip() if summary else done.stderr[-500:]))
        for package in args.packages:
            changed = modules_changed(original / package, fixed / package)
            both = broken = 0
            for no_torch in (False, True):
                for name in changed:
                    before = imports(original, name, no_torch)
                    if before is not None:
                        continue
                    both += 1
                    after = imports(fixed, name, no_torch)
                    if after is not None:
                        broken += 1
                        print(f"  BROKEN {'without' if no_torch else 'with'} torch: {name}: {after}")
            broken_total += broken
            print(f"{package}: {len(changed)} modules changed by fix; {both} imports that worked before "
                  f"(with torch, and without it where it is optional); {broken} broken after the fix")
    return 1 if broken_total else 0


if __name__ == "__main__":
    sys.exit(main())
