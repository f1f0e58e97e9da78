"""Code that names CUDA without running it is not a finding (issue 11, "Precision").

Test spoofs and fake binaries, type annotations, exception and device-agnostic `getattr`
lookups, a CUDA library's own package importing itself, float64 used only on the host. Each row:
a case name, the path scanned (test files are recognised by path), the source, and the rule ids
that must still be reported (usually none); the whole-file scan and the pruned scan both count.
"""

from __future__ import annotations

import textwrap

import pytest

from migrator import ScanOptions, scan_source
from migrator.api import fix_source

CASES = [
    ("spoofed is_available in a test", "tests/test_device.py", """
        import torch
        def test_cpu(monkeypatch):
            torch.cuda.is_available = lambda: True
            torch.cuda.device_count = MagicMock(return_value=2)
        """, []),
    ("monkeypatch.setattr on torch.cuda", "tests/test_device.py", """
        import torch
        from unittest import mock
        def test_cpu(monkeypatch):
            monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
            with mock.patch.object(torch.cuda, "device_count", return_value=2):
                pass
        """, []),
    ("a fake nvidia-smi written by a test", "tests/test_probe.py", """
        def test_probe(tmp_path):
            fake = tmp_path / "nvidia-smi"
            fake.write_text("#!/bin/sh\\necho GPU 0\\n")
        """, []),
    ("assertions on printed text", "tests/test_cli.py", """
        def test_output(out):
            assert "cuda" in out
            assert "nvidia-smi" not in out
        """, []),
    ("type annotations", "lib/streams.py", """
        from __future__ import annotations
        from typing import Optional
        import torch
        def run(stream: torch.cuda.Stream | None = None, event: "torch.cuda.Event" = None) -> Optional[torch.cuda.Event]:
            current: torch.cuda.Stream = pick()
            return current
        """, []),
    ("getattr exception lookup", "lib/oom.py", """
        import torch
        OOM_ERRORS = (getattr(torch.cuda, "OutOfMemoryError", RuntimeError), MemoryError)
        """, []),
    ("device-agnostic getattr", "lib/device.py", """
        import torch
        def backend_module(device_type):
            return getattr(torch, device_type, torch.cuda)
        """, []),
    ("float64 only on the host", "lib/metrics.py", """
        import numpy as np
        import torch
        def to_numpy(x, t, arr):
            a = x.double().cpu().numpy()
            b = x.to(torch.float64).cpu().tolist()
            if t.dtype == torch.float64:
                t = t.float()
            if arr.dtype == np.float64:
                pass
            return a, b, t
        """, []),
    ("a spoof saved and put back", "tests/test_device.py", """
        import torch
        def test_cpu_fallback():
            original = torch.cuda.is_available
            torch.cuda.is_available = lambda: False
            try:
                pass
            finally:
                torch.cuda.is_available = original
        """, []),
    ("device-agnostic getattr with the name spelled out", "lib/device.py", """
        import torch
        def backend_module():
            return getattr(torch, "npu", torch.cuda)
        """, []),
    ("float64 made only to become a Python number", "lib/timing.py", """
        import torch
        def mean_ms(samples):
            return float(torch.tensor(samples, dtype=torch.float64).mean())
        """, []),
    # What must stay: a real spoof-free use next to each exemption.
    ("a flag set to a value is a use", "tests/test_flags.py", """
        import torch
        torch.backends.cudnn.benchmark = True
        """, ["NRN210"]),
    ("float64 kept on the device is still reported", "lib/metrics.py", """
        import torch
        y = x.double()
        z = x.double().cpu()
        """, ["NRN303"]),
    ("a getattr that runs CUDA is a use", "lib/sync.py", """
        import torch
        sync = getattr(torch.cuda, "synchronize")
        """, ["NRN209"]),
    ("nvidia-smi called from a test is a use", "tests/test_gpu.py", """
        import subprocess
        def test_gpu():
            subprocess.run(["nvidia-smi"])
        """, ["NRN702"]),
    ("float64 in a test that names no device (timm's CPU tests)", "tests/test_layers.py", """
        import pytest
        import torch
        torch_device = "cpu"
        @pytest.mark.parametrize("features", [2, 4])
        def test_reset_keeps_dtype(features):
            head = torch.nn.Linear(features, 3).to(dtype=torch.float64)
            assert head.weight.double().mean().item() is not None
        class TestCpu:
            def test_double(self):
                torch.nn.Linear(2, 2).double()
        """, []),
    ("float64 in a test a fixture, setUp or its own code may put on a device", "tests/test_layers.py", """
        import torch
        torch_device = "cpu"
        def test_fixture(model):
            model.double()
        def test_moved():
            torch.ones(2, dtype=torch.float64).to(torch_device)
        class TestModel:
            def setUp(self):
                self.model = torch.nn.Linear(2, 2).to(torch_device)
            def test_double(self):
                self.model.double()
        """, ["NRN303"]),
    ("float64 in a CPU-looking test of a module that sets a default device", "tests/test_layers.py", """
        import torch
        torch.set_default_device("cuda")
        def test_double():
            torch.nn.Linear(2, 2).double()
        """, ["NRN102", "NRN303"]),
    ("a fallback for a PyTorch older than any Neuron host runs (transformers' cache_utils.py)", "src/cache.py", """
        import torch
        from packaging import version
        from transformers.utils import is_torch_greater_or_equal
        _is_torch_greater_or_equal_than_2_7 = is_torch_greater_or_equal("2.7")
        stream = torch.Stream() if _is_torch_greater_or_equal_than_2_7 else torch.cuda.Stream()
        if version.parse(torch.__version__) >= version.parse("2.5"):
            pass
        else:
            torch.cuda.synchronize()
        if not is_torch_greater_or_equal("2.3"):
            torch.cuda.empty_cache()
        """, []),
    ("a branch for a newer PyTorch, or on the CUDA toolkit's version, is still read", "src/cache.py", """
        import torch
        if torch.__version__ < "3.1":
            torch.cuda.empty_cache()
        if torch.version.cuda >= "11.8":
            torch.cuda.synchronize()
        """, ["NRN202", "NRN203", "NRN703"]),
    ("the CUDA arm of a per-vendor dispatch (transformers' accelerate.py, pipelines/base.py, cli/system.py)", "src/memory.py", """
        import torch
        from transformers.utils import is_torch_xpu_available
        def unused_memory(i):
            if is_torch_xpu_available():
                return torch.xpu.memory_reserved(i) - torch.xpu.memory_allocated(i)
            elif torch.cuda.is_available():
                return torch.cuda.memory_reserved(i) - torch.cuda.memory_allocated(i)
            return 0
        def free(tensor):
            if tensor.device.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.synchronize()
            elif tensor.device.type == "mlu":
                torch.mlu.empty_cache()
        def report(pt_cuda_available, pt_xpu_available):
            if pt_cuda_available:
                return torch.cuda.get_device_name()
            elif pt_xpu_available:
                return torch.xpu.get_device_name()
        def set_device(device):
            if device.startswith("cuda:"):
                torch.cuda.set_device(device)
            elif device.startswith("npu:"):
                torch.npu.set_device(device)
        def sync(device):
            if "cuda" in str(device):
                torch.cuda.synchronize()
            elif "mps" in str(device):
                torch.mps.synchronize()
        """, []),
    ("a CUDA arm that chooses a device, the chain's else and a CUDA-only chain are still reported", "src/memory.py", """
        import torch
        from transformers.utils import is_torch_npu_available
        def pick():
            if torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.backends.mps.is_available():
                device = torch.device("mps")
            else:
                device = torch.device("cpu")
            return device
        def seed(s):
            if is_torch_npu_available():
                torch.npu.manual_seed_all(s)
            else:
                torch.cuda.manual_seed_all(s)
        def sync(cpu_only):
            if cpu_only:
                pass
            elif torch.cuda.is_available():
                torch.cuda.synchronize()
        """, ["NRN102", "NRN201", "NRN202", "NRN207"]),
    ("the CUDA entry of a table keyed by device type (diffusers' testing_utils)", "src/backends.py", """
        import torch
        BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache, "cpu": None, "default": None}
        BACKEND_MANUAL_SEED = {"cuda": torch.cuda.manual_seed, "mps": torch.mps.manual_seed, "cpu": torch.manual_seed}
        """, []),
    ("a table of CUDA and the CPU only is still read", "src/backends.py", """
        import torch
        BACKEND_SYNCHRONIZE = {"cuda": torch.cuda.synchronize, "cpu": None, "default": None}
        """, ["NRN209"]),
]


