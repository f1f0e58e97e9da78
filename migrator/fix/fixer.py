"""Apply the fixes of a scan to one source text, per target, and prove the result.

`fix_python` rescans after each pass and stops when nothing more applies (at most
`MAX_PASSES`), so a second run over its output changes nothing. Overlapping fixes are applied
outermost first; the inner ones are retried on the next pass. Output that does not re-parse is
refused.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import replace
from typing import Any, Callable

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from migrator.core.catalogue import load_targets
from migrator.scan.coupling import already_guarded, blocks, hold_back, manual_seed_duplicate, script_device_type
from migrator.scan.engine import Candidate
from migrator.core.findings import Finding, Safety
from migrator.core.lines import line_opcodes, split_lines
from migrator.fix.outcome import FixOutcome, allowed
from migrator.scan.values import ModuleValues, Parents
from migrator.scan.version_gate import version_tuple
from migrator.scan.walk import walk

__all__ = ["FixOutcome", "fix_python", "MAX_PASSES", "module_code"]

MAX_PASSES = 4

# Generating a module's text walks every node (most of a fix's time on a large file), and a
# pass asks for it several times (names in use, line maps, the rescan): each module's text is
# generated once. Modules are immutable, so the text of one is fixed; a few recent ones are kept.
_CODE: dict[int, tuple[cst.Module, str]] = {}


def module_code(module: cst.Module, known: str | None = None) -> str:
    """`module.code`, generated once per module (`known`: its text, when the caller has it)."""
    hit = _CODE.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    code = module.code if known is None else known
    if len(_CODE) >= 4:
        _CODE.clear()
    _CODE[id(module)] = (module, code)
    return code


class FixUnavailable(ValueError):
    """This instance of a rule has no automatic fix (the reason is the message)."""


def _check_torch(entry: dict[str, Any], have: tuple[int, ...] | None) -> None:
    """Raise FixUnavailable when the fix needs a newer PyTorch than the project's (`have`, from
    the `torch-version` setting). With no version configured the fix applies: the target's own
    minimum is in its summary. The PyTorch installed beside this tool says nothing about the
    project's."""
    needed = entry.get("requires_torch")
    if not needed or have is None:
        return
    want = tuple(int(x) for x in str(needed).split("."))
    if have < want:
        raise FixUnavailable(f"needs PyTorch >= {needed}; the project runs PyTorch {'.'.join(map(str, have))} "
                             "(the torch-version setting, else the project's own torch== pin)")


