"""The scan's shortcuts give what the long way gives: parents, the unvalidated parse, noqa lines."""

from pathlib import Path

import libcst as cst
import pytest

from migrator import scan_source
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
