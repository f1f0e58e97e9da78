"""Leave out the statements no rule can match, before libcst parses a file.

Parsing with libcst, and walking what it builds, is most of the time of a cold scan, and most
statements of a large module mention nothing the catalogue looks for. The guard (guard.py) has
already parsed the file with CPython's `ast`; this module reads that tree and drops the lines
of every statement that cannot matter, so libcst parses only the rest (an empty line costs
libcst nearly what a short statement does, so they are dropped, not blanked). Candidates are
the module's statements and, inside a kept def, class, `if`, `try` or `with`, the statements
of its blocks (one left out of a block becomes a single `pass`: a block needs one). Loops are
kept or left out whole: method rules read a loop's own text (`loop_with`). Kept lines are
copied as they are, so columns stay; `Pruned.origin` takes line numbers back to the file's;
rules that read the whole file get the original text, and suppression comments are read from
it, so findings are identical. (`left_out` is the analysis alone: sources/pruned_fix.py reuses it.)

A statement is left out only when both hold (the argument that pruning changes no finding):

1. **Nothing in it can produce a finding** (`_Facts.relevant` is False, and none of its
   `index_uses` may hold an index). Every matcher of scan.context.Context needs one of: a
   Name/attribute chain whose head is bound by an import and whose qualified name a call or
   reference rule names (a dtype-only reference: as a callee or in a dtype position), or an
   argument rule names with that argument given in a shape its values take (a keyword's Name for
   a literal: argument._match_held reads what it is assigned) (chains are resolved
   through every import of the module and of the enclosing function, in any branch and order: a
   superset of what resolve.py binds); a callee attribute a method rule names; a builtin call a
   rule names; an import of a module an import rule names; `cuda`/`cuda:N` (or an f-string's
   `cuda:`, or `"cuda:{}"` of `.format`) where the engine gives a string a device, device-type or
   comparison context, `nccl`, or a string matching a string rule (a `--flag` holding a rule's
   literal part counts, as its value may be the next item of a list; constants are compared
   evaluated, so escapes cannot hide them; a literal that may be implicitly concatenated is
   matched by its rule's literal part); `add_argument`; `.to(x)` / `device=x` with an integer,
   an index-like attribute, or a Name that matches values.INDEX_NAME or is assigned something
   int-like anywhere in the file. Each check says "relevant" whenever the engine could find
   something, and more often.
2. **Nothing else can see it** (`_Facts.exports`, `stores`, `imports`). What one statement
   leaves for the others is keyed by name, and looked up only in a few places (`_Lookups`,
   collected from every statement of the file): the names it binds in its scope (ModuleValues
   has no class scope, so a class body binds in the enclosing one), read by is_index, by the
   engine's value-call arrays and accelerator tests, and, in a function, by where its nested
   uses are recorded; the names its imports bind, read by name resolution; the free names a
   function passes as a device, backend or process count (ModuleValues records those on the
   scope that binds them, else the module), read where a name is assigned; and the names passed
   as a keyword whose literal values an argument rule reads (argument._match_held reads every
   assignment of the name). The statement is
   kept when such a name, looked up that way somewhere, also occurs anywhere else in the text
   that can look it up (the enclosing function for the names it binds, else the whole file).

When no statement is relevant at all, the file is not parsed (it cannot have a finding).

Not pruned at all: files scanned with unused-noqa reporting (every comment counts), files whose
encoding is not ASCII-compatible or whose lines end in lone carriage returns, and catalogues
with string rules that have no literal part or are time-limited team rules (they may time out
on any string). `fix` parses whole files: a rewrite renders the whole module. The edits of a
JSON or SARIF scan come from a fix of a pruned text where that is provably the same
(sources/pruned_fix.py).
"""

from __future__ import annotations

import ast
import re
from itertools import accumulate
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from migrator.scan.index import _literal_token
from migrator.scan.matchers.mask_index import KEEPS_MASK
from migrator.scan.matchers.strings import MIXED_NCCL
from migrator.scan.words import (ALLOW_LIST_NAME, BACKEND_CALLS, CUDA_DEVICE, DEVICE_ARG0, DEVICE_NAME, DEVICE_TYPE_ARG0, DEVICE_TYPE_CALLS,
                                 DTYPE_KEYWORDS, INDEX_CALLS, INDEX_NAME, MASK_CALLS, NPROCS_KEYWORDS)
from migrator.scan.words import DEVICE_KEYWORDS as ENGINE_DEVICE_KEYWORDS
from migrator.scan.words import TRACKED_DEVICE_KEYWORDS as DEVICE_KEYWORDS

if TYPE_CHECKING:
    from migrator.scan.index import RuleIndex

__all__ = ["prune_source", "Pruned", "statement_lines", "left_out", "line_starts", "DECIDE", "KEEP_OPEN", "KEEP_WHOLE", "Region",
           "names_a_rule"]

# Encodings in which a line is its bytes up to b"\n" and a byte >= 0x80 never holds one.
_LINE_SAFE = ("utf-8", "utf-8-sig", "utf8", "ascii", "latin-1", "iso-8859-1", "iso8859-1")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Keywords whose Name value ModuleValues records as used where a device, backend or count goes.
_ROLE_KEYWORDS = frozenset(DEVICE_KEYWORDS) | frozenset(NPROCS_KEYWORDS) | {"backend"}
_PATCH_CALLS = frozenset({"setattr", "patch", "object"})  # a test replacing an API (context._spoof)
_ROLE_CALLS = frozenset({"to", "device"}) | frozenset(BACKEND_CALLS)
_INDEX_CALL_NAMES = frozenset({"int", "get_rank", "get_local_rank", "current_device", "current_device_index", "local_rank"})
_DTYPE_CALLS = frozenset({"to", "type", "set_default_dtype", "get_default_dtype"})
# One plain string literal, alone (not implicitly concatenated with another): its value is what
# the engine matches. Triple-quoted, multi-line, f- and byte literals are not recognised here.
_SINGLE_LITERAL = re.compile(rb"""[rRuU]?(?:'(?:[^'\\\r\n]|\\.)*'|"(?:[^"\\\r\n]|\\.)*")""")
# Where a node stands, for `_Reader._visit` (besides "the callee of this call"): bit flags.
_DTYPE = 1  # where the engine takes a name for a dtype (engine._Collector.dtype_ctx)
_DEVICE = 2  # where the engine may give a string a device, device-type or comparison context
_DEVICE_KEYWORDS = frozenset(ENGINE_DEVICE_KEYWORDS) | {"default"}  # `default=`: add_argument's
_DEVICE_TYPE_LASTS = frozenset(q.rsplit(".", 1)[-1] for q in DEVICE_TYPE_CALLS) | {"autocast"}
_FIRST_ARGUMENT_LASTS = frozenset(q.rsplit(".", 1)[-1] for q in DEVICE_ARG0 | DEVICE_TYPE_ARG0) | {"to"}


@dataclass
class _Triggers:
    """What the catalogue can match, in the terms of an `ast` tree."""

    exact: frozenset[str]  # qualified names of call and reference rules
    call_limits: dict[str, int]  # of those, calls read only with at most this many arguments
    dtype_only: frozenset[str]  # those of them whose every rule reports them only in a dtype context
    prefixes: tuple[str, ...]  # qualified-name prefixes of call and reference rules
    arguments: dict[str, tuple[tuple[str | None, int | None, str], ...]]  # qname -> (keyword, position, shape)
    value_call_outers: frozenset[str]  # last names of the calls whose argument may hold an array name
    attributes: frozenset[str]  # method names (any receiver) and `add_argument`
    builtins: frozenset[str]
    import_prefixes: tuple[str, ...]
    patterns: tuple[tuple[frozenset[str], str, re.Pattern[str]], ...]  # string rules: (file names or none, literal part, pattern)
    device_strings: bool  # device-string rules: `cuda`, `cuda:N`, `f"cuda:{i}"`, `"cuda:{}".format(i)`
    exact_strings: frozenset[str]  # whole constants a rule reports (`nccl` as a backend)
    device_index: bool
    allow_lists: bool  # device-string rules on `x in {"cpu", "cuda"}` lists
    mask_names: tuple[re.Pattern[str], ...]  # mask-index rules: index names (`logits[mask]`); any comparison index
    mask_functions: frozenset[str] | None  # the functions mask-index rules read (`forward`); None: any
    callee_keywords: frozenset[str]  # keywords argument rules read on calls named by their spelling
    # those rules' callee spellings (`self.tokenizer`), the keywords they need, the functions they read
    callee_rules: tuple[tuple[re.Pattern[str], frozenset[str], frozenset[str] | None, bool], ...]
    held_keywords: frozenset[str]  # keywords whose Name value argument._match_held follows to its assignments
    argument_lasts: frozenset[str]  # last names of the calls argument rules name (`TrainingArguments`, `compile`)
    usable: bool  # False: this catalogue cannot be pruned for safely

    def matches(self, qname: str) -> bool:
        known = self._matched.get(qname)
        if known is None:
            known = qname in self.exact or any(qname == p or qname.startswith(p + ".") for p in self.prefixes)
            self._matched[qname] = known
        return known

    _matched: dict[str, bool] = field(default_factory=dict)


