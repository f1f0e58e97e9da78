"""The Markdown report (GitHub-flavoured, for a pull-request comment or a CI job summary);
data is escaped so that a hostile name cannot break a table or inject HTML."""

from __future__ import annotations

import re
from urllib.parse import quote

from migrator.assess.render.layout import (
    Assessment,
    Bullets,
    Cell,
    Grid,
    Link,
    Para,
    _heading,
    _sections,
)
from migrator.core.lines import printable

# --------------------------------------------------------------------------- Markdown

_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Characters that start emphasis, code, links, strikethrough, math or a table cell in GitHub
# Markdown; a backslash makes each literal.
_MD_PUNCT = set("\\`*_[]|~$")


def _md(text: str) -> str:
    """`text` as literal GitHub Markdown inline content: no HTML, no table breaks, no formatting."""
    out = []
    for ch in printable(text):  # newlines and other controls become visible `\x0a`-style escapes
        if ch in _MD_ESCAPES:
            out.append(_MD_ESCAPES[ch])
        elif ch in _MD_PUNCT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _md_lead(text: str) -> str:
    """`_md(text)` for the start of a line, where `#`, `+`, `-`, `=` or `1.` would begin a
    heading or a list."""
    out = _md(text)
    if out[:1] in ("#", "+", "-", "="):
        return "\\" + out
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", out)


def _md_url(url: str) -> str:
    # characters that would end the link destination or the table cell
    return quote(url, safe=":/?#@!$&'*+,;=%-._~[]")


def _md_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f"[{_md(cell.text)}]({_md_url(cell.url)})"
    return _md(cell) if cell else " "


def _md_grid(grid: Grid) -> list[str]:
    lines = [f"**{_md(grid.title)}**", ""] if grid.title else []
    lines.append("| " + " | ".join(_md(c) for c in grid.columns) + " |")
    lines.append("| " + " | ".join("---:" if i in grid.numeric else "---" for i in range(len(grid.columns))) + " |")
    for i, row in enumerate(grid.rows):
        cells = [_md_cell(c) for c in row]
        if grid.total and i == len(grid.rows) - 1:
            cells = [f"**{c}**" if c.strip() else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def to_markdown(assessment: Assessment) -> str:
    """The assessment as GitHub Markdown (a PR comment, a CI job summary): `##` sections, pipe tables."""
    title, context = _heading(assessment)
    lines = [f"**{_md(title)}**" + (f" · {_md(context)}" if context else ""), ""]
    for section in _sections(assessment):
        lines += [f"## {_md(section.title)}", ""]
        for block in section.blocks:
            if isinstance(block, Para):
                lines.append(f"**{_md(block.label)}:** {_md(block.text)}" if block.label else _md_lead(block.text))
            elif isinstance(block, Bullets):
                if block.title:
                    lines += [f"**{_md(block.title)}**", ""]
                lines += [f"- {_md_lead(item)}" for item in block.items]
            else:
                lines += _md_grid(block)
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


