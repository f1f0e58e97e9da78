"""`argument` rules: a call's argument with a value a rule names (`backend="nccl"`, `np.zeros` data)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import libcst as cst

from migrator.core.catalogue import RuleSpec
from migrator.scan.nodes import literal as _literal
from migrator.scan.nodes import truth as _truth
from migrator.scan.values import string_value as _string_value

__all__ = ["match"]


def match(ctx: Any, rule: RuleSpec, m: dict[str, Any], call: cst.Call, positional: list[cst.Arg], qname: str) -> None:
    in_lambda = False
    if m.get("in_functions") and not any(f in m["in_functions"] for f in ctx.functions) and not (
            m.get("in_map_functions") and ctx.functions and not ctx.batched_maps().isdisjoint(ctx.functions)):
        if not (m.get("in_map_functions") and any(ctx.in_lambdas)):
            return
        in_lambda = True  # `ds.map(lambda b: tok(b["text"], padding=True), batched=True)`
    if m.get("unless_assigned_to") and ctx.assigning and ctx.index.pattern(m["unless_assigned_to"], rule).search(
            " ".join(ctx.module.code_for_node(t.target) for t in ctx.assigning[-1].targets)):
        return
    if m.get("unless_keywords") and any(a.keyword is not None and a.keyword.value in m["unless_keywords"] for a in call.args):
        return  # `padding="longest", pad_to_multiple_of=128`: the keyword already does what the rule asks
    value: cst.BaseExpression | None = None
    keyword = False
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == m.get("name"):
            value, keyword = arg.value, True
    if value is None and "position" in m and len(positional) > m["position"]:
        value = positional[m["position"]].value
    if value is None:
        if "values" in m and "key" not in m and m.get("name") and not in_lambda:
            _match_spread(ctx, rule, m, call, qname)
        return
    if "key" in m:
        # `LightningCLI(trainer_defaults={"precision": "16-mixed"})`: the value under one key of
        # a dict literal passed as the argument.
        if not isinstance(value, cst.Dict):
            return
        value = next((e.value for e in value.elements if isinstance(e, cst.DictElement) and _string_value(e.key) == m["key"]), None)
        if value is None:
            return
    if m.get("attribute") and ctx.attr_after.get(id(call)) not in m["attribute"]:
        return  # `torch.finfo(torch.float32).min`, not `.tiny`
    if m.get("non_literal"):
        # `mode=m`: a value held in a name or computed, where a literal rule cannot see it.
        # `non_literal: name`: only a bare name (`sdpa_kernel(backends)`), where an attribute is
        # a constant the rule's other matchers judge (`SDPBackend.MATH` is fine, FLASH is not).
        shapes = (cst.Attribute, cst.Subscript, cst.Call) if m["non_literal"] is True else ()
        # An attribute no import names (`self.backends`, `cfg.attn_backends`) holds a value as a name does.
        held = isinstance(value, cst.Attribute) and ctx.resolve(value) is None
        if isinstance(value, shapes) or _holds_name(value) or held:
            ctx.add(rule, value, name=qname, value=ctx.module.code_for_node(value)[:60], context={"call": call, "argument": m})
        return
    if m.get("value_calls"):
        inner = ctx.resolve(value.func) if isinstance(value, cst.Call) else None
        if isinstance(value, cst.Name):
            inner = next((scope[value.value] for scope in reversed(ctx.arrays) if value.value in scope), None)
            if inner is not None and value.value not in ctx.arrays[-1]:
                inner = None  # bound in an outer function: may have changed since
        explicit = isinstance(value, cst.Call) and any(a.keyword is not None and a.keyword.value == "dtype" for a in value.args)
        if inner in m["value_calls"] and not explicit and id(call) not in ctx.recast:
            ctx.add(rule, value, name=qname, value=inner, context={"call": call, "argument": m})
        return
    if m.get("value_names"):
        resolved = ctx.resolve(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if resolved in m["value_names"]:
            ctx.add(rule, value, name=qname, value=resolved, context={"call": call, "argument": m})
        return
    if m.get("any"):
        if isinstance(value, cst.IfExp) or (isinstance(value, cst.Name) and value.value == "None"):
            return  # None, or already chosen per device (what the fix writes)
        ctx.add(rule, value, name=qname, value=ctx.module.code_for_node(value)[:60], context={"call": call, "argument": m})
        return
    if keyword and "key" not in m and isinstance(value, cst.Name) and value.value not in ("None", "True", "False") and "values" in m:
        _match_held(ctx, rule, m, call, value, qname)
        return
    if keyword and "key" not in m and isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
            and "values" in m and ctx.resolve(value) is None and m.get("follow_fields", True):
        _match_field(ctx, rule, m, call, value, qname)
        return
    for outcome in _outcomes(ctx, value):
        reason = _negation(ctx, m, outcome)
        if reason is not None:
            if reason:
                ctx.add(rule, outcome, name=qname, value=True, context={"call": call, "argument": m, "manual_reason": reason})
            continue
        _match_literal(ctx, rule, m, call, outcome, qname)


def _negation(ctx: Any, m: dict[str, Any], value: cst.BaseExpression) -> str | None:
    """For a `not X` that a matcher of True (`fp16=not args.no_fp16`) reads: why a person decides
    (empty when it is never True); None for any other value."""
    if not (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)
            and "values" in m and any(v is True for v in m["values"])):
        return None
    operand = _truth(value.expression)
    if operand is True:
        return ""
    if operand is False:
        return f"`{m['name']}=` is always True here: decide it by hand"
    # On unless a flag or setting says otherwise, which decides.
    return f"`{m['name']}=` is True unless `{ctx.module.code_for_node(value.expression)[:60]}` is set: decide it by hand"


def _outcomes(ctx: Any, value: cst.BaseExpression):
    """The expressions whose value `value` may take: both branches of an `IfExp`
    (`precision=None if qlora else "bf16-mixed"`), the default after an `or`
    (`backend=args.backend or "nccl"`), the right of an `and`; a side that a literal left
    side rules out is not one (`"gloo" or x` is "gloo", `"nccl" and x` is x). An `IfExp` whose test names
    the device (`"nccl" if torch.cuda.is_available() else "gloo"`) has already chosen per
    device: none."""
    if isinstance(value, cst.NamedExpr):
        yield from _outcomes(ctx, value.value)  # `backend=(b := args.b or "nccl")`
    elif isinstance(value, cst.IfExp):
        if not re.search(r"cuda|gpu", ctx.module.code_for_node(value.test), re.IGNORECASE):
            yield from _outcomes(ctx, value.body)
            yield from _outcomes(ctx, value.orelse)
    elif isinstance(value, cst.BooleanOperation):
        left = _truth(value.left)  # a constant left side decides which side is the value
        left_is_value = left == isinstance(value.operator, cst.Or)
        if left is None or left_is_value:
            yield from _outcomes(ctx, value.left)
        if left is None or not left_is_value:
            yield from _outcomes(ctx, value.right)
    else:
        yield value


def _match_held(ctx: Any, rule: RuleSpec, m: dict[str, Any], call: cst.Call, name: cst.Name, qname: str) -> None:
    """`precision = "16-mixed" if args.fp16 else "32-true"` then `Trainer(precision=precision)`:
    each value a plain assignment in scope gives the name, reported where it is written and left
    for a person (the name may be read elsewhere, where a rewrite of its value would change what
    the program does)."""
    scope = ctx.value_scopes[-1]
    owner = scope.owner(name.value)
    if name.value in owner.device_names or name.value in owner.backend_names:
        return  # the engine follows these names already (a device or backend context on the value)
    key = (id(owner), name.value, rule.id, id(m))
    if key in ctx.held_read:
        return  # read once per name and matcher, however many calls pass it
    ctx.held_read.add(key)
    values, holder = scope.values_of(name.value)
    for held, statement in values:
        for branch in _outcomes(ctx, held):
            negated = _negation(ctx, m, branch)
            if negated:
                ctx.add(rule, branch, name=qname, value=True, context={
                    "call": call, "argument": m, "statement": statement,
                    "manual_reason": f"the value is held in {holder}, passed as `{m['name']}=`: {negated}"})
            if negated is not None:
                continue
            literal: Any = _literal(branch)
            if literal is not None and _expected(literal, m):
                reason = f"the value is held in {holder}, passed as `{m['name']}=`: change it where it is set, by hand"
                ctx.add(rule, branch, name=qname, value=literal,
                        context={"call": call, "argument": m, "statement": statement, "manual_reason": reason})


def _copied(ctx: Any, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """What `copy.deepcopy(X)`, `copy.copy(X)`, `deepcopy(X)` (imported from copy) or `X.copy()`
    copies: X; else None."""
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not value.args:
        return func.value  # `BASE.copy()`
    if value.args and value.args[0].keyword is None and value.args[0].star == "" \
            and ctx.resolve(func) in ("copy.deepcopy", "copy.copy"):
        return value.args[0].value
    return None


def _match_field(ctx: Any, rule: RuleSpec, m: dict[str, Any], call: cst.Call, value: cst.Attribute, qname: str) -> None:
    """`Accelerator(mixed_precision=config.mixed_precision)` where `config` is an instance of a
    class of this module whose body sets the field (`mixed_precision = "fp16"`, a dataclass
    field's default; the diffusers training tutorial's shape): reported where it is set and left
    for a person. The instance is the name's value here (`config = TrainingConfig()`), else the
    class a parameter is annotated with, else the module's value of that name (a parameter
    passed the module's `config`). A field given to the constructor (`TrainingConfig(
    mixed_precision="bf16")`) is that value; one made with positional arguments is not read."""
    holder, name = value.value.value, value.attr.value  # type: ignore[attr-defined]
    scope = ctx.value_scopes[-1]
    seen = (id(scope.owner(holder)), f"{holder}.{name}", rule.id, id(m))
    if seen in ctx.held_read:
        return
    ctx.held_read.add(seen)
    classes = {stmt.name.value: (index, stmt) for index, stmt in enumerate(ctx.module.body) if isinstance(stmt, cst.ClassDef)}
    if not classes:
        return
    made = [(v, at) for v, at in scope.values_of(holder)[0] if isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in classes]
    annotated = _annotation(scope.node, holder) if not made else None
    if not made and annotated is None and scope is not ctx.values.module:
        made = [(v, at) for v, at in ctx.values.module.values_of(holder)[0]
                if isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in classes]
    found: list[tuple[cst.BaseExpression, int, str]] = []
    if annotated in classes:
        found = [(v, classes[annotated][0], f"the default of `{annotated}.{name}`") for v in _class_field(classes[annotated][1], name)]
    for instance, at in made:
        given = next((a.value for a in instance.args if a.keyword is not None and a.keyword.value == name), None)  # type: ignore[attr-defined]
        cls = instance.func.value  # type: ignore[attr-defined]
        if given is not None:
            found.append((given, at, f"`{cls}({name}=...)`"))
        elif all(a.keyword is not None or a.star == "**" for a in instance.args) and not any(a.star == "**" for a in instance.args):  # type: ignore[attr-defined]
            found.extend((v, classes[cls][0], f"the default of `{cls}.{name}`") for v in _class_field(classes[cls][1], name))
    for held, statement, where in found:
        for branch in _outcomes(ctx, held):
            literal: Any = _literal(branch)
            if literal is not None and _expected(literal, m):
                reason = f"the value is {where}, read as `{holder}.{name}`: change it where it is set, by hand"
                ctx.add(rule, branch, name=qname, value=literal,
                        context={"call": call, "argument": m, "statement": statement, "manual_reason": reason})


def _annotation(function: cst.CSTNode, name: str) -> str | None:
    """The class name a parameter `name` of `function` is annotated with (`config: TrainConfig`)."""
    if not isinstance(function, cst.FunctionDef):
        return None
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name and param.annotation is not None and isinstance(param.annotation.annotation, cst.Name):
            return param.annotation.annotation.value
    return None


def _class_field(cls: cst.ClassDef, name: str) -> list[cst.BaseExpression]:
    """The values a class body gives `name`: `name = v`, `name: T = v`, `name: T = field(default=v)`."""
    out: list[cst.BaseExpression] = []
    for line in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            value = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and small.targets[0].target.value == name:
                value = small.value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) \
                    and (value.func.value if isinstance(value.func, cst.Name) else value.func.attr.value) == "field":
                value = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "default"), None)
            if value is not None:
                out.append(value)
    return out


def _spread_values(ctx: Any, value: cst.BaseExpression, key: str, statement: int | None, depth: int = 0,
                   follow: bool = True) -> list[tuple[cst.BaseExpression, int | None, str]]:
    """See `_spread_found`; each answer is kept for the file, since a name copied from itself
    (`args = dict(args, k=1)` a hundred times) reaches the same values by many paths."""
    scope = ctx.value_scopes[-1]
    memo_key = (id(scope), id(value), key, statement, depth, follow)
    kept = ctx.spread_memo.get(memo_key)
    if kept is None:  # (the scope and value are kept with the answer: their ids stay theirs)
        kept = ctx.spread_memo[memo_key] = (scope, value, list(_spread_found(ctx, value, key, statement, depth, follow)))
    return kept[2]


def _spread_found(ctx: Any, value: cst.BaseExpression, key: str, statement: int | None, depth: int = 0,
                  follow: bool = True):
    """(value, statement, holder) for `key` in a dict passed as `**value`: a dict literal or
    `dict(...)` call, written there or given to a name by a plain assignment (`ARGS = {"fp16":
    True}`), with the dicts spread or copied into it one level down (`{**DEFAULTS, "lr": 1e-4}`,
    `dict(DEFAULTS)`), a dict under a key of another (`CFG["trainer"]`), and a name under the
    key followed to its values (`{"precision": precision}`, a parameter's default; not with
    `follow=False`). `statement`: where `value` is written (None: the call's own statement).
    A name whose dict the file changes in place under `key` (`ARGS["fp16"] = False`,
    `ARGS.update(fp16=False)`; `_mutated`) holds what no literal shows: nothing is read from it."""
    if isinstance(value, cst.Name):
        if _mutated(ctx, value.value, key):
            return
        for held, where in ctx.value_scopes[-1].values_of(value.value)[0]:
            copied = _copied(ctx, held)
            if copied is not None and depth < 2:
                yield from _spread_values(ctx, copied, key, where, depth + 1, follow)  # copy.deepcopy(CFG), BASE.copy()
            elif isinstance(held, (cst.Dict, cst.Call, cst.Subscript)):
                yield from _spread_values(ctx, held, key, where, depth, follow)
        return
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index) \
            and (outer := _string_value(value.slice[0].slice.value)) is not None and depth < 2:
        # `**CFG["trainer"]`: the dict literal under that key (a name there is not followed)
        for inner, where, _ in _spread_values(ctx, value.value, outer, statement, depth + 1, follow=False):
            if isinstance(inner, (cst.Dict, cst.Call)):
                yield from _spread_values(ctx, inner, key, where, depth + 1)
        return
    holder = "the dict passed as `**`" if statement is None else "a dict"
    # In order: a later entry under `key` overrides what came before it (`{**BASE, "fp16": False}`).
    found: list[tuple[cst.BaseExpression, int | None, str]] = []
    if isinstance(value, cst.Dict):
        for element in value.elements:
            if isinstance(element, cst.DictElement) and _string_value(element.key) == key:
                found = [(element.value, statement, holder)]
            elif isinstance(element, cst.StarredDictElement) and depth < 2:
                found.extend(_spread_values(ctx, element.value, key, statement, depth + 1, follow))
    elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" \
            and ctx.resolve(value.func) in (None, "dict"):
        for arg in value.args:  # in order: a later source of `key` overrides an earlier one
            if arg.keyword is None and arg.star in ("", "**") and depth < 2:
                # dict(BASE, lr=1e-4), dict(BASE, **OVERRIDES)
                found = list(_spread_values(ctx, arg.value, key, statement, depth + 1, follow)) or found
            elif arg.keyword is not None and arg.keyword.value == key:
                found = [(arg.value, statement, holder)]
    for item, where, held_by in found:
        if follow and isinstance(item, cst.Name) and item.value not in ("None", "True", "False"):
            values, named = ctx.value_scopes[-1].values_of(item.value)  # `{"precision": precision}`
            for held, at in values:
                yield held, at, named
        else:
            yield item, where, held_by


_ITEM_STORE = re.compile(r"""\s*\[\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')\s*\]\s*(?::[^=\n]*|,[^=\n]*)?(?:[-+*/|&%@]|\*\*|//|<<|>>)?=(?!=)""")
_ITEM = re.compile(r"""\s*\[\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')\s*\]""")
_METHOD = re.compile(r"""\s*\.\s*(?:(pop)\s*\(\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')\s*[,)]|(clear)\s*\(\s*\)|(update)\s*\(([^\n#]*))""")
_OR_SET = re.compile(r"\s*\|=([^\n#]*)")
_BLANKS = re.compile(r"[ \t]*")
_NAME = re.compile(r"(?<![\w.])[^\W\d]\w*")
_DEL_BEFORE = re.compile(r"[ \t]*del\s+(?:[^\n#]*,\s*)?$")


def _mutated(ctx: Any, name: str, key: str) -> bool:
    """Whether the file changes what the dict `name` holds under `key` in place where the
    change holds for the call too: an item set, deleted or popped under that key, an `update`
    or `|=` that names it, a `clear()`, on a line indented no deeper than the line that passes
    the dict as `**` (a change inside a branch, `if siglip: kwargs.update(padding=...)`, leaves
    the literal as the default, which is reported). Read off the whole file's text (the scan
    may parse a pruned copy); a computed key or an `update` with a dict not written there is
    not taken as a change of `key`."""
    changes = ctx.dict_changes.get(name)
    if changes is None:
        code = ctx._module_code()
        if ctx.name_positions is None:  # every name's occurrences, found once per file
            ctx.name_positions = _occurrences(code)
        changes = ctx.dict_changes[name] = _dict_changes(code, name, ctx.name_positions.get(name, ()))
    passed, changed = changes
    deepest = min(passed) if passed else None
    for indent, keys, text in changed:
        if (deepest is None or indent <= deepest) and (key in keys or "*" in keys or (text is not None and (
                re.search(rf"(?<![\w.]){re.escape(key)}\s*=(?!=)|[\"']{re.escape(key)}[\"']\s*:", text)))):
            return True
    return False


def _occurrences(code: str) -> dict[str, list[int]]:
    """Where each name stands in `code` (not after a `.`): read once per file, so that a file
    of 30,000 dicts passed as `**` is not searched once per name."""
    out: dict[str, list[int]] = {}
    for found in _NAME.finditer(code):
        out.setdefault(found.group(), []).append(found.start())
    return out


def _dict_changes(code: str, name: str, where: Iterable[int]) -> tuple[list[int], list[tuple[int, frozenset[str], str | None]]]:
    """Where `code` passes `name` as `**` (the indentation of each such line) and changes it
    in place: (indentation, the keys changed, or the text an `update(...)`/`|=` gives, which
    may name any key). Each occurrence of the name (`where`: its offsets, `_occurrences`) is
    read where it stands (a comment is not read; a string is not told apart)."""
    passed: list[int] = []
    changed: list[tuple[int, frozenset[str], str | None]] = []
    every = frozenset({"*"})
    # What each occurrence needs of the text before it on its line, found once per line (one
    # line may hold the name 300,000 times): where the line starts, its indentation, its first
    # `#` and its first `**`.
    start = line_end = -1
    indent = hash_at = spread_at = 0
    for at in where:
        end = at + len(name)
        if at > line_end:
            start = code.rfind("\n", 0, at) + 1
            line_end = code.find("\n", at)
            line_end = len(code) if line_end == -1 else line_end
            indent = _BLANKS.match(code, start).end() - start
            hash_at = code.find("#", start, line_end)
            spread_at = code.find("**", start, line_end)
        if hash_at == -1 or hash_at >= at:
            if spread_at != -1 and spread_at + 2 <= at:
                passed.append(indent)
            blank_before = at <= start + indent
            if blank_before and (m := _ITEM_STORE.match(code, end)):
                changed.append((indent, frozenset({m.group(1) if m.group(1) is not None else m.group(2)}), None))
            elif code.startswith("del", start + indent) and at - start < 4096 \
                    and _DEL_BEFORE.fullmatch(code, start, at) and (m := _ITEM.match(code, end)):
                changed.append((indent, frozenset({m.group(1) if m.group(1) is not None else m.group(2)}), None))
            elif m := _METHOD.match(code, end):
                if m.group(1):
                    changed.append((indent, frozenset({m.group(2) if m.group(2) is not None else m.group(3)}), None))
                elif m.group(4):
                    changed.append((indent, every, None))
                else:
                    changed.append((indent, frozenset(), m.group(6)))
            elif m := _OR_SET.match(code, end):
                changed.append((indent, frozenset(), m.group(1)))
    return passed, [(i, every if k == every else k, t) for i, k, t in changed]