class _Renderer:
    """Turns one candidate into (node to replace, replacement, imports) for a target."""

    def __init__(self, module: cst.Module, target: str, constant_name: str, torch_version: str | None = None) -> None:
        self.module = module
        self.target = target
        self.torch = version_tuple(torch_version)
        self.spec = load_targets()[target]
        self.constant_name = constant_name
        self.helper_names = _helper_names(module, self.spec.get("helpers", []))
        self.parents: Parents | None = None  # set per pass by _render_all
        self._values: ModuleValues | None = None

    @property
    def values(self) -> ModuleValues:
        if self._values is None:
            self._values = ModuleValues(self.module)
        return self._values

    def _rename(self, code: str) -> str:
        code = re.sub(r"\bDEVICE\b", self.constant_name, code)
        for base, name in self.helper_names.items():
            code = re.sub(rf"\b{base}\b", name, code)
        return code

    def _expr(self, key: str, **values: str) -> str:
        text = self.spec[key].format(**values) if values else self.spec[key]
        return self._rename(text)

    def _arg(self, arg: cst.Arg) -> str:
        """One argument's source, without its trailing comma and whitespace."""
        clean = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
        return self.module.code_for_node(clean).strip()

    def _args(self, call: cst.Call) -> str:
        return ", ".join(self._arg(arg) for arg in call.args)

    def placeholders(self, cand: Candidate, entry: dict[str, Any]) -> dict[str, str]:
        values = dict(cand.values)
        values["attr"] = values.get("name", "").rsplit(".", 1)[-1]
        values["device"] = self._expr("device")
        values["device_type"] = self._expr("device_type")
        if self.target == "portable" and self.parents is not None and cand.node is not None:
            own = script_device_type(cand.node, self.values, self.parents)
            if own:
                values["device_type"] = own  # the script's own choice, not a second source of truth
        values["backend"] = self._expr("backend")
        if cand.node is not None:
            values["node"] = self.module.code_for_node(cand.node).strip()
        call = cand.context.get("call")
        if call is not None:
            values["call"] = self.module.code_for_node(call).strip()
            names = entry.get("positional", [])
            rendered, given = [], {a.keyword.value for a in call.args if a.keyword is not None}
            for i, arg in enumerate(call.args):
                if names and arg.keyword is None and not arg.star:
                    if i >= len(names):
                        raise FixUnavailable("more positional arguments than the new call takes")
                    # The new call's parameters come in another order: pass them by name.
                    rendered.append(f"{names[i]}={self._arg(arg)}")
                    given.add(names[i])
                else:
                    rendered.append(self._arg(arg))
            extra = [f"{k}={v}" for k, v in entry.get("defaults", {}).items() if k not in given]
            args = ", ".join([*rendered, *extra])
            values["args"] = args
            values[", args"] = f", {args}" if args else ""
            if isinstance(call.func, cst.Attribute):
                values["receiver"] = self.module.code_for_node(call.func.value)
        return values

    def imports_for(self, code: str, entry: dict[str, Any], uses_backend: bool = False) -> list[str]:
        needed = list(entry.get("imports", []))
        if re.search(r"\btorch\.", code) or re.search(rf"\b{self.constant_name}\b", code):
            needed.append("torch")
        if "torch_xla." in code and not any(n.startswith("torch_xla") for n in needed):
            needed.append("torch_xla")
        if uses_backend:
            needed.extend(self.spec.get("backend_imports", []))
        return needed

    def render(self, cand: Candidate) -> tuple[cst.CSTNode, str, list[str]]:
        """Raises KeyError/ValueError when the fix cannot render this instance."""
        rule = cand.rule
        entry = rule.fix_for(self.target) or {}
        kind = rule.fix["kind"]
        _check_torch(self.spec, self.torch)  # the target's own minimum first
        if kind == "device-string":
            node, code = self._device_code(cand)
            return node, code, self.imports_for(code, entry)
        if kind == "device-index":
            code = self._expr("device_fstring", expr=self.module.code_for_node(cand.node))
            return cand.node, code, self.imports_for(code, entry)
        if kind == "cuda-method":
            call: cst.Call = cand.context["call"]
            return call, self._cuda_method(call), self.imports_for("torch." if self.target == "portable" else "", entry) + (
                ["torch_xla"] if self.target == "xla" else [])
        if kind == "template":
            return self.template(cand, entry)
        if kind == "function":
            from migrator.fix.custom import FUNCTIONS

            function = FUNCTIONS.get(rule.fix["function"])
            if function is None:
                raise FixUnavailable(f"the rule names fix function '{rule.fix['function']}', which does not exist")
            _check_torch(entry, self.torch)
            return function(self, cand, entry)
        if kind == "loop-end":
            loop = cand.context["loop"]
            statement = cst.parse_statement(entry["expr"] + "\n")
            body = loop.body
            if isinstance(body, cst.SimpleStatementSuite):  # `for x in y: loss.backward()`
                body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)])
            statements = list(body.body)
            # After the step, not at the very end: a trailing `continue`/`return` would skip it.
            marks = [i for i, st in enumerate(statements) if any(a in self.module.code_for_node(st) for a in entry.get("after", []))]
            at = marks[-1] + 1 if marks else len(statements)
            statements.insert(at, statement)
            return loop, loop.with_changes(body=body.with_changes(body=statements)), self.imports_for(entry["expr"], entry)
        if kind == "arguments":
            call = cand.context["call"]
            return call, self._arguments(call, entry), list(entry.get("imports", []))
        if kind == "text":
            raise FixUnavailable("no rewrite in Python code (this rule's fix edits command lines in shell, Dockerfile and requirements files): change the value by hand")
        raise ValueError(f"fix kind {kind!r} does not apply to Python")

    def template(self, cand: Candidate, entry: dict[str, Any]) -> tuple[cst.CSTNode, str, list[str]]:
        """The target's `expr` (or `by_name` entry) with its placeholders filled in."""
        _check_torch(entry, self.torch)
        name = cand.values.get("name", "")
        template = entry.get("by_name", {}).get(name, entry.get("expr"))
        if template is None:
            raise FixUnavailable(f"no automatic fix for `{name}`")
        values = self.placeholders(cand, entry)
        code = re.sub(r"\{(, args|[a-z_]+)\}", lambda m: values[m.group(1)], template)
        code = self._rename(code)
        node = cand.context["call"] if cand.context.get("callee") or cand.context.get("method") else cand.node
        return node, code, self.imports_for(code, entry, "{backend}" in template)

    def _device_code(self, cand: Candidate) -> tuple[cst.CSTNode, str]:
        """The node to replace and its replacement, of the same kind: text for text, a device for a device."""
        ctx = cand.context
        code = self.module.code_for_node
        if ctx.get("device_kind") == "comparison":
            test = ctx.get("type_test")
            if test is None:
                raise FixUnavailable("a branch on the device type: decide whether it should also run on the target's device")
            ifexp, subject = test
            return ifexp, f"torch.device({code(subject)}).type"
        whole = self.target == "portable"  # elsewhere the device is text ("neuron"): keep the call around it
        call, index_node = ctx.get("device_call") or (None, None)
        if ctx.get("device_kind") == "device_type":
            if call is not None and index_node is not None and whole:
                return call, self._expr("device_fstring", expr=code(index_node))  # torch.device("cuda", rank)
            return cand.node, self._expr("device_type")
        if call is not None and whole:
            node, text = call, ""  # torch.device("cuda:0") as a whole becomes a device
        else:
            node, text = cand.node, "_text" if ctx.get("text", True) else ""
        if ctx.get("fstring") is not None:
            return node, self._expr("device_fstring" + text, expr=code(ctx["fstring"]))
        if ctx.get("index"):
            return node, self._expr("device_n" + text, index=ctx["index"])
        return node, self._expr("device" + text)

    def _cuda_method(self, call: cst.Call) -> str:
        receiver = self.module.code_for_node(call.func.value)  # type: ignore[attr-defined]
        device = self._expr("device")
        rest: list[str] = []
        for i, arg in enumerate(call.args):
            is_device = (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "device")
            if is_device:
                value = arg.value
                text = self.module.code_for_node(value)
                literal = re.fullmatch(r"""['"]cuda(?::(\d+))?['"]""", text)
                if isinstance(value, cst.Integer):
                    device = self._expr("device_n", index=value.value)
                elif literal:
                    device = self._expr("device_n", index=literal.group(1)) if literal.group(1) else self._expr("device")
                elif _looks_like_index(value, text):
                    device = self._expr("device_fstring", expr=text)  # `.cuda(rank)`
                else:
                    device = text  # `.cuda(device)`: already a device, rewritten where it is chosen
            else:
                rest.append(self._arg(arg))
        if "storage" in receiver.rsplit(".", 1)[-1].lower():
            device = f"device={device}"  # a storage's .to() takes the device by keyword only
        return f"{receiver}.to({', '.join([device, *rest])})"

    def _arguments(self, call: cst.Call, entry: dict[str, Any]) -> str:
        remove = set(entry.get("remove", []))
        setting = {k: re.sub(r"\bDEVICE\b", self.constant_name, v) for k, v in entry.get("set", {}).items()}
        args = []
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in remove:
                continue
            if arg.keyword is not None and arg.keyword.value in setting:
                args.append(f"{arg.keyword.value}={setting.pop(arg.keyword.value)}")
                continue
            args.append(self._arg(arg))
        args.extend(f"{k}={v}" for k, v in setting.items())
        return f"{self.module.code_for_node(call.func)}({', '.join(args)})"


