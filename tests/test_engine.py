"""Scanning behaviour a user notices: aliases, contexts, file kinds, walking, bad input."""

import json

import pytest

from migrator import ScanOptions, scan_paths, scan_source


def ids(source, target="portable", kind="python", path="x.py"):
    return [f.rule_id for f in scan_source(source, path, kind, ScanOptions(target=target))]


@pytest.mark.parametrize(
    "name, source, expected",
    [
        ("plain import", "import torch\ntorch.cuda.synchronize()\n", ["NRN202"]),
        ("import as", "import torch as th\nth.cuda.synchronize()\n", ["NRN202"]),
        ("from torch import cuda", "from torch import cuda\ncuda.synchronize()\n", ["NRN202"]),
        ("from torch.cuda import amp", "from torch.cuda import amp\nwith amp.autocast():\n    pass\n", ["NRN301"]),
        ("from-import of the function", "from torch.cuda import synchronize as sync\nsync()\n", ["NRN202"]),
        ("import inside a function", "def f():\n    import torch.cuda as tc\n    tc.synchronize()\n", ["NRN202"]),
        ("import after use at module level", "def f():\n    return torch.cuda.device_count()\nimport torch\n", ["NRN205"]),
        ("not imported: a local name", "cuda = object()\ncuda.synchronize()\n", []),
        ("function-local import does not leak", "def f():\n    from torch import cuda\ncuda.synchronize()\n", []),
        ("catch-all torch.cuda API", "import torch\ntorch.cuda.get_device_properties(0)\n", ["NRN209"]),
        ("torch.cuda passed as a value", "import torch\nmod = torch.cuda\n", ["NRN209"]),
    ],
)
def test_qualified_names_resolve_through_aliases(name, source, expected):
    assert ids(source) == expected


@pytest.mark.parametrize(
    "name, source",
    [
        ("comment", "import torch\n# move to cuda\nx = 1\n"),
        ("docstring", '"""Uses "cuda" when present."""\nimport torch\n'),
        ("log message", "import logging\nlogging.info('cuda')\nprint('cuda:0')\n"),
        ("dictionary key", "import torch\nstats = {'cuda': 1}\n"),
        ("unrelated variable", "import torch\nbackend_name = 'cuda'\n"),
    ],
)
def test_cuda_strings_outside_device_positions_are_not_findings(name, source):
    assert ids(source) == []


def test_device_chosen_once_is_reported_once_at_the_choice():
    source = "import torch\ndevice = torch.device('cuda')\na = x.to(device)\nb = y.to(device)\nc = z.to(device)\n"
    findings = scan_source(source, "x.py")
    assert [(f.rule_id, f.span.line) for f in findings] == [("NRN102", 2)]


def test_guarded_device_is_one_soft_finding_not_three():
    source = "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    findings = scan_source(source, "x.py")
    assert [(f.rule_id, f.severity.value) for f in findings] == [("NRN103", "warning")]
    assert "falls back to CPU" in findings[0].message


def test_severity_and_fix_depend_on_the_target():
    source = "import torch\nm = torch.compile(model, mode='max-autotune')\n"
    assert [f.severity.value for f in scan_source(source, "x.py", options=ScanOptions(target="portable"))] == ["info"]
    neuron = scan_source(source, "x.py", options=ScanOptions(target="neuron"))
    # The call has no backend (NRN506, Inductor) and a CUDA mode (NRN501): one rewrite fixes both.
    assert [(f.rule_id, f.severity.value, f.fixable) for f in neuron] == [("NRN506", "warning", True), ("NRN501", "warning", True)]
    xla = {f.rule_id for f in scan_source(source, "x.py", options=ScanOptions(target="xla"))}
    assert xla == {"NRN501", "NRN503"}


def test_span_is_one_based_and_covers_the_node():
    (finding,) = scan_source("import torch\nx = t.cuda()\n", "x.py")
    assert (finding.span.line, finding.span.column, finding.span.end_line, finding.span.end_column) == (2, 5, 2, 13)