_TRIGGERS: dict[int, tuple["RuleIndex", _Triggers]] = {}


def _triggers(index: "RuleIndex") -> _Triggers:
    cached = _TRIGGERS.get(id(index))
    if cached is not None and cached[0] is index:
        return cached[1]
    usable = True
    patterns: list[tuple[frozenset[str], str, re.Pattern[str]]] = []
    for pattern, _rule, _context, names in index.strings:
        token = _literal_token(pattern.pattern)
        if not isinstance(pattern, re.Pattern) or pattern.flags & re.IGNORECASE or not token:
            usable = False  # a team rule's timed pattern, or one without a literal part
        else:
            patterns.append((frozenset(names), token, pattern))
    attributes = set(index.methods)
    if index.option_defaults or "allow-list" in index.device_strings:
        attributes.add("add_argument")  # option defaults; `choices=` allow-lists
    exact = frozenset(index.call_exact) | frozenset(index.ref_exact)
    dtype_only = frozenset(q for q in exact if all(
        index.reference_context.get((rule.id, q)) == "dtype" for rule in [*index.call_exact.get(q, []), *index.ref_exact.get(q, [])]))
    arguments = {q: tuple((m.get("name"), m.get("position"), _shape(m)) for _rule, m in entries)
                 for q, entries in index.arguments.items()}
    # Calls every rule of which reads only with few arguments (`torch.where(cond)`): a call with
    # more is no trigger (reference.py's `max_arguments`).
    limits: dict[str, int] = {}
    for q in index.call_exact:
        rules = [*index.call_exact.get(q, []), *index.ref_exact.get(q, [])]
        found = [(index.conditions.get((rule.id, q)) or {}).get("max_arguments") for rule in rules]
        if found and all(n is not None for n in found):
            limits[q] = max(found)
    triggers = _Triggers(
        exact=exact,
        call_limits=limits,
        dtype_only=dtype_only,
        prefixes=tuple(p for p, _ in index.call_prefix) + tuple(p for p, _ in index.ref_prefix),
        arguments=arguments,
        argument_lasts=frozenset(q.rsplit(".", 1)[-1] for q in arguments),
        value_call_outers=frozenset(q.rsplit(".", 1)[-1] for q, specs in arguments.items() if any(s == "call" for _, _, s in specs)),
        attributes=frozenset(attributes),
        builtins=frozenset(index.builtins),
        import_prefixes=tuple(m for m, _, _ in index.imports),
        patterns=tuple(patterns),
        device_strings=bool(index.device_strings),
        exact_strings=frozenset({"nccl", "NCCL"} if index.backend_strings else ()),
        device_index=bool(index.device_index),
        allow_lists="allow-list" in index.device_strings,
        mask_names=tuple(names for _rule, _m, names in index.mask_indexes),
        mask_functions=None if any(not m.get("in_functions") for _r, m, _n in index.mask_indexes)
        else frozenset(f for _r, m, _n in index.mask_indexes for f in m["in_functions"]),
        callee_keywords=frozenset(m["name"] for _p, _r, m in index.callee_arguments),
        callee_rules=tuple((p, frozenset(m.get("with_keywords", ())), frozenset(m["in_functions"]) if m.get("in_functions") else None,
                            bool(m.get("in_map_functions"))) for p, _r, m in index.callee_arguments),
        held_keywords=frozenset(m["name"] for entries in index.arguments.values() for _r, m in entries
                                if _shape(m) == "literal" and m.get("name")) | frozenset(
            m["name"] for _p, _r, m in index.callee_arguments if _shape(m) == "literal" and m.get("name")),
        usable=usable,
    )
    _TRIGGERS[id(index)] = (index, triggers)
    return triggers


def names_a_rule(index: "RuleIndex", qname: str) -> bool:
    """Whether a call or reference rule of `index` names `qname` (or a prefix of it)."""
    return _triggers(index).matches(qname)


def _shape(m: dict) -> str:
    """Which argument values an argument matcher can accept (engine._Collector._match_argument)."""
    if m.get("key"):
        return "dict"  # a dict literal, read under one key (`trainer_defaults={"precision": ...}`)
    if m.get("value_calls"):
        return "call"  # a call of the value function, or a name that holds its result
    if m.get("value_names"):
        return "name"  # a (dotted) name
    if m.get("any") or m.get("non_literal"):
        return "any"  # non_literal: a name, attribute or call (`mode=compile_mode`)
    return "literal"  # a string, number, True/False/None, or a one-element list or tuple


def _import_bindings(node: ast.Import | ast.ImportFrom) -> Iterable[tuple[str, str]]:
    """(local name, qualified name) pairs, as resolve.import_bindings binds them."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
        return
    if node.level or node.module is None:
        return
    for alias in node.names:
        if alias.name != "*":
            yield alias.asname or alias.name, f"{node.module}.{alias.name}"


def _importorskip(node: ast.AST) -> Iterable[tuple[str, str]]:
    """`torch = pytest.importorskip("torch")`, bound as an import (resolve.importorskip_binding)."""
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and node.value.args and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)):
        func = node.value.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last == "importorskip":
            yield node.targets[0].id, node.value.args[0].value


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    """Modules an import loads, as engine._Collector._import checks them."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or node.module is None:
        return []
    return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]


def _module_bindings(tree: ast.Module) -> dict[str, set[str]]:
    """Every qualified name an import outside any def/class may bind to each name (a superset of
    resolve.module_bindings: every branch of if/try/with/for/while/match counts)."""
    out: dict[str, set[str]] = {}
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, qname in _import_bindings(node):
                out.setdefault(local, set()).add(qname)
        elif isinstance(node, ast.Assign):
            for local, qname in _importorskip(node):
                out.setdefault(local, set()).add(qname)
        elif isinstance(node, ast.stmt) and not isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, name, None) or ():
                    stack.extend(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child])
    return out


# Fields that never hold a node the walk needs: contexts, operators, strings, numbers.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "name", "names", "module", "level",
                          "arg", "asname", "conversion", "kind", "lineno", "is_async", "rest"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_NONE: frozenset[str] = frozenset()
_STRING_NAMES = frozenset({ast.ExceptHandler, ast.Global, ast.Nonlocal, ast.MatchAs, ast.MatchStar, ast.MatchMapping})


class _Scope:
    __slots__ = ("bound", "parent", "masked", "functions")

    def __init__(self, parent: "_Scope | None", masked: bool = False, functions: frozenset[str] = frozenset()) -> None:
        self.bound: set[str] = set()
        self.parent = parent
        self.masked = masked  # inside a function a mask-index rule reads (`forward`): held masks matter
        self.functions = functions  # the names of the functions around it