def _remove_replaced_imports(module: cst.Module, applied: list[Finding]) -> cst.Module:
    """Drop `from torch.cuda.amp import autocast` once a fix replaced its last use."""
    from libcst.codemod.visitors import RemoveImportsVisitor

    context = CodemodContext()
    wanted = False
    for finding in applied:
        node, qname = finding.plan.node, finding.plan.values.get("name", "")
        if isinstance(node, cst.Name) and "." in qname:
            module_name, obj = qname.rsplit(".", 1)
            RemoveImportsVisitor.remove_unused_import(context, module_name, obj, None if node.value == obj else node.value)
            wanted = True
    if not wanted:
        return module
    try:
        return RemoveImportsVisitor(context).transform_module(module)
    except Exception:  # noqa: BLE001 - keeping an unused import is harmless; losing the rewrite is not
        return module


def _has_comment(node: cst.CSTNode) -> bool:
    """Whether a comment sits inside `node` (rewriting it from text would drop the comment)."""
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found.append(comment)

    node.visit(_Find())
    return bool(found)


def _names_torch(node: cst.CSTNode) -> bool:
    """Whether `node` reads the bare name `torch` (as `torch.cuda.x` does): a rewrite that puts
    `torch.` where it stood uses the same binding, so it needs no import of its own."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == "torch":
            return True
        if isinstance(current, cst.Attribute):
            stack.append(current.value)  # `.attr` is a field name, not a read of `torch`
        elif isinstance(current, cst.Call):
            stack.append(current.func)
            stack.extend(arg.value for arg in current.args)
        elif isinstance(current, cst.Subscript):
            stack.append(current.value)
    return False


def _uses_module_level(new_node: Any, constant: str, helpers: dict[str, str]) -> bool:
    """Whether a replacement reads the device constant or a helper, which the fixer defines at
    module level with `torch` (so `torch` must be bound there, not only where it lands)."""
    if not isinstance(new_node, cst.CSTNode) or isinstance(new_node, cst.RemovalSentinel):
        return False
    code = cst.Module([]).code_for_node(new_node)
    return any(re.search(rf"\b{re.escape(n)}\b", code) for n in (constant, *helpers.values()))


def _binds_torch(alias: cst.ImportAlias) -> bool:
    """`import torch` or `import torch.cuda` (both bind the name `torch`), not `import torch as th`."""
    return alias.asname is None and (alias.evaluated_name == "torch" or alias.evaluated_name.startswith("torch."))


def _torch_name_taken(module: cst.Module) -> bool:
    """Whether a module-level statement binds the name `torch` to something other than the
    torch package (`import numpy as torch`, `from compat import torch`, `torch = None`,
    `def torch(): ...`): an added `import torch` would rebind it (hostile helper, session 19)."""
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == "torch":
            return True
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                if any(a.asname is not None and isinstance(a.asname.name, cst.Name) and a.asname.name.value == "torch"
                       and a.evaluated_name != "torch" for a in small.names):
                    return True
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                if any((a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name)
                        else a.evaluated_name) == "torch" for a in small.names):
                    return True
            elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                if any(isinstance(t, cst.Name) and t.value == "torch" for t in targets):
                    return True
    return False


def _imports_torch_conditionally(module: cst.Module) -> bool:
    """Whether the module binds `torch` only under a condition: inside a module-level block
    (`if is_torch_available(): import torch`, `try: import torch` ...) or inside functions
    (`import torch` where it is needed: torch is optional for importing the module), never on a
    module-level line of its own."""

    class _Find(cst.CSTVisitor):
        found = False

        def visit_Import(self, node: cst.Import) -> bool:
            self.found |= any(_binds_torch(a) for a in node.names)
            return False

    nested = _Find()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            if any(isinstance(s, cst.Import) and any(_binds_torch(a) for a in s.names) for s in stmt.body):
                return False  # `import torch` on a line of its own: bound unconditionally
        elif not nested.found:
            walk(stmt, nested)  # read-only: the scan's walk, not libcst's rebuilding visit
    return nested.found


def _looks_like_index(value: cst.BaseExpression, text: str) -> bool:
    """Whether a `.cuda(x)` argument is a device index (`rank`, `i`, `int(...)`, `k + 1`) rather than a device."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(value, cst.Call):
        return text.startswith("int(")
    last = text.rsplit(".", 1)[-1]
    return bool(re.search(r"rank|idx|index|gpu|ordinal|^[a-z]$|^n_|_n$|_id$|^id$", last, re.I))


# Parents in which a conditional expression needs no parentheses.
_FULL_EXPRESSION_PARENTS = (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg,
                            cst.DictElement, cst.WithItem, cst.Param, cst.IfExp)


