"""Line/column ranges for a few nodes of a module, without libcst's PositionProvider.

PositionProvider computes a range for every node and splits every token on newlines; a scan
needs ranges only for the flagged nodes. This runs libcst's own code generation once,
counting characters, records start/end offsets for the requested nodes (the same syntactic
ranges PositionProvider gives), and turns offsets into lines and columns with the source text.
"""

from __future__ import annotations

import bisect
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

__all__ = ["node_ranges"]

_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass(frozen=False)
class _OffsetState(CodegenState):
    targets: frozenset = frozenset()
    offset: int = 0
    starts: dict = field(default_factory=dict)
    ranges: dict = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        pass  # offsets past the last node do not matter

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self.starts[id(node)] = self.offset

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.targets and key not in self.ranges:
            self.ranges[key] = (self.starts[key], self.offset)

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> Iterator[None]:
        if id(node) not in self.targets:
            yield
            return
        start = self.offset
        try:
            yield
        finally:
            self.ranges[id(node)] = (start, self.offset)


def node_ranges(module: cst.Module, source: str, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[int, int, int, int]]:
    """Map id(node) -> (line, column, end_line, end_column), 1-based lines, 0-based columns.

    Args:
        module: the parsed module (the nodes must belong to it).
        source: exactly `module.code` (the decoded file text).
    """
    state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline,
                         targets=frozenset(id(n) for n in nodes))
    module._codegen(state)
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line]

    return {key: (*where(a), *where(b)) for key, (a, b) in state.ranges.items()}
