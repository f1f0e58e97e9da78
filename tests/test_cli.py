"""The command line as a user runs it: exit codes, formats, fix safety and faithful writes."""

import json
import os
import stat
from pathlib import Path

import pytest


def test_version(cli):
    proc = cli("--version", check=0)
    assert "neuron-migrator 0.1.0" in proc.stdout


def test_scan_exit_codes_follow_fail_on(cli, tmp_path):
    (tmp_path / "clean.py").write_text("import torch\nx = torch.ones(2)\n")
    (tmp_path / "warn.py").write_text("import torch\ntorch.cuda.empty_cache()\n")
    cli("scan", tmp_path / "clean.py", check=0)
    cli("scan", tmp_path / "warn.py", check=0)  # a warning is below the default --fail-on error
    cli("scan", tmp_path / "warn.py", "--fail-on", "warning", check=1)
    (tmp_path / "err.py").write_text("import torch\nx.cuda()\n")
    cli("scan", tmp_path, check=1)
    cli("scan", tmp_path, "--fail-on", "never", check=0)


@pytest.mark.parametrize("args", [["scan", "missing_dir"], ["scan", ".", "--target", "tpu"], ["scan", ".", "--format", "xml"],
                                  ["scan", ".", "--fail-on", "sometimes"], ["rules", "NRN999"], ["frobnicate"]])
def test_usage_errors_exit_2(cli, args):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr


def test_text_output_groups_by_file_and_summarises(cli, tmp_path):
    (tmp_path / "a.py").write_text("import torch\nx.cuda()\ntorch.cuda.synchronize()\n")
    out = cli("scan", tmp_path / "a.py", check=1).stdout
    assert f"{tmp_path}/a.py:2:1 NRN101 [*] `.cuda()`" in out
    assert "(error)" in out
    assert out.strip().splitlines()[-1].startswith("Found 2 findings (2 error) in 1 file,")