class _Requote(cst.CSTTransformer):
    """Before Python 3.12 an f-string cannot reuse its own quote inside `{}`: switch inner strings."""

    def __init__(self, avoid: str) -> None:
        super().__init__()
        self.avoid, self.use = avoid, ("'" if avoid == '"' else '"')

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.SimpleString:
        value = updated_node.value
        prefix = value[: len(value) - len(value.lstrip("rbuRBU"))]
        body = value[len(prefix):]
        if body.startswith(self.avoid) and not body.startswith(self.avoid * 3) and self.use not in body[1:-1]:
            return updated_node.with_changes(value=prefix + self.use + body[1:-1] + self.use)
        return updated_node

    def leave_FormattedString(self, original_node: cst.FormattedString, updated_node: cst.FormattedString) -> cst.FormattedString:
        start, end = updated_node.start, updated_node.end
        if end == self.avoid and start.endswith(self.avoid):
            return updated_node.with_changes(start=start[:-1] + self.use, end=self.use)
        return updated_node


def _left_whole(source: str, findings: list[Finding], blockers: list[Finding], reasons: dict[tuple[str, str], str],
                unsafe: bool) -> FixOutcome:
    """The file unchanged: every finding left for a person, the blockers with their own reason."""
    outcome = FixOutcome(source)
    first = blockers[0]
    where = f"`{first.snippet}` ({first.rule_id}, line {first.span.line}" + (f" of cell {first.cell})" if first.cell else ")")
    for finding in findings:
        if finding in blockers:
            reason = reasons.get((finding.rule_id, finding.snippet)) or allowed(finding, unsafe) or "no automatic fix: needs a person"
            reason = f"blocks this file, which would still need CUDA (pass --partial to rewrite the rest): {reason}"
        else:
            reason = (f"not rewritten: {where} has no automatic rewrite, so the file would still need CUDA; "
                      "change it by hand and run fix again, or pass --partial")
        outcome.manual.append((finding, reason))
        outcome.before[id(finding)] = finding
    return outcome


def _render_all(module: cst.Module, findings: list[Finding], renderer: "_Renderer", target: str, unsafe: bool,
                reasons: dict[tuple[str, str], str]) -> dict[Any, Any]:
    """Render every fix that may apply: id(finding) -> (node, replacement, imports, finding as applied).

    Renderings the templates cannot express are chosen here (see `coupling`). The parent map is
    returned under "parents" for the coupling checks.
    """
    parents = Parents(module)
    renderer.parents = parents
    out: dict[Any, Any] = {"parents": parents}
    conditional_torch: bool | None = None  # whether the module imports torch only under a condition
    torch_taken = False  # whether it binds the name `torch` to something else (read with conditional_torch)
    for finding in findings:
        key = id(finding)  # `finding` may be replaced below by a copy with the title of what was written
        reason = allowed(finding, unsafe)
        duplicate_seed = None
        if finding.rule_id == "NRN207" and finding.fix is not None and finding.fix.available:
            duplicate_seed = manual_seed_duplicate(finding, module, parents)
        if reason and duplicate_seed is None:
            continue
        if duplicate_seed is not None:
            title = "Delete it: `torch.manual_seed` just before already seeds every device"
            out[key] = (duplicate_seed, cst.RemoveFromParent(), [],
                                replace(finding, fix=replace(finding.fix, title=title, safety=Safety.SAFE)))
            continue
        try:
            node, code, needed, *title = renderer.render(finding.plan)
            if title and title[0]:  # a fix function names what it wrote
                finding = replace(finding, fix=replace(finding.fix, title=title[0]))
            new_node = cst.parse_expression(code) if isinstance(code, str) else code
            if (isinstance(new_node, cst.IfExp) and isinstance(new_node.orelse, cst.Name) and new_node.orelse.value == "None"
                    and "is_available()" in cst.Module([]).code_for_node(new_node.test)
                    and finding.plan.node is not None and already_guarded(finding.plan.node, module, parents)):
                new_node = new_node.body  # inside `if torch.cuda.is_available():` already: no second guard
        except FixUnavailable as exc:
            reasons[(finding.rule_id, finding.snippet)] = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - one broken instance must not stop the file
            reasons[(finding.rule_id, finding.snippet)] = f"fix could not be rendered here: {exc}"
            continue
        # The device constant and the helpers are defined at module level with `torch`.
        module_level = _uses_module_level(new_node, renderer.constant_name, renderer.helper_names)
        if "torch" in needed and not module_level and _names_torch(node):
            needed = [n for n in needed if n != "torch"]  # `torch` is bound where the rewrite lands: it ran there
        elif ("torch" in needed or module_level) and conditional_torch is None:
            conditional_torch = _imports_torch_conditionally(module)
            torch_taken = _torch_name_taken(module)
        if ("torch" in needed or module_level) and torch_taken:
            reasons[(finding.rule_id, finding.snippet)] = (
                "the module binds the name `torch` to something else (`import numpy as torch`, `torch = ...`): an added "
                "`import torch` would change what it means; rewrite it by hand")
            continue
        if ("torch" in needed or module_level) and conditional_torch:
            reasons[(finding.rule_id, finding.snippet)] = (
                "the module imports torch only under a condition (in an `if`/`try` block or inside functions) and this "
                "rewrite needs `torch` at module level: an added `import torch` would make torch a requirement for "
                "importing it; rewrite it by hand")
            continue
        out[key] = (node, new_node, needed, finding)
    return out


