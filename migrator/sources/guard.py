"""Refuse Python sources that would crash or stall the parser, before libcst sees them.

libcst's native parser overflows its stack (a segfault: the whole run dies) on about 3,000
nested brackets or 100,000 unary minus signs, and takes minutes on a 3,000-term `a + b + ...`
chain. CPython's own parser refuses most of these cheaply ("too many nested parentheses" past
200 levels, RecursionError or MemoryError on deep expressions), so it runs first; a source it
accepts is also bounded in syntax-tree depth (CPython measures it while it builds the tree),
which bounds both libcst's time and our own recursive passes. Cost: CPython's parse, about 4%
of a libcst parse (0.65 s against 14.6 s on PyTorch's largest file, 1.3 MiB).
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
import warnings

__all__ = ["MAX_DEPTH", "MAX_LINES", "too_complex", "checked_tree"]

# Deep enough for any hand-written or usual generated code (PyTorch's deepest file: 30 levels).
MAX_DEPTH = 800
# libcst needs about 9 KB of memory per short line (1.3 M lines of `x = 1`: 11.7 GB); PyTorch's
# longest file has 27,820 lines.
MAX_LINES = 150_000
_BRACKETS = bytes(range(256)).translate(None, b"()[]{}")
_UNARY_RUN = re.compile(rb"(?:[-+~]\s*){200}|(?:\bnot\s+){200}|(?:\blambda\b[^:]{0,40}:\s*){200}")


def too_complex(source: bytes | str) -> str | None:
    """Why `source` must not be given to libcst, or None when it is safe to parse."""
    return checked_tree(source)[0]


def checked_tree(source: bytes | str) -> tuple[str | None, ast.Module | None]:
    """`too_complex`'s answer and the `ast` tree CPython built on the way (None when it did not
    parse), so the scan can reuse the tree instead of parsing twice (prune.py)."""
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    lines = raw.count(b"\n")
    if lines > MAX_LINES:
        return f"{lines:,} lines (limit {MAX_LINES:,})", None
    try:
        with warnings.catch_warnings(), _ast_depth_limit(MAX_DEPTH):
            warnings.simplefilter("ignore")  # SyntaxWarning: invalid escape sequences and the like
            tree = ast.parse(raw)
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg):
            return "more than 200 nested brackets (Python's own limit)", None
        # Newer syntax than this interpreter's, or a real error libcst will report: only
        # the lexical hazards need refusing here.
        return _lexical(raw), None
    except RecursionError:
        return f"a syntax tree more than {MAX_DEPTH} levels deep", None
    except MemoryError:
        return "an expression nested too deeply for Python's parser", None
    except ValueError:  # null bytes
        return "the file contains null bytes", None
    return None, tree


@contextlib.contextmanager
def _ast_depth_limit(depth: int):
    """Make `ast.parse` itself refuse a tree deeper than about `depth` (measured by CPython
    while it builds the tree, so no walk over it is needed): CPython 3.11 allows three tree
    levels per unit of recursion limit left above the caller's frames."""
    frames = 0
    frame = sys._getframe()
    while frame is not None:
        frames += 1
        frame = frame.f_back
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(frames + depth // 3 + 2)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _lexical(raw: bytes) -> str | None:
    depth = best = 0
    for byte in raw.translate(None, _BRACKETS):
        if byte in b"([{":
            depth += 1
            if depth > best:
                best = depth
        elif depth:
            depth -= 1
    if best > 200:
        return "more than 200 nested brackets (Python's own limit)"
    if _UNARY_RUN.search(raw):
        return "an expression nested too deeply to parse"
    return None