class _Facts:
    """What one statement holds, for the two conditions of the module docstring.

    Attributes:
        relevant: a finding may come from it.
        index_uses: Names it passes as `.to(x)` / `device=x`: a finding when `x` holds an index.
        exports: its free names used as a device, backend or process count (values.ModuleValues
            records them on the scope that binds them, else on the module).
        stores: names it binds (any way) in the scope it is in: the module, or its function.
        imports: names an import of it binds in that scope.
        bound: the part of `stores` values.ModuleValues binds (assignment and loop targets),
            which makes a use of the name in that scope resolve to it.
        own: a function's parameters and the names its body binds.
        declared: names a `global` or `nonlocal` statement in it declares (a function that
            rebinds them binds them in an enclosing scope: they stay in its `stores`).
    """

    # A plain class with slots: one is made for every statement of every file pruned.
    __slots__ = ("relevant", "index_uses", "exports", "stores", "imports", "bound", "own", "declared", "star", "mask_uses")

    def __init__(self, index_uses: set[str] | None = None, mask_uses: set[str] | None = None) -> None:
        self.relevant = False
        self.index_uses: set[str] = set() if index_uses is None else index_uses
        self.exports: set[str] = set()
        self.stores: set[str] = set()
        self.imports: set[str] = set()
        self.bound: set[str] = set()
        self.own: set[str] = set()
        self.declared: set[str] = set()  # `global`/`nonlocal` names: bound outside the function
        self.star = False  # holds `from x import *` (binds names nobody can list)
        self.mask_uses: set[str] = set() if mask_uses is None else mask_uses  # `x[keep]`: Names it indexes with

    def add(self, other: "_Facts") -> None:
        self.relevant = self.relevant or other.relevant
        self.index_uses |= other.index_uses
        self.mask_uses |= other.mask_uses
        self.exports |= other.exports
        self.stores |= other.stores
        self.imports |= other.imports
        self.bound |= other.bound
        self.declared |= other.declared
        self.star = self.star or other.star


@dataclass
class _Lookups:
    """Where the whole file looks names up (from every statement, pruned or not)."""

    index_args: set[str] = field(default_factory=set)  # `.to(x)`, `device=x`: ScopeValues.is_index
    int_assigned: set[str] = field(default_factory=set)  # assigned something that may be an int
    array_args: set[str] = field(default_factory=set)  # arguments of calls a value-call rule names
    type_heads: set[str] = field(default_factory=set)  # `x.type`: accelerator names
    heads: set[str] = field(default_factory=set)  # first names of every Name/attribute chain
    assigned: set[str] = field(default_factory=set)  # assignment targets: engine._target_is_device
    role_uses: set[str] = field(default_factory=set)  # names used as a device, backend or count
    held_args: set[str] = field(default_factory=set)  # names passed as a keyword argument._match_held follows, or as `**`
    mask_assigned: set[str] = field(default_factory=set)  # assigned a mask (`keep = scores > t`): mask_index
    subscripted: set[str] = field(default_factory=set)  # Names a subscript indexes with (`x[keep]`)
    mask_sources: dict[str, set[str]] = field(default_factory=dict)  # `hit = keep | done`: hit -> {keep, done}
    mask_copies: dict[str, set[str]] = field(default_factory=dict)  # `hit = keep`: a mask when keep is one
    dict_sources: dict[str, set[str]] = field(default_factory=dict)  # `args = dict(BASE)`: args -> {BASE}

    def held_dicts(self) -> None:
        """`held_args` grown by the names a held dict is copied from (`args = dict(BASE)`,
        `copy.deepcopy(CFG)`, `CFG["trainer"]`, `BASE.copy()`): argument._spread_values follows them."""
        todo = [n for n in self.held_args if n in self.dict_sources]
        while todo:
            for source in self.dict_sources.get(todo.pop(), ()):
                if source not in self.held_args:
                    self.held_args.add(source)
                    todo.append(source)

    def held_masks(self) -> tuple[set[str], set[str]]:
        """(names that may hold a mask, those of them where some subscript indexes with them):
        every binding of one of the latter may decide a finding (with the names its mask is
        made of, `hit = keep`)."""
        maybe = set(self.mask_assigned)
        grew = bool(self.mask_copies)
        while grew:  # a copy of a name that may hold a mask may hold one
            grew = False
            for name, sources in self.mask_copies.items():
                if name not in maybe and not sources.isdisjoint(maybe):
                    maybe.add(name)
                    grew = True
        wanted, todo = set(), list(self.subscripted)
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(self.mask_sources.get(name, ()))
        return maybe, wanted & maybe

    def may_be_index(self, name: str) -> bool:
        return name in self.int_assigned or INDEX_NAME.match(name) is not None


def _mask_like(value: ast.AST) -> bool:
    """A superset of what scan/matchers/mask_index.py takes for a mask made here: a comparison,
    `~x`, `a & b` / `a | b`, a call of a boolean-making function or method. (A name, or a
    mask-keeping method of one, holds a mask when that name does: `_Lookups.mask_copies`.)"""
    kind = type(value)
    if kind is ast.Compare or (kind is ast.UnaryOp and type(value.op) is ast.Invert):  # type: ignore[attr-defined]
        return True
    if kind is ast.BinOp and type(value.op) in (ast.BitAnd, ast.BitOr, ast.BitXor):  # type: ignore[attr-defined]
        return True
    if kind is ast.IfExp:
        return _mask_like(value.body) or _mask_like(value.orelse)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = value.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr in KEEPS_MASK and _mask_like(func.value):
            return True  # `(scores > 0).squeeze(-1)`: a method that keeps a mask (mask_index.KEEPS_MASK)
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
        return name in MASK_CALLS
    return False


def _mask_operands(value: ast.AST) -> set[str]:
    """The names a held mask may be made of: `keep` of `hit = keep`, both of `keep | done`,
    either arm of an IfExp, the receiver of a method (`keep.squeeze(-1)`)."""
    kind = type(value)
    if kind is ast.Name:
        return {value.id}  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return _mask_operands(value.left) | _mask_operands(value.right)  # type: ignore[attr-defined]
    if kind is ast.IfExp:
        return _mask_operands(value.body) | _mask_operands(value.orelse)  # type: ignore[attr-defined]
    if kind is ast.Call and type(value.func) is ast.Attribute and value.func.attr in KEEPS_MASK:  # type: ignore[attr-defined]
        return _mask_operands(value.func.value)  # type: ignore[attr-defined]
    return set()


