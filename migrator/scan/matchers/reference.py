"""`call` and `reference` rules: a qualified name used or called (`torch.cuda.synchronize()`)."""

from __future__ import annotations

import bisect
import re
from typing import Any

import libcst as cst

__all__ = ["match", "in_functions"]


def in_functions(ctx: Any, names: list[str] | None) -> bool:
    """Inside a function of one of `names` (`forward`), at any depth; True without names."""
    return not names or any(f in names for f in ctx.functions)


def _moved_before(ctx: Any, call: cst.Call) -> bool:
    """The call's first argument is a name the file last moved to an accelerator before the call
    (`model.to(device)`, `model.cuda()`; a later `.to("cpu")` moves it back, a dtype is no move).
    Read in the file's own text, which a pruned parse still has (`Context._code`), so a dropped
    line still counts."""
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    if not positional or not isinstance(positional[0].value, cst.Name):
        return False
    code = ctx._module_code()
    moves = _moves(ctx, code)
    # Where the call is in the file's text: after each enclosing `def`/`class` in turn (the
    # same call text may stand in two functions).
    around = 0
    for enclosing in ctx.defs:
        found = re.search(rf"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(enclosing)}\b", code[around:], re.M)
        if found is None:
            break
        around += found.start()
    at = code.find(ctx.module.code_for_node(call), around)
    at = at if at >= 0 else len(code)
    name = positional[0].value.value
    # A model the tracing function binds itself (`model = X.from_pretrained(...)`) is moved, if
    # at all, in that function: a move of a same-named model in another function does not count.
    # (Read in the text: a pruned parse may lack the assignment.)
    since = 0
    here = ctx.value_scopes[-1].node
    if isinstance(here, cst.FunctionDef) and name not in {
            p.name.value for p in (*here.params.posonly_params, *here.params.params, *here.params.kwonly_params)}:
        start = code.rfind(f"def {here.name.value}", 0, at)
        if start >= 0 and re.search(rf"^[ \t]*{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", code[start:at], re.M):
            since = start
    if _on_accelerator(moves, name, at, since):
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
    for use in re.finditer(rf"(?<![\w.])(?<!def ){re.escape(scope.name.value)}\s*\(\s*(\w+)\s*[,)]", code):
        if not _in_comment(code, use.start()) and _on_accelerator(moves, use.group(1), use.start()):
            return True
    return False


_MOVE = re.compile(r"(?<![\w.])(\w+)\s*\.\s*(cuda\(|to\()")
_NO_MOVE = re.compile(r"\s*(?:torch\.)?(?:float|bfloat|half|int|double|dtype)")
_TO_CPU = re.compile(r"\s*(?:['\"]cpu\b|(?:torch\.)?device\(\s*['\"]cpu\b)")


def _moves(ctx: Any, code: str) -> dict[str, list[tuple[int, bool]]]:
    """Per name, the offsets of its moves in `code` in order, each True for an accelerator and
    False for the CPU (dtype casts left out); read once per file."""
    if ctx.moves is None:
        moves: dict[str, list[tuple[int, bool]]] = {}
        for found in _MOVE.finditer(code):
            rest = code[found.end(): found.end() + 40]
            if found.group(2) == "to(" and _NO_MOVE.match(rest):
                continue
            if _in_comment(code, found.start()):
                continue
            to_cpu = found.group(2) == "to(" and _TO_CPU.match(rest) is not None
            moves.setdefault(found.group(1), []).append((found.start(), not to_cpu))
        ctx.moves = moves
    return ctx.moves


def _on_accelerator(moves: dict[str, list[tuple[int, bool]]], name: str, at: int, since: int = 0) -> bool:
    """Whether the last move of `name` before offset `at` (and after `since`) is to an accelerator."""
    entries = moves.get(name)
    if not entries:
        return False
    before = bisect.bisect_left(entries, (at, False))  # the moves that start before `at`
    return before > 0 and entries[before - 1][0] >= since and entries[before - 1][1]


def _in_comment(code: str, at: int) -> bool:
    """A `#` earlier on the same line (a comment, or text in a string: either way not a call)."""
    return "#" in code[code.rfind("\n", 0, at) + 1: at]


def _conditions_hold(ctx: Any, m: dict[str, Any], node: cst.CSTNode, call: cst.Call | None) -> bool:
    if not in_functions(ctx, m.get("in_functions")):
        return False
    if m.get("first_argument_moved") and (call is None or not _moved_before(ctx, call)):
        return False
    if "max_arguments" in m and (call is None or len(call.args) > m["max_arguments"] or any(a.star for a in call.args)):
        return False  # `torch.where(cond)` gives indices; `torch.where(cond, x, y)` keeps the shape
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
    if call is None and id(node) in ctx.bare_decorators:
        # `@torch.compile` without parentheses: the call with no arguments. A rule's fix edits a
        # call's arguments, so this one is left for a person.
        written = ctx.module.code_for_node(node)
        for rule in ctx.index.bare_decorators.get(qname, ()):
            ctx.add(rule, node, name=qname, value=written, context={
                "call": None, "callee": True, "manual_reason": f"a bare `@{written}` decorator: change it by hand"})
