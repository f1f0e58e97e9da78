"""`method` rules: a method called on anything (`.cuda()`, `.backward()` in a loop)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.scan.resolve import dotted_name

__all__ = ["match"]


def match(ctx: Any, node: cst.Call, attr: str) -> None:
    """A method rule on `node` (`loss.backward()` in a loop, `x.cuda()`); the first that applies."""
    if id(node) in ctx.host_casts:
        return  # `x.double().cpu()`: a conversion whose result goes straight to the host is host work
    if ctx.functions and ctx.functions[-1] == attr:
        # `def cuda(self): return self._storage.cuda()` (torch's Storage, Module.double): a method
        # that passes the call on; each caller's `.cuda()` is matched by the same name.
        return
    for rule, m in ctx.index.methods[attr]:
        if m.get("in_loop") and not ctx.loop_nodes:
            continue
        if m.get("in_functions") and not any(f in m["in_functions"] for f in ctx.functions):
            continue

        if m.get("receiver") and not ctx.index.pattern(m["receiver"], rule).search(dotted_name(node.func.value) or ""):
            continue
        if m.get("module_contains") and not any(t in ctx._module_code() for t in m["module_contains"]):
            continue
        if m.get("module_lacks") and any(t in ctx._module_code() for t in m["module_lacks"]):
            continue
        loop = ctx.loop_nodes[-1] if ctx.loop_nodes else None
        if m.get("loop_with"):
            # The step loop: with gradient accumulation, backward() runs in an inner loop.
            loop = next((lp for lp in reversed(ctx.loop_nodes) if m["loop_with"] in ctx._code_of(lp)), loop)
        if m.get("unless_loop_contains") and loop is not None and any(
                t in ctx._code_of(loop) for t in m["unless_loop_contains"]):
            continue
        ctx.add(rule, node, name=attr, context={"call": node, "method": True, "loop": loop})
        break