@pytest.mark.parametrize("name,path,source,expected", CASES, ids=[c[0] for c in CASES])
def test_scaffolding_is_not_a_finding(name, path, source, expected):
    code = textwrap.dedent(source).lstrip()
    got = sorted({f.rule_id for f in scan_source(code, path, options=ScanOptions(target="neuron"))})
    assert got == sorted(expected), (name, [(f.rule_id, f.span.line, f.message) for f in scan_source(code, path, options=ScanOptions(target="neuron"))])


def test_a_cuda_library_package_importing_itself_is_one_finding():
    inside = "from flash_attn.flash_attn_interface import flash_attn_func\nfrom flash_attn.bert_padding import pad_input\n"
    root = scan_source(inside, "src/flash_attn/__init__.py", options=ScanOptions(target="neuron"))
    assert [f.rule_id for f in root] == ["NRN603"]
    module = scan_source("from flash_attn.ops.triton.rotary import apply_rotary\nimport flash_attn.modules.mha\n",
                         "src/flash_attn/layers/rotary.py", options=ScanOptions(target="neuron"))
    assert [f.rule_id for f in module] == []
    user = scan_source("from flash_attn import flash_attn_func\n", "src/mymodel/attention.py", options=ScanOptions(target="neuron"))
    assert [f.rule_id for f in user] == ["NRN603"]


