"""`--format github`: GitHub Actions workflow commands, one annotation per finding."""

from __future__ import annotations

from typing import Any, Sequence

from migrator.core.findings import Finding
from migrator.core.lines import printable

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    # Escape sequences would also reach the log viewer, which renders ANSI colours and moves.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(text)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    lines = []
    for f in findings:
        props = (f"file={_escape_property(f.path)},line={f.span.line},col={f.span.column},"
                 f"endLine={f.span.end_line},endColumn={f.span.end_column},title={_escape_property(f.rule_id + ' ' + f.rule_name)}")
        where = f" (cell {f.cell})" if f.cell else ""
        lines.append(f"::{_LEVEL[f.severity.value]} {props}::{_escape_data(f.rule_id + ' ' + f.message + where)}")
    return "\n".join(lines) + ("\n" if lines else "")
