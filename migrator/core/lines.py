"""Lines as Python, shells and pip count them, and text made safe to print.

Lines as Python, shells and pip count them: split on `\\n`, `\\r\\n` and `\\r` only.

`str.splitlines` also splits on form feed, U+2028, U+0085 and other separators, which are
ordinary characters inside a line to every tool that reads these files; splitting on them
misplaces findings and made `fix` corrupt a requirements file.
"""

from __future__ import annotations

import re

__all__ = ["split_lines", "printable", "line_opcodes"]

_EOL = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text.splitlines(keepends)` with only `\\n`, `\\r\\n` and `\\r` as line ends."""
    parts = text.split("\n") if "\r" not in text else _EOL.split(text)
    if keepends and "\r" not in text:
        parts = [p + "\n" for p in parts[:-1]] + [parts[-1]]
    if parts and parts[-1] == "":
        parts.pop()
    if keepends:
        return parts
    return [p[:-2] if p.endswith("\r\n") else p[:-1] if p.endswith(("\n", "\r")) else p for p in parts]


def line_opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """`difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()`, with the lines
    both lists start and end with matched before the diff.

    Without junk, a matcher's cost grows with the square of how often a line repeats (blank
    lines, closing brackets): on a large file a fix changes in a few places, the diff of the
    whole file was the longest step of its edits. The common head and tail are what the
    matcher's longest blocks would be in the usual case; only the stretch between them is diffed.
    """
    import difflib

    head, limit = 0, min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    a, b = old[head:len(old) - tail], new[head:len(new) - tail]
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if a or b else ():
        if tag == "equal" and ops and ops[-1][0] == "equal":
            ops[-1] = ("equal", ops[-1][1], head + i2, ops[-1][3], head + j2)
        else:
            ops.append((tag, head + i1, head + i2, head + j1, head + j2))
    if tail:
        if ops and ops[-1][0] == "equal":
            ops[-1] = ("equal", ops[-1][1], len(old), ops[-1][3], len(new))
        else:
            ops.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return ops


def printable(text: str) -> str:
    """`text` safe to show on a terminal or in a log: control and format characters (escape
    sequences, carriage returns, bidirectional overrides) become `\\x1b`-style escapes.

    File names and flagged code come from the scanned repository; printed raw, an escape
    sequence in either could rewrite what the terminal shows.
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)
