"""`call` and `reference` rules: a qualified name used or called (`torch.cuda.synchronize()`)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

__all__ = ["match", "in_functions"]


def in_functions(ctx: Any, names: list[str] | None) -> bool:
    """Inside a function of one of `names` (`forward`), at any depth; True without names."""
    return not names or any(f in names for f in ctx.functions)


def _moved_before(ctx: Any, call: cst.Call) -> bool:
    """The call's first argument is a name the file moves to an accelerator before the call
    (`model.to(device)`, `model.cuda()`; not `.to("cpu")` or a dtype). Read in the file's own
    text, which a pruned parse still has (`Context._code`), so a dropped line still counts."""
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    if not positional or not isinstance(positional[0].value, cst.Name):
        return False
    code = ctx._module_code()
    at = code.find(ctx.module.code_for_node(call))
    if _moved(positional[0].value.value, code[:at] if at >= 0 else code):
        return True
    # `def export(model, example): return torch_neuronx.trace(model, example)`, called as
    # `export(model, ...)` after `model.to(device)`: the move that counts is before that call.
    # Only a module-level function whose first parameter is traced (a method's is `self`).
    scope = ctx.value_scopes[-1].node
    if not isinstance(scope, cst.FunctionDef) or len(ctx.defs) != 1:
        return False
    params = [*scope.params.posonly_params, *scope.params.params]
    if not params or params[0].name.value != positional[0].value.value:
        return False
    for use in re.finditer(rf"(?<![\w.])(?<!def ){re.escape(scope.name.value)}\(\s*(\w+)\s*[,)]", code):
        if _moved(use.group(1), code[:use.start()]):
            return True
    return False


def _moved(name: str, before: str) -> bool:
    """`before` moves `name` to an accelerator: `name.to(device)`, `name.cuda()`."""
    return re.search(rf"(?<![\w.]){re.escape(name)}\s*\.\s*(?:cuda\(|to\((?!\s*['\"]cpu|\s*(?:torch\.)?(?:float|bfloat|half|int|double|dtype)))",
                     before) is not None


def _conditions_hold(ctx: Any, m: dict[str, Any], node: cst.CSTNode, call: cst.Call | None) -> bool:
    if not in_functions(ctx, m.get("in_functions")):
        return False
    if m.get("first_argument_moved") and (call is None or not _moved_before(ctx, call)):
        return False
    if m.get("unless_compared") and call is None and id(node) in ctx.compared:
        return False  # `backend == dist.Backend.NCCL`: a constant tested against, not chosen
    if m.get("assigned") and id(node) not in ctx.written:
        return False  # `torch._inductor.config.max_autotune` only read: nothing is set
    if "assigned_values" in m:
        key = id(node)
        if key not in ctx.assigned or ctx.assigned[key] not in m["assigned_values"]:
            return False
    return True


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
        if needs == "dtype" and id(node) in ctx.type_branches:
            continue  # under `if is_complex:`: the caller's complex tensor handled, none introduced
        if needs == "code" and (ctx.quiet or ctx.fstrings or id(node) in ctx.records):
            continue  # only logged, recorded in a dict, or deciding a warning: nothing behaves differently
        unless = ctx.index.unless_keywords.get((rule.id, qname))
        # `**kwargs` may hold the keyword (`torch.compile(fn, **config)` with a backend in it).
        if unless and call is not None and any((a.keyword is not None and a.keyword.value in unless) or a.star == "**"
                                               for a in call.args):
            continue
        wrappers = ctx.index.unless_wrapped.get((rule.id, qname))
        outer = ctx.wrapped_by.get(id(call)) if call is not None else None
        if wrappers and outer is not None and ctx.resolve(outer.func) in wrappers:
            continue
        conditions = ctx.index.condition(rule, qname)
        if conditions is not None and not _conditions_hold(ctx, conditions, node, call):
            continue
        # `value`: the text as written (`dist.Backend.NCCL`, `CUDA_HOME`), for messages shared with string matchers.
        ctx.add(rule, node, name=qname, value=ctx.module.code_for_node(node), context={"call": call, "callee": call is not None})
