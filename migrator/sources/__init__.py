"""Source kinds: one registry of the file kinds the tool reads, each with its codec, scanner
and fixer (`source_for`). `discover.file_kind` names a file's kind from its name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Source", "KINDS", "source_for"]

KINDS = ("python", "notebook", "shell", "dockerfile", "requirements", "conda", "pyproject", "setupcfg", "cuda", "yaml")


@dataclass(frozen=True)
class Source:
    """One file kind.

    Attributes:
        kind: the name (`python`, `notebook`, `shell`...).
        decode: bytes -> the text a reader sees and `fix` rewrites (codec.before_text).
        encode: (new text, original bytes) -> bytes in the original's encoding, BOM and cookie.
        scan: (raw, path, options, index, is_test, report_unused) -> findings.
        fix: (text, path, options, index, unsafe, is_test, only, partial) -> FixOutcome.
        edits: whether findings' positions are in the file as read, so fixes can carry edits
            (a notebook's lines are per cell).
        prepare_edits: (raw, path, options, index, findings) -> something whose `fix(unsafe)`
            gives the whole file's FixOutcome cheaper, or the reason it cannot (a str), or a str
            at once; the edits of a scan's JSON use it before `fix` (None: always `fix`).
    """

    kind: str
    decode: Callable[[bytes], str]
    encode: Callable[[str, bytes], bytes]
    scan: Callable[..., list]
    fix: Callable[..., object]
    edits: bool = True
    prepare_edits: Callable[..., object] | None = None


def source_for(kind: str) -> Source:
    """The registry entry of `kind` (modules load on first use: libcst is slow to import).

    Raises:
        KeyError: not a kind of KINDS.
    """
    from migrator.sources import codec

    if kind not in KINDS:
        raise KeyError(kind)
    if kind == "python":
        from migrator.sources import pruned_fix, python as module

        return Source(kind, lambda raw: codec.before_text(raw, kind), lambda text, raw: codec.encode(text, raw, kind),
                      module.scan, module.fix, prepare_edits=pruned_fix.prepare)
    if kind == "notebook":
        from migrator.sources import ipynb

        return Source(kind, lambda raw: codec.before_text(raw, kind), lambda text, raw: codec.encode(text, raw, kind),
                      ipynb.scan, ipynb.fix, edits=False)
    from migrator.sources import text

    return Source(kind, lambda raw: codec.before_text(raw, kind), lambda text, raw: codec.encode(text, raw, kind),
                  text.scanner(kind), text.fixer(kind))
