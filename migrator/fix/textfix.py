"""Fixes of shell scripts, Dockerfiles and requirements files: line edits, no parsing.

Kept apart from `fixer` so that fixing a text file never imports libcst's codemod machinery.
"""

from __future__ import annotations

import re
from typing import Any

from migrator.core.findings import Finding
from migrator.core.lines import split_lines
from migrator.fix.outcome import FixOutcome, allowed

__all__ = ["fix_text_lines", "match_replacements"]


def fix_text_lines(text: str, findings: list[Finding], target: str, *, unsafe: bool = False,
                   file_kind: str = "") -> FixOutcome:
    """Apply `text` fixes (shell, Dockerfile, requirements) line by line.

    A fix entry gives `replace` (a replacement for the match) or `replace_map` (pairs of
    pattern and replacement tried on the matched text), optionally `when` (a pattern the whole
    line must match) and `add_lines` (lines the file must have once fixed, each unless a
    substring shows it already does, added after the leading comments). Every occurrence on the
    line is rewritten, each rule on the line's current text, so fixes of two rules on one line
    compose.
    """
    lines = split_lines(text, keepends=True)
    outcome = FixOutcome(text)
    wanted: list[dict[str, str]] = []
    for finding in findings:
        entry = finding.plan.rule.fix_for(target) if finding.plan and finding.plan.rule.fix else None
        if entry is not None and "when" in entry and not re.search(entry["when"], lines[finding.span.line - 1]):
            outcome.manual.append((finding, entry.get("when_not", "this use has no mechanical equivalent")))
            continue
        reason = allowed(finding, unsafe)
        if reason or entry is None or not ("replace" in entry or "replace_map" in entry):
            outcome.manual.append((finding, reason or "no automatic fix for this target"))
            continue
        idx = finding.span.line - 1
        pattern = finding.plan.context["match"].re
        line = lines[idx]
        missing: list[str] = []

        def substitute(match: re.Match[str]) -> str:
            replacement = _text_replacement(match, entry)
            if replacement is None:
                missing.append(match.group(0))
                return match.group(0)
            return replacement

        new = pattern.sub(substitute, line)
        if missing and new == line:
            outcome.manual.append((finding, f"no automatic fix for '{missing[0]}'"))
            continue
        if new != line:
            lines[idx] = new
            outcome.applied.append(finding)
            extra = entry.get("add_lines")
            if extra and file_kind in extra["file_kinds"]:
                wanted.extend(x for x in extra["lines"] if x not in wanted)
    _add_lines(lines, wanted)
    outcome.source = "".join(lines)
    return outcome


def match_replacements(line: str, finding: Finding, target: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each match of `finding`'s pattern on `line` that its fix
    rewrites, 0-based columns: the edits of that fix on its line, exactly where it changes text."""
    entry = finding.plan.rule.fix_for(target) if finding.plan and finding.plan.rule.fix else None
    if entry is None or not ("replace" in entry or "replace_map" in entry):
        return []
    out = []
    for match in finding.plan.context["match"].re.finditer(line):
        replacement = _text_replacement(match, entry)
        if replacement is not None and replacement != match.group(0):
            out.append((match.start(), match.end(), replacement))
    return out


def _add_lines(lines: list[str], wanted: list[dict[str, str]]) -> None:
    """Insert each wanted line after the leading comments unless the text already has its `unless`."""
    current = "".join(lines)
    missing = [w["line"] for w in wanted if w["unless"] not in current]
    if not missing:
        return
    ending = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith("#"):
        at += 1
    if lines and not lines[-1].endswith(("\n", "\r")) and at == len(lines):
        lines[-1] += ending
    lines[at:at] = [line + ending for line in missing]


def _text_replacement(match: re.Match[str], entry: dict[str, Any]) -> str | None:
    if "replace" in entry:
        return match.expand(entry["replace"])
    for pattern, replacement in entry["replace_map"]:
        if re.search(pattern, match.group(0)):
            return re.sub(pattern, replacement, match.group(0))
    return None