def test_syntax_error_becomes_a_finding_and_the_scan_goes_on(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\ndef broken(:\n    x.cuda()\n")
    (tmp_path / "good.py").write_text("import torch\nx.cuda()\n")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: utf-8 -*-\nx = '\xff'.cuda()\n")
    report = scan_paths([tmp_path])
    by_file = {(f.path.rsplit("/", 1)[-1], f.rule_id) for f in report.findings}
    assert ("bad.py", "NRN000") in by_file and ("good.py", "NRN101") in by_file
    assert ("latin.py", "NRN000") in by_file
    assert report.files == 3


def test_walk_honours_gitignore_and_skips_git_venv_and_build(tmp_path):
    bad = "import torch\nx.cuda()\n"
    (tmp_path / ".gitignore").write_text("generated/\n*.tmp.py\n")
    for rel in ["src/a.py", "generated/b.py", "c.tmp.py", ".git/d.py", "build/e.py", "env/f.py", "sub/.gitignore"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(bad if rel.endswith(".py") else "g.py\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "sub" / "g.py").write_text(bad)
    (tmp_path / "sub" / "h.py").write_text(bad)
    paths = sorted(f.path.split(str(tmp_path) + "/", 1)[1] for f in scan_paths([tmp_path]).findings)
    assert paths == ["src/a.py", "sub/h.py"]


def test_other_file_kinds_are_scanned(tmp_path):
    from conftest import copy_samples

    samples = copy_samples(tmp_path / "s")
    found = {(f.path.rsplit("/", 1)[-1], f.rule_id) for f in scan_paths([samples]).findings}
    assert {("Dockerfile", "NRN801"), ("requirements.txt", "NRN802"), ("run_train.sh", "NRN701"), ("run_train.sh", "NRN702")} <= found


def test_notebook_findings_are_cell_addressed_and_magics_ignored(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Training"),
        nbformat.v4.new_code_cell("%matplotlib inline\nimport torch as th"),
        nbformat.v4.new_code_cell("!nvidia-smi\nmodel = net.cuda()"),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(nb, path)
    findings = scan_paths([path]).findings
    assert [(f.rule_id, f.cell, f.span.line) for f in findings] == [("NRN702", 3, 1), ("NRN101", 3, 2)]


def test_parallel_scan_finds_the_same_as_serial(tmp_path):
    from conftest import copy_samples

    samples = copy_samples(tmp_path / "s")
    serial = scan_paths([samples], ScanOptions(jobs=1)).findings
    parallel = scan_paths([samples], ScanOptions(jobs=2)).findings
    assert [f.to_dict() for f in serial] == [f.to_dict() for f in parallel]


def test_fast_positions_equal_libcst_position_provider():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from conftest import ROOT
    from migrator.api import _index
    from migrator.scan.context import Context as _Collector
    from migrator.scan.positions import node_ranges
    from migrator.scan.walk import walk

    sources = [p.read_text() for p in (ROOT / "samples").glob("*.py")]
    sources.append("x = (\r\n  t.cuda()  )\r\n\ndef f(device='cuda:1'):\n    return f'{a.cuda()}' if b else [torch.float64]\n")
    for source in sources:
        module = cst.parse_module(source)
        collector = _Collector(_index(ScanOptions()), module)
        walk(module, collector)
        nodes = [c.node for c in collector.candidates]
        assert nodes
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        got = node_ranges(module, source, nodes)
        for node in nodes:
            r = expected[node]
            assert got[id(node)] == (r.start.line, r.start.column, r.end.line, r.end.column)


@pytest.mark.parametrize("pattern, token", [
    ("^CUDA_VISIBLE_DEVICES$", "CUDA_VISIBLE_DEVICES"),
    ("^NCCL_[A-Z0-9_]+$", "NCCL_"),
    ("(^|\\s)nvidia-smi\\b", "nvidia-smi"),
    ("^(CUDA_HOME|CUDA_PATH)$", "CUDA_"),
])
def test_prefilter_token_is_contained_in_every_match(pattern, token):
    from migrator.scan.index import _literal_token

    assert _literal_token(pattern) == token


def test_a_string_matched_by_any_alternative_is_found():
    source = 'import os\nos.environ.get("CUDA_PATH")\n'
    assert ids(source) == ["NRN704"]


@pytest.mark.parametrize("source", [
    "import numpy as xp\nimport torch\nt = torch.tensor(xp.zeros(3))\n",
    "import numpy.random as npr\nimport torch\nt = torch.from_numpy(npr.rand(3))\n",
    "from numpy.random import rand\nfrom torch import as_tensor\nt = as_tensor(rand(3))\n",
    "import numpy\nimport torch\ndef f():\n    grid = numpy.linspace(0, 1, 5)\n    return torch.tensor(grid)\n",
])
def test_prefilter_keeps_numpy_arrays_through_any_import_form(source):
    assert "NRN308" in ids(source)


def test_prefilter_passes_every_python_example_that_has_a_finding():
    """The prefilter skips parsing; it must never skip a file that has a finding."""
    from migrator.core.catalogue import load_catalogue
    from migrator.scan.engine import RuleIndex
    from migrator.testing import collect_examples

    catalogue = load_catalogue()
    for case in collect_examples(catalogue):
        ex = case.example
        if case.kind != "bad" or ex.get("file_kind", "python") != "python" or case.rule.category == "tool":
            continue  # tool findings (NRN000, NRN001) are made beside the prefilter, not matched
        index = RuleIndex(catalogue.for_target(ex.get("target", "portable")))
        assert index.python_may_match(ex["code"], ex.get("path", "example.py")), case.id


def test_prefilter_answers_do_not_depend_on_the_files_before():
    """One index answers every file of a scan, and moves the test that let a file through to
    the front for the next one: each answer must still be the one a fresh index gives."""
    import random

    from migrator.core.catalogue import load_catalogue
    from migrator.scan.engine import RuleIndex
    from migrator.testing import collect_examples

    catalogue = load_catalogue()
    cases = [c for c in collect_examples(catalogue) if c.example.get("file_kind", "python") == "python"]
    for target in ("portable", "neuron"):
        fresh = RuleIndex(catalogue.for_target(target))
        sources = [(c.example["code"], c.example.get("path", "example.py")) for c in cases]
        expected = {s: fresh.python_may_match(*s) for s in sources}
        assert any(expected.values()) and not all(expected.values())  # both answers are exercised
        shared = RuleIndex(catalogue.for_target(target))
        for seed in range(3):
            random.Random(seed).shuffle(sources)
            assert [shared.python_may_match(*s) for s in sources] == [expected[s] for s in sources]


def test_setup_py_only_matchers_do_not_make_other_files_parse():
    from migrator.core.catalogue import load_catalogue
    from migrator.scan.engine import RuleIndex

    index = RuleIndex(load_catalogue().for_target("portable"))
    source = 'DEPS = ["torch==2.3.1+cu121"]\n'
    assert index.python_may_match(source, "pkg/setup.py")
    assert not index.python_may_match(source, "pkg/train.py")
    assert ids(source, path="setup.py") == ["NRN802"] and ids(source, path="train.py") == []


def test_no_message_keeps_an_unfilled_placeholder():
    """A rule whose matchers fill different values (`name` for a reference, `value` for an
    environment key) must not print "{value}" for some of its findings (NRN704 did)."""
    import re

    from migrator.core.catalogue import load_catalogue
    from migrator.testing import collect_examples

    for case in collect_examples(load_catalogue()):
        ex = case.example
        if case.kind != "bad":
            continue
        kind = ex.get("file_kind", "python")
        for finding in scan_source(ex["code"], ex.get("path", "example.py" if kind == "python" else "example.sh"), kind,
                                   ScanOptions(target=ex.get("target", "portable"))):
            assert not re.search(r"\{(name|value|arg)\}", finding.message), (case.id, finding.message)


def test_a_reference_match_fills_the_value_placeholder():
    source = "from torch.utils.cpp_extension import CUDA_HOME\nbuild = CUDA_HOME is not None\n"
    messages = [f.message for f in scan_source(source, "x.py", "python", ScanOptions()) if f.rule_id == "NRN704"]
    assert messages and all("{value}" not in m and "CUDA_HOME" in m for m in messages)


# -- issue 11: files and bindings the scan used to miss -----------------------------------------
def test_a_notebook_pip_line_continued_with_a_backslash_is_one_shell_command(tmp_path):
    import nbformat

    from migrator.api import fix_source

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "!pip install torch==2.9.0 \\\n    --index-url https://download.pytorch.org/whl/cu121\nimport torch\nx = torch.ones(1).cuda()")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    found = scan_paths([path]).findings
    assert ("NRN000", 1) not in [(f.rule_id, f.cell) for f in found]  # the continuation is not Python
    assert {(f.rule_id, f.span.line) for f in found} >= {("NRN802", 2), ("NRN101", 4)}
    fixed = fix_source(path.read_text(), str(path), "notebook").source
    assert "--index-url https://download.pytorch.org/whl/cu121" in fixed  # the shell lines come back as they were


@pytest.mark.parametrize("source", [
    "try: import torch\nexcept ImportError: torch = None\ntorch.cuda.synchronize()\n",
    "import pytest\ntorch = pytest.importorskip('torch')\ndef test_sync():\n    torch.cuda.synchronize()\n",
    "import pytest\ndef test_sync():\n    torch = pytest.importorskip('torch')\n    torch.cuda.synchronize()\n",
])
def test_torch_bound_on_one_line_try_or_by_importorskip_resolves(source):
    assert [f.rule_id for f in scan_source(source, "test_x.py")] == ["NRN202"]


def test_yaml_files_are_matched_only_when_their_keys_make_them_training_configs(tmp_path):
    (tmp_path / "fit.yaml").write_text("trainer:\n  accelerator: gpu\n  precision: 16-mixed\n")
    (tmp_path / "accelerate.yml").write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: fp16\n")
    (tmp_path / "k8s.yaml").write_text("spec:\n  accelerator: gpu\n  precision: 16-mixed\n")
    (tmp_path / "ci.yml").write_text("\xff\xfe bytes that are not text \x00\n")
    # Aliases are never expanded: the file is read as text, line by line.
    (tmp_path / "bomb.yaml").write_text("trainer:\n  accelerator: gpu\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b, *b]\n" * 200)
    found = sorted((f.path.rsplit("/", 1)[-1], f.rule_id, f.span.line) for f in scan_paths([tmp_path]).findings)
    assert [x for x in found if x[0] != "bomb.yaml"] == [
        ("accelerate.yml", "NRN311", 2), ("fit.yaml", "NRN105", 2), ("fit.yaml", "NRN312", 3)]
    assert {x[1] for x in found if x[0] == "bomb.yaml"} == {"NRN105"}
    assert all(not f.fixable for f in scan_paths([tmp_path]).findings)


def test_operators_data_is_schema_checked(tmp_path, monkeypatch):
    import shutil

    from migrator.core import catalogue
    from migrator.core.catalogue import RuleError
    from migrator.core.resources import rules_dir

    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    monkeypatch.setattr(catalogue, "rules_dir", lambda: rules)
    catalogue.load_operators.cache_clear()
    try:
        assert any("torch.nn.functional.interpolate" in e["names"] for e in catalogue.load_operators())
        text = (rules / "operators.yaml").read_text()
        (rules / "operators.yaml").write_text(text.replace("    source: https://github.com/aws-neuron/aws-neuron-sdk/issues/995\n", "", 1))
        catalogue.load_operators.cache_clear()
        with pytest.raises(RuleError, match="operators.yaml: field 'operators/0'"):
            catalogue.load_operators()
    finally:
        catalogue.load_operators.cache_clear()


def test_test_scaffolding_is_info_and_says_so():
    # Issue 11 (Precision): a skip condition, an isolation step or an expected failure in a
    # test is test scaffolding, reported at info with a message that says so.
    source = (
        "import pytest, torch\n"
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
        "def test_a(monkeypatch):\n"
        "    monkeypatch.delenv('CUDA_VISIBLE_DEVICES', raising=False)\n"
        "    with pytest.raises(RuntimeError):\n"
        "        torch.zeros(1).to(0)\n"
        "    torch.cuda.synchronize()\n"
    )
    found = {f.rule_id: f for f in scan_source(source, "tests/test_a.py")}
    for rule in ("NRN201", "NRN701", "NRN107"):
        assert found[rule].severity.value == "info" and "test scaffolding" in found[rule].message
    assert found["NRN202"].severity.value != "info"  # the test's own CUDA call is not scaffolding
    program = {f.rule_id: f for f in scan_source(source, "train.py")}
    assert program["NRN201"].severity.value == "error"  # outside tests nothing changes


def test_code_only_under_a_cuda_or_rocm_guard():
    source = (
        "import torch\n"
        "IS_THOR = torch.cuda.is_available() and torch.version.cuda is not None\n"
        "if torch.version.hip:\n"
        "    n = torch.cuda.device_count()\n"
        "if device_type == 'cuda' and torch.version.hip:\n"
        "    pass\n"
        "info = {'cuda': torch.version.cuda}\n"
        "if dist.get_backend() == torch.distributed.Backend.NCCL:\n"
        "    pass\n"
        "use = torch.version.cuda is not None\n"
    )
    lines = sorted((f.span.line, f.rule_id) for f in scan_source(source, "lib.py"))
    assert lines == [(2, "NRN201"), (10, "NRN703")]


def test_a_pyproject_line_belongs_to_the_setting_it_is_part_of():
    from migrator.scan.config_keys import key_paths

    text = '''[project]
name = "x"  # [not a table]
dependencies = [
    "torch>=2.9",  # a comment with ] and [
    """flash-attn
    """,
]
description = """
dependencies = ["xformers"]
"""
"tool" . 'poetry' = {}
[tool.poetry.dependencies]
flash-attn = {version = "^2", extras = ["x"]}
[[tool.mypy.overrides]]
module = ["apex.*"]
'''
    paths = key_paths(text.splitlines(), "pyproject")
    assert paths == ["", "project.name", "project.dependencies", "project.dependencies", "project.dependencies",
                     "project.dependencies", "project.dependencies", "project.description", "project.description",
                     "project.description", "project.tool.poetry", "", "tool.poetry.dependencies.flash-attn", "",
                     "tool.mypy.overrides.module"]


def test_a_setup_cfg_line_belongs_to_the_option_it_continues():
    from migrator.scan.config_keys import key_paths

    text = "[options]\ninstall_requires =\n    torch\n\n    flash-attn\npython_requires: >=3.9\n[options.extras_require]\ngpu = xformers\n"
    assert key_paths(text.splitlines(), "setupcfg") == [
        "", "options.install_requires", "options.install_requires", "", "options.install_requires",
        "options.python_requires", "", "options.extras_require.gpu"]