class _Reader:
    """Walks the `ast` of a statement: relevance (condition 1) and what it leaves (condition 2)."""

    def __init__(self, triggers: _Triggers, bindings: dict[str, set[str]], file_name: str, raw: bytes,
                 starts: list[int], utf8: bool) -> None:
        self.t = triggers
        self.bindings = bindings
        self.raw, self.starts = raw, starts
        self.utf8 = utf8  # `ast` columns are UTF-8 offsets: they index `raw` only in a UTF-8 file
        self.outer: dict[str, set[str]] = {}  # imports of the enclosing function, when reading inside one
        self.patterns = [(token, pattern) for names, token, pattern in triggers.patterns if not names or file_name in names]
        tokens = [token for token, _ in self.patterns]
        self.tokens = re.compile("|".join(re.escape(t) for t in tokens)) if tokens else None
        self.seen = _Lookups()
        self.in_masked = False  # reading statements inside a function a mask-index rule reads (left_out's read)
        self.in_functions: frozenset[str] = frozenset()  # the names of the functions around them
        self.importorskip = b"importorskip" in raw  # else no assignment binds a module (saves a test per assignment)
        self.map_functions: frozenset[str] | None = None  # maps(): read when a rule asks

    def _masks_in(self, name: str) -> bool:
        """Whether a mask-index rule reads a function of this name (`forward`)."""
        return self.t.mask_functions is None or name in self.t.mask_functions

    def read(self, nodes: Iterable[ast.AST], names: Iterable[str] = ()) -> _Facts:
        """The facts of `nodes` read together (a statement, or the header parts of one), with
        `names` read as Names (`except E as e` of a try whose blocks are read apart)."""
        self.relevant = False
        # (head name, attribute names outermost first, the call it is the callee of, dtype context)
        self.chains: list[tuple[str, Sequence[str], ast.Call | None, bool]] = [(n, (), None, False) for n in names]
        self.unbound: list[tuple[str, Sequence[str], ast.Call | None, bool]] = []  # chains of names no outer import binds
        self.local: dict[str, set[str]] = {}  # bindings of the imports read here (any scope)
        self.uses: list[tuple[_Scope, str]] = []  # Names used as a device/backend/count, with their scope
        self.index_uses: set[str] = set()
        self.mask_uses: set[str] = set()
        self.stores: set[str] = set()
        self.imports: set[str] = set()
        self.declared: set[str] = set()
        self.star = False
        self.home = _Scope(None, self.in_masked or self.t.mask_functions is None, self.in_functions)
        self.seen.heads.update(names)
        for node in nodes:
            self._visit(node, self.home, None)
        facts = _Facts(index_uses=self.index_uses, mask_uses=self.mask_uses)
        relevant = self._chain_relevant
        facts.relevant = (self.relevant or any(relevant(*c) for c in self.chains)
                          or (bool(self.local) and any(relevant(*c) for c in self.unbound if c[0] in self.local)))
        for scope, name in self.uses:
            owner: _Scope | None = scope
            while owner is not None and owner is not self.home and name not in owner.bound:
                owner = owner.parent
            if owner is None or owner is self.home:
                facts.exports.add(name)
        facts.stores, facts.imports, facts.bound = self.stores, self.imports, self.home.bound
        facts.declared = self.declared
        facts.star = self.star
        facts.stores |= self.declared  # a function read whole that declares `global x` and binds it
        return facts

    def _chain_relevant(self, head: str, parts: Sequence[str], call: ast.Call | None, dtype: bool) -> bool:
        values = self.bindings.get(head, _NONE) | self.outer.get(head, _NONE) | self.local.get(head, _NONE)
        if not values:
            return False
        rest = "".join("." + part for part in reversed(parts))
        for value in values:
            qname = value + rest
            if self.t.matches(qname) and (call is not None or dtype or qname not in self.t.dtype_only) and (
                    qname not in self.t.call_limits or (call is not None and len(call.args) + len(call.keywords) <= self.t.call_limits[qname]
                                                        and not any(type(a) is ast.Starred for a in call.args)
                                                        and all(k.arg is not None for k in call.keywords))):
                return True
            specs = self.t.arguments.get(qname)
            if specs is not None and call is not None and _argument_given(call, specs):
                return True
        return False

    # -- the walk ------------------------------------------------------------------------------
    def _chain(self, head: str, parts: Sequence[str], context: object) -> None:
        self.seen.heads.add(head)
        chain = (head, parts, context if type(context) is ast.Call else None, type(context) is int and bool(context & _DTYPE))
        if head in self.bindings or head in self.outer:
            self.chains.append(chain)  # type: ignore[arg-type]
        else:
            self.unbound.append(chain)  # type: ignore[arg-type]

    def _visit(self, node: ast.AST, scope: _Scope, context: object) -> None:
        """Visit `node`; `context` is the call `node` is the callee of, or _DTYPE/_DEVICE flags, or None."""
        kind = type(node)
        if kind is ast.Name:
            head = node.id  # type: ignore[attr-defined]
            self.seen.heads.add(head)
            if context is not None or head in self.bindings or head in self.outer:
                self._chain(head, (), context)
            else:
                self.unbound.append((head, (), None, False))
            if scope is self.home and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                self.stores.add(head)  # assigned or deleted: values.ModuleValues stops following it
            return
        if kind is ast.Attribute:
            parts: list[str] = []  # attribute names, outermost first
            current: ast.AST = node
            if type(context) is ast.Call and node.attr in self.t.attributes:  # type: ignore[attr-defined]
                self.relevant = True  # `x.cuda()`: method rules read the callee's last attribute
            elif node.attr == "hip" or (type(context) is ast.Call and node.attr in ("skip", "skipTest", "SkipTest")):  # type: ignore[attr-defined]
                # `torch.version.hip` (CUDA-vs-ROCm dispatch) and a test's skip call: context.py reads the block for them
                self.relevant = True
            while type(current) is ast.Attribute:
                parts.append(current.attr)  # type: ignore[attr-defined]
                current = current.value  # type: ignore[attr-defined]
            if type(current) is ast.Name:
                if parts[-1] == "type" and len(parts) == 1:
                    self.seen.type_heads.add(current.id)  # type: ignore[attr-defined]
                self._chain(current.id, parts, context)  # type: ignore[attr-defined]
            else:
                # `"cuda:{}".format(i)` is a device string where the call stands in a device context.
                self._visit(current, scope, _DEVICE if parts == ["format"] else None)
            return
        device = type(context) is int and bool(context & _DEVICE)
        if kind is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and not self.relevant:
                self.relevant = self._string_relevant(node, value, device)  # type: ignore[arg-type]
            return
        if kind is ast.JoinedStr:
            matched = False
            for part in node.values:  # type: ignore[attr-defined]
                if type(part) is ast.Constant:
                    # An f-string's text: `cuda:` before `{i}`; a plain literal concatenated with
                    # the f-string is matched by string rules too (its extent is not known here).
                    if device and self.t.device_strings and _device_text(part.value):
                        self.relevant = True
                    elif self.tokens is not None and self.tokens.search(part.value):
                        self.relevant = matched = True
                else:
                    self._visit(part, scope, None)
            if matched:
                # f"--mixed_precision {precision}": strings._held_variants reads what the names hold
                self.seen.held_args.update(p.value.id for p in node.values  # type: ignore[attr-defined]
                                           if type(p) is ast.FormattedValue and type(p.value) is ast.Name)
            return
        if kind is ast.IfExp:  # the branches take the context of the whole expression
            self._visit(node.test, scope, None)  # type: ignore[attr-defined]
            self._visit(node.body, scope, _DEVICE if device else None)  # type: ignore[attr-defined]
            self._visit(node.orelse, scope, _DEVICE if device else None)  # type: ignore[attr-defined]
            return
        if kind is ast.Compare:
            self._visit(node.left, scope, _DEVICE)  # type: ignore[attr-defined]
            for comparator in node.comparators:  # type: ignore[attr-defined]
                if self.t.allow_lists and type(comparator) in (ast.Set, ast.List, ast.Tuple) and any(
                        type(e) is ast.Constant and e.value in ("cuda", "gpu") for e in comparator.elts):  # type: ignore[attr-defined]
                    self.relevant = True  # `device in {"cpu", "cuda", "mps"}`: an allow-list rule's
                self._visit(comparator, scope, _DEVICE)
            return
        if kind is ast.Dict:
            for key, value in zip(node.keys, node.values):  # type: ignore[attr-defined]
                if key is not None:
                    self._visit(key, scope, None)
                if type(value) is ast.Name and (key is None or (
                        type(key) is ast.Constant and key.value in self.t.held_keywords)):  # type: ignore[attr-defined]
                    # `{**DEFAULTS, "fp16": FP16}` passed as `**`: argument._spread_values reads both names
                    self.seen.held_args.add(value.id)
                named = type(key) is ast.Constant and type(key.value) is str and DEVICE_NAME.search(key.value)
                self._visit(value, scope, _DEVICE if named else None)
            return
        if kind is ast.Return:
            if node.value is not None:  # type: ignore[attr-defined]
                self._visit(node.value, scope, _DEVICE)  # type: ignore[attr-defined]
            return
        if kind is ast.arguments:
            self._parameters(node, scope)  # type: ignore[arg-type]
            return
        if kind is ast.Call:
            self._call(node, scope)  # type: ignore[arg-type]
            return
        if kind is ast.Lambda and scope is self.home:
            args = node.args  # type: ignore[attr-defined]
            self.stores.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None)
        if (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef) and scope is self.home:
            self.stores.add(node.name)  # type: ignore[attr-defined]
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            inner = _Scope(scope, scope.masked or self._masks_in(node.name), scope.functions | {node.name})  # type: ignore[attr-defined]
            args = node.args  # type: ignore[attr-defined]
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if arg is not None:
                    inner.bound.add(arg.arg)
            scope = inner
        elif kind is ast.Import or kind is ast.ImportFrom:
            if kind is ast.ImportFrom and any(alias.name == "*" for alias in node.names):  # type: ignore[attr-defined]
                self.star = True
            for local, qname in _import_bindings(node):  # type: ignore[arg-type]
                self.local.setdefault(local, set()).add(qname)
                if scope is self.home:
                    self.imports.add(local)
            for module in _imported_modules(node):  # type: ignore[arg-type]
                if any(module == p or module.startswith(p + ".") for p in self.t.import_prefixes):
                    self.relevant = True
            return
        elif kind is ast.Assign or kind is ast.AnnAssign:
            if self.importorskip:
                for local, qname in _importorskip(node):
                    self.local.setdefault(local, set()).add(qname)  # bound as an import is
                    if scope is self.home:
                        self.imports.add(local)
            self._bind(node, kind, scope)
            for target in (node.targets if kind is ast.Assign else [node.target]):  # type: ignore[attr-defined]
                self._visit(target, scope, None)
            if kind is ast.AnnAssign:
                self._visit(node.annotation, scope, None)  # type: ignore[attr-defined]
            if node.value is not None:  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                if self.t.allow_lists and type(value) in (ast.Set, ast.List, ast.Tuple) and any(
                        type(t) is ast.Name and ALLOW_LIST_NAME.search(t.id)
                        for t in (node.targets if kind is ast.Assign else [node.target])) and any(  # type: ignore[attr-defined]
                        type(e) is ast.Constant and e.value in ("cuda", "gpu") for e in value.elts):
                    self.relevant = True  # SUPPORTED_ACCELERATORS = {"cpu", "cuda"}: an allow-list rule's
                self._visit(value, scope, _DEVICE)
            return
        elif kind is ast.For or kind is ast.AsyncFor:
            self._bind(node, kind, scope)
        elif kind in _STRING_NAMES:
            self._names(node, scope)
        elif kind is ast.Subscript and self.t.mask_names:
            held = scope.masked  # held masks matter only where a mask-index rule reads (`forward`)
            whole = node.slice  # type: ignore[attr-defined]
            for index in (whole.elts if type(whole) is ast.Tuple else (whole,)):  # `x[keep]`, `x[keep, :]`
                if type(index) is ast.Compare or (type(index) is ast.UnaryOp and type(index.op) is ast.Invert) \
                        or (type(index) is ast.Name and any(p.search(index.id) for p in self.t.mask_names)):
                    # `logits[mask]`, `x[x > 0]`, `x[~done]`: a mask-index rule's (superset: any function, loads and stores)
                    self.relevant = True
                elif type(index) is ast.Name and held:
                    self.mask_uses.add(index.id)  # `x[keep]` after `keep = ~done`: relevant with that assignment
                    self.seen.subscripted.add(index.id)
        elif kind is ast.NamedExpr and scope.masked and self.t.mask_names:
            self._mask_binding(node.target.id, node.value)  # type: ignore[attr-defined]  # `(alive := ~finished).any()`
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
        visit = self._visit
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if type(item) is ast.Name and (scope is not self.home or type(item.ctx) is ast.Load):
                        # The commonest node, read here (as the Name branch of _visit does).
                        head = item.id
                        self.seen.heads.add(head)
                        if head in self.bindings or head in self.outer:
                            self._chain(head, (), None)
                        else:
                            self.unbound.append((head, (), None, False))
                    elif isinstance(item, ast.AST):
                        visit(item, scope, None)
            elif type(value) is ast.Name and (scope is not self.home or type(value.ctx) is ast.Load):
                head = value.id  # as for a list's items above
                self.seen.heads.add(head)
                if head in self.bindings or head in self.outer:
                    self._chain(head, (), None)
                else:
                    self.unbound.append((head, (), None, False))
            elif type(value) is ast.Constant and type(value.value) is not str:
                pass  # numbers, None, bytes: nothing to match
            elif isinstance(value, ast.AST):
                visit(value, scope, None)

    def _bind(self, node: ast.AST, kind: type, scope: _Scope) -> None:
        """Names values.ModuleValues binds (`_bind`), and the ones it may take for an index."""
        seen = self.seen
        if kind is ast.Assign:
            masks = scope.masked and self.t.mask_names
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is ast.Name:
                    scope.bound.add(target.id)
                    seen.assigned.add(target.id)
                    if type(node.value) in (ast.Call, ast.Subscript):  # type: ignore[attr-defined]
                        sources = _spread_names(node.value)  # type: ignore[attr-defined]
                        if sources:
                            seen.dict_sources.setdefault(target.id, set()).update(sources)
                    if masks:
                        self._mask_binding(target.id, node.value)  # type: ignore[attr-defined]
                    if _int_like(node.value):  # type: ignore[attr-defined]
                        seen.int_assigned.add(target.id)
                elif type(target) in (ast.Tuple, ast.List):
                    scope.bound.update(e.id for e in target.elts if type(e) is ast.Name)
            return
        target = node.target  # type: ignore[attr-defined]
        if type(target) is ast.Name:
            scope.bound.add(target.id)
            if kind is ast.AnnAssign:
                seen.assigned.add(target.id)
                if node.value is not None and _int_like(node.value):  # type: ignore[attr-defined]
                    seen.int_assigned.add(target.id)
                if node.value is not None and scope.masked and self.t.mask_names:
                    self._mask_binding(target.id, node.value)  # type: ignore[attr-defined]  # `alive: torch.Tensor = ~finished`

    def _mask_binding(self, name: str, value: ast.AST) -> None:
        """`name = value` in a function a mask-index rule reads: a mask made here, or a copy of
        the names it is made of (`hit = keep`, `keep.squeeze(-1)`, `a if c else b`)."""
        seen = self.seen
        operands = _mask_operands(value)
        if _mask_like(value):
            seen.mask_assigned.add(name)
        elif operands:
            seen.mask_copies.setdefault(name, set()).update(operands)
        if operands:
            seen.mask_sources.setdefault(name, set()).update(operands)

    def _parameters(self, node: ast.arguments, scope: _Scope) -> None:
        """Annotations and defaults; the default of a device-named parameter is a device."""
        positional = [*node.posonlyargs, *node.args]
        pairs = list(zip(positional[len(positional) - len(node.defaults):], node.defaults))
        pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
        for arg, default in pairs:
            self._visit(default, scope, _DEVICE if DEVICE_NAME.search(arg.arg) else None)
        for arg in (*positional, *node.kwonlyargs, node.vararg, node.kwarg):
            if arg is not None and arg.annotation is not None:
                self._visit(arg.annotation, scope, None)

    def _string_relevant(self, node: ast.Constant, value: str, device: bool) -> bool:
        if value in self.t.exact_strings or (device and self.t.device_strings and _device_text(value)) \
                or (self.t.exact_strings and MIXED_NCCL.search(value)):  # "cpu:gloo,cuda:nccl" as a backend
            return True  # a literal concatenated with others gets no device or backend context
        if self.tokens is None or not self.tokens.search(value):
            return False
        if value.startswith("--"):
            return True  # a flag whose value may be the next item of its list (Context.next_words)
        if self.utf8 and node.lineno == node.end_lineno:
            begin = self.starts[node.lineno - 1]
            literal = self.raw[begin + node.col_offset: begin + (node.end_col_offset or 0)]
            if _SINGLE_LITERAL.fullmatch(literal):
                return any(token in value and pattern.search(value) for token, pattern in self.patterns)
        return True  # maybe implicitly concatenated: a part may match on its own

    def _names(self, node: ast.AST, scope: _Scope) -> None:
        """Names libcst holds as Name nodes where `ast` keeps a string (`except E as e`,
        `global`/`nonlocal`, match captures): the engine resolves them like any Name. Each binds
        its name (values.ModuleValues stops following it): a store, or, for `global`/`nonlocal`,
        a name bound outside the function."""
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names: Iterable[str | None] = node.names
            self.declared.update(node.names)
        elif isinstance(node, ast.MatchMapping):
            names = (node.rest,)
        else:
            names = (node.name,)  # type: ignore[attr-defined]
        for name in names:
            if name:
                self._chain(name, (), None)
                if scope is self.home:
                    self.stores.add(name)

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        seen = self.seen
        if isinstance(func, ast.Name) and func.id in self.t.builtins:
            self.relevant = True
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        dtype_call = last in _DTYPE_CALLS
        arrays = last in self.t.value_call_outers
        # A bare name may be an imported alias of torch.device, autocast and the like.
        aliased = type(func) is ast.Name and (func.id in self.bindings or func.id in self.outer)
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg in self.t.callee_keywords or (keyword.arg is None and self._spelled_callee(node, scope)):
                # an argument rule that names its callee by spelling (`tokenizer(..., padding=True)`,
                # or `**kwargs` that may hold it: argument._match_spread)
                self.relevant = True
            if keyword.arg is None and type(value) in (ast.Subscript, ast.Call):
                names = _spread_names(value)  # `**CFG["trainer"]`, `**dict(BASE)`: argument._spread_values
                if names and self._takes_arguments(node, last, scope):
                    seen.held_args.update(names)
            elif type(value) is ast.Attribute and type(value.value) is ast.Name and keyword.arg in self.t.held_keywords \
                    and self._takes_arguments(node, last, scope):
                # `mixed_precision=config.mixed_precision`: argument._match_field reads the instance and the class field
                seen.held_args.update((value.value.id, value.attr))
            if type(value) is ast.Name:
                if keyword.arg in self.t.held_keywords or (keyword.arg is None and self._takes_arguments(node, last, scope)):
                    seen.held_args.add(value.id)  # (`**ARGS`: argument._match_spread reads the dict ARGS holds)
                if keyword.arg in _ROLE_KEYWORDS:
                    self.uses.append((scope, value.id))
                    seen.role_uses.add(value.id)
                if arrays:
                    seen.array_args.add(value.id)
            if keyword.arg == "device" and self.t.device_index:
                self._index_value(value)
        if positional:
            first = positional[0]
            if last in _PATCH_CALLS and type(first) is ast.Constant and isinstance(first.value, str) and "cuda" in first.value:
                self.relevant = True  # `monkeypatch.setattr("torch.cuda.device_count", ...)`: context._spoof reads it
            if last in _ROLE_CALLS and type(first) is ast.Name:
                self.uses.append((scope, first.id))
                seen.role_uses.add(first.id)
            if last == "to" and self.t.device_index:
                self._index_value(first)
            if arrays:
                seen.array_args.update(a.id for a in positional if type(a) is ast.Name)
        self._visit(func, scope, node)
        if last == "partial" and node.args and type(node.args[0]) is not ast.Starred:
            # functools.partial(torch.compile, mode=...): context reads it as a call of torch.compile
            self._visit(node.args[0], scope, ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords))
        first_device = aliased or last in _FIRST_ARGUMENT_LASTS
        # os.environ.get("DEVICE", "cuda"): the default of a variable named for a device is one.
        env_device = last in ("get", "getenv") and len(positional) > 1 and type(positional[0]) is ast.Constant \
            and isinstance(positional[0].value, str) and "DEVICE" in positional[0].value.upper()  # type: ignore[attr-defined]
        for arg in node.args:
            flags = (_DTYPE if dtype_call and arg in positional else 0) | (_DEVICE if first_device and positional and arg is positional[0] else 0)
            if env_device and arg is positional[1]:
                flags |= _DEVICE
            self._visit(arg, scope, flags or None)
        for keyword in node.keywords:
            name, value = keyword.arg, keyword.value
            device = name in _DEVICE_KEYWORDS or (name == "device_type" and (aliased or last in _DEVICE_TYPE_LASTS))
            if name == "choices" and type(value) in (ast.List, ast.Tuple, ast.Set):
                for element in value.elts:  # type: ignore[attr-defined]
                    self._visit(element, scope, _DEVICE)
                continue
            self._visit(value, scope, (_DTYPE if name in DTYPE_KEYWORDS else 0) | (_DEVICE if device else 0) or None)

    def _spelled_callee(self, call: ast.Call, scope: _Scope) -> bool:
        """Whether a rule that names its callee by spelling (`self.tokenizer`) may read `call`
        (its spelling, the keywords it needs, the function it is in)."""
        if not self.t.callee_rules:
            return False
        func: ast.AST = call.func
        parts: list[str] = []
        while type(func) is ast.Attribute:
            parts.append(func.attr)  # type: ignore[attr-defined]
            func = func.value  # type: ignore[attr-defined]
        if type(func) is not ast.Name:
            return False
        dotted = ".".join([func.id, *reversed(parts)])  # type: ignore[attr-defined]
        given = {k.arg for k in call.keywords}
        return any(pattern.search(dotted) and needs <= given and (where is None or not where.isdisjoint(scope.functions)
                                                                  or (maps and not self.maps().isdisjoint(scope.functions)))
                   for pattern, needs, where, maps in self.t.callee_rules)

    def maps(self) -> frozenset[str]:
        """The functions the file passes to a batched `.map` (as Context.batched_maps reads them)."""
        if self.map_functions is None:
            from migrator.scan.index import batched_map_functions

            self.map_functions = batched_map_functions(self.raw)
        return self.map_functions

    def _takes_arguments(self, call: ast.Call, last: str, scope: _Scope) -> bool:
        """Whether a call of `func` may be one an argument rule names (its last name is one of
        theirs, or it is a name an import binds to one): a superset, for `**ARGS`."""
        if last in self.t.argument_lasts or self._spelled_callee(call, scope):
            return True
        func = call.func
        if type(func) is not ast.Name:
            return False
        bound = self.bindings.get(func.id, _NONE) | self.outer.get(func.id, _NONE) | self.local.get(func.id, _NONE)  # type: ignore[attr-defined]
        return any(q.rsplit(".", 1)[-1] in self.t.argument_lasts for q in bound)

    def _index_value(self, value: ast.AST) -> None:
        """`value` passed as `.to(value)` / `device=value` (values.ScopeValues.is_index)."""
        if type(value) is ast.Constant:
            if isinstance(value.value, int):  # type: ignore[attr-defined]
                self.relevant = True
        elif type(value) is ast.Attribute:
            if INDEX_NAME.match(value.attr):  # type: ignore[attr-defined]
                self.relevant = True
        elif type(value) is ast.Name:
            self.index_uses.add(value.id)  # type: ignore[attr-defined]
            self.seen.index_args.add(value.id)  # type: ignore[attr-defined]


