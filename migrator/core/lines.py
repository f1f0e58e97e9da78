"""Lines as Python, shells and pip count them, and text made safe to print.

Lines as Python, shells and pip count them: split on `\\n`, `\\r\\n` and `\\r` only.

`str.splitlines` also splits on form feed, U+2028, U+0085 and other separators, which are
ordinary characters inside a line to every tool that reads these files; splitting on them
misplaces findings and made `fix` corrupt a requirements file.
"""

from __future__ import annotations

import re

__all__ = ["split_lines", "printable"]

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
