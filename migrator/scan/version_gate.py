"""Branches that run only on an older PyTorch than any Neuron host has (issue 11, Precision).

`torch.Stream() if is_torch_greater_or_equal("2.7") else torch.cuda.Stream()`: the CUDA call is
the fallback for PyTorch before 2.7. A Neuron host runs the PyTorch of its target
(`host_pytorch` in rules/targets.yaml: TorchNeuron is built for PyTorch 2.13 and 2.14), so that
branch never runs there and is no migration blocker; on the GPU it stays as it is.

Recognised version tests (libcst nodes, read as written; nothing is imported or evaluated):
- flags named like transformers' `is_torch_greater_or_equal_than_2_7` (a name holding `torch`,
  a "greater or equal" word and the version as `_2_7`);
- `is_torch_greater_or_equal("2.7")`, `is_torch_version(">=", "2.7")`;
- a comparison of something named `torch...version` (`torch.__version__`, `TORCH_VERSION`,
  `version.parse(torch.__version__)`) with a version literal (`"2.7"`, `(2, 7)`,
  `version.parse("2.7")`), either side, and `not` of any of these.
"""

from __future__ import annotations

import re

import libcst as cst

from migrator.scan.resolve import dotted_name

__all__ = ["old_torch_branch", "version_tuple"]

_FLAG = re.compile(r"torch.*(?:greater_or_equal|greater_than_or_equal|version_ge|_ge_|geq|at_least)\D*?([0-9]{1,6})_([0-9]{1,6})(?:_[0-9]+)?$",
                   re.IGNORECASE)
# At most 6 digits a part: a longer one is no version (and int() refuses over 4300 digits).
_VERSION = re.compile(r"^v?([0-9]{1,6})\.([0-9]{1,6})(?![0-9])")
_NEWER = {"GreaterThanEqual": False, "GreaterThan": True}  # operator -> strict
_OLDER = {"LessThan": False, "LessThanEqual": True}
_MIRROR = {"GreaterThanEqual": "LessThanEqual", "GreaterThan": "LessThan", "LessThan": "GreaterThan",
           "LessThanEqual": "GreaterThanEqual"}


def old_torch_branch(test: cst.BaseExpression) -> tuple[str, tuple[int, ...]] | None:
    """("body" or "orelse", bound): the branch of an `if`/`IfExp` testing `test` that runs only
    on a PyTorch older than `bound` (a version tuple: `(2, 7)` for "before 2.7", `(2, 6, 1)` for
    "2.6 or before"); None when `test` is not a PyTorch version test."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    newer = _newer_than(test)
    if newer is None:
        return None
    is_newer, bound = newer
    return ("orelse" if is_newer != negated else "body"), bound


def _newer_than(test: cst.BaseExpression) -> tuple[bool, tuple[int, ...]] | None:
    """(True: the test holds on newer PyTorch, the bound) for a version test, else None."""
    name = dotted_name(test)
    if name is not None:
        found = _FLAG.search(name.rsplit(".", 1)[-1])
        return (True, (int(found.group(1)), int(found.group(2)))) if found else None
    if isinstance(test, cst.Call):
        callee = (dotted_name(test.func) or "").rsplit(".", 1)[-1]
        strings = [_string(a.value) for a in test.args if a.keyword is None]
        if callee == "is_torch_greater_or_equal" and strings and (v := version_tuple(strings[0])):
            return True, v
        if callee == "is_torch_version" and len(strings) >= 2 and (v := version_tuple(strings[1])):
            op = {">=": "GreaterThanEqual", ">": "GreaterThan", "<": "LessThan", "<=": "LessThanEqual"}.get(strings[0] or "")
            return _compare(op, v) if op else None
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = type(test.comparisons[0].operator).__name__
        left, right = test.left, test.comparisons[0].comparator
        if _names_torch_version(left) and (v := _literal_version(right)):
            return _compare(op, v)
        if _names_torch_version(right) and (v := _literal_version(left)) and op in _MIRROR:
            return _compare(_MIRROR[op], v)
    return None


def _compare(op: str, version: tuple[int, int]) -> tuple[bool, tuple[int, ...]] | None:
    if op in _NEWER:
        return True, version + ((1,) if _NEWER[op] else ())
    if op in _OLDER:
        return False, version + ((1,) if _OLDER[op] else ())
    return None


def _names_torch_version(node: cst.BaseExpression) -> bool:
    code = cst.Module([]).code_for_node(node).lower()
    # `torch.version.cuda` is the CUDA toolkit's version, `torch.version.hip` ROCm's.
    return ("torch" in code and "version" in code and '"' not in code and "'" not in code
            and re.search(r"cuda|hip|cudnn|nccl|git", code) is None)


def _literal_version(node: cst.BaseExpression) -> tuple[int, int] | None:
    if isinstance(node, cst.Tuple) and len(node.elements) >= 2:
        parts = [e.value for e in node.elements[:2]]
        if all(isinstance(p, cst.Integer) and len(p.value) <= 6 and p.value.isdigit() for p in parts):
            return int(parts[0].value), int(parts[1].value)  # type: ignore[union-attr]
        return None
    if isinstance(node, cst.Call) and len(node.args) == 1:  # version.parse("2.7"), Version("2.7")
        callee = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        return version_tuple(_string(node.args[0].value)) if callee in ("parse", "Version", "LooseVersion") else None
    return version_tuple(_string(node))


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - an odd literal is no version
            return None
        return value if isinstance(value, str) else None
    return None


def version_tuple(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of a version string such as `2.9`, `2.13.0` or `v2.7`, else None."""
    found = _VERSION.match(text or "")
    return (int(found.group(1)), int(found.group(2))) if found else None
