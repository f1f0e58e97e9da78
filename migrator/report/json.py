"""`--format json`: a list of findings, each `Finding.to_dict()` (documented in the README)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from migrator.core.findings import Finding


def render_json(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2, sort_keys=False) + "\n"
