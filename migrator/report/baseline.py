"""Baselines: accept today's findings, fail only on new ones.

A baseline file records each finding's fingerprint (a hash of rule id, path and the flagged
source text, so it survives lines moving) with a count, since the same text can be flagged
more than once in a file.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Sequence

from migrator.core.version import __version__
from migrator.core.findings import Finding

__all__ = ["BaselineError", "write_baseline", "read_baseline", "filter_new"]

FORMAT = 1


class BaselineError(ValueError):
    """The baseline file is missing or malformed."""


def write_baseline(findings: Sequence[Finding], path: Path) -> int:
    """Write `findings` to `path` (JSON); returns how many were recorded."""
    entries = [
        {"fingerprint": f.fingerprint, "rule_id": f.rule_id, "path": f.path, "message": f.message}
        for f in sorted(findings, key=lambda f: (f.path, f.cell or 0, f.span.line, f.rule_id))
    ]
    data = {"format": FORMAT, "tool": f"neuron-migrator {__version__}", "findings": entries}
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
    if data.get("format") != FORMAT:
        raise BaselineError(f"{path}: unsupported baseline format {data.get('format')!r} (expected {FORMAT})")
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


def filter_new(findings: Sequence[Finding], baseline: Counter[str]) -> list[Finding]:
    """Findings not covered by the baseline (each baseline entry covers one finding)."""
    left = Counter(baseline)
    new = []
    for finding in findings:
        if left[finding.fingerprint] > 0:
            left[finding.fingerprint] -= 1
        else:
            new.append(finding)
    return new