def _spread_names(value: ast.AST, depth: int = 0) -> list[str]:
    """The names whose dicts `**value` may read (argument._spread_values): `CFG` in
    `CFG["trainer"]`, `BASE` in `dict(BASE, lr=1)`, `copy.deepcopy(BASE)`, `BASE.copy()`."""
    if type(value) is ast.Name:
        return [value.id]  # type: ignore[attr-defined]
    if depth > 2:
        return []
    if type(value) is ast.Subscript:
        return _spread_names(value.value, depth + 1)  # type: ignore[attr-defined]
    if type(value) is ast.Call:
        func = value.func  # type: ignore[attr-defined]
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
        if name == "dict":
            return [n for arg in (*value.args, *(k.value for k in value.keywords if k.arg is None))  # type: ignore[attr-defined]
                    for n in _spread_names(arg, depth + 1)]
        if name in ("deepcopy", "copy") and value.args and (  # type: ignore[attr-defined]
                type(func) is ast.Name or (type(func.value) is ast.Name and func.value.id == "copy")):
            return _spread_names(value.args[0], depth + 1)  # type: ignore[attr-defined]  # copy.deepcopy(CFG)
        if name == "copy" and type(func) is ast.Attribute and not value.args:  # type: ignore[attr-defined]
            return _spread_names(func.value, depth + 1)  # `BASE.copy()`
    return []


