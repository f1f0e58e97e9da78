"""The catalogue compiled for one scan (`RuleIndex`): lookups by qualified name, method, module
and context, and the prefilter that skips files no rule can match."""

from __future__ import annotations

import re
from typing import Any

from migrator.core.catalogue import Catalogue, RuleSpec
from migrator.scan.words import SUBCLASSES

__all__ = ["RuleIndex"]


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
        self.imports: list[tuple[str, RuleSpec, dict[str, Any]]] = []
        self.optional_imports = False  # an import rule skips optional imports (`unless_optional`)
        self.arguments: dict[str, list[tuple[RuleSpec, dict[str, Any]]]] = {}
        self.device_strings: dict[str, list[RuleSpec]] = {}
        self.device_index: list[RuleSpec] = []
        self.mask_indexes: list[tuple[RuleSpec, dict[str, Any], Any]] = []  # (rule, matcher, index-name pattern)
        self.backend_strings: list[RuleSpec] = []
        self.option_defaults: list[tuple[RuleSpec, dict[str, Any]]] = []
        self.strings: list[tuple[re.Pattern[str], RuleSpec, str | None, tuple[str, ...]]] = []
        self.reference_context: dict[tuple[str, str], str] = {}
        self.text: list[tuple[re.Pattern[str], RuleSpec, tuple[str, ...]]] = []
        self.text_paths: dict[int, Any] = {}  # a text matcher's unless_path_matches, by id of its compiled pattern
        self.text_keys: dict[int, Any] = {}  # a text matcher's in_keys (scan/config_keys.py), by id of its compiled pattern
        self.text_repeat: dict[int, Any] = {}  # a text matcher's repeat_after, by id of its compiled pattern
        # A text matcher's file-wide conditions, by id of its compiled pattern: (unless_file_matches, once).
        self.text_options: dict[int, tuple[Any, bool]] = {}
        # A string matcher's: (unless_file_matches, once, remote_value, value_set).
        self.string_options: dict[int, tuple[Any, bool, bool, bool]] = {}
        self.unless_keywords: dict[tuple[str, str], frozenset[str]] = {}
        self.bare_decorators: dict[str, list[RuleSpec]] = {}  # `@torch.compile`: a call rule that also reads its bare decorator
        self.builtins: dict[str, list[tuple[RuleSpec, dict[str, Any]]]] = {}
        self.unless_wrapped: dict[tuple[str, str], frozenset[str]] = {}
        self.value_calls: set[str] = set()
        # Conditions on a call/reference match, per (rule id, qualified name or prefix): the
        # matcher itself (`in_functions`, `first_argument_moved`, `assigned_values`).
        self.conditions: dict[tuple[str, str], dict[str, Any]] = {}
        self.callee_arguments: list[tuple[Any, RuleSpec, dict[str, Any]]] = []  # argument rules by `callee` pattern
        self.operator_info: dict[tuple[str, str], dict[str, Any]] = {}  # (rule id, name or prefix) -> operators.yaml entry
        self._requirements: list[tuple[str, tuple[tuple[str, ...], ...]]] = []
        self._by_file_name: list[tuple[frozenset[str], bytes]] = []  # string matchers for named files only
        self._value_checks: list[tuple[tuple[str, ...], tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]]] = []
        # Where a rule does not apply (`not_in`): rule id -> (file name, class names, function names) patterns.
        self.not_in: dict[str, tuple[Any, Any, Any]] = {}
        need = self._need
        for rule in catalogue.rules:
            where = rule.raw.get("not_in")
            if where:
                self.not_in[rule.id] = tuple(self.pattern(where[k], rule) if k in where else None
                                             for k in ("files", "classes", "functions"))  # type: ignore[assignment]
            for m in _expand_operators(rule, self.operator_info):
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
                        if m.get("bare_decorator"):
                            self.bare_decorators.setdefault(q, []).append(rule)
                        if m.get("unless_wrapped_in"):
                            self.unless_wrapped[(rule.id, q)] = frozenset(m["unless_wrapped_in"])
                        if _CONDITIONS.intersection(m):
                            self.conditions[(rule.id, q)] = m
                    for p in m.get("prefixes", []):
                        prefix.append((p, rule))
                        need(*_name_requirement(p))
                        if _CONDITIONS.intersection(m):
                            self.conditions[(rule.id, p)] = m
                elif kind == "method":
                    for n in m["names"]:
                        self.methods.setdefault(n, []).append((rule, m))
                        need(n, ((f".{n}(",),))
                elif kind == "mask-index":
                    self.mask_indexes.append((rule, m, self.pattern(m["index_names"], rule)))
                    for function in m.get("in_functions", ()):  # `def forward` and an index
                        need(f"def {function}", ((f"def {function}", "["),))
                    if not m.get("in_functions"):
                        need("[", (("[",),))
                elif kind == "builtin-call":
                    for n in m["names"]:
                        self.builtins.setdefault(n, []).append((rule, m))
                        need(f"{n}(", ((f"{n}(", *m.get("loop_contains", ())),))
                elif kind == "import":
                    for mod in m["modules"]:
                        self.imports.append((mod, rule, m))
                        need(*_module_requirement(mod))
                    self.optional_imports = self.optional_imports or bool(m.get("unless_optional"))
                elif kind == "argument":
                    if m.get("callee"):
                        self.callee_arguments.append((self.pattern(m["callee"], rule), rule, m))
                        # The keyword, every `with_keywords` one and, with `in_functions`, one of
                        # those function names: each is in the text of a file the matcher can match.
                        alternatives: tuple[tuple[str, ...], ...] = ((m["name"], *m.get("with_keywords", ())),)
                        if m.get("in_functions"):
                            names = (*m["in_functions"], *(("batched",) if m.get("in_map_functions") else ()))
                            alternatives = tuple((*alt, f) for alt in alternatives for f in names)
                        need(m["name"], alternatives)
                    for q in (*m.get("qualified_names", ()), *(sub for q in m.get("qualified_names", ()) for sub in SUBCLASSES.get(q, ()))):
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
                    if "allow-list" in m["contexts"]:
                        need("gpu", (('"gpu"',), ("'gpu'",)))
                elif kind == "device-index":
                    self.device_index.append(rule)
                    need(".to(", tuple((".to(", t) for t in ("cuda", "gpu", "rank", "RANK")))
                    need("device=", tuple(("device=", t) for t in ("cuda", "gpu", "rank", "RANK")))
                elif kind == "option-default":
                    self.option_defaults.append((rule, m))
                    need("add_argument", (("add_argument", "default"),))
                elif kind == "backend-string":
                    self.backend_strings.append(rule)
                    need("nccl", (('"nccl"',), ("'nccl'",), ("cuda:nccl",)))
                    need("NCCL", (('"NCCL"',), ("'NCCL'",)))  # Backend("NCCL") is "nccl"
                elif kind == "string":
                    compiled = self.pattern(m["pattern"], rule)
                    self.strings.append((compiled, rule, m.get("context"), tuple(m.get("file_names", ()))))
                    if m.get("unless_file_matches") or m.get("once") or m.get("remote_value") or m.get("value_set"):
                        unless = self.pattern(m["unless_file_matches"], rule) if m.get("unless_file_matches") else None
                        self.string_options[id(compiled)] = (unless, bool(m.get("once")), bool(m.get("remote_value")),
                                                             bool(m.get("value_set")))
                    token = _literal_token(m["pattern"])
                    if m.get("file_names"):
                        self._by_file_name.append((frozenset(m["file_names"]), token.encode()))
                    else:
                        need(token, ((token,),))
                elif kind == "text":
                    compiled = self.pattern(m["pattern"], rule)
                    self.text.append((compiled, rule, tuple(m["file_kinds"])))
                    if m.get("unless_file_matches") or m.get("once"):
                        unless = self.pattern(m["unless_file_matches"], rule) if m.get("unless_file_matches") else None
                        self.text_options[id(compiled)] = (unless, bool(m.get("once")))
                    if m.get("unless_path_matches"):
                        self.text_paths[id(compiled)] = self.pattern(m["unless_path_matches"], rule)
                    if m.get("in_keys"):
                        self.text_keys[id(compiled)] = self.pattern(m["in_keys"], rule)
                    if m.get("repeat_after"):
                        self.text_repeat[id(compiled)] = self.pattern(m["repeat_after"], rule)
        # Longest prefix first, so the most specific rule wins.
        self.call_prefix.sort(key=lambda pr: -len(pr[0]))
        self.ref_prefix.sort(key=lambda pr: -len(pr[0]))
        gates: dict[str, list[tuple[tuple[str, ...], ...]]] = {}
        for gate, alternatives in dict.fromkeys(self._requirements):
            gates.setdefault(gate, []).append(alternatives)
        self._gates = tuple((g.encode(), [tuple(tuple(t.encode() for t in alt) for alt in alts) for alts in group])
                            for g, group in gates.items())

    def condition(self, rule: RuleSpec, qname: str) -> dict[str, Any] | None:
        """The conditions of `rule`'s call/reference matcher that matched `qname` (exact, else prefix)."""
        if not self.conditions:
            return None
        return _by_prefix(self.conditions, rule.id, qname)

    def operator(self, rule: RuleSpec, qname: str) -> dict[str, Any] | None:
        """The rules/operators.yaml entry a finding of `rule` on `qname` comes from."""
        return _by_prefix(self.operator_info, rule.id, qname)

    def _need(self, gate: str, alternatives: tuple[tuple[str, ...], ...]) -> None:
        self._requirements.append((gate, alternatives))

    def pattern(self, pattern: str, rule: RuleSpec):
        """The compiled `pattern` of `rule` (time-limited for team rules; see patterns.py)."""
        key = (pattern, rule.id)
        compiled = self._patterns.get(key)
        if compiled is None:
            from migrator.scan.patterns import TimedPattern
            from migrator.core.resources import rules_dir

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
        # Many alternatives share tokens (`torch`, `from torch import`): each is searched for
        # once per file (a big file without them costs a full read per search).
        present: dict[bytes, bool] = {}

        def has(token: bytes) -> bool:
            found = present.get(token)
            if found is None:
                found = present[token] = token in raw
            return found

        gates = self._gates
        for position, (gate, group) in enumerate(gates):
            if gate in raw:  # (each gate is searched once: no memo)
                for alternatives in group:
                    if any(all(has(t) for t in alt) for alt in alternatives):
                        if position:
                            # The answer does not depend on the order: the gate that let this
                            # file through goes first, as the next file of the tree is likely
                            # to pass it too (`def forward` with an index in a model zoo). A
                            # new tuple, so a scan in another thread reads a whole one.
                            self._gates = (gates[position], *gates[:position], *gates[position + 1:])
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


