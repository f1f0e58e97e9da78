"""`mask-index` rules: a tensor indexed by a boolean mask (`logits[mask]`, `x[x > 0]`), whose
result has as many elements as the mask has True values: a shape that changes with the data."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.scan.words import MASK_CALLS

__all__ = ["match", "holds_mask", "KEEPS_MASK"]


# The last word of the name says integer (`i`, `layer_idx`, `num_steps` is not: it ends in a count's noun).
_INT_NAME = re.compile(r"^[a-z]\d*$|(^|_)(i|j|k|n|idx|index|offset|shift|step|count|depth)\d*$", re.IGNORECASE)


def _int_like(value: cst.BaseExpression) -> bool:
    """`x[~i]` counts from the end (`~i == -i - 1`): an integer, or a name an integer goes by."""
    return isinstance(value, cst.Integer) or (isinstance(value, cst.Name) and _INT_NAME.search(value.value) is not None)


def _compared(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Comparison) and not any(
        isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in value.comparisons)


def _inverted(value: cst.BaseExpression) -> bool:
    """`~finished`: `~` inverts a boolean mask (on an integer index it would be a bug)."""
    return isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.BitInvert) and not _int_like(value.expression)


def holds_mask(value: cst.BaseExpression, masks: set[str]) -> bool:
    """Whether a name assigned `value` holds a boolean mask: a comparison, `~x`, `a & b` or `a | b`
    of masks, a mask-making call (`torch.isin(...)`, `x.logical_not()`, `x.bool()`), or a name
    in `masks` (the function's names already holding one)."""
    if _compared(value) or _inverted(value) or (isinstance(value, cst.Name) and value.value in masks):
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return holds_mask(value.left, masks) or holds_mask(value.right, masks)
    if isinstance(value, cst.IfExp):
        return holds_mask(value.body, masks) or holds_mask(value.orelse, masks)
    if isinstance(value, cst.Call):
        func = value.func
        # A method or `torch.isin`; a bare name only when it is not the builtin `bool` (a Python bool).
        if isinstance(func, cst.Attribute) and func.attr.value in KEEPS_MASK and holds_mask(func.value, masks):
            return True  # `(scores > 0).squeeze(-1)`, `(~finished).to(x.device)`: still a mask
        return (isinstance(func, cst.Attribute) and func.attr.value in MASK_CALLS) or (
            isinstance(func, cst.Name) and func.value != "bool" and func.value in MASK_CALLS)
    return False


# Tensor methods whose result is still a boolean mask when their tensor is one.
KEEPS_MASK = frozenset({"squeeze", "unsqueeze", "to", "view", "reshape", "expand", "expand_as", "flatten", "contiguous",
                         "clone", "detach", "cuda", "cpu", "t", "transpose", "permute", "any", "all", "repeat"})


def match(ctx: Any, node: cst.Subscript) -> None:
    """A mask-index rule on `node` when it is read (an assignment through a mask keeps shapes)."""
    if id(node) in ctx.store_targets or isinstance(node.value, (cst.Tuple, cst.List)):
        return  # (`(x, scores)[first]` indexes a Python tuple with a bool)
    indexes = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]  # `x[keep]`, `x[keep, :]`
    for rule, m, names in ctx.index.mask_indexes:
        if m.get("in_functions") and not any(f in m["in_functions"] for f in ctx.functions):
            continue
        for index in indexes:
            named = isinstance(index, cst.Name) and (names.search(index.value) or (m.get("comparisons") and index.value in ctx.masks[-1]))
            compared = m.get("comparisons") and _compared(index)
            inverted = m.get("comparisons") and _inverted(index)
            if named or compared or inverted:
                ctx.add(rule, node, name=ctx.module.code_for_node(node)[:60])
                return