@pytest.mark.parametrize("source,expected", [
    ("import torch.distributed as dist\ndist.init_process_group(backend=dist.Backend.NCCL)\n",
     "backend 'dist.Backend.NCCL' needs NVIDIA GPUs"),
    ("from torch.utils.cpp_extension import CUDA_HOME\nok = CUDA_HOME is not None\n", "points at a CUDA toolkit"),
])
def test_reference_messages_name_what_is_written(source, expected):
    messages = [f.message for f in scan_source(source, "x.py")]
    assert any(expected in m for m in messages), messages
    assert not any("{value}" in m for m in messages)


def test_mixed_backend_list_is_reported_without_a_rewrite():
    found = [f for f in scan_source('import torch.distributed as dist\ndist.init_process_group("cpu:gloo,cuda:nccl")\n', "x.py",
                                    options=ScanOptions(target="neuron")) if f.rule_id == "NRN401"]
    assert len(found) == 1 and not found[0].fix.available


def test_a_subpackage_named_like_the_library_is_not_the_library(tmp_path):
    # diffusers/quantizers/bitsandbytes/utils.py: `import bitsandbytes` there is the real library.
    sub = tmp_path / "diffusers" / "quantizers" / "bitsandbytes"
    sub.mkdir(parents=True)
    for folder in (tmp_path / "diffusers", tmp_path / "diffusers" / "quantizers", sub):
        (folder / "__init__.py").write_text("")
    found = scan_source("import bitsandbytes as bnb\n", str(sub / "utils.py"), options=ScanOptions(target="neuron"))
    assert [f.rule_id for f in found] == ["NRN603"]


SCAFFOLD_INFO = [
    ("a mock's canned nvidia-smi output", "tests/test_installer.py", """
        import subprocess
        from unittest import mock
        def test_detects_gpu():
            with mock.patch("subprocess.run") as run:
                run.return_value = subprocess.CompletedProcess(["nvidia-smi"], 0, stdout="GPU 0")
        """, "NRN702"),
    ("a skip mark on a parametrized case", "tests/test_optim.py", """
        import pytest
        import torch
        DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))]
        """, "NRN201"),
    ("a test that returns early without CUDA", "tests/test_optim.py", """
        import os
        import torch
        def test_step():
            if os.environ.get("TORCH_DEVICE") == "cuda" and not torch.cuda.is_available():
                return
            run()
        """, "NRN201"),
    ("a skip decorator in the test helpers beside the code", "mylib/testing_utils.py", """
        import unittest
        import torch
        def require_torch_gpu(test_case):
            return unittest.skipUnless(torch.cuda.is_available(), "test requires a GPU")(test_case)
        """, "NRN201"),
    ("an assertion on the device a test expects", "tests/test_device.py", """
        import torch
        def test_pick():
            assert pick_device().type == "cuda"
        """, "NRN104"),
    # Precision bench (transformers, diffusers, peft testing utilities) and the fourth blind corpus:
    ("a capability probe in the testing utilities", "mylib/testing_utils.py", """
        import torch
        def supports_sdpa_flash_backend():
            if not torch.cuda.is_available():
                return False
            return torch.cuda.get_device_capability()[0] >= 8
        """, "NRN201"),
    ("a float64 probe in the testing utilities", "diffusers/utils/testing_utils.py", """
        import torch
        def _is_torch_fp64_available(device):
            x = torch.zeros((2, 2), dtype=torch.float64).to(device)
            return True
        """, "NRN303"),
    ("an API the test replaced with a stand-in", "tests/test_device_utils.py", """
        import torch
        def test_is_available_spoof_restores():
            original = torch.cuda.is_available
            torch.cuda.is_available = lambda: True
            try:
                assert torch.cuda.is_available()
            finally:
                torch.cuda.is_available = original
        """, "NRN201"),
    ("an API a fixture patched with monkeypatch", "tests/test_model.py", """
        import pytest
        import torch
        @pytest.fixture
        def fake_cuda(monkeypatch):
            monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
        def test_ddp_device_count(fake_cuda):
            assert torch.cuda.device_count() == 8
        """, "NRN205"),
    ("an API patched by mock.patch with its dotted path", "tests/test_model.py", """
        from unittest import mock
        import torch
        @mock.patch("torch.cuda.device_count", return_value=8)
        def test_counts(count):
            assert torch.cuda.device_count() == 8
        """, "NRN205"),
    ("an assertion on the module the code picks", "tests/test_device_utils.py", """
        import torch
        def test_device_module_falls_back_to_cuda():
            assert device_module("does_not_exist") is torch.cuda
        """, "NRN209"),
    ("a command run against a fake fixture", "tests/test_device_utils.py", """
        import subprocess
        def test_nvidia_smi_is_faked(fake_nvidia_smi):
            out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, check=True).stdout
        """, "NRN702"),
]


