"""The wheel carries rules/ and templates/: install it in a fresh venv and use it there."""

import subprocess
import sys
import zipfile

from conftest import ROOT


def test_wheel_installs_and_scans_and_generates(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, ROOT],
                   check=True, capture_output=True)
    (wheel,) = dist.glob("neuron_migrator-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "migrator/_data/rules/device/NRN101-tensor-cuda-method.yaml" in names
    assert "migrator/_data/templates/cloudformation/launch-template.yaml.j2" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    # A fresh environment with the wheel's declared dependencies only (no torch, no test tools).
    subprocess.run([venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", wheel], check=True)
    code = tmp_path / "code.py"
    code.write_text("import torch\nx = torch.ones(1).cuda()\n")
    scan = subprocess.run([venv / "bin" / "neuron-migrator", "scan", code], capture_output=True, text=True, cwd=tmp_path)
    assert scan.returncode == 1 and "NRN101" in scan.stdout
    where = subprocess.run([venv / "bin" / "python", "-c", "import migrator.core.resources as r; print(r.rules_dir())"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert "site-packages/migrator/_data/rules" in where.stdout
    gen = subprocess.run([venv / "bin" / "neuron-migrator", "generate", "launch-template", "--instance-type",
                          "trn2.48xlarge", "--region", "us-east-2", "--format", "cloudformation", "--output", tmp_path / "out"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert gen.returncode == 0, gen.stderr
    assert "InterfaceType: efa" in (tmp_path / "out" / "launch-template.cfn.yaml").read_text()