def _apply(module: cst.Module, applier: "_Apply", parents: Parents | None) -> cst.Module:
    """`module.visit(applier)`, visiting only the top-level statements that hold a replaced node
    (libcst's visit rebuilds every node it passes: most of a fix's time on a large file). The
    result is the same text; nothing _Apply does depends on the module node above them."""
    if parents is None:
        return module.visit(applier)
    tops: set[int] = set()
    body_ids = {id(s) for s in module.body}
    on_path: set[int] = set()  # the replaced nodes and every node above one
    for key in applier.replacements:
        node_id = key
        on_path.add(node_id)
        while node_id not in body_ids:
            parent = parents.of.get(node_id)
            if parent is None:
                return module.visit(applier)  # not under a statement of this module's body
            node_id = id(parent)
            on_path.add(node_id)
        tops.add(node_id)
    # A subtree with no replaced node in it comes back as it is: it is not walked.
    applier.on_path = on_path
    body: list[cst.BaseStatement] = []
    for statement in module.body:
        if id(statement) not in tops:
            body.append(statement)
            continue
        new = statement.visit(applier)
        if isinstance(new, cst.RemovalSentinel):
            continue
        if isinstance(new, cst.FlattenSentinel):
            body.extend(new.nodes)
        else:
            body.append(new)
    return module.with_changes(body=body)


def _leading_imports_cover(module: cst.Module, wanted: list[tuple[str, str | None]]) -> bool:
    """Whether every `import m [as a]` of `wanted` is among the module's leading import lines
    as AddImportsVisitor gathers them (`_imports_present`'s answer where it is True, without
    building libcst's visitors, which costs more than the test; False: ask `_imports_present`)."""
    body = module.body
    plain: set[str] = set()
    aliased: dict[str, str] = {}
    for stmt in body[1 if body and _docstring_or_strict(body[0]) else 0:]:
        if not _single_import(stmt):
            break
        imp = stmt.body[0]  # type: ignore[attr-defined]
        if isinstance(imp, cst.Import):
            for name in imp.names:
                alias = name.evaluated_alias
                if alias is None:
                    plain.add(name.evaluated_name)
                else:
                    aliased[name.evaluated_name] = alias  # the last one counts, as in the visitor's mapping
    return all(module_name in plain if alias is None else aliased.get(module_name) == alias for module_name, alias in wanted)


def _imports_present(module: cst.Module, context: CodemodContext) -> bool:
    """Whether AddImportsVisitor(context) would add nothing to `module` (then its visit, which
    rebuilds the whole tree, is skipped): the test of its `visit_Module`/`leave_Module`, with
    the imports at the top gathered without walking the module. False when unsure."""
    try:
        from libcst.codemod.visitors._add_imports import _GatherTopImportsBeforeStatements

        wanted = AddImportsVisitor(context)
        gatherer = _GatherTopImportsBeforeStatements(context)
        gatherer.leave_Module(module)  # all it does: read the leading import statements
    except Exception:  # noqa: BLE001 - another libcst: do the visit
        return False
    if wanted.module_imports - gatherer.module_imports:
        return False
    if any(gatherer.module_aliases.get(name) != alias for name, alias in wanted.module_aliases.items()):
        return False
    for name, pairs in wanted.alias_mapping.items():
        if set(pairs) - set(gatherer.alias_mapping.get(name, [])):
            return False
    for name, objects in wanted.module_mapping.items():
        have = gatherer.object_mapping.get(name)
        if have is None or ("*" not in have and set(objects) - set(have)):
            return False
    return True


