"""`builtin-call` rules: `print(loss)` of a tensor in a training loop and the like."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.scan.nodes import names_in
from migrator.scan.words import TENSOR_METADATA

__all__ = ["match"]


def match(ctx: Any, node: cst.Call, positional: list[cst.Arg]) -> None:
    name = node.func.value  # type: ignore[attr-defined]
    for rule, m in ctx.index.builtins[name]:
        if m.get("in_loop") and not ctx.loop_nodes:
            continue
        if m.get("loop_contains") and not all(n in ctx._code_of(ctx.loop_nodes[-1]) for n in m["loop_contains"]):
            continue
        value = next((a.value for a in positional if _may_be_tensor(ctx, a.value)), None) if m.get("value_args") else node
        if value is None:
            continue
        ctx.add(rule, node, name=name, value=ctx.module.code_for_node(value)[:60], context={"call": node})
        break


def _may_be_tensor(ctx: Any, value: cst.BaseExpression) -> bool:
    """A printed value that may be a tensor: a name, attribute or subscript, not text, a loop
    counter (`for step in ...`) or tensor metadata (`x.shape`)."""
    if isinstance(value, cst.Attribute):
        return value.attr.value not in TENSOR_METADATA and _may_be_tensor(ctx, value.value)
    if isinstance(value, cst.Subscript):
        return _may_be_tensor(ctx, value.value)
    if isinstance(value, cst.Name):
        return value.value not in _loop_targets(ctx) and value.value not in ("self", "args", "config", "cfg")
    return False


def _loop_targets(ctx: Any) -> set[str]:
    names: set[str] = set()
    for loop in ctx.loop_nodes:
        if isinstance(loop, cst.For):
            names.update(n.value for n in names_in(loop.target))
    return names
