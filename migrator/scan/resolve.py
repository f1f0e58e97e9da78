"""Qualified names through import aliases, without libcst's (slow) scope analysis.

`import torch as th`, `from torch import cuda`, `from torch.cuda import amp` and imports inside
functions all resolve: `th.cuda.synchronize` -> `torch.cuda.synchronize`. Names that were not
imported resolve to None, so a local variable called `cuda` is never mistaken for `torch.cuda`.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

__all__ = ["dotted_name", "import_bindings", "module_bindings", "imported_modules", "importorskip_binding"]


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None (calls, subscripts, literals)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression | None) -> str | None:
    return dotted_name(node) if node is not None else None


def import_bindings(stmt: cst.Import | cst.ImportFrom) -> dict[str, str]:
    """Local name -> qualified name bound by one import statement (relative/star ignored)."""
    out: dict[str, str] = {}
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                out[top] = top
        return out
    if stmt.relative or isinstance(stmt.names, cst.ImportStar):
        return out
    module = _module_name(stmt.module)
    if module is None:
        return out
    for alias in stmt.names:
        name = dotted_name(alias.name)
        if name is None:
            continue
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
        out[local] = f"{module}.{name}"
    return out


def importorskip_binding(stmt: cst.BaseSmallStatement) -> dict[str, str]:
    """`torch = pytest.importorskip("torch")` binds `torch` as an import does (tests use it to
    skip without the package, and then call `torch.cuda...` through the name)."""
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name)
            and isinstance(stmt.value, cst.Call) and stmt.value.args):
        return {}
    func = dotted_name(stmt.value.func) or ""
    first = stmt.value.args[0].value
    if func.rsplit(".", 1)[-1] != "importorskip" or not isinstance(first, cst.SimpleString):
        return {}
    module = first.evaluated_value
    if not isinstance(module, str) or not all(part.isidentifier() for part in module.split(".")):
        return {}
    return {stmt.targets[0].target.value: module}


def imported_modules(stmt: cst.Import | cst.ImportFrom) -> list[tuple[str, cst.CSTNode]]:
    """Module names an import statement loads, each with the node to report."""
    if isinstance(stmt, cst.Import):
        return [(n, alias) for alias in stmt.names if (n := dotted_name(alias.name))]
    if stmt.relative:
        return []
    module = _module_name(stmt.module)
    return [(module, stmt.module)] if module and stmt.module is not None else []


def _top_level_statements(body: Iterable[cst.CSTNode], fallback: bool = False) -> Iterable[tuple[cst.CSTNode, bool]]:
    """Statements run at import time: module body plus if/try/with blocks, not def/class.

    Yields (statement, fallback): fallback is True inside `except` handlers, which run only when
    the `try` body failed.
    """
    for stmt in body:
        yield stmt, fallback
        if isinstance(stmt, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
            blocks = [(stmt.body, fallback)]
            orelse = getattr(stmt, "orelse", None)
            if orelse is not None:
                blocks.append((orelse.body if isinstance(orelse, (cst.Else, cst.If)) else orelse, fallback))
            for handler in getattr(stmt, "handlers", ()):
                blocks.append((handler.body, True))
            final = getattr(stmt, "finalbody", None)
            if final is not None:
                blocks.append((final.body, fallback))
            for block, in_handler in blocks:
                inner = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else block
                if isinstance(inner, cst.If):
                    inner = [inner]
                yield from _top_level_statements(inner, in_handler)


def module_bindings(module: cst.Module) -> dict[str, str]:
    """Every name bound by a module-level import (including ones inside if/try blocks).

    `try: from torch.amp import autocast` / `except ImportError: from torch.cuda.amp import
    autocast` binds the `try` import: the fallback only counts for names nothing else binds.
    """
    out: dict[str, str] = {}
    fallbacks: dict[str, str] = {}
    for stmt, fallback in _top_level_statements(module.body):
        # A one-line block (`try: import torch`) holds its small statements directly.
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt] if isinstance(stmt, cst.BaseSmallStatement) else []
        for small in smalls:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                (fallbacks if fallback else out).update(import_bindings(small))
            elif isinstance(small, cst.Assign):
                (fallbacks if fallback else out).update(importorskip_binding(small))
    return {**fallbacks, **out}