def _match_spread(ctx: Any, rule: RuleSpec, m: dict[str, Any], call: cst.Call, qname: str) -> None:
    """`TrainingArguments(**DEFAULT_ARGS)` with `DEFAULT_ARGS = {"fp16": True, ...}`: the value
    under the argument's name in a dict passed as `**`, reported where it is written and left
    for a person (the dict may be read elsewhere)."""
    for arg in call.args:
        if arg.star != "**" or not isinstance(arg.value, (cst.Name, cst.Dict, cst.Call, cst.Subscript)):
            continue
        if isinstance(arg.value, cst.Name):
            owner = ctx.value_scopes[-1].owner(arg.value.value)
            seen = (id(owner), "**" + arg.value.value, rule.id, id(m))
            if seen in ctx.held_read:
                continue  # read once per dict and matcher, however many calls spread it
            ctx.held_read.add(seen)
        passed = ctx.module.code_for_node(arg.value)
        if len(passed) > 40 or "\n" in passed:
            passed = "{...}" if isinstance(arg.value, cst.Dict) else "dict(...)" if isinstance(arg.value, cst.Call) else passed[:40]
        for held, statement, holder in _spread_values(ctx, arg.value, m["name"], None):
            for branch in _outcomes(ctx, held):
                literal: Any = _literal(branch)
                if literal is not None and _expected(literal, m):
                    where = f"{holder} under `{m['name']}`" if holder.startswith("the dict") or holder == "a dict" else holder
                    reason = f"the value is in {where}, passed as `**{passed}`: change it where it is set, by hand"
                    context = {"call": call, "argument": m, "manual_reason": reason}
                    if statement is not None:
                        context["statement"] = statement
                    ctx.add(rule, branch, name=qname, value=literal, context=context)


def _match_literal(ctx: Any, rule: RuleSpec, m: dict[str, Any], call: cst.Call, value: cst.BaseExpression, qname: str) -> None:
    literal: Any = _literal(value)
    if literal is None and isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
        literal = _string_value(value.elements[0].value)  # device_types=["cuda"]
    if literal is None and not isinstance(value, cst.Name):
        return
    if _expected(literal, m):
        ctx.add(rule, value, name=qname, value=literal, context={"call": call, "argument": m})
        ctx.suppressed.add(id(value))


def _expected(literal: Any, m: dict[str, Any]) -> bool:
    """Whether `literal` is one of the matcher's `values` (a string value is a full-match pattern)."""
    return any(literal == expected or (isinstance(expected, str) and isinstance(literal, str) and re.fullmatch(expected, literal))
               for expected in m["values"])


def _holds_name(value: cst.BaseExpression) -> bool:
    """A bare name, or names joined by `or`/`and` (`backends or DEFAULT_BACKENDS`)."""
    if isinstance(value, cst.BooleanOperation):
        return _holds_name(value.left) or _holds_name(value.right)
    return isinstance(value, cst.Name) and value.value not in ("None", "True", "False")
