"""`import` rules: a module imported (`import apex`, `from numba import cuda`)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

import libcst as cst

from migrator.scan.resolve import dotted_name, imported_modules

__all__ = ["match"]


@lru_cache(maxsize=256)
def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def _package_root(folders: list[str], top: str) -> bool:
    """Whether the folder named `top` is a top-level package: its parent folder is no package.
    (diffusers/quantizers/bitsandbytes/ is diffusers' own subpackage; its `import bitsandbytes`
    is the real library.)"""
    i = len(folders) - 1 - folders[::-1].index(top)
    return i == 0 or not _is_package("/".join(folders[:i]) or "/")


def match(ctx: Any, node: cst.Import | cst.ImportFrom) -> None:
    candidates = list(imported_modules(node))
    if isinstance(node, cst.ImportFrom) and candidates and not isinstance(node.names, cst.ImportStar):
        # `from numba import cuda` loads the submodule numba.cuda.
        base = candidates[0][0]
        candidates += [(f"{base}.{n}", alias) for alias in node.names if (n := dotted_name(alias.name))]
    reported: set[str] = set()
    folders = ctx.path.split("/")[:-1]
    for module, report_node in candidates:
        for prefix, rule, m in ctx.index.imports:
            if m.get("unless_optional") and ctx.optional:
                continue
            if (module == prefix or module.startswith(prefix + ".")) and rule.id not in reported:
                top = module.split(".", 1)[0]
                if top in folders and _package_root(folders, top):
                    # A file inside the library's own package (flash_attn/layers.py importing
                    # flash_attn.ops): one finding per package, at its first import in the
                    # package's own __init__.py; the rest are the library importing itself.
                    if ctx.own_package or ctx.file_name != "__init__.py" or folders[-1] != top or folders.count(top) > 1:
                        break
                    ctx.own_package = True
                ctx.add(rule, report_node, name=module)
                reported.add(rule.id)
                break