@pytest.mark.parametrize("name,path,source,rule", SCAFFOLD_INFO, ids=[c[0] for c in SCAFFOLD_INFO])
def test_test_scaffolding_is_info_saying_so(name, path, source, rule):
    """Issue 11: mocks and assertions in tests are reported at info, with a message saying they are scaffolding."""
    found = [f for f in scan_source(textwrap.dedent(source).lstrip(), path, options=ScanOptions(target="neuron"))
             if f.rule_id == rule]
    assert found and all(f.severity.value == "info" and "test scaffolding" in f.message for f in found), found


def test_a_fallback_for_an_older_pytorch_is_reported_on_the_xla_target():
    # Older Neuron SDKs paired PyTorch/XLA 2.1-2.8 with the xla path: no PyTorch is assumed there.
    code = "import torch\nstream = torch.Stream() if is_torch_greater_or_equal('2.7') else torch.cuda.Stream()\n"
    assert [f.rule_id for f in scan_source(code, "src/cache.py", options=ScanOptions(target="xla"))] == ["NRN208"]
    assert [f.rule_id for f in scan_source(code, "src/cache.py", options=ScanOptions(target="neuron"))] == []


def test_a_cuda_arm_that_chooses_a_device_is_read_whole():
    # The device choice is migrated with its guard and calls (the guard opened to every
    # accelerator), so the arm of a per-vendor chain that chooses a device stays reported whole.
    code = textwrap.dedent("""
        import torch
        if torch.cuda.is_available():
            device = torch.device("cuda")
            torch.cuda.synchronize()
        elif torch.backends.mps.is_available():
            device = torch.device("mps")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        elif torch.backends.mps.is_available():
            torch.mps.synchronize()
        """).lstrip()
    got = {(f.rule_id, f.span.line) for f in scan_source(code, "src/pick.py", options=ScanOptions(target="neuron"))}
    assert got == {("NRN201", 2), ("NRN102", 3), ("NRN202", 4)}


# The ways a test installs a stand-in for `torch.cuda.device_count`.
SPOOFS = [
    "torch.cuda.device_count = lambda: 8",
    'monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)',
    'monkeypatch.setattr("torch.cuda.device_count", lambda: 8)',
    'mock.patch.object(torch.cuda, "device_count", return_value=8).start()',
]


@pytest.mark.parametrize("spoof", SPOOFS)
def test_a_spoofed_api_is_not_rewritten(spoof):
    # New-user helper: `fix` turned `assert torch.cuda.device_count() == 8` under a fixture that
    # patches it into torch.accelerator.device_count(), which the stand-in does not reach: the
    # test passed on a 2-GPU machine before and failed after.
    source = textwrap.dedent(f"""\
        import torch
        from unittest import mock
        def test_spoof(monkeypatch):
            {spoof}
            assert torch.cuda.device_count() == 8
        """)
    assert fix_source(source, "tests/test_spoof.py", "python", ScanOptions(), unsafe=True).source == source


def test_outside_test_utilities_the_same_probes_are_findings():
    source = textwrap.dedent("""\
        import torch
        def require_gpu(fn):
            if not torch.cuda.is_available():
                raise RuntimeError("needs a GPU")
            return fn
        """)
    found = [f for f in scan_source(source, "mylib/decorators.py", options=ScanOptions(target="neuron")) if f.rule_id == "NRN201"]
    assert found and found[0].severity.value == "error"


