"""The scan's shortcuts give what the long way gives: parents, the unvalidated parse, noqa lines."""

from pathlib import Path

import libcst as cst
import pytest

from migrator import ScanOptions, scan_source
from migrator.scan.values import Parents

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "samples").glob("*.py")) + sorted((ROOT / "migrator").glob("*.py"))


@pytest.mark.parametrize("path", SOURCES[:12], ids=lambda p: p.name)
def test_parents_from_fields_equal_libcst_children(path):
    module = cst.parse_module(path.read_bytes())
    expected: dict[int, int] = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        for child in node.children:
            expected[id(child)] = id(node)
            stack.append(child)
    assert {k: id(v) for k, v in Parents(module).of.items()} == expected
    syntax = {k: id(v) for k, v in Parents(module, syntax_only=True).of.items()}
    assert syntax.items() <= expected.items()


@pytest.mark.parametrize("path", SOURCES[:12], ids=lambda p: p.name)
def test_unvalidated_parse_builds_the_same_tree(path):
    from migrator.sources.parse import parse_module

    raw = path.read_bytes()
    fast, checked = parse_module(raw), cst.parse_module(raw)
    assert fast.code == checked.code
    assert fast.deep_equals(checked)
    # Validation is back on for nodes built afterwards (the fixer's).
    with pytest.raises(cst.CSTValidationError):
        cst.SimpleWhitespace("x")


@pytest.mark.parametrize("source, expected", [
    ("import torch\nx = y.cuda()  # noqa: NRN101\n", []),
    ("import torch\n# neuron-migrator: noqa\nx = y.cuda()\n", []),
    ("import torch\nz = 1  # noqa: F401\nx = y.cuda()\n", ["NRN101"]),
    ("import torch\ns = '# noqa'; x = y.cuda()\n", ["NRN101"]),  # not a comment
    ("import torch\nx = (y  # noqa\n     .cuda())\n", []),  # any line of the finding
])
def test_noqa_is_read_only_where_it_can_apply(source, expected):
    assert [f.rule_id for f in scan_source(source, "x.py")] == expected


def test_walk_by_strings_finds_what_the_path_walk_found(tmp_path):
    """discover._walk works on strings relative to the root; same files, same order, same errors."""
    from migrator.sources.discover import discover

    (tmp_path / ".gitignore").write_text("ignored.py\nbuild_out/\n!keep.py\n")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / ".gitignore").write_text("*.sh\nsub/skip.py\n")
    for rel in ["a.py", "ignored.py", "keep.py", "pkg/b.py", "pkg/run.sh", "pkg/sub/skip.py", "pkg/sub/c.py",
                "pkg/sub/requirements.txt", "build_out/d.py", "venvish/e.py", "Dockerfile"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "venvish" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "dev.txt").write_text("torch\n")
    found = [(p.relative_to(tmp_path).as_posix(), kind) for p, kind in discover([tmp_path], ["*.txt", "!dev.txt"])]
    assert found == [("Dockerfile", "dockerfile"), ("a.py", "python"), ("keep.py", "python"), ("pkg/b.py", "python"),
                     ("pkg/sub/c.py", "python"), ("requirements/dev.txt", "requirements")]


def test_a_scan_leaves_no_cyclic_garbage():
    """scan_source runs with the cycle collector off (api._gc_paused): what a scan allocates
    must be freed by reference counting, or it would pile up until the next collection."""
    import gc

    sources = [p.read_bytes() for p in sorted((ROOT / "samples").glob("*.py"))]
    sources.append(b"import torch\nd = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                   b"def f():\n    x = [1.0] * 3\n    return torch.tensor(x).to(d)\n" * 20)
    scan_source(sources[0], "warm.py")
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for i, raw in enumerate(sources):
            scan_source(raw, f"f{i}.py")
        assert gc.collect() == 0, sorted({type(o).__name__ for o in gc.garbage})[:20]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


@pytest.mark.parametrize("literal", [
    "'cuda'", '"cuda:0"', "''", '""', "'''a\nb'''", '""""""', "r'\\d'", "'\\x63uda'", "u'é'", "R'x'",
    "b'cuda'", "rb'x'", "'a\"b'", '"""q"r"""', "'\\\\'", "'tab\\t'",
])
def test_string_value_fast_path_equals_literal_eval(literal):
    import ast

    from migrator.scan.values import string_value

    expected = ast.literal_eval(literal)
    got = string_value(cst.parse_expression(literal))
    assert got == (expected if isinstance(expected, str) else None)


TRICKY = [
    "# header\n\n\nimport torch\n\n\n# about f\n@decorate\n# between\n@torch.cuda.amp.custom_fwd\ndef f(x):\n    return x.cuda()\n",
    "import torch\na = 1; b = torch.cuda.device_count(); c = x.cuda()\n\n\nclass K:\n    d = y.cuda()\n",
    "import torch\r\n\r\nx = (\r\n  t.cuda()  )\r\n# tail\r\n",
    "import torch\nx = t.cuda()",  # no newline at the end
    '"""Doc."""\nimport torch\nif True:\n    def g():\n        return torch.cuda.is_available()\n\n# footer\n\n',
]


@pytest.mark.parametrize("source", TRICKY + [p.read_text() for p in sorted((ROOT / "samples").glob("*.py"))])
def test_positions_from_statements_equal_the_whole_module(source):
    """positions.node_ranges places each statement with findings at the line the ast gives it
    and checks its text; the ranges equal those of generating the whole module."""
    import ast

    from migrator.api import _index
    from migrator.scan import positions
    from migrator.scan.context import Context
    from migrator.scan.walk import walk
    from migrator.sources.prune import statement_lines

    module = cst.parse_module(source)
    collector = Context(_index(ScanOptions()), module, "x.py", False)
    owners = {}
    for number, statement in enumerate(module.body):
        first = len(collector.candidates)
        walk(statement, collector)
        owners.update((id(c.node), number) for c in collector.candidates[first:])
    nodes = [c.node for c in collector.candidates]
    assert nodes
    lines = statement_lines(ast.parse(source))
    starts = [0] + [m.end() for m in positions._NEWLINE.finditer(source)]
    assert positions._statement_ranges(module, source, nodes, starts, lines, owners) is not None
    assert positions.node_ranges(module, source, nodes, lines, owners) == positions.node_ranges(module, source, nodes)
