"""`mask-index` rules: a tensor indexed by a boolean mask (`logits[mask]`, `x[x > 0]`), whose
result has as many elements as the mask has True values: a shape that changes with the data."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

__all__ = ["match"]


# The last word of the name says integer (`i`, `layer_idx`, `num_steps` is not: it ends in a count's noun).
_INT_NAME = re.compile(r"^[a-z]\d*$|(^|_)(i|j|k|n|idx|index|offset|shift|step|count|depth)\d*$", re.IGNORECASE)


def _int_like(value: cst.BaseExpression) -> bool:
    """`x[~i]` counts from the end (`~i == -i - 1`): an integer, or a name an integer goes by."""
    return isinstance(value, cst.Integer) or (isinstance(value, cst.Name) and _INT_NAME.search(value.value) is not None)


def match(ctx: Any, node: cst.Subscript) -> None:
    """A mask-index rule on `node` when it is read (an assignment through a mask keeps shapes)."""
    if id(node) in ctx.store_targets or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return
    index = node.slice[0].slice.value
    for rule, m, names in ctx.index.mask_indexes:
        if m.get("in_functions") and not any(f in m["in_functions"] for f in ctx.functions):
            continue
        named = isinstance(index, cst.Name) and names.search(index.value)
        compared = m.get("comparisons") and isinstance(index, cst.Comparison) and not any(
            isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in index.comparisons)
        # `tokens[~finished]`: `~` inverts a boolean mask (on an integer index it would be a bug)
        inverted = m.get("comparisons") and isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.BitInvert) \
            and not _int_like(index.expression)
        if named or compared or inverted:
            ctx.add(rule, node, name=ctx.module.code_for_node(node)[:60])
            return
