"""Which setting each line of a pyproject.toml or setup.cfg belongs to, for text rules that read
only some settings (`in_keys`: a package in the project's dependencies, not in a tool's options).

The files are read line by line, as text rules read them, not loaded: a line's key is known even
where the rest of the file does not parse, and nothing in the file is evaluated.

- pyproject.toml (TOML): `[table]` and `[[array.of.tables]]` headers, `key = value` lines, and
  the lines of a multi-line array or string belong to their key. A key is dotted from its
  table: `project.dependencies`, `tool.poetry.dependencies.flash-attn`.
- setup.cfg (INI): `[section]` headers, `key = value` (or `key: value`) lines at the left
  margin, and the indented lines after them belong to `section.key`: `options.install_requires`.
"""

from __future__ import annotations

import re

__all__ = ["key_paths"]

_HEADER = re.compile(r"^[ \t]*\[\[?(?P<name>[^\[\]]+?)\]\]?[ \t]*(?:#.*)?$")
_TABLE_START = re.compile(r"\[\[?[A-Za-z_]")  # a table header's start at the left margin
_TOML_KEY = re.compile(r"""^[ \t]*(?P<key>(?:"[^"\n]*"|'[^'\n]*'|[\w-]+)(?:[ \t]*\.[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[\w-]+))*)[ \t]*=(?P<rest>.*)$""")


def _dotted(name: str) -> str:
    """`tool . "poetry" .dependencies` -> `tool.poetry.dependencies`."""
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s"\']+)', name)
    return ".".join(next(p for p in part if p) if any(part) else "" for part in parts)


def _depth(text: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open multi-line string after `text` (TOML strings and comments skipped)."""
    i = 0
    while i < len(text):
        if quote is not None:
            end = text.find(quote, i)
            if end == -1:
                return depth, quote
            i, quote = end + len(quote), None
            continue
        ch = text[i]
        if ch == "#":
            break
        if text.startswith(('"""', "'''"), i):
            quote = text[i:i + 3]
            i += 3
        elif ch in "\"'":
            end = text.find(ch, i + 1)
            while ch == '"' and end > 0 and text[end - 1] == "\\":
                end = text.find(ch, end + 1)
            i = len(text) if end == -1 else end + 1
        else:
            depth += (ch in "[{") - (ch in "]}")
            i += 1
    return max(depth, 0), quote


def key_paths(lines: list[str], kind: str) -> list[str]:
    """The setting each of `lines` belongs to ("" where none: headers, blank lines, text before a
    table), for `kind` "pyproject" (TOML) or "setupcfg" (INI); other kinds get "" for every line."""
    if kind == "pyproject":
        return _toml(lines)
    if kind == "setupcfg":
        return _ini(lines)
    return [""] * len(lines)


def _toml(lines: list[str]) -> list[str]:
    out: list[str] = []
    table, current = "", ""
    depth, quote = 0, None
    for line in lines:
        if quote is None and depth and _TABLE_START.match(line) and _HEADER.match(line):
            depth = 0  # `[tool.x]` at the margin is no array element: the array above lacks its `]`
        if depth or quote:  # inside a multi-line array, inline table or string
            out.append(current)
            depth, quote = _depth(line, depth, quote)
            continue
        header = _HEADER.match(line)
        if header:
            table, current = _dotted(header.group("name")), ""
            out.append("")
            continue
        key = _TOML_KEY.match(line)
        if key:
            current = ".".join(p for p in (table, _dotted(key.group("key"))) if p)
            out.append(current)
            depth, quote = _depth(key.group("rest"), 0, None)
            continue
        out.append("")
    return out


def _ini(lines: list[str]) -> list[str]:
    out: list[str] = []
    section, current = "", ""
    for line in lines:
        first = line[:1]
        header = _HEADER.match(line) if first == "[" else None
        if header:
            section, current = header.group("name").strip(), ""
            out.append("")
            continue
        if not line.strip() or first in ("#", ";"):
            out.append("")  # a blank or comment line: configparser goes on with the value above
            continue
        if first in (" ", "\t"):
            out.append(current)  # a continuation of the key above
            continue
        # `key = value` or `key: value`, split at the first `=` or `:` (not a regex: a long
        # line must cost its length, not its square).
        cut = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
        key = line[:cut].strip() if cut > 0 else ""
        current = f"{section}.{key}" if section and key else key
        out.append(current)
    return out
