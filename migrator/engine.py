"""Match the catalogue against one file's source and yield `Finding`s.

Python is parsed once with libcst; rules are data compiled into an index (`RuleIndex`) so one
visit dispatches to every rule. Other file kinds (shell, Dockerfile, requirements) are matched
line by line with the rules' `text` matchers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from .catalogue import Catalogue, RuleSpec
from .findings import Finding, Fix, Safety, Span
from .lines import split_lines
from .positions import node_ranges
from .walk import walk
from .resolve import dotted_name, import_bindings, imported_modules, module_bindings
from .values import ModuleValues, Parents, ScopeValues, cuda_branch, is_cuda_test
from .values import string_value as _string_value

__all__ = ["RuleIndex", "Candidate", "scan_python", "scan_text", "ParseFailure", "mark_blocked"]

CUDA_DEVICE = re.compile(r"^cuda(?::(\d+))?$")
DEVICE_NAME = re.compile(r"(^|_)(device|dev)$", re.IGNORECASE)
# Calls whose first positional argument is a device, or a device type string.
TENSOR_METADATA = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "names", "layout", "__name__", "__class__"}
DEVICE_ARG0 = {"torch.device", "torch.set_default_device", "torch.Generator", "torch.cuda.device"}
DEVICE_TYPE_ARG0 = {
    "torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
    "torch.amp.GradScaler", "torch.GradScaler",
}
DEVICE_KEYWORDS = {"device": "device", "map_location": "device", "output_device": "device", "accelerator": "device"}
# `device_type=` is a device only for autocast/GradScaler-like calls; elsewhere (test decorators,
# dispatch tables) it is metadata.
DEVICE_TYPE_CALLS = DEVICE_TYPE_ARG0 | {"torch.amp.custom_fwd", "torch.amp.custom_bwd", "torch.get_autocast_dtype",
                                        "torch.is_autocast_enabled", "torch.set_autocast_enabled"}
DTYPE_KEYWORDS = {"dtype", "default_dtype", "out_dtype", "output_dtype", "acc_dtype"}
ENV_METHODS = {"get", "setdefault", "pop", "getenv", "putenv", "unsetenv", "environ_get"}
QUIET_CALLS = {"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
               "format", "startswith", "endswith", "replace", "split", "join"}


class ParseFailure(Exception):
    """The source could not be decoded or parsed; the message says where."""


@dataclass
class Candidate:
    """A rule that matched one node, with what its message and fix need."""

    rule: RuleSpec
    node: cst.CSTNode
    values: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)


class RuleIndex:
    """The catalogue compiled for one scan: lookups by qualified name, method, module, context."""

    def __init__(self, catalogue: Catalogue, enabled: set[str] | None = None) -> None:
        """Compile `catalogue`; only rules in `enabled` (default: all) report.

        Matching runs over the whole catalogue so that deselecting a specific rule does not
        hand its matches to a more general one (ignoring NRN202 must not turn
        `torch.cuda.synchronize()` into an NRN209 finding).
        """
        self.enabled = enabled if enabled is not None else {r.id for r in catalogue.rules}
        self._patterns: dict[tuple[str, str], Any] = {}
        self.call_exact: dict[str, list[RuleSpec]] = {}
        self.call_prefix: list[tuple[str, RuleSpec]] = []
        self.ref_exact: dict[str, list[RuleSpec]] = {}
        self.ref_prefix: list[tuple[str, RuleSpec]] = []
        self.methods: dict[str, list[tuple[RuleSpec, dict[str, Any]]]] = {}
        self.imports: list[tuple[str, RuleSpec]] = []
        self.arguments: dict[str, list[tuple[RuleSpec, dict[str, Any]]]] = {}
        self.device_strings: dict[str, list[RuleSpec]] = {}
        self.device_index: list[RuleSpec] = []
        self.backend_strings: list[RuleSpec] = []
        self.option_defaults: list[tuple[RuleSpec, dict[str, Any]]] = []
        self.strings: list[tuple[re.Pattern[str], RuleSpec, str | None, tuple[str, ...]]] = []
        self.reference_context: dict[tuple[str, str], str] = {}
        self.text: list[tuple[re.Pattern[str], RuleSpec, tuple[str, ...]]] = []
        self.unless_keywords: dict[tuple[str, str], frozenset[str]] = {}
        self.builtins: dict[str, list[tuple[RuleSpec, dict[str, Any]]]] = {}
        self.unless_wrapped: dict[tuple[str, str], frozenset[str]] = {}
        self.value_calls: set[str] = set()
        self._requirements: list[tuple[str, tuple[tuple[str, ...], ...]]] = []
        self._by_file_name: list[tuple[frozenset[str], bytes]] = []  # string matchers for named files only
        self._value_checks: list[tuple[tuple[str, ...], tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]]] = []
        need = self._need
        for rule in catalogue.rules:
            for m in rule.matchers:
                kind = m["kind"]
                if kind in ("call", "reference"):
                    exact, prefix = (self.call_exact, self.call_prefix) if kind == "call" else (self.ref_exact, self.ref_prefix)
                    for q in m.get("qualified_names", []):
                        exact.setdefault(q, []).append(rule)
                        need(*_name_requirement(q))
                        if m.get("context"):
                            self.reference_context[(rule.id, q)] = m["context"]
                        if m.get("unless_keywords"):
                            self.unless_keywords[(rule.id, q)] = frozenset(m["unless_keywords"])
                        if m.get("unless_wrapped_in"):
                            self.unless_wrapped[(rule.id, q)] = frozenset(m["unless_wrapped_in"])
                    for p in m.get("prefixes", []):
                        prefix.append((p, rule))
                        need(*_name_requirement(p))
                elif kind == "method":
                    for n in m["names"]:
                        self.methods.setdefault(n, []).append((rule, m))
                        need(n, ((f".{n}(",),))
                elif kind == "builtin-call":
                    for n in m["names"]:
                        self.builtins.setdefault(n, []).append((rule, m))
                        need(f"{n}(", ((f"{n}(", *m.get("loop_contains", ())),))
                elif kind == "import":
                    for mod in m["modules"]:
                        self.imports.append((mod, rule))
                        need(*_module_requirement(mod))
                elif kind == "argument":
                    for q in m["qualified_names"]:
                        self.arguments.setdefault(q, []).append((rule, m))
                        if not m.get("value_calls"):
                            need(*_name_requirement(q))
                    # A value-call match needs the outer name and a call of the inner one through
                    # the module's own import (`np.zeros(` after `import numpy as np`).
                    self.value_calls.update(m.get("value_calls", []))
                    if m.get("value_calls"):
                        outer = tuple(_name_requirement(q) for q in m["qualified_names"])
                        self._value_checks.append((tuple(m["value_calls"]), outer))
                elif kind == "device-string":
                    for ctx in m["contexts"]:
                        self.device_strings.setdefault(ctx, []).append(rule)
                    need("cuda", (('"cuda',), ("'cuda",)))
                elif kind == "device-index":
                    self.device_index.append(rule)
                    need(".to(", tuple((".to(", t) for t in ("cuda", "gpu", "rank", "RANK")))
                    need("device=", tuple(("device=", t) for t in ("cuda", "gpu", "rank", "RANK")))
                elif kind == "option-default":
                    self.option_defaults.append((rule, m))
                    need("add_argument", (("add_argument", "default"),))
                elif kind == "backend-string":
                    self.backend_strings.append(rule)
                    need("nccl", (('"nccl"',), ("'nccl'",)))
                elif kind == "string":
                    self.strings.append((self.pattern(m["pattern"], rule), rule, m.get("context"), tuple(m.get("file_names", ()))))
                    token = _literal_token(m["pattern"])
                    if m.get("file_names"):
                        self._by_file_name.append((frozenset(m["file_names"]), token.encode()))
                    else:
                        need(token, ((token,),))
                elif kind == "text":
                    self.text.append((self.pattern(m["pattern"], rule), rule, tuple(m["file_kinds"])))
        # Longest prefix first, so the most specific rule wins.
        self.call_prefix.sort(key=lambda pr: -len(pr[0]))
        self.ref_prefix.sort(key=lambda pr: -len(pr[0]))
        gates: dict[str, list[tuple[tuple[str, ...], ...]]] = {}
        for gate, alternatives in dict.fromkeys(self._requirements):
            gates.setdefault(gate, []).append(alternatives)
        self._gates = [(g.encode(), [tuple(tuple(t.encode() for t in alt) for alt in alts) for alts in group])
                       for g, group in gates.items()]

    def _need(self, gate: str, alternatives: tuple[tuple[str, ...], ...]) -> None:
        self._requirements.append((gate, alternatives))

    def pattern(self, pattern: str, rule: RuleSpec):
        """The compiled `pattern` of `rule` (time-limited for team rules; see patterns.py)."""
        key = (pattern, rule.id)
        compiled = self._patterns.get(key)
        if compiled is None:
            from .patterns import TimedPattern
            from .resources import rules_dir

            trusted = rules_dir().resolve() in rule.path.resolve().parents
            compiled = re.compile(pattern) if trusted else TimedPattern(pattern, rule.id)
            self._patterns[key] = compiled
        return compiled

    def take_timeouts(self) -> list[str]:
        """Rule ids whose pattern ran out of time since the last call (then cleared)."""
        out = []
        for compiled in self._patterns.values():
            if getattr(compiled, "timeouts", None):
                out.extend(compiled.timeouts)
                compiled.timeouts.clear()
        return sorted(set(out))

    def python_may_match(self, data: bytes | str, path: str = "") -> bool:
        """Cheap test: can any Python rule match this source? (a prefilter, as TorchFix's)

        Each rule contributes substrings that every match must contain (see
        `_name_requirement`), so a file that fails the test cannot produce a finding.
        """
        raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
        for gate, group in self._gates:
            if gate in raw:
                for alternatives in group:
                    if any(all(t in raw for t in alt) for alt in alternatives):
                        return True
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if any(name in names and token in raw for names, token in self._by_file_name):
            return True
        return any(_value_call_possible(raw, calls, outer) for calls, outer in self._value_checks)

    def lookup(self, qname: str, is_callee: bool) -> list[RuleSpec]:
        """The call/reference rules for a qualified name: every exact one, else the longest prefix's."""
        for exact in ((self.call_exact, self.ref_exact) if is_callee else (self.ref_exact,)):
            if qname in exact:
                return exact[qname]
        best: tuple[int, RuleSpec] | None = None
        for table in ((self.call_prefix, self.ref_prefix) if is_callee else (self.ref_prefix,)):
            for prefix, rule in table:
                if qname == prefix or qname.startswith(prefix + "."):
                    if best is None or len(prefix) > best[0]:
                        best = (len(prefix), rule)
                    break
        return [best[1]] if best else []


_IMPORT_AS = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?", re.M)


def _value_call_possible(raw: bytes, calls: tuple[str, ...], outer: tuple) -> bool:
    """Whether `raw` can hold an argument-rule match whose value is one of `calls`.

    The outer call must be named (its usual requirement), and some inner call must be written
    through an import of its module: `np.zeros(` after `import numpy as np`, `numpy.zeros(`,
    or the bare name after `from numpy... import`.
    """
    if not any(gate.encode() in raw and any(all(t.encode() in raw for t in alt) for alt in alts) for gate, alts in outer):
        return False
    for call in calls:
        module = call.split(".", 1)[0].encode()
        if module not in raw:
            continue
        dotted = call.encode()
        for found in _IMPORT_AS.finditer(raw):
            path, alias = found.group(1), found.group(2) or found.group(1)
            if dotted.startswith(path + b".") and alias + dotted[len(path):] + b"(" in raw:
                return True
        if b"from " + module in raw:
            parts = dotted.split(b".")
            if any(b".".join(parts[i:]) + b"(" in raw for i in range(1, len(parts))):
                return True
    return False


def _names_in(target: cst.BaseExpression) -> list[cst.Name]:
    """The names a `for` target binds (`x`, `(i, (a, b))`, `[k, v]`)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names_in(el.value)]
    return []


def _name_requirement(qname: str) -> tuple[str, tuple[tuple[str, ...], ...]]:
    """Substrings any reference to `qname` (a.b.c) must contain, as (gate, alternatives).

    A reference is either an attribute chain ending in `.c` that also names `b` (`x.b.c`, or
    `x.c` after `import a.b as x`), or a from-import of `c` (`from a.b import c`).
    """
    parts = qname.split(".")
    last = parts[-1]
    if len(parts) == 1:
        return last, ((last,),)
    parent, module = parts[-2], ".".join(parts[:-1])
    if len(parts) > 2:
        return parent, ((f".{last}", parent), (f"from {module}", last))
    # `torch.compile`: the attribute form, or a from-import naming it after `import` or a comma.
    return last, ((f".{last}", parent), (f"import {last}",), (f"from {module} import", f", {last}"),
                  (f"from {module} import (", last))


def _module_requirement(module: str) -> tuple[str, tuple[tuple[str, ...], ...]]:
    """Substrings an import of `module` must contain: `import m`, `from m`, `, m` or `from a import b`."""
    parts = module.split(".")
    alternatives = [(f"import {module}",), (f"from {module}",), (f", {module}", "import")]
    if len(parts) > 1:
        alternatives.append((f"from {'.'.join(parts[:-1])} import", parts[-1]))
    return parts[-1], tuple(alternatives)


def _literal_token(pattern: str) -> str:
    """A substring every match of a regular expression contains (for the prefilter).

    The longest literal run, or for alternations the longest run common to every branch
    (`^(CUDA_HOME|CUDA_PATH)$` -> `CUDA_`); "" when there is none (the file is then parsed).
    """
    def literals(text: str) -> list[str]:
        text = re.sub(r"\[[^\]]*\]", " ", re.sub(r"\\.", " ", text))  # drop escapes, then classes
        return re.findall(r"[A-Za-z0-9_\-]+", re.sub(r"[()^$?*+{}.]", " ", text))

    pattern = re.sub(r"\((?:\^|\$|\\[sbAZ]|\|)*\)", "", pattern)  # groups of anchors only: (^|\s)
    branches = re.split(r"\|", pattern)
    if len(branches) == 1:
        words = literals(pattern)
        return max(words, key=len) if words else ""
    first = " ".join(literals(branches[0]))
    best = ""
    for i in range(len(first)):
        for j in range(i + len(best) + 1, len(first) + 1):
            piece = first[i:j]
            if " " in piece:
                break
            if all(piece in " ".join(literals(b)) for b in branches[1:]):
                best = piece
    return best


def _literal(value: cst.BaseExpression) -> Any:
    """A string, int, True/False/None literal's value, else None."""
    literal: Any = _string_value(value)
    if literal is None and isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        literal = {"True": True, "False": False, "None": None}[value.value]
    if literal is None and isinstance(value, cst.Integer):
        literal = int(value.value, 0)
    return literal


def _cuda_fstring(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The index expression of `f"cuda:{expr}"`, else None."""
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        first, second = node.parts
        if isinstance(first, cst.FormattedStringText) and first.value == "cuda:" and isinstance(second, cst.FormattedStringExpression):
            return second.expression
    return None


class _Collector(cst.CSTVisitor):
    def __init__(self, index: RuleIndex, module: cst.Module, path: str = "") -> None:
        self.index = index
        self.module = module
        self.file_name = path.replace("\\", "/").rsplit("/", 1)[-1]
        self.scopes: list[dict[str, str]] = [module_bindings(module)]
        self.functions: list[str] = []
        self.candidates: list[Candidate] = []
        self.inner: set[int] = set()
        self.callees: dict[int, cst.Call] = {}
        self.optional_tests: set[int] = set()
        self.wrapped_by: dict[int, cst.Call] = {}
        self.loop_nodes: list[cst.For | cst.While] = []
        self._code: str | None = None
        self._codes: dict[int, str] = {}
        self.arrays: list[dict[str, str]] = [{}]  # per function: name -> the value call that made it
        self.suppressed: set[int] = set()
        self.device_ctx: dict[int, str] = {}
        self.docstrings: set[int] = set()
        self.quiet = 0
        self.dtype_ctx: set[int] = set()
        self.env_ctx: set[int] = set()
        self.fstrings = 0
        self.values = ModuleValues(module)
        self.value_scopes: list[ScopeValues] = [self.values.module]
        self.api_args: set[int] = set()  # a device argument of a torch API, which takes a torch.device too
        self.device_calls: dict[int, tuple[cst.Call, cst.BaseExpression | None]] = {}  # torch.device(<this>[, index])
        self.type_tests: dict[int, tuple[cst.IfExp, cst.BaseExpression]] = {}  # "cuda" if "cuda" in <x> else "cpu"
        self.cuda_tests = False  # an `if device == "cuda":`-like branch exists

    # -- helpers ---------------------------------------------------------------------------
    def resolve(self, node: cst.BaseExpression) -> str | None:
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        for scope in reversed(self.scopes):
            if head in scope:
                return scope[head] + ("." + rest if rest else "")
        return None

    def add(self, rule: RuleSpec, node: cst.CSTNode, **values: Any) -> None:
        context = values.pop("context", {})
        if rule.id not in self.index.enabled:
            return
        self.candidates.append(Candidate(rule, node, {k: str(v) for k, v in values.items()}, context))

    def _set_ctx(self, node: cst.CSTNode | None, ctx: str) -> None:
        if node is not None:
            self.device_ctx[id(node)] = ctx

    # -- scopes and imports ----------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.value_scopes.append(self.values.scope(node))
        self.arrays.append({})
        self.scopes.append({})
        self.functions.append(node.name.value)
        self.inner.add(id(node.name))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.value_scopes.pop()
        self.arrays.pop()
        self.scopes.pop()
        self.functions.pop()

    def visit_For(self, node: cst.For) -> None:
        self.loop_nodes.append(node)

    def leave_For(self, node: cst.For) -> None:
        self.loop_nodes.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loop_nodes.append(node)

    def leave_While(self, node: cst.While) -> None:
        self.loop_nodes.pop()

    def _builtin_call(self, node: cst.Call, positional: list[cst.Arg]) -> None:
        name = node.func.value  # type: ignore[attr-defined]
        for rule, m in self.index.builtins[name]:
            if m.get("in_loop") and not self.loop_nodes:
                continue
            if m.get("loop_contains") and not all(n in self._code_of(self.loop_nodes[-1]) for n in m["loop_contains"]):
                continue
            value = next((a.value for a in positional if self._may_be_tensor(a.value)), None) if m.get("value_args") else node
            if value is None:
                continue
            self.add(rule, node, name=name, value=self.module.code_for_node(value)[:60], context={"call": node})
            break

    def _may_be_tensor(self, value: cst.BaseExpression) -> bool:
        """A printed value that may be a tensor: a name, attribute or subscript, not text, a loop
        counter (`for step in ...`) or tensor metadata (`x.shape`)."""
        if isinstance(value, cst.Attribute):
            return value.attr.value not in TENSOR_METADATA and self._may_be_tensor(value.value)
        if isinstance(value, cst.Subscript):
            return self._may_be_tensor(value.value)
        if isinstance(value, cst.Name):
            return value.value not in self._loop_targets() and value.value not in ("self", "args", "config", "cfg")
        return False

    def _loop_targets(self) -> set[str]:
        names: set[str] = set()
        for loop in self.loop_nodes:
            if isinstance(loop, cst.For):
                names.update(n.value for n in _names_in(loop.target))
        return names

    def _module_code(self) -> str:
        if self._code is None:
            self._code = self.module.code
        return self._code

    def _code_of(self, node: cst.CSTNode) -> str:
        """A loop's source, generated once per scan (several rules may ask)."""
        key = id(node)
        if key not in self._codes:
            self._codes[key] = self.module.code_for_node(node)
        return self._codes[key]

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append({})

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.inner.add(id(node.name))

    def _import(self, node: cst.Import | cst.ImportFrom) -> bool:
        if len(self.scopes) > 1:
            self.scopes[-1].update(import_bindings(node))
        candidates = list(imported_modules(node))
        if isinstance(node, cst.ImportFrom) and candidates and not isinstance(node.names, cst.ImportStar):
            # `from numba import cuda` loads the submodule numba.cuda.
            base = candidates[0][0]
            candidates += [(f"{base}.{n}", alias) for alias in node.names if (n := dotted_name(alias.name))]
        reported: set[str] = set()
        for module, report_node in candidates:
            for prefix, rule in self.index.imports:
                if (module == prefix or module.startswith(prefix + ".")) and rule.id not in reported:
                    self.add(rule, report_node, name=module)
                    reported.add(rule.id)
                    break
        return False  # names inside an import are not references

    def visit_Import(self, node: cst.Import) -> bool:
        return self._import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return self._import(node)

    # -- contexts in which a string is a device --------------------------------------------
    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
            self.docstrings.add(id(node.value))

    def visit_Param(self, node: cst.Param) -> None:
        self.inner.add(id(node.name))
        if node.default is not None and DEVICE_NAME.search(node.name.value):
            self._set_ctx(node.default, "device")

    def _target_is_device(self, target: cst.BaseExpression) -> bool:
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(target, cst.Name) else ""
        if isinstance(target, cst.Name) and not DEVICE_NAME.search(name):
            # `loc = f"cuda:{i}"` then `map_location=loc`: a name used as a device is one.
            scope = self.value_scopes[-1]
            return name in scope.owner(name).device_names
        return bool(DEVICE_NAME.search(name))

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(self._target_is_device(t.target) for t in node.targets):
            self._set_ctx(node.value, "device")
        elif any(self._target_is_backend(t.target) for t in node.targets):
            self._set_ctx(node.value, "backend")

    def _target_is_backend(self, target: cst.BaseExpression) -> bool:
        """`backend = "nccl"` where the name is later passed as a process-group backend."""
        if isinstance(target, cst.Name):
            scope = self.value_scopes[-1]
            return target.value in scope.owner(target.value).backend_names
        return isinstance(target, cst.Attribute) and target.attr.value in ("backend", "dist_backend")

    def leave_Assign(self, node: cst.Assign) -> None:
        # `arr = np.zeros(3)`: remember which names hold an array a value-call rule looks for.
        if not self.index.value_calls:
            return
        value = node.value
        inner = self.resolve(value.func) if isinstance(value, cst.Call) else None
        keeps = inner in self.index.value_calls and not any(a.keyword is not None and a.keyword.value == "dtype" for a in value.args)
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                if keeps:
                    self.arrays[-1][t.target.value] = inner
                else:
                    self.arrays[-1].pop(t.target.value, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self._target_is_device(node.target):
            self._set_ctx(node.value, "device")

    def visit_Return(self, node: cst.Return) -> None:
        if self.functions and "device" in self.functions[-1].lower():
            self._set_ctx(node.value, "device")

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.env_ctx.add(id(node.key))  # {"CUDA_VISIBLE_DEVICES": "0"} as an environment for a process
        key = _string_value(node.key)
        if key is not None and DEVICE_NAME.search(key):
            self._set_ctx(node.value, "device")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        for target in node.comparisons:
            name = dotted_name(target.comparator)
            if isinstance(target.operator, (cst.In, cst.NotIn)) and name is not None and name.endswith("environ"):
                self.env_ctx.add(id(node.left))
        if id(node) in self.optional_tests:
            return
        operands = [node.left] + [c.comparator for c in node.comparisons]
        if any(isinstance(o, cst.Attribute) and o.attr.value == "type" and isinstance(o.value, cst.Name)
               and o.value.value in self.values.module.accelerator_names for o in operands):
            return  # `DEVICE.type == "cuda"` on the resolved accelerator: a deliberate CUDA-only branch
        for operand in operands:
            if CUDA_DEVICE.match(_string_value(operand) or ""):
                self.device_ctx[id(operand)] = "comparison"

    def visit_If(self, node: cst.If) -> None:
        if is_cuda_test(node.test):
            self.cuda_tests = True

    def visit_IfExp(self, node: cst.IfExp) -> None:
        test = node.test
        if is_cuda_test(test):
            self.cuda_tests = True
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.In)
                and _string_value(test.left) == "cuda" and _string_value(node.body) == "cuda" and _string_value(node.orelse) == "cpu"):
            # `"cuda" if "cuda" in device else "cpu"`: the device type, derived by a string test.
            self.type_tests[id(test.left)] = (node, test.comparisons[0].comparator)
        if isinstance(node.orelse, cst.Name) and node.orelse.value == "None":
            # `value if device.type == "cuda" else None` passes a CUDA-only argument only on CUDA:
            # portable on every device, so the comparison is not a skipped branch.
            self.optional_tests.add(id(node.test))
        ctx = self.device_ctx.get(id(node))
        if ctx:
            self._set_ctx(node.body, ctx)
            self._set_ctx(node.orelse, ctx)
        # Only the bare test is the "silently falls back to CPU" shape: with more conditions
        # (`is_available() and not args.no_cuda`) the script's own choice must survive, so the
        # string and the guard are rewritten one by one instead.
        guard = self._cuda_guard(node.test) if isinstance(node.test, cst.Call) else None
        branch = next((b for b in (node.body, node.orelse) if CUDA_DEVICE.match(_string_value(b) or "")), None)
        if guard is not None and branch is not None:
            for rule in self.index.device_strings.get("guarded", []):
                self.add(rule, node, value=_string_value(branch), context={
                    "device_kind": ctx or "device", "text": id(node) not in self.api_args, "device_call": self.device_calls.get(id(node)),
                    "index": CUDA_DEVICE.match(_string_value(branch) or "").group(1)})
                self.suppressed.update({id(guard), id(branch), id(guard.func)})
                break

    def _cuda_guard(self, test: cst.BaseExpression) -> cst.Call | None:
        found: list[cst.Call] = []

        class _Find(cst.CSTVisitor):
            def visit_Call(inner, call: cst.Call) -> None:  # noqa: N805
                if self.resolve(call.func) == "torch.cuda.is_available":
                    found.append(call)

        walk(test, _Find())
        return found[0] if found else None

    # -- calls, references, methods, arguments ---------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self.callees[id(node.func)] = node
        for arg in node.args:
            if isinstance(arg.value, cst.Call):
                self.wrapped_by[id(arg.value)] = node
        qname = self.resolve(node.func)
        attr = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        last = attr or (node.func.value if isinstance(node.func, cst.Name) else "")
        if last in QUIET_CALLS or last.endswith(("Error", "Exception", "Warning")):
            self.quiet += 1
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        torch_api = (qname or "").startswith("torch.") or (qname is None and attr in ("to", "cuda"))
        for arg in node.args:
            if arg.keyword is not None:
                self.inner.add(id(arg.keyword))
                ctx = DEVICE_KEYWORDS.get(arg.keyword.value)
                if ctx:
                    self._set_ctx(arg.value, ctx)
                    if torch_api or arg.keyword.value == "map_location":
                        self.api_args.add(id(arg.value))
                        if arg.keyword.value == "device":
                            self._device_index(node, arg.value)
                elif arg.keyword.value == "device_type" and (qname in DEVICE_TYPE_CALLS or last == "autocast"):
                    self._set_ctx(arg.value, "device_type")
                elif arg.keyword.value in DTYPE_KEYWORDS:
                    self.dtype_ctx.add(id(arg.value))
        if attr in ("to", "type") or qname in ("torch.set_default_dtype", "torch.get_default_dtype"):
            self.dtype_ctx.update(id(a.value) for a in positional)
        receiver = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
        env_call = (attr in ENV_METHODS and receiver is not None and receiver.endswith("environ")) or \
            qname in ("os.getenv", "os.putenv", "os.unsetenv")
        if env_call and positional:
            self.env_ctx.add(id(positional[0].value))
        if positional:
            if qname == "torch.device" and (len(positional) > 1 or any(a.keyword is not None and a.keyword.value == "index" for a in node.args)):
                self._set_ctx(positional[0].value, "device_type")  # torch.device("cuda", rank): the type only
                index = positional[1].value if len(positional) > 1 else next(a.value for a in node.args if a.keyword is not None and a.keyword.value == "index")
                self.device_calls[id(positional[0].value)] = (node, index)
            elif qname in DEVICE_ARG0 or (attr == "to" and qname is None):
                self._set_ctx(positional[0].value, "device")
                self.api_args.add(id(positional[0].value))
                if qname == "torch.device" and len(node.args) == 1:
                    self.device_calls[id(positional[0].value)] = (node, None)
                if attr == "to" and qname is None:
                    self._device_index(node, positional[0].value)
            elif qname in DEVICE_TYPE_ARG0:
                self._set_ctx(positional[0].value, "device_type")
        if attr == "format" and id(node) in self.device_ctx and len(node.args) == 1 and node.args[0].keyword is None \
                and _string_value(node.func.value) == "cuda:{}":
            # 'cuda:{}'.format(args.gpu): an f-string written the old way.
            for rule in self.index.device_strings.get("device", []):
                self.add(rule, node, value=self.module.code_for_node(node), context={
                    "device_kind": self.device_ctx[id(node)], "fstring": node.args[0].value, "text": id(node) not in self.api_args,
                    "device_call": self.device_calls.get(id(node))})
                break
        if attr == "add_argument" and self.index.option_defaults:
            self._option_default(node, positional)
        if attr == "add_argument" and any("backend" in (_string_value(a.value) or "") for a in positional):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "default":
                    self._set_ctx(arg.value, "backend")
        if env_call and len(positional) > 1 and "BACKEND" in (_string_value(positional[0].value) or "").upper():
            self._set_ctx(positional[1].value, "backend")  # os.environ.get("DIST_BACKEND", "nccl")
        if attr == "add_argument" and any("device" in (_string_value(a.value) or "") for a in positional):
            # A command-line device is text: the default and the choices become device types.
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "default":
                    self._set_ctx(arg.value, "device_type")
                elif arg.keyword is not None and arg.keyword.value == "choices" and isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                    for element in arg.value.elements:
                        self._set_ctx(element.value, "device_type")
        if attr is not None and qname is None and attr in self.index.methods:
            for rule, m in self.index.methods[attr]:
                if m.get("in_loop") and not self.loop_nodes:
                    continue

                if m.get("receiver") and not self.index.pattern(m["receiver"], rule).search(dotted_name(node.func.value) or ""):
                    continue
                if m.get("module_contains") and not any(t in self._module_code() for t in m["module_contains"]):
                    continue
                loop = self.loop_nodes[-1] if self.loop_nodes else None
                if m.get("loop_with"):
                    # The step loop: with gradient accumulation, backward() runs in an inner loop.
                    loop = next((lp for lp in reversed(self.loop_nodes) if m["loop_with"] in self._code_of(lp)), loop)
                if m.get("unless_loop_contains") and loop is not None and any(
                        t in self._code_of(loop) for t in m["unless_loop_contains"]):
                    continue
                self.add(rule, node, name=attr, context={"call": node, "method": True, "loop": loop})
                break
        if isinstance(node.func, cst.Name) and node.func.value in self.index.builtins and qname is None:
            self._builtin_call(node, positional)
        if qname is not None:
            for rule, m in self.index.arguments.get(qname, []):
                self._match_argument(rule, m, node, positional, qname)

    def _option_default(self, call: cst.Call, positional: list[cst.Arg]) -> None:
        """`parser.add_argument("--accelerator", default="gpu")`: a command-line default a rule names."""
        options = [_string_value(a.value) or "" for a in positional]
        default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
        if default is None:
            return
        literal = _literal(default)
        for rule, m in self.index.option_defaults:
            if any(o.startswith("-") and any(key in o for key in m["options"]) for o in options) and literal in m["values"]:
                self.add(rule, default, name=options[0], value=literal, context={"call": call, "argument": m})
                self.suppressed.add(id(default))
                return

    def _device_index(self, call: cst.Call, value: cst.BaseExpression) -> None:
        """`.to(rank)`, `.to(self.gpu_id)`, `device=local_rank`: an int, which means "accelerator index"."""
        if self.index.device_index and self.value_scopes[-1].is_index(value):
            for rule in self.index.device_index:
                self.add(rule, value, value=self.module.code_for_node(value)[:60], context={"call": call, "index_arg": value})
                return

    def leave_Call(self, node: cst.Call) -> None:
        attr = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        last = attr or (node.func.value if isinstance(node.func, cst.Name) else "")
        if last in QUIET_CALLS or last.endswith(("Error", "Exception", "Warning")):
            self.quiet -= 1

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.fstrings += 1

    def leave_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.fstrings -= 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        name = dotted_name(node.value)
        if name is not None and name.endswith("environ") and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                self.env_ctx.add(id(element.value))

    def _match_argument(self, rule: RuleSpec, m: dict[str, Any], call: cst.Call, positional: list[cst.Arg], qname: str) -> None:
        value: cst.BaseExpression | None = None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == m.get("name"):
                value = arg.value
        if value is None and "position" in m and len(positional) > m["position"]:
            value = positional[m["position"]].value
        if value is None:
            return
        if m.get("value_calls"):
            inner = self.resolve(value.func) if isinstance(value, cst.Call) else None
            if isinstance(value, cst.Name):
                inner = next((scope[value.value] for scope in reversed(self.arrays) if value.value in scope), None)
                if inner is not None and value.value not in self.arrays[-1]:
                    inner = None  # bound in an outer function: may have changed since
            explicit = isinstance(value, cst.Call) and any(a.keyword is not None and a.keyword.value == "dtype" for a in value.args)
            if inner in m["value_calls"] and not explicit:
                self.add(rule, value, name=qname, value=inner, context={"call": call, "argument": m})
            return
        if m.get("value_names"):
            resolved = self.resolve(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            if resolved in m["value_names"]:
                self.add(rule, value, name=qname, value=resolved, context={"call": call, "argument": m})
            return
        if m.get("any"):
            if isinstance(value, cst.IfExp) or (isinstance(value, cst.Name) and value.value == "None"):
                return  # None, or already chosen per device (what the fix writes)
            self.add(rule, value, name=qname, value=self.module.code_for_node(value)[:60], context={"call": call, "argument": m})
            return
        literal: Any = _literal(value)
        if literal is None and isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
            literal = _string_value(value.elements[0].value)  # device_types=["cuda"]
        if literal is None and not isinstance(value, cst.Name):
            return
        for expected in m["values"]:
            if literal == expected or (isinstance(expected, str) and isinstance(literal, str) and re.fullmatch(expected, literal)):
                self.add(rule, value, name=qname, value=literal, context={"call": call, "argument": m})
                self.suppressed.add(id(value))
                return

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.inner.add(id(node.value))
        self.inner.add(id(node.attr))
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if id(node) in self.inner or id(node) in self.suppressed:
            return
        qname = self.resolve(node)
        if qname is None:
            return
        call = self.callees.get(id(node))
        for rule in self.index.lookup(qname, call is not None):
            needs = self.index.reference_context.get((rule.id, qname))
            if needs == "dtype" and call is None and id(node) not in self.dtype_ctx:
                continue
            if needs == "code" and (self.quiet or self.fstrings):
                continue
            unless = self.index.unless_keywords.get((rule.id, qname))
            if unless and call is not None and any(a.keyword is not None and a.keyword.value in unless for a in call.args):
                continue
            wrappers = self.index.unless_wrapped.get((rule.id, qname))
            outer = self.wrapped_by.get(id(call)) if call is not None else None
            if wrappers and outer is not None and self.resolve(outer.func) in wrappers:
                continue
            self.add(rule, node, name=qname, context={"call": call, "callee": call is not None})

    # -- strings ---------------------------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._string(node)

    def _string(self, node: cst.SimpleString | cst.FormattedString) -> None:
        if id(node) in self.suppressed or id(node) in self.docstrings:
            return
        ctx = self.device_ctx.get(id(node))
        value = _string_value(node)
        if ctx == "backend":
            if value == "nccl":
                for rule in self.index.backend_strings:
                    self.add(rule, node, value=value, context={"backend_kind": "text"})
                    return
            return
        if ctx and value is not None and (match := CUDA_DEVICE.match(value)):
            kind = "comparison" if ctx == "comparison" else "device"
            for rule in self.index.device_strings.get(kind, []):
                type_test = self.type_tests.get(id(node))
                manual = ("a branch on the device type: decide whether it should also run on the target's device"
                          if kind == "comparison" and type_test is None else None)
                self.add(rule, node, value=value, context={"device_kind": ctx, "index": match.group(1), "text": id(node) not in self.api_args,
                                                           "device_call": self.device_calls.get(id(node)),
                                                           "type_test": type_test, "manual_reason": manual})
                return
        if ctx in ("device", "device_type") and (expr := _cuda_fstring(node)) is not None:
            for rule in self.index.device_strings.get("device", []):
                self.add(rule, node, value=self.module.code_for_node(node), context={
                    "device_kind": ctx, "fstring": expr, "text": id(node) not in self.api_args, "device_call": self.device_calls.get(id(node))})
                return
        # An environment key (`os.environ.get("X")`) is never a message, even inside `.split(...)`.
        if value is not None and (not self.quiet or id(node) in self.env_ctx):
            for pattern, rule, context, names in self.index.strings:
                if names and self.file_name not in names:
                    continue
                if pattern.search(value) and (context != "env" or id(node) in self.env_ctx):
                    self.add(rule, node, value=value)
                    return


def _snippet(module: cst.Module, node: cst.CSTNode) -> str:
    code = module.code_for_node(node).strip()
    return code.splitlines()[0][:200] if code else ""


def scan_python(
    module: cst.Module,
    path: str,
    index: RuleIndex,
    target: str,
    *,
    is_test: bool = False,
    line_map: Any = None,
    source: str | None = None,
    whole_file: bool = False,
    original: str | None = None,
) -> list[Finding]:
    """Match one parsed module; return findings in source order.

    Args:
        module: the parsed libcst module (not copied; findings keep references to its nodes).
        path: the path to report.
        index: the compiled catalogue.
        target: `portable`, `neuron`, `xla` or `inf1`: decides severities, messages and fixes.
        line_map: optional callable line -> (cell, line) for notebooks (cell None: a pruned
            source's line -> the file's line, see prune.py).
        source: the module's text if known (saves generating it again).
        whole_file: mark no finding fixable when the file has a blocker (`mark_blocked`). The
            scan API applies that after suppressions instead; the fixer decides with what it can
            render, and `--partial`.
        original: the file's whole text when `module` was parsed from a pruned copy (prune.py),
            for the rules that look at the whole file (`module_contains`).
    """
    collector = _Collector(index, module, path)
    collector._code = original
    walk(module, collector)
    if not collector.candidates:
        return []
    if collector.cuda_tests:
        collector.candidates = _mark_cuda_only(collector, module)
        if not collector.candidates:
            return []
    ranges = node_ranges(module, module.code if source is None else source, [c.node for c in collector.candidates])
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for cand in collector.candidates:
        if id(cand.node) in collector.suppressed and cand.rule.id not in _self_suppressing(cand):
            continue
        key = (cand.rule.id, id(cand.node))
        if key in seen:
            continue
        seen.add(key)
        line, column, end_line, end_column = ranges[id(cand.node)]
        cell = None
        if line_map is not None:
            cell, line = line_map(line)
            _, end_line = line_map(end_line)
        findings.append(_finding(cand, path, target, Span(line, column + 1, end_line, end_column + 1),
                                 _snippet(module, cand.node), cell, is_test))
    findings.sort(key=lambda f: (f.cell or 0, f.span.line, f.span.column, f.rule_id))
    if whole_file:
        findings = mark_blocked(findings)
    return findings


def mark_blocked(findings: list[Finding]) -> list[Finding]:
    """In a file with a blocker, no finding is fixable: `fix` leaves the file whole (see coupling.blocks)."""
    from dataclasses import replace

    from .coupling import blocks

    blocker = next((f for f in findings if blocks(f, f.fix is not None and f.fix.available)), None)
    if blocker is None:
        return findings
    where = f"`{blocker.snippet}` ({blocker.rule_id}, line {blocker.span.line})"
    out = []
    for finding in findings:
        if finding.fix is not None and finding.fix.available and finding.plan is not None:
            finding.plan.context = {**finding.plan.context, "manual_reason": (
                f"not rewritten: {where} has no automatic rewrite, so the file would still need CUDA; "
                "change it by hand and run fix again, or pass --partial")}
            finding = replace(finding, fix=replace(finding.fix, available=False))
        out.append(finding)
    return out


def _mark_cuda_only(collector: "_Collector", module: cst.Module) -> list[Candidate]:
    """Code inside `if device == "cuda":` runs only on a GPU: `fix` leaves it as it is.

    It is still reported (the branch is skipped on Neuron), without a fix. Inside a test on the
    resolved accelerator (`DEVICE.type == "cuda"`, as `fix` writes it) it is not reported.
    """
    parents = Parents(module, syntax_only=True)
    accelerators = collector.values.module.accelerator_names
    kept = []
    for cand in collector.candidates:
        test = cuda_branch(cand.node, parents) if cand.node is not None else None
        if test is None:
            kept.append(cand)
            continue
        code = module.code_for_node(test).strip()
        if any(re.search(rf"\b{re.escape(name)}\.type\b", code) for name in accelerators):
            continue
        cand.context = {**cand.context, "manual_reason": f"runs only on CUDA, inside `if {code}`: left as it is"}
        kept.append(cand)
    return kept


def _self_suppressing(cand: Candidate) -> set[str]:
    # Argument and guarded matches suppress their own node against other rules, not themselves.
    return {cand.rule.id} if cand.context.get("argument") is not None or cand.context.get("device_kind") else set()


def _finding(cand: Candidate, path: str, target: str, span: Span, snippet: str, cell: int | None, is_test: bool) -> Finding:
    rule = cand.rule
    fix = None
    if rule.fix:
        entry = rule.fix_for(target)
        available = entry is not None
        if available and rule.fix["kind"] == "text":
            # A text fix rewrites shell/Dockerfile/requirements lines, never Python strings, and
            # only lines its `when` pattern accepts.
            line = cand.context.get("line_text")
            available = line is not None and ("when" not in entry or re.search(entry["when"], line) is not None)
        if cand.context.get("manual_reason"):
            available = False
        if available and rule.fix["kind"] == "template" and "expr" not in entry and cand.values.get("name") not in entry.get("by_name", {}):
            available = False  # `by_name` has no rewrite for this name
        fix = Fix(
            title=(entry or {}).get("title", rule.fix["title"]),
            safety=Safety((entry or {}).get("safety", rule.fix["safety"])),
            available=available,
        )
    try:
        message = rule.message_for(target).format(**cand.values)
    except (KeyError, IndexError):
        message = rule.message_for(target)
    return Finding(
        rule_id=rule.id, rule_name=rule.name, category=rule.category, severity=rule.severity_for(target),
        path=path, span=span, message=message, fix=fix, cell=cell, is_test=is_test, snippet=snippet,
        node=cand.node, plan=cand,
    )


def scan_text(text: str, path: str, file_kind: str, index: RuleIndex, target: str, *, is_test: bool = False,
              cell: int | None = None, line_offset: int = 0) -> list[Finding]:
    """Match `text` rules line by line (comment lines skipped) in a non-Python file."""
    findings: list[Finding] = []
    rules = [(p, r) for p, r, kinds in index.text if file_kind in kinds and r.id in index.enabled]
    if not rules:
        return findings
    for lineno, line in enumerate(split_lines(text), start=1):
        if line.lstrip().startswith("#"):
            continue
        for pattern, rule in rules:
            for m in pattern.finditer(line):
                cand = Candidate(rule, None, {"value": m.group(0).strip()}, {"line": lineno + line_offset, "match": m, "line_text": line})
                span = Span(lineno + line_offset, m.start() + 1, lineno + line_offset, m.end() + 1)
                findings.append(_finding(cand, path, target, span, line.strip()[:200], cell, is_test))
                break
    return findings
