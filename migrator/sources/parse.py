"""libcst's `parse_module` without the per-node validation it runs while building the tree.

Every libcst node checks itself when it is constructed (`CSTNode.__post_init__` calls
`_validate`: whitespace nodes match regular expressions, parentheses are counted, ...). On a
tree the parser builds from source that CPython has already parsed (guard.py) the checks cannot
fail, yet they are about a third of the parse (libcst's own note in `CSTNode.__post_init__`:
"It might make more sense to move validation work into the visitor, which would allow us to
avoid validating the tree when parsing a file"). The scan reads the tree and never builds
nodes, so it parses with the checks switched off; nodes built afterwards (the fixer's) are
validated as always.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import libcst as cst
from libcst._nodes.base import CSTNode

__all__ = ["parse_module"]

_LOCK = threading.Lock()


def _skip_validation(self: CSTNode) -> None:
    return None


@contextlib.contextmanager
def _unvalidated() -> Iterator[None]:
    with _LOCK:
        original = CSTNode.__dict__["__post_init__"]
        CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign]
        try:
            yield
        finally:
            CSTNode.__post_init__ = original  # type: ignore[method-assign]


def parse_module(source: bytes | str) -> cst.Module:
    """`libcst.parse_module(source)`, building the nodes without validating each one.

    Raises:
        libcst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError, RecursionError:
            as libcst.parse_module.
    """
    with _unvalidated():
        return cst.parse_module(source)