class _Apply(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements
        self.depth = 0
        self.stack: list[cst.CSTNode] = []
        self.deferred: set[int] = set()
        self.applied: set[int] = set()
        self.guards: set[int] = set()
        self.on_path: set[int] | None = None  # set by _apply: the nodes worth walking into

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        if id(node) in self.replacements:
            if self.depth:
                self.deferred.add(id(node))
            self.depth += 1
        return self.on_path is None or id(node) in self.on_path

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        self.stack.pop()
        key = id(original_node)
        if key in self.replacements:
            self.depth -= 1
            if key not in self.deferred:
                self.applied.add(key)
                new = self.replacements[key]
                if isinstance(new, cst.RemovalSentinel):
                    return new
                outer = next((n for n in reversed(self.stack) if isinstance(n, cst.FormattedString)), None)
                if outer is not None:
                    new = new.visit(_Requote(outer.end[-1]))
                parent = self.stack[-1] if self.stack else None
                if isinstance(new, (cst.IfExp, cst.BooleanOperation, cst.Lambda)) and not isinstance(parent, _FULL_EXPRESSION_PARENTS):
                    new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                if isinstance(new, cst.IfExp):
                    self.guards.add(id(new))
                return new
        if isinstance(updated_node, cst.SimpleStatementLine):
            return self._guard_statement(updated_node)
        return updated_node

    def _guard_statement(self, line: cst.SimpleStatementLine) -> cst.BaseStatement:
        """`call() if cond else None` as a whole statement becomes `if cond:` + `call()`."""
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
            return line
        value = line.body[0].value
        if id(value) not in self.guards or not (isinstance(value.orelse, cst.Name) and value.orelse.value == "None"):
            return line
        inner = cst.SimpleStatementLine([cst.Expr(value.body)], trailing_whitespace=line.trailing_whitespace)
        return cst.If(test=value.test, body=cst.IndentedBlock([inner]), leading_lines=line.leading_lines)


def _free_name(code: str, names: tuple[str, ...], ours: str, base: str) -> str:
    """The first of `names` that is ours already (`ours` with `base` renamed is in the code) or unused.

    Any other mention (an import, an annotated or local assignment, a parameter) makes a name
    taken, so an added definition never changes what the user's own name refers to.
    """
    for name in names:
        if re.sub(rf"\b{base}\b", name, ours) in code or not re.search(rf"\b{name}\b", code):
            return name
    return names[-1] + "_"


_CONSTANT_NAMES = ("DEVICE", "NRN_DEVICE", "NRN_DEVICE_")


def _helper_choices(base: str) -> tuple[str, ...]:
    return (base, f"Nrn{base}", f"Nrn{base}_")


def chosen_names() -> set[str]:
    """Every name the fixer may give the constant or a helper of any target (`_free_name` tries
    them in order, and falls back to the last one with `_`), whichever the module's text makes
    it choose: sources/pruned_fix.py keeps every statement that holds one of them."""
    names = {*_CONSTANT_NAMES, _CONSTANT_NAMES[-1] + "_"}
    for spec in load_targets().values():
        for helper in spec.get("helpers", []) or []:
            choices = _helper_choices(helper["name"])
            names.update((*choices, choices[-1] + "_"))
    return names


def _constant_name(module: cst.Module, code: str) -> str:
    """`DEVICE`, unless the module already uses that name for something else."""
    return _free_name(module_code(module), _CONSTANT_NAMES, code, "DEVICE")


def _helper_names(module: cst.Module, helpers: list[dict[str, Any]]) -> dict[str, str]:
    """Name to use for each helper (`HostEvent`, else `NrnHostEvent`, ...)."""
    out = {}
    for helper in helpers:
        base = helper["name"]
        first_lines = "\n".join(helper["code"].splitlines()[:2])
        out[base] = _free_name(module_code(module), _helper_choices(base), first_lines, base)
    return out


def _is_import_line(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    if isinstance(stmt, (cst.Try, cst.If)):
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
        return bool(body) and all(_is_import_line(s) for s in body)
    return False


def _after_imports(body: list[cst.BaseStatement]) -> int:
    """Index of the first statement after the module docstring and the leading imports."""
    index = 0
    for i, stmt in enumerate(body):
        is_doc = i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        if is_doc or _is_import_line(stmt):
            index = i + 1
        else:
            break
    return index


def _insert_constant(module: cst.Module, name: str, code: str) -> cst.Module:
    line = code.replace("DEVICE", name, 1)
    if line in module_code(module):  # else no statement can be that line (generating each one's text costs)
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and module.code_for_node(stmt).strip() == line:
                return module
    body = list(module.body)
    index = _after_imports(body)
    new = cst.parse_statement(line + "\n")
    body.insert(index, new)
    return module.with_changes(body=body)


def _insert_helpers(module: cst.Module, helpers: list[dict[str, Any]], names: dict[str, str],
                    constant_name: str = "DEVICE") -> cst.Module:
    """Add each helper definition the code now uses, once, after the imports (with its imports)."""
    for helper in helpers:
        name = names[helper["name"]]
        code = module_code(module)
        if not re.search(rf"\b{name}\b", code) or re.search(rf"^(class|def) {name}\b", code, re.M):
            continue
        body = list(module.body)
        index = _after_imports(body)
        code_text = re.sub(r"\bDEVICE\b", constant_name, re.sub(rf"\b{helper['name']}\b", name, helper["code"]))
        definition = cst.parse_module(code_text).body
        first = definition[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        rest = body[index:]
        if rest and len(rest[0].leading_lines) < 2:
            pad = [cst.EmptyLine()] * (2 - len(rest[0].leading_lines))
            rest[0] = rest[0].with_changes(leading_lines=[*pad, *rest[0].leading_lines])
        module = module.with_changes(body=[*body[:index], first, *definition[1:], *rest])
        if helper.get("imports"):
            context = CodemodContext()
            for imp in helper["imports"]:
                AddImportsVisitor.add_needed_import(context, imp)
            module = _add_imports(module, context)
    return module


def _add_imports(module: cst.Module, context: CodemodContext) -> cst.Module:
    """`module.visit(AddImportsVisitor(context))`, walking only the statements it reads or
    changes: the docstring and the leading import lines. Of the first statement after them it
    changes only the blank lines before it, so it is stood in for by a `pass` with the same
    leading lines (a large function there would be walked whole). The visitor reads and
    rewrites nothing below; the rest of the body is put back as it is (a walk of a large module
    is most of the time of its fix)."""
    body = module.body
    start = 1 if body and _docstring_or_strict(body[0]) else 0
    end = start
    while end < len(body) and _single_import(body[end]):
        end += 1
    if end >= len(body):
        return module.visit(AddImportsVisitor(context))
    following = body[end]
    proxy = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=following.leading_lines)
    head = module.with_changes(body=[*body[:end], proxy]).visit(AddImportsVisitor(context))
    *before, stand_in = head.body  # new imports go before the first statement after the imports
    if list(stand_in.leading_lines) != list(following.leading_lines):
        following = following.with_changes(leading_lines=stand_in.leading_lines)
    return head.with_changes(body=[*before, following, *body[end + 1:]])


def _single_import(stmt: cst.CSTNode) -> bool:
    """libcst's test for a leading import line: a line holding one import statement."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))


def _docstring_or_strict(stmt: cst.CSTNode) -> bool:
    """libcst's `_skip_first`: a first line that is a string, or an assignment to `__strict__`."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    first = stmt.body[0]
    if isinstance(first, cst.Expr):
        return isinstance(first.value, cst.SimpleString)
    return (isinstance(first, cst.Assign) and len(first.targets) == 1 and isinstance(first.targets[0].target, cst.Name)
            and first.targets[0].target.value == "__strict__")


def _compiles(source: str) -> bool:
    try:
        compile(source, "<original>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        return True
    except (SyntaxError, ValueError):
        return False


Scanner = Callable[[cst.Module], list[Finding]]


def fix_python(source: str, scan: Scanner, target: str, *, unsafe: bool = False,
               only: tuple[str, int, int] | None = None, prune_imports: bool = True, partial: bool = False,
               torch_version: str | None = None, parse: Callable[[str], cst.Module] = cst.parse_module,
               whole: Callable[[str], str] | None = None, leftovers: bool = True) -> FixOutcome:
    """Apply every allowed fix to `source` (Python text) for `target`.

    Args:
        source: the file's text.
        scan: function that scans a parsed module and returns its findings (with plans).
        target: `portable`, `neuron` or `xla` (`inf1` is scan-only: nothing applies).
        unsafe: also apply fixes marked unsafe.
        only: (rule_id, line, column): apply just the finding that starts there (first pass).
        prune_imports: drop a CUDA import once a fix replaced its last use (the caller turns it
            off for modules other code may import the name from).
        torch_version: the project's PyTorch (`ScanOptions.torch_version`); fixes needing a newer
            one are left for a person.
        partial: rewrite even when a CUDA-only call with no automatic rewrite stays (a blocker).
            By default such a file is left unchanged: a half-migrated program still needs CUDA,
            and its coupled parts are easier to change by hand together.
        parse: libcst's parse_module, or one that builds the same tree faster (sources/parse.py).
        whole: for a source with statements left out (sources/pruned_fix.py), the file's text that a
            module's text stands for; positions of `applied`, `manual` and `before` are then
            mapped through the file's text (`scan` must report positions in it too).
        leftovers: work out what is left for a person (`manual`, `before`). False when only the
            new text and `applied` are read (the edits of a scan's JSON): that costs a last scan
            and a diff of the whole file.

    Returns:
        A FixOutcome; on a parse error of the input, `failed` says so and nothing changes.
    """
    try:
        module = parse(source)
    except cst.ParserSyntaxError as exc:
        return FixOutcome(source, failed=f"does not parse: {exc.message} (line {exc.raw_line})")
    module_code(module, source)  # a parse gives back its text exactly
    outcome = FixOutcome(source)
    constant = load_targets().get(target, {}).get("constant")

    def mapper(code: str) -> Callable[[Finding], Finding]:
        """Map a finding of a module whose text is `code` to the input's lines."""
        return _line_mapper(source, code) if whole is None else _line_mapper(whole(source), whole(code))

    reasons: dict[tuple[str, str], str] = {}
    initial: list[Finding] | None = None
    scanned: tuple[cst.Module, list[Finding]] | None = None  # the last scan, to reuse while its module stands
    # Fixes of the last pass inside another's node (`mode=` of a `torch.compile(...)` that a
    # backend fix rewrites whole), with how many of their rule the rescan should still find.
    inner: list[tuple[Finding, int]] = []
    for _ in range(MAX_PASSES):
        findings = scan(module)
        scanned = (module, findings)
        if initial is None:
            initial = findings
        if inner:
            _count_resolved(inner, findings, outcome)
            inner = []
        name = _constant_name(module, constant["code"]) if constant else "DEVICE"
        # A target without fix expressions (inf1) is scan-only.
        renderer = _Renderer(module, target, name, torch_version) if load_targets().get(target, {}).get("device") else None
        replacements: dict[int, cst.CSTNode] = {}
        waiting: list[tuple[int, Finding]] = []  # fixes of a node another fix of this pass rewrites
        owners: dict[int, list[Finding]] = {}
        imports: list[str] = []
        rendered = _render_all(module, findings, renderer, target, unsafe, reasons) if renderer else {}
        held = hold_back(module, findings, lambda f: id(f) in rendered, rendered.get("parents"),
                         mapper(module_code(module))) if rendered else {}
        if not partial and only is None and findings is initial and renderer:
            blockers = [f for f in findings if id(f) not in held and blocks(f, id(f) in rendered)]
            if blockers:
                return _left_whole(source, findings, blockers, reasons, unsafe)
        for finding in findings:
            if id(finding) not in rendered:
                continue
            if id(finding) in held:
                reasons[(finding.rule_id, finding.snippet)] = held[id(finding)]
                continue
            if only is not None and (finding.rule_id, finding.span.line, finding.span.column) != only:
                continue
            node, new_node, needed, finding = rendered[id(finding)]
            if id(node) in replacements:
                waiting.append((id(node), finding))
                continue  # another fix rewrites this node first; the rescan of the next pass retries this one
            if finding.plan.rule.fix["kind"] != "loop-end" and _has_comment(node):
                reasons[(finding.rule_id, finding.snippet)] = "a comment inside this expression would be lost; rewrite it by hand"
                continue
            replacements[id(node)] = new_node
            owners[id(node)] = [finding]
            imports.extend(needed)
        if not replacements:
            break
        applier = _Apply(replacements)
        new_module = _apply(module, applier, rendered.get("parents"))
        if not applier.applied:
            break
        to_input = mapper(module_code(module))
        for key in applier.applied:
            outcome.applied.extend(to_input(f) for f in owners[key])
        later = [f for key in applier.deferred - applier.applied for f in owners[key]]
        later += [f for key, f in waiting if key in applier.applied]
        if later and only is None:
            done = Counter(f.rule_id for key in applier.applied for f in owners[key])
            before = Counter(f.rule_id for f in findings)
            inner = [(to_input(f), before[f.rule_id] - done[f.rule_id]) for f in later]
        if imports:
            context = CodemodContext()
            wanted = []
            for imp in dict.fromkeys(imports):
                module_name, _, alias = imp.partition(" as ")
                wanted.append((module_name.strip(), alias.strip() or None))
                AddImportsVisitor.add_needed_import(context, wanted[-1][0], asname=wanted[-1][1])
            if not (_leading_imports_cover(new_module, wanted) or _imports_present(new_module, context)):
                new_module = _add_imports(new_module, context)
        if prune_imports:
            new_module = _remove_replaced_imports(new_module, [f for key in applier.applied for f in owners[key]])
        if renderer:
            new_module = _insert_helpers(new_module, renderer.spec.get("helpers", []), renderer.helper_names, name)
        if constant and re.search(rf"\b{name}\b", module_code(new_module)) and renderer and target == "portable":
            new_module = _insert_constant(new_module, name, constant["code"])
        module = new_module
        if only is not None:
            break  # one finding's fix: its node moved, so later passes cannot find it again
    new_source = module_code(module)
    try:
        if outcome.applied:  # else the text is the input, which parsed above
            parse(new_source)
            # libcst accepts newer grammar than the running Python; check with the interpreter too.
            compile(new_source, "<fixed>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except cst.ParserSyntaxError as exc:
        return FixOutcome(source, failed=f"rewrite refused: output does not parse ({exc.message})")
    except SyntaxError as exc:
        if _compiles(source):
            return FixOutcome(source, failed=f"rewrite refused: output does not parse on this Python ({exc.msg}, line {exc.lineno})")
    outcome.source = new_source
    if not leftovers:
        return outcome
    # What is still reported after the last pass is left for a person.
    unmatched = list(initial or [])
    to_input = mapper(new_source)
    # A scan is a function of the module: when the last pass changed nothing, its scan stands.
    lines: tuple[list[str], list[str]] | None = None
    for finding in (scanned[1] if scanned is not None and scanned[0] is module else scan(module)):
        reason = allowed(finding, unsafe) if renderer else "target is scan-only"
        key = (finding.rule_id, finding.snippet)
        reason = reason or reasons.get(key, "fix overlapped another and did not converge")
        here = to_input(finding).span.line
        earlier = min((f for f in unmatched if (f.rule_id, f.snippet) == key), key=lambda f: abs(f.span.line - here), default=None)
        if earlier is not None:
            unmatched.remove(earlier)
            outcome.before[id(finding)] = earlier
        else:
            # Only in the rewritten code (`torch.amp.autocast(..., dtype=torch.float16)` written
            # for `torch.cuda.amp.autocast()` is NRN310's): on a line the rewrite changed, its
            # columns are the new line's, so the input's position is the whole original line.
            mapped = to_input(finding)
            if finding.cell is None:
                if lines is None:
                    lines = (split_lines(source if whole is None else whole(source)),
                             split_lines(new_source if whole is None else whole(new_source)))
                old, new = lines
                before_line = old[mapped.span.line - 1] if 0 < mapped.span.line <= len(old) else None
                after_line = new[finding.span.line - 1] if 0 < finding.span.line <= len(new) else None
                if before_line is not None and before_line != after_line:
                    indent = len(before_line) - len(before_line.lstrip())
                    mapped = replace(mapped, span=replace(mapped.span, column=indent + 1, end_line=mapped.span.line,
                                                          end_column=len(before_line) + 1))
                    reason += " (found in the code as rewritten)"
            outcome.before[id(finding)] = mapped
        outcome.manual.append((finding, reason))
    return outcome


def _count_resolved(inner: list[tuple[Finding, int]], findings: list[Finding], outcome: FixOutcome) -> None:
    """Count as applied the fixes of the last pass that sat inside another fix's node and that
    rewrite resolved: their rule is found that many times fewer in the rescan. (One that stays
    is found again and applied in this pass.)"""
    now = Counter(f.rule_id for f in findings)
    by_rule: dict[str, list[tuple[Finding, int]]] = {}
    for finding, expected in inner:
        by_rule.setdefault(finding.rule_id, []).append((finding, expected))
    for rule_id, group in by_rule.items():
        resolved = min(len(group), group[0][1] - now[rule_id])
        outcome.applied.extend(finding for finding, _ in group[:max(resolved, 0)])
        outcome.resolved.extend(finding for finding, _ in group[:max(resolved, 0)])


def _line_mapper(original: str, current: str) -> Callable[[Finding], Finding]:
    """Map a finding in `current` (a rewrite of `original`) to the matching line of `original`.

    Lines a fix changed map to themselves, lines it inserted (a `DEVICE` constant, a helper) to
    the original line before them. Notebook findings (cell-relative lines) are left as they are.
    """
    if original == current:
        return lambda finding: finding
    table: dict[int, int] | None = None  # worked out on first use: a diff of two large texts costs

    def to_input(finding: Finding) -> Finding:
        nonlocal table
        if finding.cell is not None:
            return finding
        if table is None:
            table = _line_table(original, current)
        span = finding.span
        return replace(finding, span=replace(span, line=table.get(span.line, span.line), end_line=table.get(span.end_line, span.end_line)))

    return to_input


def _line_table(original: str, current: str) -> dict[int, int]:
    """Line of `current` -> line of `original` (see `_line_mapper`)."""
    table: dict[int, int] = {}
    a, b = split_lines(original), split_lines(current)
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        for k in range(j2 - j1):
            table[j1 + k + 1] = max(i1, 1) if tag == "insert" else min(i1 + k, i2 - 1) + 1
    return table