def _int_like(value: ast.AST) -> bool:
    """Whether values.ModuleValues may record a name assigned `value` as a device index
    (`_int_like`: an int, `int(...)`, a rank call, `a % n` / `a + n` / `a - n`, `args.local_rank`)."""
    kind = type(value)
    if kind is ast.Constant:
        return isinstance(value.value, int)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = value.func  # type: ignore[attr-defined]
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return last in _INDEX_CALL_NAMES or bool(INDEX_CALLS.search(last))
    if kind is ast.BinOp:
        return isinstance(value.op, (ast.Mod, ast.Add, ast.Sub))  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return INDEX_NAME.match(value.attr) is not None  # type: ignore[attr-defined]
    return False


def _device_text(value: str) -> bool:
    """A constant the engine may report as a device string: `cuda`, `cuda:N` (engine.CUDA_DEVICE),
    `cuda:` (the text before `{i}` of an f-string) or `cuda:{}` (`.format`)."""
    return value.startswith("cuda") and (value in ("cuda:", "cuda:{}") or CUDA_DEVICE.match(value) is not None)


_SHAPES = {
    "call": (ast.Call, ast.Name),
    "name": (ast.Name, ast.Attribute),
    "literal": (ast.Constant,),
}


def _argument_given(call: ast.Call, specs: tuple[tuple[str | None, int | None, str], ...]) -> bool:
    """Whether an argument matcher could match `call`: the argument it reads is given, in a
    shape its values can take."""
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    for name, position, shape in specs:
        value = next((k.value for k in reversed(call.keywords) if name is not None and k.arg == name), None)
        if shape == "literal" and (type(value) is ast.Name or (type(value) is ast.Attribute and type(value.value) is ast.Name)):
            return True  # argument._match_held / _match_field: the values its assignments or class give it
        if shape == "literal" and value is None and name is not None and any(
                k.arg is None and type(k.value) in (ast.Name, ast.Dict, ast.Call, ast.Subscript) for k in call.keywords):
            return True  # argument._match_spread: `**ARGS`, `**CFG["trainer"]`, a dict that may hold it
        if value is None and position is not None and len(positional) > position:
            value = positional[position]
        if value is None:
            continue
        if shape == "dict":
            if isinstance(value, ast.Dict):
                return True
            continue
        if shape == "any" or isinstance(value, _SHAPES[shape]):
            return True
        if shape == "literal" and isinstance(value, (ast.List, ast.Tuple)) and len(value.elts) == 1:
            return True
        if shape == "literal" and isinstance(value, (ast.IfExp, ast.BoolOp, ast.NamedExpr)):
            return True  # argument._outcomes: `None if qlora else "bf16-mixed"`, `args.backend or "nccl"`, `(b := ...)`
        if shape == "literal" and isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
            return True  # `fp16=not args.no_fp16`
    return False


