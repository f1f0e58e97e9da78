"""Baselines: accept today's findings, fail only on new ones.

A baseline file records each finding's fingerprint (a hash of rule id, path and the flagged
source text, so it survives lines moving) with a count, since the same text can be flagged
more than once in a file.

Format 2 (written now) takes the path relative to the project root (`project_root`: the
folder of the configuration file, else the common folder of the paths scanned), so a baseline
made from one working directory, or in another checkout of the same project, still matches.
Format 1 files (paths as they were given on the command line) are still read: a finding
matches an entry by either fingerprint.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from migrator.core.version import __version__
from migrator.core.findings import Finding

__all__ = ["BaselineError", "write_baseline", "read_baseline", "filter_new", "project_root"]

FORMAT = 2
READABLE = (1, 2)


def project_root(paths: Sequence[str | os.PathLike[str]], config_root: Path | None = None) -> Path:
    """The folder baseline paths are relative to: `config_root` (the configuration file's
    folder) when there is one, else the nearest folder at or above the deepest folder holding
    every path given that has a pyproject.toml, .git, setup.py or setup.cfg, else that folder."""
    if config_root is not None:
        return Path(os.path.abspath(config_root))
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))) for p in paths]
    common = Path(os.path.commonpath(folders)) if folders else Path.cwd()
    # Without our table, the project is still the nearest folder that looks like one (as ruff
    # and git see it), so `baseline create .` at the top and `scan src/` agree on paths.
    for folder in (common, *common.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder
    return common


_PROJECT_MARKERS = ("pyproject.toml", ".git", "setup.py", "setup.cfg")


def _relative(path: str, root: Path) -> str:
    """`path` relative to `root` in POSIX form; the path as given when it lies outside."""
    for here, base in ((os.path.abspath(path), os.path.abspath(root)),
                       (os.path.realpath(path), os.path.realpath(root))):
        try:
            return Path(here).relative_to(base).as_posix()
        except ValueError:
            continue
    return Path(path).as_posix()


def _keys(finding: Finding, root: Path | None) -> tuple[str, ...]:
    """The fingerprints a baseline entry may hold for `finding`: root-relative (format 2),
    then as given (format 1)."""
    if root is None:
        return (finding.fingerprint,)
    return (replace(finding, path=_relative(finding.path, root)).fingerprint, finding.fingerprint)


class BaselineError(ValueError):
    """The baseline file is missing or malformed."""


def write_baseline(findings: Sequence[Finding], path: Path, root: Path | None = None) -> int:
    """Write `findings` to `path` (JSON), their paths relative to `root` (see `project_root`;
    default: the working directory); returns how many were recorded."""
    root = Path.cwd() if root is None else root
    entries = []
    for f in findings:
        rel = replace(f, path=_relative(f.path, root))
        entries.append({"fingerprint": rel.fingerprint, "rule_id": f.rule_id, "path": rel.path, "message": f.message,
                        "_order": (rel.path, f.cell or 0, f.span.line, f.rule_id)})
    entries.sort(key=lambda e: e.pop("_order"))
    data = {"format": FORMAT, "tool": f"neuron-migrator {__version__}", "paths": "relative to the project root",
            "findings": entries}
    from migrator.core.fsutil import replace_file

    replace_file(Path(path), (json.dumps(data, indent=1) + "\n").encode("utf-8"))
    return len(entries)


def read_baseline(path: Path) -> Counter[str]:
    """Fingerprint -> count. Raises BaselineError naming the file (also for a FIFO, a huge or
    deeply nested file, or entries that are not `{"fingerprint": "<hex>"}` objects)."""
    from migrator.core.fsutil import read_limited

    try:
        raw = read_limited(path, 256 * 1024 * 1024)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"{path}: not a neuron-migrator baseline: {str(exc)[:200] or 'nested too deeply'}") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: not a neuron-migrator baseline (expected a JSON object)")
    if data.get("format") not in READABLE:
        raise BaselineError(f"{path}: unsupported baseline format {data.get('format')!r} "
                            f"(expected {' or '.join(map(str, READABLE))})")
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: not a neuron-migrator baseline: 'findings' must be a list")
    fingerprints = []
    for number, entry in enumerate(entries):
        value = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(value, str):
            raise BaselineError(f"{path}: findings[{number}]: expected an object with a string 'fingerprint'")
        fingerprints.append(value)
    return Counter(fingerprints)


def filter_new(findings: Sequence[Finding], baseline: Counter[str], root: Path | None = None) -> list[Finding]:
    """Findings not covered by the baseline (each baseline entry covers one finding).

    With `root` (see `project_root`) an entry matches by the root-relative fingerprint of
    format 2 or the as-given one of format 1; without it, only by the as-given one.
    """
    left = Counter(baseline)
    new = []
    for finding in findings:
        key = next((k for k in _keys(finding, root) if left[k] > 0), None)
        if key is None:
            new.append(finding)
        else:
            left[key] -= 1
    return new
