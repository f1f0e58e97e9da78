"""`assess`: decide a move with numbers (readiness, effort, migration path, model support, cost).

The parts are computed here from what the scan and `fix` already produced (the API runs them;
this package never scans on its own): `readiness` (findings per category and what `fix`
rewrites), `paths` (which Neuron path applies, per family), `inventory` and `models` (which
models the tree loads and which Neuron library lists them), `cost` (today's GPU spend against
a Neuron plan). `build_assessment` joins them into one dict, the shape of
`migrator/schemas/assess.v1.schema.json`; `render` turns it into text, JSON, Markdown or HTML.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from pathlib import Path
from typing import Any, Callable, Iterable

from migrator.assess.cost import FleetError, PriceUnknown, Prices, cost_section, load_assumptions
from migrator.assess.inventory import Inventory
from migrator.assess.models import models_section
from migrator.assess.paths import FAMILIES_BY_TARGET, paths_section
from migrator.assess.readiness import effort_section, readiness_section
from migrator.core.catalogue import Catalogue
from migrator.core.findings import Finding
from migrator.core.version import __version__

__all__ = ["SCHEMA_VERSION", "FAMILIES_BY_TARGET", "FleetError", "build_assessment"]

SCHEMA_VERSION = 1


def build_assessment(*, paths: Iterable[str], target: str, findings: list[Finding], rewritten: dict[tuple, str],
                     catalogue: Catalogue, files: int, lines: int, inventory: Inventory, unsafe_fixes: bool,
                     families: tuple[str, ...], fleet: dict[str, Any] | None,
                     prices: Prices | Callable[[set[str], str], Prices] | None,
                     neuron_types: dict[str, dict]) -> dict[str, Any]:
    """The whole assessment as one JSON-ready dict (see the module docstring).

    With one folder given, file paths in the report are relative to it (`relative_to`).
    Without a fleet, `cost` and `cost_error` are None. When a price the plan needs is unknown,
    `cost` is None and `cost_error` says which; the other parts are still given.
    """
    paths = [str(p) for p in paths]
    relative_to = _common_folder(paths)
    if relative_to is not None:
        findings, rewritten, inventory = _relative(relative_to, findings, rewritten, inventory)
    assumptions = load_assumptions((fleet or {}).get("assumptions"))
    optional = inventory.optional_imports
    readiness = readiness_section(findings, rewritten, catalogue, target, unsafe_fixes, files, lines,
                                  assumptions["effort"], optional)
    effort = effort_section(findings, rewritten, catalogue, target, unsafe_fixes, assumptions,
                            readiness["files_detail"], optional)
    notes = [f"{path}: not read for the model inventory: {why}" for path, why in inventory.unread[:50]]
    cost, cost_error = None, None
    if fleet is not None:
        if prices is None:
            cost_error = "no prices given (--prices FILE or --prices aws): the cost section is not computed"
        else:
            try:
                cost = cost_section(fleet, assumptions, prices, neuron_types, target,
                                    tuple(effort["person_days"]))
            except PriceUnknown as exc:
                cost_error = str(exc)
    if readiness["files"] == 0:
        notes.append("no files to scan under the given paths: readiness and effort are empty")
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "neuron-migrator", "version": __version__},
        "generated": _dt.date.today().isoformat(),
        "target": target,
        "paths": paths,
        "relative_to": relative_to,
        "readiness": readiness,
        "effort": effort,
        "migration_paths": paths_section(inventory, families),
        "models": models_section(inventory, families),
        "cost": cost,
        "cost_error": cost_error,
        "notes": notes,
    }


def _common_folder(paths: list[str]) -> str | None:
    """The one folder the report's file paths are relative to: the folder given, when it is one."""
    if len(paths) != 1 or not os.path.isdir(paths[0]):
        return None
    return Path(paths[0]).as_posix().rstrip("/") or "/"


def _relative(root: str, findings: list[Finding], rewritten: dict[tuple, str], inv: Inventory):
    prefix = root if root.endswith("/") else root + "/"

    def rel(path: str) -> str:
        return path[len(prefix):] if path.startswith(prefix) else path

    findings = [dataclasses.replace(f, path=rel(f.path)) for f in findings]
    rewritten = {(rel(k[0]), *k[1:]): v for k, v in rewritten.items()}
    moved = Inventory(uses=set(inv.uses), evidence={u: {rel(p) for p in ps} for u, ps in inv.evidence.items()},
                      unread=[(rel(p), why) for p, why in inv.unread],
                      optional_imports={(rel(p), line) for p, line in inv.optional_imports})
    for key, use in inv.models.items():
        for p, line in use.where:
            moved.add_model(use.name, use.how, rel(p), line)
    return findings, rewritten, moved
