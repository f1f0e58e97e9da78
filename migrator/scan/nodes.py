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


def truth(value: cst.BaseExpression) -> bool | None:
    """Whether a constant is true (`"gloo"`, `1.0`, `[x]`) or false (`None`, `""`, `0`, `[]`), as
    `or`/`and` read it; None where the value is not a constant."""
    while isinstance(value, cst.NamedExpr):
        value = value.value
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value == "True"
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        text = _string_value(value)
        return None if text is None else bool(text)
    try:
        if isinstance(value, cst.Integer):
            return int(value.value, 0) != 0
        if isinstance(value, cst.Float):
            return float(value.value.replace("_", "")) != 0
        if isinstance(value, cst.Imaginary):
            return complex(value.value.replace("_", "")) != 0
    except ValueError:
        return None
    if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return bool(value.elements)
    return None


def cuda_fstring(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The index expression of `f"cuda:{expr}"`, else None."""
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        first, second = node.parts
        if isinstance(first, cst.FormattedStringText) and first.value == "cuda:" and isinstance(second, cst.FormattedStringExpression):
            return second.expression
    return None
