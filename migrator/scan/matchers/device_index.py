"""`device-index` rules: an int where a device goes (`.to(rank)`, `device=local_rank`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

__all__ = ["match"]


def match(ctx: Any, call: cst.Call, value: cst.BaseExpression) -> None:
    """`.to(rank)`, `.to(ctx.gpu_id)`, `device=local_rank`: an int, which means "accelerator index"."""
    if ctx.index.device_index and ctx.value_scopes[-1].is_index(value):
        for rule in ctx.index.device_index:
            ctx.add(rule, value, value=ctx.module.code_for_node(value)[:60], context={"call": call, "index_arg": value})
            return
