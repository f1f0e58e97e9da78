"""Small questions about libcst nodes the context pass and the matchers share."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.scan.values import string_value as _string_value

__all__ = ["names_in", "literal", "cuda_fstring"]


def names_in(target: cst.BaseExpression) -> list[cst.Name]:
    """The names a `for` target binds (`x`, `(i, (a, b))`, `[k, v]`)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in names_in(el.value)]
    return []


def literal(value: cst.BaseExpression) -> Any:
    """A string, int, True/False/None literal's value, else None."""
    literal: Any = _string_value(value)
    if literal is None and isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        literal = {"True": True, "False": False, "None": None}[value.value]
    if literal is None and isinstance(value, cst.Integer):
        literal = int(value.value, 0)
    return literal


def cuda_fstring(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The index expression of `f"cuda:{expr}"`, else None."""
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        first, second = node.parts
        if isinstance(first, cst.FormattedStringText) and first.value == "cuda:" and isinstance(second, cst.FormattedStringExpression):
            return second.expression
    return None
