"""Local tensors made on the CPU only to become Python numbers (issue 11, Precision: "float64 only
compared or used on the host").

    def mean_loss(values) -> float:
        t = torch.tensor(values, dtype=torch.float64)
        return float(t.mean())

`torch.tensor(...)` without `device=` makes a CPU tensor unless the module changes the default
device. When every later read of the name, in the same function, reduces it to a Python number
(`float(t.mean())`, `t.mean().item()`, `t.tolist()`, `t.numpy()`) and none moves it (`.to(...)`,
`.cuda()`) or hands it anywhere else, its float64 stays on the host. A name bound more than once in
the function, a parameter, or one a nested function or lambda names, is not host-only.

Read from the file's whole text with `ast`, like scan/host_tests.py: the module the scan walks may
be a pruned copy without the statements that move the tensor. Nothing is evaluated.
"""

from __future__ import annotations

import ast

from migrator.scan.host_tests import qualified_functions

__all__ = ["FACTORIES", "host_locals"]

# torch functions that make a new tensor on the default device when given no `device=`.
FACTORIES = frozenset({"tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "logspace",
                       "rand", "randn", "eye"})
# Methods whose result is a Python number or a NumPy array: the end of a host use.
_SINKS = frozenset({"item", "tolist", "numpy"})
# Methods that move a tensor or change its device: not a host use.
_MOVES = frozenset({"to", "cuda", "type", "pin_memory", "share_memory_"})


def host_locals(text: str) -> set[tuple[str, str]]:
    """(qualified function, name) pairs (`("Model.on_epoch_end", "scores")`) of float64-capable CPU
    tensors in `text` that are only reduced to Python numbers (see the module docstring); empty
    when the text does not parse or sets a default device."""
    if "set_default_device" in text:
        return set()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[tuple[str, str]] = set()
    for qualified, function, _ in qualified_functions(tree.body, nested=True):
        found.update((qualified, name) for name in _host_names(function))
    return found


def _host_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names bound once in `function` to a tensor factory without `device=`, read only on the host."""
    candidates = {}
    for node in _own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and _factory_without_device(node.value):
            candidates[node.targets[0].id] = node.targets[0]
    if not candidates:
        return set()
    parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    parents: dict[int, ast.AST] = {}
    for node in _own_nodes(function):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    out = set()
    for name, binding in candidates.items():
        if name in parameters:
            continue
        stores = [n for n in _own_nodes(function) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
        reads = [n for n in _own_nodes(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        if stores != [binding] or not reads or _named_in_nested(function, name):
            continue
        if all(_host_use(read, parents) for read in reads):
            out.add(name)
    return out


def _factory_without_device(call: ast.Call) -> bool:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in FACTORIES):
        return False
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or "dtype" not in keywords:
        return False  # **kwargs may carry a device
    device = keywords.get("device")
    return device is None or (isinstance(device, ast.Constant) and device.value == "cpu")


def _host_use(name: ast.Name, parents: dict[int, ast.AST]) -> bool:
    current: ast.AST = name
    # Up through a method chain: t.mean().item(), t.sum(dim=0).tolist().
    while True:
        attribute = parents.get(id(current))
        call = parents.get(id(attribute)) if attribute is not None else None
        if not (isinstance(attribute, ast.Attribute) and attribute.value is current
                and isinstance(call, ast.Call) and call.func is attribute):
            break
        if attribute.attr in _MOVES:
            return False
        if attribute.attr in _SINKS:
            return True
        current = call
    # float(t.mean()), int(t.argmax())
    outer = parents.get(id(current))
    return isinstance(outer, ast.Call) and isinstance(outer.func, ast.Name) and outer.func.id in ("float", "int") \
        and len(outer.args) == 1 and outer.args[0] is current and not outer.keywords


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of `function`'s body, not those of the functions, lambdas and classes nested in it."""
    out: list[ast.AST] = []
    stack = list(function.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def _named_in_nested(function: ast.AST, name: str) -> bool:
    for node in _own_nodes(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return True
    return False
