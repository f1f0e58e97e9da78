"""`option-default` rules: a command-line default a rule names (`add_argument("--accelerator", default="gpu")`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.scan.nodes import literal as _literal
from migrator.scan.values import string_value as _string_value

__all__ = ["match"]


def match(ctx: Any, call: cst.Call, positional: list[cst.Arg]) -> None:
    """`parser.add_argument("--accelerator", default="gpu")`: a command-line default a rule names."""
    options = [_string_value(a.value) or "" for a in positional]
    default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
    if default is None:
        return
    literal = _literal(default)
    for rule, m in ctx.index.option_defaults:
        if any(o.startswith("-") and any(key in o for key in m["options"]) for o in options) and literal in m["values"]:
            ctx.add(rule, default, name=options[0], value=literal, context={"call": call, "argument": m})
            ctx.suppressed.add(id(default))
            return
