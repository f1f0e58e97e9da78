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
from typing import Iterable, Iterator, Optional, Sequence

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
    text: Optional[list] = None  # the generated tokens, when they are to be checked

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)
            if self.text is not None:
                self.text.append(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)
        if self.text is not None:
            self.text.append(value)

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


def node_ranges(module: cst.Module, source: str, nodes: Iterable[cst.CSTNode], statement_lines: Sequence[int] | None = None,
                owners: dict[int, int] | None = None) -> dict[int, tuple[int, int, int, int]]:
    """Map id(node) -> (line, column, end_line, end_column), 1-based lines, 0-based columns.

    Args:
        module: the parsed module (the nodes must belong to it).
        source: exactly `module.code` (the decoded file text).
        statement_lines: the line each statement of `module.body` starts on (its first
            decorator or token: from CPython's `ast` of the same text), and
        owners: id(node) -> the index in `module.body` of the statement holding it. With both,
            only the statements holding `nodes` are generated, each placed at its line and
            checked against `source` text for text; on any difference the whole module is.
    """
    nodes = list(nodes)
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
    ranges = None
    if statement_lines is not None and owners is not None and len(statement_lines) == len(module.body):
        ranges = _statement_ranges(module, source, nodes, starts, statement_lines, owners)
    if ranges is None:
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline,
                             targets=frozenset(id(n) for n in nodes))
        module._codegen(state)
        ranges = state.ranges

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line]

    return {key: (*where(a), *where(b)) for key, (a, b) in ranges.items()}


def _statement_ranges(module: cst.Module, source: str, nodes: list[cst.CSTNode], starts: list[int],
                      statement_lines: Sequence[int], owners: dict[int, int]) -> dict[int, tuple[int, int]] | None:
    """Offsets of `nodes` from generating only the statements that hold them, or None."""
    by_statement: dict[int, set[int]] = {}
    for node in nodes:
        owner = owners.get(id(node))
        if owner is None:
            return None
        by_statement.setdefault(owner, set()).add(id(node))
    ranges: dict[int, tuple[int, int]] = {}
    for index, targets in by_statement.items():
        statement = module.body[index]
        line = statement_lines[index] - len(statement.leading_lines)  # its code starts with them
        if not 1 <= line <= len(starts):
            return None
        begin = starts[line - 1]
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline,
                             targets=frozenset(targets), text=[])
        statement._codegen(state)
        text = "".join(state.text)
        if index == len(module.body) - 1 and not module.has_trailing_newline:
            text = text.removesuffix("\n").removesuffix("\r")  # the module drops it (as pop_trailing_newline)
        if not source.startswith(text, begin):
            return None  # not where the ast put it: let the module's own generation decide
        ranges.update((key, (a + begin, b + begin)) for key, (a, b) in state.ranges.items())
    return ranges
