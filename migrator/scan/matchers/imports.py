"""`import` rules: a module imported (`import apex`, `from numba import cuda`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.scan.resolve import dotted_name, imported_modules

__all__ = ["match"]


def match(ctx: Any, node: cst.Import | cst.ImportFrom) -> None:
    candidates = list(imported_modules(node))
    if isinstance(node, cst.ImportFrom) and candidates and not isinstance(node.names, cst.ImportStar):
        # `from numba import cuda` loads the submodule numba.cuda.
        base = candidates[0][0]
        candidates += [(f"{base}.{n}", alias) for alias in node.names if (n := dotted_name(alias.name))]
    reported: set[str] = set()
    for module, report_node in candidates:
        for prefix, rule, m in ctx.index.imports:
            if m.get("unless_optional") and ctx.optional:
                continue
            if (module == prefix or module.startswith(prefix + ".")) and rule.id not in reported:
                ctx.add(rule, report_node, name=module)
                reported.add(rule.id)
                break