@pytest.mark.parametrize("spoof", SPOOFS)
def test_a_stand_in_set_in_an_unrelated_fixture_is_read_by_the_pruned_scan_too(spoof):
    # Pruning left out a fixture whose only CUDA mention was the dotted path as text, so the
    # use in another test stayed an error there and became scaffolding in the whole file's scan.
    source = textwrap.dedent(f"""\
        import pytest
        import torch
        from unittest import mock
        x = 1
        @pytest.fixture
        def fake(monkeypatch):
            y = 2
            {spoof}
        def test_a(fake):
            assert torch.cuda.device_count() == 8
        """)

    def seen(options):
        return [(f.rule_id, f.severity.value, f.message) for f in scan_source(source, "tests/test_x.py", options=options)
                if f.rule_id != "NRN001"]

    pruned, whole = seen(ScanOptions()), seen(ScanOptions(report_unused_noqa=True))  # report_unused_noqa: no pruning
    assert pruned == whole and pruned[0][1] == "info", pruned


def test_a_stand_in_counts_only_where_it_is_installed():
    # Hostile helper: one test's `patch("torch.cuda.synchronize")` silenced a real call in another
    # test, and so did a fixture no test took and a non-mock object's `setattr`.
    source = textwrap.dedent("""\
        import pytest
        import torch
        from unittest.mock import patch

        @pytest.fixture
        def fake_count(monkeypatch):
            monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)

        def test_patched():
            with patch("torch.cuda.synchronize"):
                torch.cuda.synchronize()

        def test_real():
            torch.cuda.synchronize()

        def test_with_fixture(fake_count):
            assert torch.cuda.device_count() == 8

        def test_without_fixture():
            assert torch.cuda.device_count() >= 0

        def test_client(client):
            client.setattr("torch.cuda.empty_cache", 1)
            torch.cuda.empty_cache()
        """)
    found = {(f.rule_id, f.span.line): f.severity.value for f in scan_source(source, "tests/test_k.py", options=ScanOptions(target="neuron"))}
    assert found[("NRN202", 11)] == "info" and found[("NRN202", 14)] == "error"
    assert found[("NRN205", 17)] == "info" and found[("NRN205", 20)] == "error"
    assert found[("NRN203", 24)] != "info"


def test_helpers_named_like_skip_decorators_are_still_code():
    # Hostile helper: `skip_connection` and `require_grad_params` in a test file were taken for
    # testing utilities that decide which tests run.
    source = textwrap.dedent("""\
        import torch
        def skip_connection(x, y):
            return (x + y).cuda()
        def require_grad_params(model):
            torch.cuda.synchronize()
            return [p for p in model.parameters() if p.requires_grad]
        """)
    found = [f for f in scan_source(source, "tests/test_model.py", options=ScanOptions(target="neuron"))]
    assert found and all(f.severity.value == "error" for f in found), found


def test_a_skip_helper_is_read_whole_by_the_pruned_scan():
    # The pruned scan left out `return pytest.mark.skipif(...)` (it matches no rule), so peft's
    # require_torch_multi_gpu was a testing utility in the whole file's scan and code in the pruned one.
    source = textwrap.dedent("""\
        import pytest
        import torch
        device_count = 2
        def require_torch_multi_gpu(test_case):
            multi_cuda_unavailable = not torch.cuda.is_available() or (device_count < 2)
            return pytest.mark.skipif(multi_cuda_unavailable, reason="test requires multiple GPUs")(test_case)
        """)

    def seen(options):
        return [(f.rule_id, f.severity.value, f.message) for f in scan_source(source, "tests/testing_utils.py", options=options)
                if f.rule_id != "NRN001"]

    pruned, whole = seen(ScanOptions()), seen(ScanOptions(report_unused_noqa=True))
    assert pruned == whole and pruned and pruned[0][1] == "info", pruned


@pytest.mark.parametrize("target", ["portable", "neuron"])
def test_a_device_choice_that_asks_a_patched_api_is_not_rewritten(target):
    # New user: `"cuda" if torch.cuda.is_available() else "cpu"` under a patch that makes it
    # False was rewritten to DEVICE.type ("neuron" on the neuron target), so the test no longer
    # checked the CPU fallback and failed on a CPU runner.
    source = textwrap.dedent("""\
        from unittest import mock
        import torch

        def test_runs_on_cpu_when_no_gpu():
            with mock.patch("torch.cuda.is_available", return_value=False):
                device = "cuda" if torch.cuda.is_available() else "cpu"
                assert device == "cpu"

        @mock.patch("torch.cuda.is_available", return_value=True)
        def test_picks_gpu(_):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            assert device == "cuda"
        """)
    options = ScanOptions(target=target)
    found = [f for f in scan_source(source, "tests/test_device.py", "python", options) if f.rule_id == "NRN103"]
    assert len(found) == 2 and not any(f.fixable for f in found)
    assert fix_source(source, "tests/test_device.py", "python", options).source == source
