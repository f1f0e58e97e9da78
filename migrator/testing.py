"""Collect every rule's embedded examples as test cases (ours and `rules test DIR`'s).

A bad example passes when the rule reports it (at `line` if given), applying fixes gives
exactly `fixed` (when given), the fixed text re-parses and no longer triggers the rule. A good
example passes when the rule reports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import libcst as cst


from migrator.core.catalogue import Catalogue, RuleSpec
from migrator.core.options import ScanOptions

__all__ = ["ExampleCase", "collect_examples", "check_example"]


@dataclass(frozen=True)
class ExampleCase:
    """One example: `NRN101-bad-0`."""

    rule: RuleSpec
    kind: str  # "bad" or "good"
    number: int
    example: dict

    @property
    def id(self) -> str:
        return f"{self.rule.id}-{self.kind}-{self.number}"


def collect_examples(catalogue: Catalogue) -> Iterator[ExampleCase]:
    for rule in catalogue.rules:
        for kind in ("bad", "good"):
            for n, example in enumerate(rule.examples[kind]):
                yield ExampleCase(rule, kind, n, example)


_SUFFIX = {"python": "example.py", "shell": "example.sh", "dockerfile": "Dockerfile", "requirements": "requirements.txt",
           "conda": "environment.yml", "pyproject": "pyproject.toml", "setupcfg": "setup.cfg", "cuda": "kernel.cu",
           "yaml": "config.yaml"}


def check_example(case: ExampleCase, scan_source: Callable, fix_source: Callable, extend_rules: tuple = (),
                  scan_paths: Callable | None = None) -> list[str]:
    """Return the problems with one example (empty when it passes).

    `scan_source`, `fix_source` and `scan_paths` are the API's (`migrator.api.check_example`
    passes them): this module sits below the API, which offers `rules test` through it. An
    example with a `package` is written as a file of that package into a temporary folder and
    scanned through `scan_paths` (what belongs to a package is decided there, NRN002).
    """
    ex = case.example
    kind = ex.get("file_kind", "python")
    path = ex.get("path", _SUFFIX[kind])
    options = ScanOptions(target=ex.get("target", "portable"), extend_rules=tuple(extend_rules),
                          report_unused_noqa=ex.get("report_unused_noqa", False))
    if case.rule.severity_for(options.target) is None:
        return [f"{case.id}: rule is off for target {options.target}"] if case.kind == "bad" else []
    if "package" in ex:
        return _check_in_package(case, ex, path, options, scan_paths)
    hits = [f for f in scan_source(ex["code"], path, kind, options) if f.rule_id == case.rule.id]
    if case.kind == "good":
        return [f"{case.id}: unexpected finding at line {f.span.line}: {f.message}" for f in hits]
    problems = []
    if not hits:
        problems.append(f"{case.id}: the rule did not report this example")
    elif "line" in ex and all(f.span.line != ex["line"] for f in hits):
        problems.append(f"{case.id}: expected a finding on line {ex['line']}, got {[f.span.line for f in hits]}")
    if "columns" in ex and [f.span.column for f in hits] != ex["columns"]:
        problems.append(f"{case.id}: expected findings at columns {ex['columns']}, got {[f.span.column for f in hits]}")
    if "fixed" in ex:
        # Fixed with the rule's own safety: a safe rule's example shows what plain `fix` writes.
        unsafe = ex.get("unsafe", bool(case.rule.fix) and case.rule.fix["safety"] == "unsafe")
        outcome = fix_source(ex["code"], path, kind, options, unsafe=unsafe)
        if outcome.failed:
            problems.append(f"{case.id}: fix failed: {outcome.failed}")
        elif outcome.source != ex["fixed"]:
            problems.append(f"{case.id}: fixed text differs:\n--- expected\n{ex['fixed']}--- got\n{outcome.source}")
        if kind == "python":
            try:
                cst.parse_module(outcome.source)
            except cst.ParserSyntaxError as exc:
                problems.append(f"{case.id}: fixed text does not parse: {exc.message}")
        again = [f for f in scan_source(outcome.source, path, kind, options) if f.rule_id == case.rule.id]
        if again:
            problems.append(f"{case.id}: the fixed text still triggers the rule at line {again[0].span.line}")
        if fix_source(outcome.source, path, kind, options, unsafe=unsafe).source != outcome.source:
            problems.append(f"{case.id}: a second fix run changes the fixed text")
        if unsafe and fix_source(ex["code"], path, kind, options, unsafe=False).source == ex["fixed"]:
            problems.append(f"{case.id}: marked unsafe, but the fix applied without --unsafe-fixes")
    return problems


def _check_in_package(case: ExampleCase, ex: dict, name: str, options: ScanOptions, scan_paths: Callable | None) -> list[str]:
    """A `package` example: `a.b` becomes `a/__init__.py`, `a/b/__init__.py` and `a/b/<name>`
    in a temporary folder, which is scanned as a whole (no fix is checked)."""
    import tempfile
    from pathlib import Path

    if scan_paths is None:
        return [f"{case.id}: a `package` example needs the path scan"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for part in ex["package"].split("."):
            folder = folder / part
            folder.mkdir()
            (folder / "__init__.py").write_text("")
        (folder / name).write_text(ex["code"], encoding="utf-8")
        hits = [f for f in scan_paths([tmp], options).findings if f.rule_id == case.rule.id]
    if case.kind == "good":
        return [f"{case.id}: unexpected finding at {f.path}:{f.span.line}: {f.message}" for f in hits]
    return [] if hits else [f"{case.id}: the rule did not report this example"]
