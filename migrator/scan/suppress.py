"""Suppression comments, parsed in one place (ruff-compatible).

- `# noqa: NRN101` on any line of a finding suppresses that rule there (several codes may be
  given, comma- or space-separated; a prefix such as `NRN2` suppresses the whole range);
  a bare `# noqa` suppresses every rule on the line.
- A line `# neuron-migrator: noqa` suppresses the whole file; `# neuron-migrator: noqa: NRN2`
  only those rules.
- With `report_unused`, an `NRN` code in a `# noqa` comment that suppressed nothing becomes an
  `NRN001 unused-noqa` finding (like ruff's RUF100).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from migrator.core.catalogue import tool_finding
from migrator.core.findings import Finding, Span

__all__ = ["apply_suppressions", "python_comment_lines"]

_CODES = r"[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*"
NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE)
FILE_NOQA = re.compile(rf"^\s*#\s*neuron-migrator:\s*noqa(?::\s*(?P<codes>{_CODES}))?\s*$", re.IGNORECASE)


def python_comment_lines(lines: Sequence[str]) -> list[str]:
    """`lines` of Python source with everything but comments blanked, columns kept.

    `# noqa` counts only in a real comment: inside a string literal (`"# noqa"`, a docstring)
    it suppresses nothing. Code before a comment becomes `_`, so a file-level
    `# neuron-migrator: noqa` still has to stand alone on its line. A source that does not
    tokenize (newer syntax than this Python's) keeps its lines as they are.
    """
    if not any("noqa" in line.lower() for line in lines):
        return list(lines)
    import io
    import tokenize

    out = [""] * len(lines)
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                if row - 1 < len(out):
                    before = lines[row - 1][:col]
                    out[row - 1] = re.sub(r"\S", "_", before) + tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError, RecursionError):
        return list(lines)
    return out


def _split(codes: str | None) -> list[str] | None:
    return None if codes is None else [c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c]


def _covers(codes: list[str] | None, rule_id: str) -> bool:
    return codes is None or any(rule_id.startswith(c) for c in codes)


def apply_suppressions(findings: Sequence[Finding], lines_of: Callable[[int | None], Sequence[str]], *,
                       path: str, cells: Sequence[int | None] = (None,), report_unused: bool = False) -> list[Finding]:
    """Drop suppressed findings; with `report_unused`, add NRN001 for unused noqa codes.

    Args:
        lines_of: returns the text lines of the file (or of a notebook cell, given its number).
        path: the file's reported path; cells: the cells to check for unused codes (None = file).
    """
    kept: list[Finding] = []
    used: dict[tuple[int | None, int], set[str]] = {}
    file_codes: dict[int | None, list[list[str] | None]] = {}
    line_codes: dict[tuple[int | None, int], tuple[list[str] | None] | None] = {}  # a line's noqa codes, if it has a noqa

    def file_level(cell: int | None) -> list[list[str] | None]:
        if cell not in file_codes:
            file_codes[cell] = [_split(m.group("codes")) for line in lines_of(cell) if (m := FILE_NOQA.match(line))]
        return file_codes[cell]

    for finding in findings:
        if finding.rule_id.startswith("NRN00"):
            kept.append(finding)
            continue
        if any(_covers(codes, finding.rule_id) for codes in file_level(finding.cell)):
            continue
        lines = lines_of(finding.cell)
        suppressed = False
        for lineno in range(finding.span.line, min(finding.span.end_line, len(lines)) + 1):
            key = (finding.cell, lineno)
            if key not in line_codes:  # each line read once, however many findings it holds
                m = NOQA.search(lines[lineno - 1]) if lineno - 1 < len(lines) else None
                line_codes[key] = (_split(m.group("codes")),) if m and not FILE_NOQA.match(lines[lineno - 1]) else None
            entry = line_codes[key]
            if entry is not None:
                codes = entry[0]
                if _covers(codes, finding.rule_id):
                    suppressed = True
                    used.setdefault((finding.cell, lineno), set()).update(
                        c for c in (codes or []) if finding.rule_id.startswith(c))
                    break
        if not suppressed:
            kept.append(finding)
    if report_unused:
        kept.extend(_unused(lines_of, used, path, list(cells)))
        kept.sort(key=lambda f: (f.cell or 0, f.span.line, f.span.column, f.rule_id))
    return kept


def _unused(lines_of: Callable[[int | None], Sequence[str]], used: dict, path: str, cells: list) -> list[Finding]:
    out = []
    for cell in cells:
        for lineno, line in enumerate(lines_of(cell), start=1):
            m = NOQA.search(line)
            if not m or FILE_NOQA.match(line) or m.group("codes") is None:
                continue
            stale = [c for c in _split(m.group("codes")) if c.startswith("NRN") and c not in used.get((cell, lineno), set())]
            if stale:
                out.append(tool_finding(
                    "NRN001", path, Span(lineno, m.start() + 1, lineno, m.end() + 1), cell=cell, snippet=line.strip(),
                    codes=f"code{'s' if len(stale) > 1 else ''}: {', '.join(stale)}",
                ))
    return out
