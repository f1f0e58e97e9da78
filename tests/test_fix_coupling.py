"""What `fix` rewrites together, holds back, or leaves whole (the coupling of fixes), run as a user would.

Each test rewrites a small program and checks what a user would notice: the kind of a replaced
value, that a rewritten program runs on this CPU-only host (real PyTorch), or that a coupled
group stays as it was with a reason that names its partner.
"""

import subprocess
import sys
import textwrap

import pytest

from migrator import ScanOptions
from migrator.api import fix_source, scan_source


def fix(source, target="portable", unsafe=False, partial=False):
    return fix_source(source, "train.py", options=ScanOptions(target=target), unsafe=unsafe, partial=partial)


def run(source, tmp_path, *args):
    path = tmp_path / "prog.py"
    path.write_text(source)
    return subprocess.run([sys.executable, str(path), *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def run_without_torch(source, tmp_path):
    """Run `source` where `import torch` fails (`sys.modules["torch"] = None`)."""
    (tmp_path / "prog.py").write_text(source)
    return subprocess.run([sys.executable, "-c", "import sys, runpy; sys.modules['torch'] = None; runpy.run_path('prog.py')"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_device_held_as_text_stays_text_and_string_tests_keep_working(tmp_path):
    source = (
        "import torch\n"
        "device = 'cuda'\n"
        "device_type = 'cuda' if 'cuda' in device else 'cpu'\n"
        "config = {k: v for k, v in dict(globals()).items() if isinstance(v, (int, float, bool, str))}\n"
        "assert isinstance(device, str) and 'device' in config\n"
        "if device == 'cpu':\n"
        "    print('cpu branch', device_type)\n"
        "x = torch.ones(2).to(device)\n"
        "print('RESULT', float(x.sum()))\n"
    )
    assert run(source, tmp_path).returncode != 0  # "cuda" on a CPU-only host
    out = fix(source)
    assert "device = DEVICE.type" in out.source
    assert "device_type = torch.device(device).type" in out.source
    proc = run(out.source, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "cpu branch cpu" in proc.stdout and "RESULT 2.0" in proc.stdout


def test_an_index_stays_an_index_and_the_cpu_gets_no_index(tmp_path):
    source = (
        "import io\n"
        "import torch\n"
        "gpu_id = 0\n"
        "model = torch.nn.Linear(2, 2).to(gpu_id)\n"
        "buffer = io.BytesIO()\n"
        "torch.save(model.state_dict(), buffer)\n"
        "buffer.seek(0)\n"
        "loc = f'cuda:{gpu_id}'\n"
        "state = torch.load(buffer, map_location=loc)\n"
        "print('RESULT', len(state))\n"
    )
    out = fix(source)
    assert "gpu_id = 0" in out.source  # the index itself is kept
    assert ".to(accelerator_device(gpu_id))" in out.source
    assert "loc = str(accelerator_device(gpu_id))" in out.source
    proc = run(out.source, tmp_path)
    assert proc.returncode == 0, proc.stderr  # no "cpu:0" for torch.load
    assert "RESULT 2" in proc.stdout


def test_a_backend_chosen_through_a_name_argparse_or_the_environment_follows_the_device():
    source = (
        "import argparse, os\n"
        "import torch.distributed as dist\n"
        "backend = 'nccl'\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--dist-backend', default='nccl')\n"
        "env_backend = os.environ.get('DIST_BACKEND', 'nccl')\n"
        "def main():\n"
        "    dist.init_process_group(backend=backend)\n"
    )
    out = fix(source)
    assert "'nccl'" not in out.source and '"nccl"' not in out.source
    assert out.source.count("get_default_backend_for_device(DEVICE)") == 3


def test_process_counts_for_mp_spawn_are_at_least_one():
    source = (
        "import torch\n"
        "import torch.multiprocessing as mp\n"
        "def main(rank, world_size):\n"
        "    pass\n"
        "if __name__ == '__main__':\n"
        "    world_size = torch.cuda.device_count()\n"
        "    mp.spawn(main, args=(world_size,), nprocs=world_size)\n"
        "    print(torch.cuda.device_count() > 1)\n"
    )
    out = fix(source)
    assert "world_size = max(torch.accelerator.device_count(), 1)" in out.source
    assert "print(torch.accelerator.device_count() > 1)" in out.source  # a count, not a process count


def test_a_guard_is_rewritten_only_with_the_cuda_only_code_it_guards():
    paired = "import torch\nuse_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\n"
    out = fix(paired)
    assert "torch.accelerator.is_available() and (torch.cuda.is_bf16_supported() if DEVICE.type == \"cuda\"" in out.source
    stuck = "import torch\nif torch.cuda.is_available():\n    major, _ = torch.cuda.get_device_capability()\n"
    out = fix(stuck, partial=True)
    assert out.source == stuck  # the guard stays: rewriting it alone would run the capability query without CUDA
    reasons = {f.rule_id: why for f, why in out.manual}
    assert "NRN212" in reasons["NRN201"] and "get_device_capability" in reasons["NRN201"]


def test_cuda_only_branches_are_left_as_they_are_without_a_second_guard():
    source = (
        "import torch\n"
        "device = 'cuda'\n"
        "if device == 'cuda':\n"
        "    torch.cuda.synchronize()\n"
        "if torch.cuda.is_available():\n"
        "    torch.cuda.synchronize()\n"
    )
    out = fix(source)
    lines = out.source.splitlines()
    assert "    torch.cuda.synchronize()" in lines  # inside `if device == "cuda":`
    assert "if torch.accelerator.is_available():" in lines
    assert "    torch.accelerator.synchronize()" in lines  # no nested second guard
    assert out.source.count("is_available()") == 1


def test_a_stream_is_not_rewritten_without_the_stream_selection_that_uses_it():
    source = "import torch\ndef copy(x):\n    s = torch.cuda.Stream()\n    torch.cuda.current_stream().wait_stream(s)\n"
    out = fix(source, partial=True)
    assert out.source == source
    assert any(f.rule_id == "NRN208" and "NRN211" in why for f, why in out.manual)


def test_a_float32_model_is_not_fed_float64_numpy_data(tmp_path):
    source = (
        "import numpy as np\n"
        "import torch\n"
        "data = torch.from_numpy(np.sin(np.arange(12.0)).reshape(3, 4))\n"
        "model = torch.nn.Linear(4, 1).double()\n"
        "print('RESULT', float(model(data).sum()) != 0)\n"
    )
    out = fix(source, unsafe=True)
    assert ".double()" in out.source  # left whole: the data stays float64
    assert any(f.rule_id == "NRN303" and "from_numpy" in why for f, why in out.manual)
    assert run(out.source, tmp_path).returncode == 0


def test_a_duplicate_cuda_seed_is_deleted_not_duplicated():
    source = "import torch\ntorch.manual_seed(0)\ntorch.cuda.manual_seed(0)\nx = 1\n"
    out = fix(source)
    assert out.source == "import torch\ntorch.manual_seed(0)\nx = 1\n"
    assert [f.fix.safety.value for f in out.applied] == ["safe"]


def test_a_file_with_a_blocker_is_left_whole_unless_partial():
    source = "import torch\nx = torch.ones(2).cuda()\ng = torch.cuda.CUDAGraph()\n"
    whole = fix(source)
    assert whole.source == source and not whole.applied
    reasons = {f.rule_id: why for f, why in whole.manual}
    assert reasons["NRN209"].startswith("blocks this file")
    assert "torch.cuda.CUDAGraph" in reasons["NRN101"] and "--partial" in reasons["NRN101"]
    partial = fix(source, partial=True)
    assert ".to(DEVICE)" in partial.source and "torch.cuda.CUDAGraph()" in partial.source


def test_the_scripts_own_device_type_is_reused():
    source = (
        "import torch\n"
        "device = 'cuda'\n"
        "device_type = 'cuda' if 'cuda' in device else 'cpu'\n"
        "def train():\n"
        "    scaler = torch.cuda.amp.GradScaler()\n"
    )
    out = fix(source)
    assert "torch.amp.GradScaler(device_type)" in out.source


def test_a_storage_moves_with_the_keyword_its_to_takes(tmp_path):
    source = (
        "import io\n"
        "import torch\n"
        "buffer = io.BytesIO()\n"
        "torch.save({'w': torch.ones(2)}, buffer)\n"
        "buffer.seek(0)\n"
        "gpu = 0\n"
        "state = torch.load(buffer, map_location=lambda storage, loc: storage.cuda(gpu))\n"
        "print('RESULT', float(state['w'].sum()))\n"
    )
    out = fix(source)
    assert "storage.to(device=accelerator_device(gpu))" in out.source
    proc = run(out.source, tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_fixed_code_is_not_reported_again():
    source = "import torch\nuse_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\nx = torch.ones(1).to('cuda:0')\n"
    out = fix(source)
    again = fix(out.source)
    assert again.source == out.source and not again.manual


def test_sarif_gives_each_shell_finding_its_own_edit(cli, tmp_path):
    import json

    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\nnvidia-smi\npython train.py --device cuda\n")
    sarif = json.loads(cli("scan", script, "--format", "sarif", "--exit-zero").stdout)
    edits = {}
    for result in sarif["runs"][0]["results"]:
        line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                for replacement in change["replacements"]:
                    edits.setdefault(result["ruleId"], set()).add((line, replacement["insertedContent"]["text"]))
    assert all("neuron-ls" in text for _, text in edits.get("NRN702", set()))
    assert not any("neuron-ls" in text for rule, found in edits.items() if rule != "NRN702" for _, text in found)


def test_a_guarded_choice_keeps_the_scripts_own_flag():
    source = "import torch\ndef pick(args):\n    return torch.device('cuda' if torch.cuda.is_available() and not args.no_cuda else 'cpu')\n"
    out = fix(source)
    assert "not args.no_cuda" in out.source and "torch.accelerator.is_available()" in out.source


def test_a_module_that_imports_torch_only_when_available_still_imports_without_torch(tmp_path):
    # The shape of transformers' trainer_utils.py: torch is optional for the module.
    source = (
        "try:\n"
        "    import torch\n"
        "except ImportError:\n"
        "    torch = None\n"
        "\n"
        "def accelerated():\n"
        "    return torch is not None and torch.cuda.is_available()\n"
        "\n"
        "def place(x):\n"
        "    return x.to('cuda')\n"
        "\n"
        "print('RESULT', accelerated())\n"
    )
    out = fix(source, partial=True)
    assert "torch.accelerator.is_available()" in out.source  # `torch` is bound where this one lands
    assert "import torch\n" not in out.source.replace("    import torch\n", "")  # no unconditional import added
    reasons = {f.rule_id: why for f, why in out.manual}
    assert "only under a condition" in reasons["NRN102"]  # `.to('cuda')` would need `torch` at module level
    without_torch = run_without_torch(out.source, tmp_path)
    assert without_torch.returncode == 0, without_torch.stderr
    assert "RESULT False" in without_torch.stdout
    with_torch = run(out.source, tmp_path)
    assert with_torch.returncode == 0, with_torch.stderr


@pytest.mark.parametrize("other_arm,reported", [
    ("        else:\n            self.stats = None\n", True),
    # An `elif` for another vendor (TrainerMemoryTracker's own shape): a per-vendor dispatch, whose
    # CUDA arm is not reported at all (scan/dispatch.py), so nothing there is rewritten either.
    ("        elif hasattr(torch, 'xpu') and torch.xpu.is_available():\n            self.torch.xpu.reset_peak_memory_stats()\n", False),
])
def test_a_guard_over_cuda_code_the_scan_cannot_follow_is_not_opened_to_other_accelerators(tmp_path, other_arm, reported):
    # transformers' TrainerMemoryTracker keeps torch on `self.torch`.
    source = (
        "import torch\n"
        "class Tracker:\n"
        "    def __init__(self):\n"
        "        self.torch = torch\n"
        "    def reset(self):\n"
        "        if torch.cuda.is_available():\n"
        "            self.torch.cuda.reset_peak_memory_stats()\n"
        f"{other_arm}"
        "        return 'ok'\n"
        "torch.accelerator.is_available = lambda: True  # a host with a non-CUDA accelerator\n"
        "print('RESULT', Tracker().reset())\n"
    )
    assert run(source, tmp_path).returncode == 0
    out = fix(source, partial=True)
    assert "if torch.cuda.is_available():" in out.source
    reasons = {f.rule_id: why for f, why in out.manual}
    if reported:
        assert "self.torch.cuda.reset_peak_memory_stats()" in reasons["NRN201"]
    else:
        assert "NRN201" not in reasons and out.source == source
    proc = run(out.source, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "RESULT ok" in proc.stdout


def test_a_module_that_imports_torch_inside_a_function_gets_no_module_level_torch(tmp_path):
    # The shape of transformers' cli/system.py: torch is imported where the report needs it.
    source = (
        "def env():\n"
        "    import torch\n"
        "    info = {'torch': torch.__version__}\n"
        "    if torch.cuda.is_available():\n"
        "        info['GPU type'] = torch.cuda.get_device_name()\n"
        "    return info\n"
        "\n"
        "print('RESULT', sorted(env()))\n"
    )
    out = fix(source, unsafe=True, partial=True)
    assert not out.source.startswith(("import torch", "DEVICE")) and "\nDEVICE =" not in out.source
    # Importing the module (its definitions, without the last line's call) must not need torch.
    without_torch = run_without_torch(out.source.replace("print('RESULT', sorted(env()))\n", ""), tmp_path)
    assert without_torch.returncode == 0, without_torch.stderr
    proc = run(out.source, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "RESULT ['torch']" in proc.stdout


def test_a_device_helper_is_not_added_to_a_module_that_imports_torch_only_when_available(tmp_path):
    # transformers' integrations/sinq.py: a `device="cuda:0"` default, torch behind is_torch_available().
    source = (
        "import importlib.util\n"
        "if importlib.util.find_spec('torch') is not None:\n"
        "    import torch\n"
        "\n"
        "def quantize(weights, device: str = 'cuda:0'):\n"
        "    return [w for w in weights], device\n"
        "\n"
        "print('RESULT', quantize([1])[0])\n"
    )
    out = fix(source, unsafe=True, partial=True)
    assert "accelerator_device" not in out.source and "DEVICE" not in out.source
    reasons = {f.rule_id: why for f, why in out.manual}
    assert "only under a condition" in reasons["NRN102"]
    without_torch = run_without_torch(out.source, tmp_path)
    assert "RESULT [1]" in without_torch.stdout, without_torch.stderr


def test_a_finding_only_in_the_rewritten_code_points_at_the_input_line_and_says_so():
    # `torch.cuda.amp.autocast()` becomes an autocast with `dtype=torch.float16` written out (the
    # same as on the GPU), which NRN310 then reports. Its column in the rewritten line (52) is past
    # the end of the input line (new-user helper): the input position is the original line.
    source = (
        "import torch\n"
        "\n"
        "def step(model, x):\n"
        "    with torch.cuda.amp.autocast():\n"
        "        return model(x)\n"
    )
    outcome = fix(source)
    left = [(outcome.as_before(f), why) for f, why in outcome.manual if f.rule_id == "NRN310"]
    assert len(left) == 1
    finding, why = left[0]
    assert (finding.span.line, finding.span.column, finding.span.end_column) == (4, 5, len("    with torch.cuda.amp.autocast():") + 1)
    assert "as rewritten" in why


SCAN_AGREES_WITH_FIX = {
    "a guard over code the scan cannot follow, in a test": ("tests/test_train.py", """\
        import torch
        def f1(x):
            if torch.cuda.is_available():
                x = x.cuda()
            return x
        """),
    "a guard over a call with no rewrite": ("train.py", """\
        import torch
        def f(x):
            if torch.cuda.is_available():
                torch.cuda.nvtx.range_push("step")
            return x.cuda()
        """),
    "a Lightning accelerator coupled with an FP16 precision": ("train.py", """\
        import lightning as L
        import torch
        def main():
            n = torch.cuda.device_count()
            return L.Trainer(accelerator="gpu", devices=n, precision="16-mixed")
        """),
    # One rewrite resolves two findings: the backend fix writes the call without `mode=`.
    "a compile mode inside the call a backend fix rewrites": ("train.py", """\
        import torch
        model = torch.nn.Linear(2, 2)
        fast = torch.compile(model, mode="max-autotune", dynamic=True)
        """),
}


@pytest.mark.parametrize("target", ["portable", "neuron", "xla"])
@pytest.mark.parametrize("name", list(SCAN_AGREES_WITH_FIX))
def test_scan_marks_what_fix_applies(name, target):
    # New-user and hostile helpers: scan's [*] marks and counts differed from what fix rewrote
    # (coupled rules, guards kept by fix, a would-be blocker whose only rewrite is unsafe).
    path, source = SCAN_AGREES_WITH_FIX[name]
    source = textwrap.dedent(source)
    options = ScanOptions(target=target)
    found = scan_source(source, path, "python", options)
    safe = sorted((f.rule_id, f.span.line) for f in found if f.fixable and f.fix.safety.value == "safe")
    both = sorted((f.rule_id, f.span.line) for f in found if f.fixable)
    assert sorted((f.rule_id, f.span.line) for f in fix_source(source, path, "python", options, unsafe=False).applied) == safe
    assert sorted((f.rule_id, f.span.line) for f in fix_source(source, path, "python", options, unsafe=True).applied) == both


def test_a_guard_that_returns_early_is_read_in_a_test_and_in_a_script():
    # An `elif ... not torch.cuda.is_available(): return` made the guard check fail on timm's
    # tests/test_optim.py (an internal error for the file in scan, and in fix already before).
    source = textwrap.dedent("""\
        import pytest
        import torch
        def _test_cases(torch_device):
            if torch_device == "cpu":
                return
            elif torch_device == "cuda" and not torch.cuda.is_available():
                return
            x = torch.ones(2).cuda()
            torch.cuda.synchronize()
        """)
    for path in ("tests/test_optim.py", "optim.py"):
        found = scan_source(source, path, "python", ScanOptions(target="neuron"))
        assert found and not any(f.rule_id == "NRN000" for f in found), found
        outcome = fix_source(source, path, "python", ScanOptions(target="neuron"))
        assert not outcome.failed, outcome.failed


def test_a_finding_another_fix_resolves_carries_that_fix_as_its_edits():
    source = "import torch\nmodel = torch.nn.Linear(2, 2)\nfast = torch.compile(model, mode=\"max-autotune\")\n"
    from migrator.fix.edits import apply_edits

    found = {f.rule_id: f for f in scan_json(source)}
    fixed = fix_source(source, "train.py", "python", ScanOptions(target="neuron")).source
    assert set(found) == {"NRN501", "NRN506"}
    for finding in found.values():
        assert apply_edits(source, finding.fix.edits) == fixed


def scan_json(source):
    # The edits `scan --format json` prints.
    return scan_source(source, "train.py", "python", ScanOptions(target="neuron", fix_edits=True))


def test_a_legacy_trace_call_does_not_keep_the_rest_of_the_file_on_cuda():
    """NRN213/NRN214 are left for a person, but they are not CUDA code: the file's CUDA calls are
    still rewritten on the neuron target (the new-user helper saw every fix held back with the
    false reason "the file would still need CUDA")."""
    source = textwrap.dedent("""\
        import torch
        import torch_neuronx

        def gpu_reference(model, x):
            return model.cuda()(x.cuda())

        def export(model, example):
            return torch_neuronx.trace(model, example)
        """)
    options = ScanOptions(target="neuron")
    found = scan_source(source, "infer.py", "python", options)
    assert {f.rule_id for f in found} >= {"NRN213", "NRN101"}
    assert all(f.fixable for f in found if f.rule_id == "NRN101")
    outcome = fix_source(source.encode(), "infer.py", "python", options, False)
    assert ".cuda()" not in outcome.source and "torch_neuronx.trace(model, example)" in outcome.source
    assert not [why for f, why in outcome.manual if "still need CUDA" in why]


@pytest.mark.parametrize("binding", ["import numpy as torch", "from compat import torch", "torch = None"])
def test_no_import_torch_is_added_where_the_name_torch_means_something_else(binding):
    """Hostile helper, session 19: with `import numpy as torch`, the safe accelerate fix added
    `import torch` after it, and `torch.array(...)` below broke."""
    source = (f"from accelerate import Accelerator\n{binding}\n"
              "acc = Accelerator(mixed_precision=\"fp16\")\ny = torch.array([1, 2]) if torch else None\n")
    out = fix(source)
    assert out.source == source
    assert "binds the name `torch`" in {f.rule_id: why for f, why in out.manual}["NRN321"]