def test_json_output_has_the_documented_fields(cli, tmp_path):
    (tmp_path / "a.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    data = json.loads(cli("scan", tmp_path, "--format", "json", check=1).stdout)
    assert len(data) == 1
    required = {"rule_id", "rule_name", "category", "severity", "path", "line", "column", "end_line", "end_column",
                "message", "fixable", "fix_safety"}
    assert required <= set(data[0])
    assert (data[0]["rule_id"], data[0]["category"], data[0]["line"], data[0]["fixable"], data[0]["fix_safety"]) == (
        "NRN301", "precision", 2, True, "safe")


def test_rules_lists_and_explains(cli):
    listing = cli("rules", check=0).stdout
    assert "NRN101" in listing and "tensor-cuda-method" in listing
    shown = cli("rules", "nrn401", check=0).stdout
    assert "Why is this bad?" in shown and "References" in shown and "https://" in shown


def test_fix_prints_a_diff_and_writes_nothing_without_write(cli, tmp_path):
    src = "import torch\nx = torch.ones(2).cuda()\n"
    path = tmp_path / "a.py"
    path.write_text(src)
    proc = cli("fix", path, check=1)
    assert "-x = torch.ones(2).cuda()" in proc.stdout and "+x = torch.ones(2).to(DEVICE)" in proc.stdout
    assert path.read_text() == src


def test_fix_write_keeps_encoding_bom_newlines_and_mode_and_is_idempotent(cli, tmp_path):
    path = tmp_path / "crlf.py"
    original = "\ufeff# -*- coding: utf-8 -*-\r\nimport torch\r\nname = 'naïve'\r\nx = torch.zeros(1).cuda()\r\n"
    path.write_bytes(original.encode("utf-8"))
    os.chmod(path, 0o754)
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\nimport torch\ns = 'é'\ntorch.cuda.synchronize()\n".encode("latin-1"))
    cli("fix", tmp_path, "--write", check=0)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert "naïve" in data.decode("utf-8-sig") and ".to(DEVICE)" in data.decode("utf-8-sig")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o754
    assert "é" in latin.read_bytes().decode("latin-1") and b"torch.accelerator.synchronize" in latin.read_bytes()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    proc = cli("fix", tmp_path, "--write", check=0)
    assert "0 fixed" in proc.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_unsafe_fixes_only_with_the_flag(cli, tmp_path):
    path = tmp_path / "seed.py"
    path.write_text("import torch\ntorch.cuda.manual_seed_all(1)\n")
    proc = cli("fix", path, "--write", check=0)
    assert "unsafe fix available (Seed every device with `torch.manual_seed()`): rerun with --unsafe-fixes" in proc.stderr
    assert "manual_seed_all" in path.read_text()
    cli("fix", path, "--write", "--unsafe-fixes", check=0)
    assert path.read_text() == "import torch\ntorch.manual_seed(1)\n"


def test_fix_targets_neuron_and_xla(cli, tmp_path):
    path = tmp_path / "d.py"
    path.write_text("import torch.distributed as dist\ndist.init_process_group('nccl')\nx = y.cuda()\n")
    out = cli("fix", path, "--target", "neuron", check=1).stdout
    assert "+dist.init_process_group(\"neuron\")" in out and '+x = y.to("neuron")' in out
    out = cli("fix", path, "--target", "xla", check=1).stdout
    assert "+import torch_xla.distributed.xla_backend" in out and '+dist.init_process_group("xla")' in out
    assert "+x = y.to(torch_xla.device())" in out


def test_unparseable_file_is_reported_and_left_alone(cli, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x.cuda(\n")
    good = tmp_path / "good.py"
    good.write_text("import torch\nx = y.cuda()\n")
    proc = cli("fix", tmp_path, "--write")
    assert proc.returncode == 2
    assert "bad.py: not changed" in proc.stderr
    assert bad.read_text() == "x.cuda(\n" and ".to(DEVICE)" in good.read_text()


def test_changed_on_disk_is_not_overwritten(tmp_path, monkeypatch):
    from migrator import api

    path = tmp_path / "a.py"
    path.write_text("import torch\nx = y.cuda()\n")
    real = api.fix_source

    def edit_meanwhile(*args, **kwargs):
        outcome = real(*args, **kwargs)
        path.write_text("# edited by someone else\n")
        return outcome

    monkeypatch.setattr(api, "fix_source", edit_meanwhile)
    (result,) = api.fix_paths([path], write=True)
    assert not result.written and "changed on disk" in result.error
    assert path.read_text() == "# edited by someone else\n"


def test_neuron_fix_inside_an_f_string_stays_valid_python(cli, tmp_path):
    path = tmp_path / "f.py"
    path.write_text('import torch\nprint(f"{x.cuda()}")\n')
    cli("fix", path, "--target", "neuron", "--write", check=0)
    text = path.read_text()
    assert text == "import torch\nprint(f\"{x.to('neuron')}\")\n"
    compile(text, "f.py", "exec")


def test_fix_skips_binary_files_that_scan_skips(cli, tmp_path):
    (tmp_path / "garbage.py").write_bytes(bytes(range(256)) * 2)
    (tmp_path / "ok.py").write_text("import torch\nx = y.cuda()\n")
    proc = cli("fix", tmp_path, "--write", check=0)
    assert "1 fixed, 0 left for a person, 0 failed." in proc.stderr


def test_fix_ends_with_what_was_fixed_left_and_failed(cli, tmp_path):
    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(2).cuda()\ntorch.backends.cudnn.benchmark = True\n")
    (tmp_path / "broken.ipynb").write_text("{ not json")
    proc = cli("fix", tmp_path, "--write", check=2)  # a file that cannot be fixed is a tool error
    err = proc.stderr
    assert "train.py:2:5 NRN101 [safe] Replace `.cuda()`" in err
    assert "Left for a person:" in err and "NRN210" in err and "[no automatic fix: needs a person]" in err
    assert "Failed (file left unchanged):" in err and "broken.ipynb" in err
    row = next(line for line in err.splitlines() if line.startswith("NRN101"))
    assert [c.strip() for c in row.split("│")][-2:] == ["1", "0"]  # fixed, left for a person
    assert "1 fixed, 1 left for a person, 1 failed." in err
    assert (tmp_path / "broken.ipynb").read_text() == "{ not json"


def test_two_text_fixes_on_one_line_compose_and_finish_in_one_run(cli, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu\nRUN export CUDA_VISIBLE_DEVICES=1 && nvidia-smi\n")
    (tmp_path / "requirements.txt").write_text("torch==2.4.0+cu121 --index-url https://download.pytorch.org/whl/cu121\n")
    (tmp_path / "run.sh").write_text("pip install torch==2.4.0+cu121 torchvision==0.19.0+cu121\nX=$(nvidia-smi)\n")
    cli("fix", tmp_path, "--write", "--unsafe-fixes", check=0)
    # portable: the same image still lists GPUs on a GPU host
    assert (tmp_path / "Dockerfile").read_text() == "FROM ubuntu\nRUN export NEURON_RT_VISIBLE_CORES=1 && if command -v neuron-ls >/dev/null 2>&1; then neuron-ls; else nvidia-smi; fi\n"
    assert "torch==2.4.0 --index-url https://download.pytorch.org/whl/cpu" in (tmp_path / "requirements.txt").read_text().splitlines()
    assert (tmp_path / "run.sh").read_text() == "pip install torch==2.4.0 torchvision==0.19.0\nX=$(nvidia-smi)\n"  # captured output: left
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert "0 fixed" in cli("fix", tmp_path, "--write", "--unsafe-fixes", check=0).stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_rewritten_device_choices_run_and_never_shadow_user_names(cli, tmp_path):
    import subprocess
    import sys

    path = tmp_path / "dev.py"
    path.write_text(
        "import torch\n"
        "from os import sep as DEVICE\n"
        "HostEvent = None\n"
        "rank = 0\n"
        "dev = torch.device('cuda', rank)\n"
        "ref = torch.device('cuda:0')\n"
        "y = torch.zeros(2).cuda(ref)\n"
        "z = torch.zeros(2).cuda('cuda:0')\n"
        "start = torch.cuda.Event(enable_timing=True)\n"
        "start.record()\n"
        "print(dev.type, y.device.type, z.device.type, DEVICE, HostEvent)\n")
    cli("fix", path, "--write", check=0)
    text = path.read_text()
    assert "from os import sep as DEVICE" in text and "NRN_DEVICE = " in text and "class NrnHostEvent" in text
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cpu", "cpu", "cpu", "/", "None"]


def test_neuron_fix_inside_single_quoted_f_string_compiles(cli, tmp_path):
    path = tmp_path / "f.py"
    path.write_text("import torch\nx = torch.zeros(1)\nprint(f'using {torch.device(\"cuda\")} {x.to(\"cuda\").device}')\n")
    cli("fix", path, "--write", "--target", "neuron", check=0)
    text = path.read_text()
    compile(text, "f.py", "exec")
    assert text.count('"neuron"') == 2


def test_fix_through_a_symlink_rewrites_the_target_and_keeps_the_link(cli, tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    real = tmp_path / "src" / "pkg" / "real.py"
    real.write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "src" / "link.py").symlink_to(real)  # walked before pkg/: written through the link
    cli("fix", tmp_path / "src", "--write", check=0)
    assert (tmp_path / "src" / "link.py").is_symlink()
    assert "torch.accelerator.synchronize()" in real.read_text()


def test_notebook_cell_magics_and_continuation_lines(cli, tmp_path):
    import json

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "%%bash\necho hi\n"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import torch\nmsg = ('value: %d'\n       % 3)\nok = (1\n      != 2)\ne = torch.cuda.Event(enable_timing=True)\n"},
    ]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    cli("fix", path, "--write", check=0)
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["source"] == "%%bash\necho hi\n"
    code = cells[1]["source"]
    assert "% 3)" in code and "!= 2)" in code and "class HostEvent" in code and "torch.cuda" not in code
    compile(code, "cell", "exec")


def test_a_crash_in_one_files_rewrite_leaves_it_untouched_and_the_run_goes_on(tmp_path, monkeypatch):
    from migrator import api

    (tmp_path / "a.py").write_text("import torch\nx = y.cuda()\n")
    (tmp_path / "b.py").write_text("import torch\nz = w.cuda()\n")
    real = api.fix_source

    def crash_on_a(data, path, *args, **kwargs):
        if path.endswith("a.py"):
            raise RecursionError("simulated crash inside a codemod")
        return real(data, path, *args, **kwargs)

    monkeypatch.setattr(api, "fix_source", crash_on_a)
    results = {Path(r.path).name: r for r in api.fix_paths([tmp_path], write=True)}
    assert "internal error while fixing" in results["a.py"].error and not results["a.py"].written
    assert (tmp_path / "a.py").read_text() == "import torch\nx = y.cuda()\n"
    assert results["b.py"].written and ".to(DEVICE)" in (tmp_path / "b.py").read_text()


def test_a_fix_never_deletes_a_comment_inside_the_rewritten_expression(cli, tmp_path):
    path = tmp_path / "c.py"
    source = "import torch\ny = (torch.zeros(2)  # keep this note\n     .cuda())\nz = torch.ones(1).cuda()\n"
    path.write_text(source)
    proc = cli("fix", path, "--write", check=0)
    text = path.read_text()
    assert "# keep this note" in text and "z = torch.ones(1).to(DEVICE)" in text
    assert "comment" in proc.stderr  # the first one is left for a person, with the reason


def test_notebook_pip_magics_are_scanned_and_fixed_as_shell(cli, tmp_path):
    import json

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "%pip install torch==2.4.0+cu121\n!nvidia-smi\nimport torch\n"}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    found = {(f["rule_id"], f["line"]) for f in json.loads(cli("scan", path, "--format", "json", "--exit-zero").stdout)}
    assert {("NRN802", 1), ("NRN702", 2)} <= found
    cli("fix", path, "--write", "--unsafe-fixes", check=0)
    assert json.loads(path.read_text())["cells"][0]["source"] == "%pip install torch==2.4.0\n!if command -v neuron-ls >/dev/null 2>&1; then neuron-ls; else nvidia-smi; fi\nimport torch\n"


def test_event_fix_needs_the_projects_pytorch_to_have_torch_event(cli, tmp_path):
    from migrator.api import ScanOptions, fix_source

    source = "import torch\nstart = torch.cuda.Event(enable_timing=True)\n"
    outcome = fix_source(source, "e.py", "python", ScanOptions(torch_version="2.4"), False)
    assert outcome.source == source
    # The event has no rewrite here, so the file keeps a CUDA-only call and is left whole.
    assert [why for f, why in outcome.manual if f.rule_id == "NRN208"] == [
        "blocks this file, which would still need CUDA (pass --partial to rewrite the rest): needs PyTorch >= 2.9; "
        "the project runs PyTorch 2.4 (the torch-version setting, else the project's own torch== pin)"]
    for version in ("2.13", None):
        assert "torch.Event(enable_timing=True)" in fix_source(source, "e.py", "python", ScanOptions(torch_version=version)).source
    # The project's own setting decides, not the PyTorch installed beside the tool (2.13 here).
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrator]\ntorch-version = "2.4"\n')
    (tmp_path / "e.py").write_text(source)
    proc = cli("fix", "e.py", "--write", cwd=tmp_path)
    assert (tmp_path / "e.py").read_text() == source and "the project runs PyTorch 2.4" in proc.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrator]\ntorch-version = "two"\n')
    bad = cli("fix", "e.py", cwd=tmp_path, check=2)
    assert "torch-version" in bad.stderr


