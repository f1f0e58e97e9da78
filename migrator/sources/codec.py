"""Bytes to text and back for every file kind: Python by its coding cookie or BOM (PEP 263),
other files as UTF-8, UTF-16/32 with a BOM, else Latin-1 (lossless); and the checks that keep a
Python source away from libcst when parsing it would be unsafe (see guard.py)."""

from __future__ import annotations

import codecs

__all__ = ["wide_encoding", "decode_text", "python_encoding", "decode_python", "before_text", "encode",
           "prefilter_text", "unparsable", "checked"]


# UTF-32 first: its little-endian BOM starts with UTF-16's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def wide_encoding(data: bytes) -> str | None:
    """`utf-16-le` and the like for a UTF-16/32 file (by its BOM), else None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def decode_text(data: bytes) -> str:
    """Text of a non-Python file: UTF-8 (BOM allowed), UTF-16/32 with a BOM (Windows editors
    save requirements files so), else Latin-1 as a lossless fallback."""
    wide = wide_encoding(data)
    if wide:
        try:
            return data[4 if "32" in wide else 2:].decode(wide)
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def python_encoding(data: bytes) -> str:
    """The codec Python reads `data` with (coding cookie or BOM; PEP 263). Raises SyntaxError."""
    import io
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def decode_python(data: bytes) -> str:
    """Python source text by its coding cookie or BOM, as Python reads it (no parse: a source
    libcst cannot parse safely must still be shown and left alone).

    Raises:
        SyntaxError, LookupError, UnicodeDecodeError: a bad cookie or undecodable bytes.
    """
    return data.decode(python_encoding(data))


def before_text(data: bytes, kind: str) -> str:
    try:
        return decode_python(data) if kind == "python" else decode_text(data)
    except Exception:  # noqa: BLE001
        return decode_text(data)


def encode(text: str, original: bytes, kind: str) -> bytes:
    """Encode like the original: Python by its own coding cookie/BOM (libcst), others UTF-8/BOM."""
    import libcst as cst

    if kind == "python":
        # What libcst's Module.bytes does (the code in the module's encoding), without generating
        # the code again from a tree: that recurses once per level of a long `and` chain.
        return text.encode(cst.parse_module(original).encoding)
    wide = wide_encoding(original)
    if wide:
        return original[:4 if "32" in wide else 2] + text.encode(wide)
    bom = original.startswith(b"\xef\xbb\xbf")
    try:
        original.decode("utf-8-sig")
        return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    except UnicodeDecodeError:
        return text.encode("latin-1")


def prefilter_text(raw: bytes) -> bytes:
    """The bytes the prefilter looks at: the source itself, or, under a coding cookie for a
    codec that is not ASCII-compatible (`utf-7`, `unicode_escape`: Python runs such a file),
    the decoded text, so a cookie cannot hide `torch.cuda` from the scan."""
    if b"coding" not in raw[:400]:
        return raw
    try:
        encoding = python_encoding(raw)
    except (SyntaxError, LookupError):
        return raw
    if encoding in ("utf-8", "utf-8-sig", "ascii", "latin-1", "iso-8859-1") or encoding.startswith(("iso-8859", "cp125")):
        return raw
    try:
        return raw.decode(encoding).encode("utf-8", "surrogatepass")
    except (UnicodeDecodeError, LookupError, ValueError):
        return raw


def unparsable(raw: bytes) -> str | None:
    """Why a Python source must not reach libcst (see guard.py), or None."""
    return checked(raw)[0]


def checked(raw: bytes):
    """`unparsable`'s answer and the `ast` tree of the source (None when not parsed)."""
    from migrator.sources.guard import checked_tree

    if wide_encoding(raw):
        return f"encoded as {wide_encoding(raw)[:6].upper()}, which Python cannot run; save it as UTF-8", None
    if b"\x00" in raw:
        return "the file contains null bytes (binary, or UTF-16 without a byte-order mark)", None
    return checked_tree(raw)
