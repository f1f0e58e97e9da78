"""Rewrites the rule YAML cannot express, named by rules with `fix: {kind: function, function: NAME}`.

TorchFix's escape hatch: instead of the next flag in the fix DSL, a rule names a Python
function here. Only functions registered in `FUNCTIONS` can be named, so a team rule from a
scanned repository selects among our code and never brings its own.

Each function takes the renderer (`fixer._Renderer`: the module, its values and parents, the
target's expressions, `template()`), the candidate (`engine.Candidate`) and the target's fix entry, and returns
(node to replace, replacement code or node, imports needed, title or None to keep the rule's).
Raising `FixUnavailable` leaves the instance for a person with the message as the reason.
"""

from __future__ import annotations

from typing import Any, Callable

from migrator.scan.coupling import sizes_processes

__all__ = ["FUNCTIONS"]


def device_count(renderer: Any, cand: Any, entry: dict[str, Any]):
    """`torch.cuda.device_count()` as the target's expression; where it sizes `mp.spawn`
    (`nprocs=`), at least 1, because on the CPU the count is 0 and `mp.spawn(nprocs=0)` starts
    nothing and exits 0 (a silent no-op run)."""
    node, code, imports = renderer.template(cand, entry)
    if renderer.target != "xla" and sizes_processes(cand, renderer.values, renderer.parents):
        code = f"max({code}, 1)"
        return node, code, imports, f"Count devices with `{code}` (one process on the CPU)"
    return node, code, imports, None


FUNCTIONS: dict[str, Callable[..., tuple]] = {"device-count": device_count}