def test_replaced_cuda_imports_are_dropped_only_from_scripts(tmp_path):
    from migrator.api import ScanOptions, fix_source

    body = "import torch\nfrom torch.cuda.amp import autocast, custom_fwd\nwith autocast():\n    pass\n"
    script = body + 'if __name__ == "__main__":\n    pass\n'
    fixed = fix_source(script, "train.py", "python", ScanOptions(), False).source
    assert "from torch.cuda.amp import custom_fwd\n" in fixed and "autocast," not in fixed
    for path in ("pkg/common.py", "pkg/__init__.py"):  # others may import `autocast` from here
        kept = fix_source(body, path, "python", ScanOptions(), False).source
        assert "from torch.cuda.amp import autocast, custom_fwd\n" in kept


def test_notebook_cells_keep_crlf_line_endings(cli, tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import torch\r\n", "x = torch.ones(1).cuda()\r\n"]}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    cli("fix", path, "--write", check=0)
    source = "".join(json.loads(path.read_text())["cells"][0]["source"])
    assert ".to(DEVICE)" in source and source.count("\r\n") == source.count("\n") == 3


def _vendored_torch(root: Path) -> Path:
    """A repository that vendors a copy of PyTorch (third_party/torch, a top-level package)
    beside its own training script, and has a subpackage of its own named `torch`."""
    torch_pkg = root / "third_party" / "torch"
    (torch_pkg / "cuda").mkdir(parents=True)
    (torch_pkg / "__init__.py").write_text("")
    (torch_pkg / "cuda" / "__init__.py").write_text("import torch\n\ndef sync():\n    torch.cuda.synchronize()\n")
    (torch_pkg / "include").mkdir()
    (torch_pkg / "include" / "kernel.cuh").write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    mine = root / "mylib" / "torch"
    mine.mkdir(parents=True)
    (root / "mylib" / "__init__.py").write_text("")
    (mine / "__init__.py").write_text("import torch\n\ndef sync():\n    torch.cuda.synchronize()\n")
    (root / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    return torch_pkg


def test_pytorch_own_source_is_one_info_finding_and_scanned_on_request(cli, tmp_path):
    torch_pkg = _vendored_torch(tmp_path)
    data = json.loads(cli("scan", tmp_path, "--format", "json", "--fail-on", "never", check=0).stdout)
    framework = [f for f in data if f["rule_id"] == "NRN002"]
    assert len(framework) == 1 and framework[0]["severity"] == "info"
    assert framework[0]["path"] == (torch_pkg / "__init__.py").as_posix()
    assert "3 files in package `torch`" in framework[0]["message"]
    # The text summary says the package was left out (new-user helper: "1 finding in 0 files").
    alone = cli("scan", torch_pkg, check=0).stdout
    assert "in 0 files" in alone and "(1 package of PyTorch's own source left out: NRN002)" in alone
    # Nothing from inside the vendored copy; the team's own code (a subpackage called torch too) is scanned.
    assert not any("third_party" in f["path"] for f in data if f["rule_id"] != "NRN002")
    assert {f["path"].split(str(tmp_path) + "/")[1] for f in data if f["rule_id"] != "NRN002"} == {
        "train.py", "mylib/torch/__init__.py"}
    scanned = json.loads(cli("scan", tmp_path, "--format", "json", "--fail-on", "never", "--framework-source", check=0).stdout)
    assert not any(f["rule_id"] == "NRN002" for f in scanned)
    inside = {f["path"].rsplit("/", 1)[1] for f in scanned if "third_party" in f["path"]}
    assert inside == {"__init__.py", "kernel.cuh"}
    # The configuration says the same as the flag.
    (tmp_path / "pyproject.toml").write_text("[tool.neuron-migrator]\nframework-source = true\n")
    configured = json.loads(cli("scan", tmp_path, "--format", "json", "--fail-on", "never", check=0).stdout)
    assert sorted(f["path"] for f in configured) == sorted(f["path"] for f in scanned)


def test_fix_leaves_pytorch_own_source_alone(cli, tmp_path):
    torch_pkg = _vendored_torch(tmp_path)
    before = (torch_pkg / "cuda" / "__init__.py").read_text()
    cli("fix", tmp_path, "--write", check=0)
    assert (torch_pkg / "cuda" / "__init__.py").read_text() == before
    assert "torch.accelerator" in (tmp_path / "mylib" / "torch" / "__init__.py").read_text()
    cli("fix", tmp_path, "--write", "--framework-source", check=0)
    assert "torch.accelerator" in (torch_pkg / "cuda" / "__init__.py").read_text()


def test_notebook_cells_that_mix_line_endings_keep_each_lines_own(cli, tmp_path):
    """Hostile helper, session 19: a cell of `\\n` and `\\r\\n` lines came back all `\\r\\n`,
    lines the fix never touched too."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import torch\n", "y = 2\r\n", "x = torch.ones(1).cuda()\r\n", "z = 3\n", "w = 4"]}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    cli("fix", path, "--write", check=0)
    lines = json.loads(path.read_text())["cells"][0]["source"]
    assert "y = 2\r\n" in lines and "z = 3\n" in lines and lines[-1] == "w = 4" and lines[0] == "import torch\n"
    assert any(".to(DEVICE)" in line and line.endswith("\r\n") for line in lines)
