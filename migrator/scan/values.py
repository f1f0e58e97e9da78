"""What the names of a module hold and where they are used, as far as a migration needs to know.

A rewrite must keep the kind of every value it replaces (text stays text, an index stays an
index), and a value chosen once flows through names: `loc = f"cuda:{i}"` then
`torch.load(..., map_location=loc)`, `backend = "nccl"` then `init_process_group(backend=backend)`,
`world_size = torch.cuda.device_count()` then `mp.spawn(..., nprocs=world_size)`. This module
answers, per scope (the module and each function), which names are *used as* a device, a
distributed backend or a process count, and which hold a device *index* (an int: `device = 0`,
`rank`, `int(os.environ["LOCAL_RANK"])`).

It reads one parsed module and never imports or runs anything. Names are followed within one
scope, and from a function to the module's globals it reads; not across calls or modules.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from migrator.scan.resolve import dotted_name
from migrator.scan.walk import is_node, syntax_fields, walk
from migrator.scan.words import BACKEND_CALLS, INDEX_CALLS, INDEX_NAME, NPROCS_KEYWORDS, TRACKED_DEVICE_KEYWORDS

__all__ = ["ScopeValues", "ModuleValues", "Parents", "INDEX_NAME", "is_index_attribute", "is_cuda_test", "cuda_branch", "string_value"]

# The shared PyTorch words are data (rules/vocabulary.yaml, schema-checked; see words.py).
DEVICE_KEYWORDS = TRACKED_DEVICE_KEYWORDS


def is_index_attribute(node: cst.BaseExpression) -> bool:
    """`self.gpu_id`, `args.gpu`, `args.local_rank`: an attribute named like a device index."""
    return isinstance(node, cst.Attribute) and bool(INDEX_NAME.match(node.attr.value))


@dataclass
class ScopeValues:
    """One scope (the module or a function): names by how they are used and what they hold."""

    node: cst.CSTNode
    parent: "ScopeValues | None" = None
    bound: set[str] = field(default_factory=set)  # assigned or a parameter here
    device_names: set[str] = field(default_factory=set)  # passed where a device is expected
    backend_names: set[str] = field(default_factory=set)  # passed as a torch.distributed backend
    nprocs_names: set[str] = field(default_factory=set)  # passed as a number of processes
    index_names: set[str] = field(default_factory=set)  # hold a device index
    text_names: set[str] = field(default_factory=set)  # assigned a string literal
    calls: set[str] = field(default_factory=set)  # dotted names of the calls made here
    accelerator_names: set[str] = field(default_factory=set)  # assigned torch.accelerator.current_accelerator(...)
    assigned_other: set[str] = field(default_factory=set)  # assigned something else than a literal or an int
    # name -> (value, index in module.body of the statement) of each plain `name = value` here;
    # `opaque`: also bound another way (a parameter, loop, unpacking, `+=`, `:=`, `with`/`except`
    # `as`, an import, `global`/`nonlocal`, a class body), so what it holds is not known.
    assignments: dict[str, list[tuple[cst.BaseExpression, int]]] = field(default_factory=dict)
    opaque: set[str] = field(default_factory=set)
    star_import: bool = False  # `from x import *` here: any name may be bound by it
    device_chosen: set[str] = field(default_factory=set)  # also assigned under an `if` that tests for CUDA/a GPU
    # a parameter of this function -> (its default, index in module.body of the `def`)
    defaults: dict[str, tuple[cst.BaseExpression, int]] = field(default_factory=dict)

    def owner(self, name: str) -> "ScopeValues":
        """The scope a use of `name` here refers to: this one if it binds the name, else the enclosing ones."""
        scope: ScopeValues | None = self
        while scope is not None:
            if name in scope.bound:
                return scope
            scope = scope.parent
        root = self
        while root.parent is not None:
            root = root.parent
        return root

    def held_values(self, name: str) -> list[tuple[cst.BaseExpression, int]]:
        """Every value a plain assignment gives `name` in the scope a use here refers to, with
        the index in module.body of its statement; empty when the name is bound any other way
        (a parameter, a loop, an import...) or not at all."""
        owner = self.owner(name)
        if name not in owner.bound or name in owner.opaque or owner.star_import or name in owner.device_chosen:
            return []  # (a value also set in a branch on CUDA is chosen per device already)
        return owner.assignments.get(name, [])

    def default_values(self, name: str) -> list[tuple[cst.BaseExpression, int]]:
        """For a parameter with a default (`def make_trainer(precision="16-mixed")`): the default
        and every value a plain assignment in the function gives it, as held_values; empty for
        any other name or when a `from x import *` may bind it."""
        owner = self.owner(name)
        if name not in owner.defaults or owner.star_import:
            return []
        return [owner.defaults[name], *owner.assignments.get(name, [])]

    def values_of(self, name: str) -> tuple[list[tuple[cst.BaseExpression, int]], str]:
        """(value, statement) of each plain assignment to `name` here (held_values), else of a
        parameter's default and assignments (`def make_trainer(precision="16-mixed")`: the value
        when no caller gives one), with how a message names where they are held."""
        held = self.held_values(name)
        if held:
            return held, f"`{name}`"
        return self.default_values(name), f"the default of parameter `{name}`"

    def is_index(self, node: cst.BaseExpression) -> bool:
        """Whether `node` (an argument as written) holds a device index here."""
        if isinstance(node, cst.Integer):
            return True
        if is_index_attribute(node):
            return True
        if isinstance(node, cst.Name):
            owner = self.owner(node.value)
            return node.value in owner.index_names and node.value not in owner.text_names
        return False


def _int_like(value: cst.BaseExpression, scope: ScopeValues) -> bool:
    if isinstance(value, cst.Integer):
        return True
    if isinstance(value, cst.Call):
        name = dotted_name(value.func) or ""
        # `torch.neuron.current_device()`, `torch.accelerator.current_device_index()`: the index of
        # the device the code runs on, whatever it is (not a CUDA ordinal).
        return name == "int" or (bool(INDEX_CALLS.search(name)) and not name.startswith(("torch.neuron.", "torch.accelerator.")))
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Modulo, cst.Add, cst.Subtract)):
        return _int_like(value.left, scope) or (isinstance(value.left, cst.Name) and value.left.value in scope.index_names)
    return is_index_attribute(value)


def _param_names(params: cst.Parameters) -> list[cst.Name]:
    """Every name a parameter list binds, `*args` and `**kwargs` included."""
    names = [p.name for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    names += [star.name for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return names


def _names_device(test: cst.BaseExpression) -> bool:
    """An `if` test that names CUDA or a GPU (`torch.cuda.is_available()`, `args.gpu`, `device == "cuda"`)."""
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and re.search(r"cuda|gpu", node.value, re.IGNORECASE):
            return True
        if isinstance(node, cst.SimpleString) and re.search(r"cuda|gpu", node.value, re.IGNORECASE):
            return True
        for name in syntax_fields(type(node)):  # (libcst's `children` copies every node it returns)
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                stack.extend(v for v in value if is_node(type(v)))
            elif is_node(kind):
                stack.append(value)
    return False


def _mentions_current_accelerator(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.BooleanOperation):
        return _mentions_current_accelerator(value.left)
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "current_accelerator"


class _Collect(cst.CSTVisitor):
    def __init__(self) -> None:
        self.scopes: dict[int, ScopeValues] = {}
        self.stack: list[ScopeValues] = []
        self.statement = 0  # index in module.body of the statement walked
        self.classes = [0]  # per scope: the depth of class bodies it is in (a class binds in the enclosing scope)
        self.device_tests: list[cst.BaseExpression] = []  # the tests of the enclosing `if`s
        self._device_test: dict[int, bool] = {}  # id(test) -> whether it names CUDA or a GPU

    def _names_device(self, test: cst.BaseExpression) -> bool:
        known = self._device_test.get(id(test))
        if known is None:
            known = self._device_test[id(test)] = _names_device(test)
        return known

    def visit_Module(self, node: cst.Module) -> None:
        scope = ScopeValues(node)
        self.scopes[id(node)] = scope
        self.stack.append(scope)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._opaque(node.name)  # `def precision(): ...` rebinds the name where it is defined
        scope = ScopeValues(node, parent=self.stack[-1])
        params = node.params
        for name in _param_names(params):
            scope.bound.add(name.value)
            scope.opaque.add(name.value)
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if INDEX_NAME.match(param.name.value):
                scope.index_names.add(param.name.value)
            if param.default is not None:
                scope.defaults[param.name.value] = (param.default, self.statement)
        self.scopes[id(node)] = scope
        self.stack.append(scope)
        self.classes.append(0)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()
        self.classes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._opaque(node.name)
        self.classes[-1] += 1

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes[-1] -= 1

    def _opaque(self, target: cst.CSTNode | None) -> None:
        """Names bound otherwise than by a plain assignment (their value is not followed)."""
        if isinstance(target, cst.Name):
            self.stack[-1].opaque.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._opaque(element.value)
        elif isinstance(target, cst.StarredElement):
            self._opaque(target.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._opaque(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._opaque(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._opaque(node.name)  # `with ... as x`, `except E as x`, `import a as x`

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self._opaque(cst.Name(node.evaluated_name.split(".")[0]))

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # A lambda has no scope here: its parameters hide the enclosing names of the same spelling.
        for name in _param_names(node.params):
            self._opaque(name)

    def visit_Del(self, node: cst.Del) -> None:
        self._opaque(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        self._opaque(node.name)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        self._opaque(node.name)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        self._opaque(node.rest)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.stack[-1].star_import = True  # binds names nobody can list

    def visit_Global(self, node: cst.Global) -> None:
        # The name is rebound in the module from inside a function: not followed anywhere.
        for item in node.names:
            for scope in self.stack:
                scope.opaque.add(item.name.value)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            for scope in self.stack[1:]:
                scope.opaque.add(item.name.value)

    def visit_If(self, node: cst.If) -> None:
        self.device_tests.append(node.test)  # read only when a name is assigned under it

    def leave_If(self, node: cst.If) -> None:
        self.device_tests.pop()

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._opaque(node.target)  # its own scope in Python 3; kept apart here only by name

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        scope = self.stack[-1]
        if not isinstance(target, cst.Name):
            return
        name = target.value
        scope.bound.add(name)
        if value is None or self.classes[-1]:
            scope.opaque.add(name)
        if value is None:
            return
        scope.assignments.setdefault(name, []).append((value, self.statement))
        if self.device_tests and any(self._names_device(test) for test in self.device_tests):
            scope.device_chosen.add(name)  # `if not torch.cuda.is_available(): use_fp16 = False`
        if _mentions_current_accelerator(value):
            scope.accelerator_names.add(name)
        if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            scope.text_names.add(name)
        elif _int_like(value, scope) or (INDEX_NAME.match(name) and not isinstance(value, (cst.Call, cst.IfExp))):
            scope.index_names.add(name)
        else:
            scope.assigned_other.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                for element in target.target.elements:
                    self._bind(element.value, None)
            else:
                self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._opaque(node.target)
        if isinstance(node.target, cst.Name):
            scope = self.stack[-1]
            scope.bound.add(node.target.value)
            if INDEX_NAME.match(node.target.value):
                scope.index_names.add(node.target.value)

    def _use(self, value: cst.BaseExpression, kind: str) -> None:
        if isinstance(value, cst.Name):
            scope = self.stack[-1]
            getattr(scope, kind).add(value.value)
            self._pending.append((scope, value.value, kind))

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted_name(node.func) or ""
        self.stack[-1].calls.add(name)
        last = name.rsplit(".", 1)[-1] if name else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for arg in node.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key in DEVICE_KEYWORDS:
                self._use(arg.value, "device_names")
            elif key == "backend" and last in BACKEND_CALLS:
                self._use(arg.value, "backend_names")
            elif key in NPROCS_KEYWORDS:
                self._use(arg.value, "nprocs_names")
        if positional:
            if last in ("to", "device") or name == "torch.device":
                self._use(positional[0].value, "device_names")
            elif last in BACKEND_CALLS:
                self._use(positional[0].value, "backend_names")

    _pending: list[tuple[ScopeValues, str, str]]


class ModuleValues:
    """The scopes of one module, looked up by the id of a Module or FunctionDef node."""

    def __init__(self, module: cst.Module) -> None:
        collector = _Collect()
        collector._pending = []
        collector.visit_Module(module)
        for number, statement in enumerate(module.body):
            collector.statement = number
            walk(statement, collector)
        self.scopes = collector.scopes
        self.module = self.scopes[id(module)]
        # A function that uses a global it does not bind uses the module's name.
        for scope, name, kind in collector._pending:
            owner = scope.owner(name)
            if owner is not scope:
                getattr(owner, kind).add(name)

    def scope(self, node: cst.CSTNode | None) -> ScopeValues:
        return self.scopes.get(id(node), self.module) if node is not None else self.module


_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _node_fields(cls: type) -> tuple[str, ...]:
    names = _NODE_FIELDS.get(cls)
    if names is None:
        names = _NODE_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class Parents:
    """Parent of every node of a module (libcst's ParentNodeProvider copies the tree; ids must stay).

    The children are read from the nodes' fields: the same nodes as libcst's `children`, which
    builds a copy of every node to find them (most of a scan's time in a file with a CUDA branch).
    With `syntax_only`, whitespace and punctuation nodes (the fields walk.py skips) have no
    entry: enough for the nodes a scan reports and their ancestors.
    """

    def __init__(self, module: cst.Module, syntax_only: bool = False) -> None:
        self.of: dict[int, cst.CSTNode] = {}
        of = self.of
        stack: list[cst.CSTNode] = [module]
        fields = syntax_fields if syntax_only else _node_fields
        while stack:
            node = stack.pop()
            for name in fields(type(node)):
                value = getattr(node, name)
                kind = type(value)
                if kind is list or kind is tuple:
                    for child in value:
                        if is_node(type(child)):
                            of[id(child)] = node
                            stack.append(child)
                elif is_node(kind):
                    of[id(value)] = node
                    stack.append(value)

    def chain(self, node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
        """(child, parent) pairs from `node` up to the module."""
        while id(node) in self.of:
            parent = self.of[id(node)]
            yield node, parent
            node = parent

    def scope(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The nearest enclosing function, or None for module level."""
        return next((p for _, p in self.chain(node) if isinstance(p, (cst.FunctionDef, cst.Lambda))), None)


def string_value(node: cst.CSTNode) -> str | None:
    """The text of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString):
        raw = node.value
        # Without escapes or carriage returns a literal's value is its body (libcst's
        # evaluated_value runs ast.literal_eval, whose helper closures are cyclic garbage).
        quote = raw[-1]
        start = raw.index(quote)
        prefix = raw[:start].lower()
        if prefix in ("", "r", "u") and "\\" not in raw and "\r" not in raw:
            width = 3 if raw[start:start + 3] == quote * 3 and len(raw) - start >= 6 else 1
            return raw[start + width: len(raw) - width]
        if "b" in prefix:
            return None
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - malformed escapes: not a device string
            return None
        return value if isinstance(value, str) else None
    return None


def is_cuda_test(test: cst.BaseExpression) -> bool:
    """`device == "cuda"`, `"cuda" in device`, `device.type == "cuda"`, `x.is_cuda` (not negated)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return is_cuda_test(test.left) or is_cuda_test(test.right)
    if isinstance(test, cst.Attribute):
        return test.attr.value == "is_cuda"
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        if isinstance(op, (cst.Equal, cst.Is, cst.In)):
            values = (string_value(test.left), string_value(test.comparisons[0].comparator))
            return any(v is not None and (v == "cuda" or v.startswith("cuda:")) for v in values)
    return False


def cuda_branch(node: cst.CSTNode, parents: Parents) -> cst.BaseExpression | None:
    """The test of the innermost `if`/`IfExp` that runs `node` only when the device is CUDA."""
    for child, parent in parents.chain(node):
        if isinstance(parent, cst.If) and child is parent.body and is_cuda_test(parent.test):
            return parent.test
        if isinstance(parent, cst.IfExp) and child is parent.body and is_cuda_test(parent.test):
            return parent.test
    return None