def _blocks(stmt: ast.stmt, raw: bytes, starts: list[int]) -> tuple[list[ast.AST], list[list[ast.stmt]]] | None:
    """(header parts, blocks) of a def, class, `if`, `try` or `with`, whose blocks may be pruned
    one statement at a time; None for any other statement (loops are read whole)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*stmt.decorator_list, stmt.args, *([stmt.returns] if stmt.returns else [])], [stmt.body]
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *stmt.keywords], [stmt.body]
    if isinstance(stmt, ast.If):
        header: list[ast.AST] = [stmt.test]
        blocks = [stmt.body]
        orelse = stmt.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If) and _line(raw, starts, orelse[0].lineno).lstrip().startswith(b"elif"):
            header.append(orelse[0].test)  # an `elif` is a clause, not a statement of its own
            blocks.append(orelse[0].body)
            orelse = orelse[0].orelse
        return header, blocks + ([orelse] if orelse else [])
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return [h.type for h in stmt.handlers if h.type is not None], [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items), [stmt.body]
    return None


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = node.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None}


def _function_imports(node: ast.AST) -> dict[str, set[str]]:
    """Every binding an import anywhere inside a function makes (libcst binds them in the
    function's scope in source order; a superset). Imports are statements: only statement
    lists are walked, not expressions."""
    out: dict[str, set[str]] = {}
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Import, ast.ImportFrom)):
            for local, qname in _import_bindings(current):
                out.setdefault(local, set()).add(qname)
            continue
        for local, qname in _importorskip(current):
            out.setdefault(local, set()).add(qname)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(current, name, None)
            if type(block) is list:
                stack.extend(block)
    return out


def _type_heads(raw: bytes) -> set[str]:
    """Names written just before `.type` (engine._mark_cuda_only searches `NAME.type` in text)."""
    out: set[str] = set()
    at = raw.find(b".type")
    while at != -1:
        begin = at
        while begin > 0 and (raw[begin - 1:begin].isalnum() or raw[begin - 1] in b"_" or raw[begin - 1] >= 0x80):
            begin -= 1
        if begin < at:
            out.add(raw[begin:at].decode("utf-8", "replace"))
        at = raw.find(b".type", at + 5)
    return out


def _line(raw: bytes, starts: list[int], number: int) -> bytes:
    return raw[starts[number - 1]: starts[number] if number < len(starts) else len(raw)]


def _line_starts(raw: bytes) -> list[int]:
    """Offsets of the lines of `raw` (split at b"\n"; the part after the last one is a line)."""
    if b"\r" not in raw:
        # Without a carriage return, splitlines splits exactly at b"\n" (and runs in C).
        starts = [0, *accumulate(map(len, raw.splitlines(True)))]
        if raw and not raw.endswith(b"\n"):
            starts.pop()
        return starts
    return [0, *accumulate(len(line) + 1 for line in raw.split(b"\n")[:-1])]


line_starts = _line_starts


def _end(raw: bytes, starts: list[int], node: ast.AST) -> int:
    """Offset just after the last line of `node`."""
    last = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    return starts[last] if last < len(starts) else len(raw)


@dataclass(frozen=True)
class Pruned:
    """A source with statements left out, and where each of its lines comes from.

    Attributes:
        source: the kept lines, each as it was; a statement left out of a block is one `pass`.
        origin: origin[n - 1] is the line of the original file that line n of `source` is.
    """

    source: bytes
    origin: list[int]
    may_match: bool = True  # False: no statement can produce a finding (nothing to parse)

    def line(self, number: int) -> int:
        """The original line number of line `number` of `source` (1-based)."""
        return self.origin[number - 1] if number <= len(self.origin) else self.origin[-1] + number - len(self.origin)


# What a `keep` hook of `left_out` says of one statement: decide as usual, keep it but consider
# the statements of its blocks one by one, or keep all of it.
DECIDE, KEEP_OPEN, KEEP_WHOLE = 0, 1, 2
# A left-out statement: first line (its first decorator's), last line, nested (in a block, not
# at module level), and the block it is in (id of the statement list: siblings share it).
Region = tuple[int, int, bool, int]


def prune_source(raw: bytes, tree: ast.Module, index: "RuleIndex", path: str = "") -> Pruned | None:
    """`raw` without the statements no rule can match (see the module docstring), or None when
    nothing was left out or the file must be parsed whole."""
    starts = _line_starts(raw)
    found = left_out(raw, tree, index, path, starts=starts)
    if found is None:
        return None
    regions, relevant_anywhere = found
    if not relevant_anywhere:
        return Pruned(b"", [], may_match=False)  # findings come only from relevant statements
    if not regions:
        return None
    plain = sorted(r[:3] for r in regions)
    pruned = _drop(raw, starts, plain)
    if plain[0][0] <= 2:
        # The coding cookie (PEP 263) is read from lines 1-2: with a module docstring left out,
        # other lines come first. The pruned text must be read with the file's own encoding.
        from migrator.sources.codec import python_encoding

        try:
            same = python_encoding(pruned.source) == python_encoding(raw)
        except (SyntaxError, LookupError):
            same = False
        if not same:
            kept = [r for r in plain if r[0] > 2]
            return _drop(raw, starts, kept) if kept else None
    return pruned


def left_out(raw: bytes, tree: ast.Module, index: "RuleIndex", path: str = "",
             keep: "Callable[[ast.stmt, int, int], int] | None" = None,
             starts: list[int] | None = None) -> tuple[list[Region], bool] | None:
    """The statements of `raw` that may be left out (the module docstring's two conditions,
    each checked for the statement on its own), and whether any statement is relevant; None
    when this file or catalogue cannot be pruned at all.

    `keep(statement, first line, last line)` may overrule the decision for a statement
    (KEEP_OPEN, KEEP_WHOLE; DECIDE: as usual): the fix of a pruned text keeps more than the
    scan (see sources/pruned_fix.py). `starts`: `raw`'s line offsets (`line_starts`), when the
    caller has them."""
    triggers = _triggers(index)
    if not triggers.usable or b"\r" in raw.replace(b"\r\n", b""):
        return None
    encoding = _encoding(raw) if b"coding" in raw[:400] else "utf-8"
    if encoding is None:
        return None
    file_name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if starts is None:
        starts = _line_starts(raw)
    reader = _Reader(triggers, _module_bindings(tree), file_name, raw, starts, encoding in ("utf-8", "utf-8-sig", "utf8", "ascii"))
    facts: dict[int, _Facts] = {}

    def read(stmt: ast.stmt) -> _Facts:
        """Facts of `stmt`, bottom-up through the blocks that may be pruned inside it."""
        parts = _blocks(stmt, raw, starts)
        if parts is None:
            result = reader.read([stmt])
        else:
            header, blocks = parts
            names = [h.name for h in stmt.handlers if h.name] if isinstance(stmt, (ast.Try, ast.TryStar)) else []
            function = isinstance(stmt, _FUNCTIONS)
            saved = reader.outer
            if function and not saved and raw.find(b"import", starts[stmt.lineno - 1], _end(raw, starts, stmt)) != -1:
                reader.outer = _function_imports(stmt)  # the outermost function's include its nested ones
            result = reader.read(header, names)
            result.stores |= set(names)  # `except E as e` binds e
            masked, around = reader.in_masked, reader.in_functions
            if function:
                reader.in_masked = masked or reader._masks_in(stmt.name)
                reader.in_functions = around | {stmt.name}
            for block in blocks:
                for child in block:
                    result.add(read(child))
            reader.outer, reader.in_masked, reader.in_functions = saved, masked, around
            if isinstance(stmt, ast.ClassDef):
                result.stores.add(stmt.name)
            if function:
                # What its body binds is its own: it leaves its free names, nothing it binds
                # but its own name and what it declares `global`/`nonlocal`.
                result.own = _parameters(stmt) | result.bound
                result.exports -= result.own
                result.stores, result.imports, result.bound = {stmt.name} | result.declared, set(), set()
        facts[id(stmt)] = result
        return result

    for stmt in tree.body:
        read(stmt)
    seen = reader.seen
    seen.type_heads |= _type_heads(raw)
    maybe_masks, held_masks = seen.held_masks()
    seen.held_dicts()
    regions: list[Region] = []
    relevant_anywhere = False

    def consider(block: list[ast.stmt], nested: bool, home: tuple[int, int] | None, own: set[str]) -> None:
        """Prune what can be pruned in `block`. `home` is the line span of the function the
        block is in (None: module level) and `own` the names that function binds."""
        for i, stmt in enumerate(block):
            found = facts[id(stmt)]
            first = stmt.decorator_list[0].lineno if getattr(stmt, "decorator_list", None) else stmt.lineno
            last = stmt.end_lineno or stmt.lineno
            alone = ((i == 0 or (block[i - 1].end_lineno or 0) < first) and (i + 1 == len(block) or block[i + 1].lineno > last))
            relevant = (found.relevant or any(seen.may_be_index(n) for n in found.index_uses)
                        or not found.mask_uses.isdisjoint(maybe_masks)
                        # every binding of a name that holds a mask somewhere and indexes somewhere
                        # (`alive = alive.long()` makes it an index again)
                        or not found.stores.isdisjoint(held_masks))
            if relevant and not nested:
                nonlocal relevant_anywhere
                relevant_anywhere = True
            if home is None:
                # Module-level names: read by is_index, value-call arrays, accelerator tests
                # (stores), by name resolution (imports), by device/backend targets (uses).
                # (each set intersected on its own: a union of the large `seen` sets per
                # statement made a file of 30,000 names quadratic)
                stores = found.stores
                anywhere = ((stores & seen.index_args) | (stores & seen.array_args) | (stores & seen.type_heads)
                            | (stores & seen.held_args) | (found.imports & seen.heads) | (found.exports & seen.assigned))
                inside: set[str] = set()
            else:
                # A function's names: the same, and a binding decides where its nested
                # functions' device/backend uses are recorded.
                anywhere = (found.exports - own) & seen.assigned
                stores = found.stores
                inside = ((stores & seen.index_args) | (stores & seen.array_args) | (stores & seen.role_uses)
                          | (stores & seen.held_args) | (found.imports & seen.heads) | (found.exports & own & seen.assigned))
            verdict = keep(stmt, first, last) if keep is not None else DECIDE
            if verdict == KEEP_WHOLE:
                continue
            if (verdict == DECIDE and not relevant and alone and not _is_future(stmt) and not found.star
                    and not isinstance(stmt, (ast.Global, ast.Nonlocal))
                    and not _sole_bare_return(stmt, block)
                    and _unseen(raw, starts, first, last, anywhere)
                    and _unseen(raw, starts, first, last, inside, home) and _cleanly_bounded(raw, starts, first, stmt)):
                regions.append((first, last, nested, id(block)))
                continue
            parts = _blocks(stmt, raw, starts)
            if parts is not None:
                if isinstance(stmt, _FUNCTIONS):  # its decorators count: the engine reads them in its scope
                    inner_home, inner_own = (first, last), found.own
                else:
                    inner_home, inner_own = home, own
                for inner in parts[1]:
                    consider(inner, True, inner_home, inner_own)

    consider(tree.body, False, None, set())
    del read, consider  # recursive closures: unbound, what they hold is freed at once (no cycle left)
    return regions, relevant_anywhere


def statement_lines(tree: ast.Module, pruned: Pruned | None = None) -> list[int]:
    """The line each top-level statement starts on (its first decorator), in the text libcst
    parses (`pruned`'s, when given): one per statement of the libcst module, whose simple
    statements on one line (`a = 1; b = 2`) are one statement."""
    position = {line: number for number, line in enumerate(pruned.origin, start=1)} if pruned is not None else None
    out: list[int] = []
    for stmt in tree.body:
        first = stmt.decorator_list[0].lineno if getattr(stmt, "decorator_list", None) else stmt.lineno
        if position is not None:
            if first not in position:
                continue  # left out
            first = position[first]
        if not out or out[-1] != first:
            out.append(first)
    return out


def _drop(raw: bytes, starts: list[int], regions: list[tuple[int, int, bool]]) -> Pruned:
    """`raw` without the lines of `regions` (sorted); a nested one becomes one `pass` line."""
    out: list[bytes] = []
    origin: list[int] = []
    at = 1  # the first line not yet copied
    for first, last, nested in regions:
        out.append(raw[starts[at - 1]:starts[first - 1]])
        origin.extend(range(at, first))
        if nested:  # a block must keep a statement
            line = _line(raw, starts, first)
            end = b"\r\n" if line.endswith(b"\r\n") else b"\n" if line.endswith(b"\n") else b""
            out.append(line[: len(line) - len(line.lstrip(b" \t\f"))] + b"pass" + end)
            origin.append(first)
        at = last + 1
    out.append(raw[starts[at - 1]:] if at <= len(starts) else b"")
    origin.extend(range(at, len(starts) + 1))
    return Pruned(b"".join(out), origin)


def _sole_bare_return(stmt: ast.stmt, block: list[ast.stmt]) -> bool:
    """`if not torch.cuda.is_available(): return` in a test ends it as a skip would
    (Context._skips): the bare `return` alone in its block is kept."""
    return len(block) == 1 and isinstance(stmt, ast.Return) and (
        stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None))


def _is_future(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def _encoding(raw: bytes) -> str | None:
    """The file's codec by its coding cookie, when a line of it is its bytes up to b"\n"; else None."""
    from migrator.sources.codec import python_encoding as _python_encoding

    try:
        encoding = _python_encoding(raw).lower().replace("_", "-")
    except (SyntaxError, LookupError):
        return None
    return encoding if encoding in _LINE_SAFE or encoding.startswith(("iso-8859-", "cp125")) else None


def _unseen(raw: bytes, starts: list[int], first: int, last: int, names: set[str],
            within: tuple[int, int] | None = None) -> bool:
    """Whether none of `names` occurs in the file's text (or in lines `within`) outside lines
    first..last (as a substring: a superset of the places a lookup of the name can be)."""
    if not names:
        return True
    begin, end = starts[first - 1], starts[last] if last < len(starts) else len(raw)
    low, high = 0, len(raw)
    if within is not None:
        low, high = starts[within[0] - 1], starts[within[1]] if within[1] < len(starts) else len(raw)
    for name in names:
        token = name.encode("utf-8")
        if raw.find(token, low, begin) != -1 or raw.find(token, end, high) != -1:
            return False
    return True


def _cleanly_bounded(raw: bytes, starts: list[int], first: int, stmt: ast.stmt) -> bool:
    """The statement's first line holds only it (nothing before it but indentation, no
    backslash continuation from the line before). Lines 1-2 (the coding cookie's, PEP 263) are
    checked by prune_source once the pruned text is known."""
    line = _line(raw, starts, first)
    if getattr(stmt, "decorator_list", None):
        if not line.lstrip(b" \t\f").startswith(b"@"):
            return False
    elif line[:stmt.col_offset].strip(b" \t\f") or not line[stmt.col_offset:].strip():
        return False
    if first == 1:
        return True
    before = _line(raw, starts, first - 1).rstrip(b"\r\n")
    return not before.endswith(b"\\")
