"""Test functions that run on the CPU only: float64 in them is host work (issue 11, Precision).

A test file often holds CPU tests next to device tests (timm's run on `TORCH_DEVICE`, default
"cpu", only where they name `torch_device`). In a test that never names a device, every tensor
it makes is on the host, so its float64 (a reference value, or the dtype under test) never
reaches a NeuronCore. The test is read from the file's whole text with `ast` (the scan's own
module may be a pruned copy without the statements that move a tensor).

A test counts as CPU-only when all of these hold, else it is left to the usual checks:
- its name starts with `test` (a helper may be handed device tensors by its callers);
- its parameters are `self`/`cls` or named by its own `parametrize` marks (a fixture may hand
  it a model on a device); `**x` passes no device only where `x` is one of those, not rebound;
- nothing in it or its decorators names a device: no `.to(x)` or `device=x` whose `x` is not
  "cpu"/"meta" or a dtype, no `.cuda()`/`torch.cuda`/`torch.accelerator`, no name such as
  `device` or `torch_device`, no string naming an accelerator;
- in a class, no method of the class names a device (`setUp` may move the model);
- the module does not set a default device (`torch.set_default_device`).
"""

from __future__ import annotations

import ast
import re
from typing import Iterator

__all__ = ["host_test_functions", "qualified_functions"]

# Names and attributes that say a tensor may be on an accelerator.
_DEVICE_NAMES = frozenset({"device", "devices", "dev", "torch_device", "device_type", "device_name", "gpu", "gpus",
                           "local_rank", "rank", "accelerator", "cuda", "xpu", "npu", "mps", "xla", "neuron", "hpu"})
_DEVICE_ATTRS = frozenset({"cuda", "accelerator", "xpu", "npu", "mps", "xla", "neuron", "hpu", "set_default_device",
                           "to_device"})
_HOST_DEVICES = frozenset({"cpu", "meta"})
_ACCELERATOR_TEXT = re.compile(r"cuda|gpu|xla|neuron|mps|xpu|npu|hpu|accelerator", re.IGNORECASE)
_DTYPE_ATTR = re.compile(r"^(float|double|half|bfloat|int|uint|bool|complex|long|short|cfloat|cdouble)\d*")


def host_test_functions(text: str) -> set[str]:
    """Qualified names (`Class.test_x`, `test_y`) of the CPU-only tests in `text` (see the module
    docstring); empty when the text does not parse or sets a default device."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    if "set_default_device" in text:
        return set()
    found: dict[str, bool] = {}
    class_host: dict[int, bool] = {}
    for name, function, classes in qualified_functions(tree.body):
        # In a class, the innermost one decides: no method of it may name a device.
        if classes and id(classes[-1]) not in class_host:
            class_host[id(classes[-1])] = not _names_device(classes[-1])
        given = _parameters_parametrized(function)
        host = ((not classes or class_host[id(classes[-1])]) and function.name.startswith("test") and given is not None
                and not _names_device(function, _spread_safely(function, given)))
        found[name] = found.get(name, True) and host  # a name defined twice counts if both are
    return {name for name, host in found.items() if host}


def qualified_functions(body: list[ast.stmt], prefix: str = "", classes: tuple[ast.ClassDef, ...] = (),
                        nested: bool = False) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, tuple[ast.ClassDef, ...]]]:
    """(qualified name `Class.method`, the def, its enclosing classes) of each function in `body`,
    in classes and in the blocks of `if`/`try`/`with`; with `nested`, also the defs inside defs
    (`outer.inner`, as the scan's Context names them)."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from qualified_functions(stmt.body, f"{prefix}{stmt.name}.", (*classes, stmt), nested)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{stmt.name}", stmt, classes
            if nested:
                yield from qualified_functions(stmt.body, f"{prefix}{stmt.name}.", classes, nested)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                yield from qualified_functions(getattr(stmt, block, []) or [], prefix, classes, nested)
            for handler in getattr(stmt, "handlers", []) or []:
                yield from qualified_functions(handler.body, prefix, classes, nested)


def _parameters_parametrized(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The names the function's own `parametrize` marks give it, or None when another parameter
    (a fixture, `*args`) may hand it something."""
    args = function.args
    if args.vararg or args.kwarg:
        return None
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    given: set[str] = set()
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", None) == "parametrize" and decorator.args:
            first = decorator.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                given.update(n.strip() for n in first.value.split(","))
            elif isinstance(first, (ast.List, ast.Tuple)):
                given.update(e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return given if all(n in ("self", "cls") or n in given for n in names) else None


def _spread_safely(function: ast.FunctionDef | ast.AsyncFunctionDef, given: set[str]) -> frozenset[str]:
    """The parametrize arguments never rebound in the function: `**kwargs` of one of them holds
    only the decorator's values, which `_names_device` reads with the rest of the function."""
    stored = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return frozenset(given - stored)


def _names_device(node: ast.AST, spread: frozenset[str] = frozenset()) -> bool:
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in _DEVICE_NAMES:
            return True
        if isinstance(child, ast.arg) and child.arg in _DEVICE_NAMES:
            return True
        if isinstance(child, ast.Attribute) and child.attr in _DEVICE_ATTRS:
            return True
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and _ACCELERATOR_TEXT.search(child.value):
            return True
        if isinstance(child, ast.keyword) and child.arg is None:
            if not (isinstance(child.value, ast.Name) and child.value.id in spread):
                return True  # `**options`: any device
        elif isinstance(child, ast.keyword) and child.arg == "device" and not _host(child.value):
            return True
        if isinstance(child, ast.Starred):
            return True  # `x.to(*args)`: any device
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in ("to", "to_empty", "type"):
            if any(not _host(a) for a in child.args):
                return True
    return False


def _host(value: ast.AST) -> bool:
    """Whether `value` is "cpu"/"meta", `torch.device("cpu")` or a dtype (`torch.float64`)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and value.value.split(":")[0] in _HOST_DEVICES
    if isinstance(value, ast.Attribute):
        return isinstance(value.value, ast.Name) and value.value.id == "torch" and bool(_DTYPE_ATTR.match(value.attr))
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "device":
        return len(value.args) == 1 and _host(value.args[0])
    return False