_CONDITIONS = frozenset({"in_functions", "first_argument_moved", "assigned_values", "assigned", "unless_compared", "max_arguments"})


def _expand_operators(rule: RuleSpec, info: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """A rule's matchers, with an `operators` matcher replaced by the call and argument matchers
    of the entries of rules/operators.yaml (each entry recorded in `info` for its message)."""
    if not any(m["kind"] == "operators" for m in rule.matchers):
        return list(rule.matchers)
    from migrator.core.catalogue import load_operators

    out = [m for m in rule.matchers if m["kind"] != "operators"]
    for entry in load_operators():
        exact = [n for n in entry["names"] if not n.endswith(".*")]
        prefixes = [n[:-2] for n in entry["names"] if n.endswith(".*")]
        for name in exact + prefixes:
            info[(rule.id, name)] = entry
        if "argument" in entry:
            m: dict[str, Any] = {"kind": "argument", "qualified_names": exact, "name": entry["argument"], "values": entry["values"]}
            if "position" in entry:
                m["position"] = entry["position"]
            out.append(m)
        else:
            out.append({"kind": "call", **({"qualified_names": exact} if exact else {}), **({"prefixes": prefixes} if prefixes else {})})
    return out


_IMPORT_AS = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?", re.M)


_MAP_CALL = re.compile(rb"\.map\s*\(")
_PAREN = re.compile(rb"[()]")
_PARTIAL = re.compile(rb"\s*(?:functools\s*\.\s*)?partial\s*\(\s*([A-Za-z_]\w*)\s*[,)]")
_FIRST = re.compile(rb"\s*([A-Za-z_]\w*)\s*[,)]")
_FUNCTION_KEYWORD = re.compile(rb"(?:^\s*|[,(]\s*)function\s*=\s*(?:(?:functools\s*\.\s*)?partial\s*\(\s*)?([A-Za-z_]\w*)")
_BATCHED = re.compile(rb"(?:^|[,(\s])batched\s*=\s*True\b")


def _closing_parens(raw: bytes) -> dict[int, int]:
    """Each `(` of `raw` that is closed, by offset, to the offset of its `)`: one pass, so that
    a file of many `.map(` calls (hostile: 100,000 unclosed) costs its length, not calls x 4000."""
    out: dict[int, int] = {}
    opened: list[int] = []
    for paren in _PAREN.finditer(raw):
        if paren.group() == b"(":
            opened.append(paren.start())
        elif opened:
            out[opened.pop()] = paren.start()
    return out


def batched_map_functions(raw: bytes) -> frozenset[str]:
    """Names of the functions `raw` passes to a batched `.map` call (`datasets`):
    `ds.map(tokenize, batched=True)`, `ds.map(function=tokenize, batched=True, ...)`,
    `ds.map(partial(tokenize, tokenizer=tok), batched=True)`. Read off the text (the call may
    span lines; its parentheses are counted, strings are not told apart)."""
    out: set[str] = set()
    if b"batched" not in raw:
        return frozenset()
    closing: dict[int, int] | None = None
    for found in _MAP_CALL.finditer(raw):
        if closing is None:
            closing = _closing_parens(raw)
        start = found.end()
        # The call's arguments: up to its closing parenthesis, or 3999 bytes on (to the byte
        # before the end) where it is not closed within 4000.
        close = closing.get(start - 1)
        if close is None or close - start >= 4000:
            close = min(start + 3999, len(raw) - 1)
        inside = raw[start:close]
        if b"batched" not in inside or not _BATCHED.search(inside):
            continue
        named = _PARTIAL.match(inside) or _FIRST.match(inside) or _FUNCTION_KEYWORD.search(inside)
        if named and named.group(1) not in (b"lambda", b"function"):
            out.add(named.group(1).decode("ascii", "replace"))
    return frozenset(out)


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


def _by_prefix(table: dict[tuple[str, str], Any], rule_id: str, qname: str) -> Any:
    """`table[(rule_id, qname)]`, else the entry of its longest dotted prefix, else None."""
    name = qname
    while True:
        found = table.get((rule_id, name))
        if found is not None or "." not in name:
            return found
        name = name.rsplit(".", 1)[0]
