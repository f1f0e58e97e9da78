"""`call` and `reference` rules: a qualified name used or called (`torch.cuda.synchronize()`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

__all__ = ["match"]


def match(ctx: Any, node: cst.Name | cst.Attribute) -> None:
    if id(node) in ctx.inner or id(node) in ctx.suppressed or ctx.annotations:
        return  # an annotation (`stream: torch.cuda.Stream | None`) names a type; it runs nothing
    qname = ctx.resolve(node)
    if qname is None:
        return
    call = ctx.callees.get(id(node))
    for rule in ctx.index.lookup(qname, call is not None):
        needs = ctx.index.reference_context.get((rule.id, qname))
        if needs == "dtype" and call is None and (id(node) not in ctx.dtype_ctx or id(node) in ctx.host_casts):
            continue  # `x.to(torch.float64).cpu()`: float64 on the host
        if needs == "code" and (ctx.quiet or ctx.fstrings):
            continue
        unless = ctx.index.unless_keywords.get((rule.id, qname))
        # `**kwargs` may hold the keyword (`torch.compile(fn, **config)` with a backend in it).
        if unless and call is not None and any((a.keyword is not None and a.keyword.value in unless) or a.star == "**"
                                               for a in call.args):
            continue
        wrappers = ctx.index.unless_wrapped.get((rule.id, qname))
        outer = ctx.wrapped_by.get(id(call)) if call is not None else None
        if wrappers and outer is not None and ctx.resolve(outer.func) in wrappers:
            continue
        # `value`: the text as written (`dist.Backend.NCCL`, `CUDA_HOME`), for messages shared with string matchers.
        ctx.add(rule, node, name=qname, value=ctx.module.code_for_node(node), context={"call": call, "callee": call is not None})
