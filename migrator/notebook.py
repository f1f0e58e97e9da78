"""Jupyter notebooks as one Python module: code cells joined, IPython magics masked.

Lines of the joined module map back to (cell number, line in cell); cell numbers are 1-based
over all cells, as Jupyter shows them. `!cmd` lines and `%%bash` cells are returned as shell
text so shell rules see them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import nbformat

__all__ = ["JoinedNotebook", "join_cells", "split_cells"]

_MARK = "# nrn-cell {index}"
_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_MASK = "pass  # nrn-magic {key}"
_SHELL_CELLS = ("%%bash", "%%sh", "%%script bash", "%%script sh")


@dataclass
class JoinedNotebook:
    """A notebook's code as one module."""

    notebook: nbformat.NotebookNode
    source: str
    line_map: list[tuple[int, int]]  # joined line (0-based index) -> (cell, line)
    magics: dict[str, str] = field(default_factory=dict)
    shell: list[tuple[int, int, str]] = field(default_factory=list)  # (cell, first line, text)

    def locate(self, line: int) -> tuple[int, int]:
        return self.line_map[min(line, len(self.line_map)) - 1]


def join_cells(text: str) -> JoinedNotebook:
    """Parse notebook JSON text.

    Raises:
        ValueError: not a notebook (bad JSON or schema).
    """
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types
        raise ValueError(f"not a readable notebook: {exc}") from None
    out: list[str] = []
    line_map: list[tuple[int, int]] = []
    joined = JoinedNotebook(nb, "", line_map)
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        out.append(_MARK.format(index=index))
        line_map.append((index, 1))
        lines = cell.source.splitlines()
        if lines and lines[0].strip().startswith(_SHELL_CELLS):
            joined.shell.append((index, 2, "\n".join(lines[1:])))
        for n, line in enumerate(lines, start=1):
            m = _MAGIC.match(line)
            if m or (lines[0].startswith("%%") and n > 0 and lines[0].strip().startswith(_SHELL_CELLS)):
                key = f"{index}.{n}"
                joined.magics[key] = line
                indent = m.group(1) if m else ""
                if m and m.group(2).startswith("!"):
                    joined.shell.append((index, n, m.group(2)[1:]))
                line = f"{indent}{_MASK.format(key=key)}"
            out.append(line)
            line_map.append((index, n))
    joined.source = "\n".join(out) + "\n"
    return joined


def split_cells(joined: JoinedNotebook, new_source: str) -> str:
    """Write `new_source` (the joined module after a fix) back into the notebook's cells.

    Outputs, metadata and non-code cells are untouched. Returns the notebook JSON text.
    """
    cells: dict[int, list[str]] = {}
    current: int | None = None
    preamble: list[str] = []
    for line in new_source.splitlines():
        m = re.fullmatch(r"# nrn-cell (\d+)", line)
        if m:
            current = int(m.group(1))
            cells[current] = []
            continue
        masked = re.search(r"pass  # nrn-magic (\d+\.\d+)$", line)
        if masked:
            line = joined.magics[masked.group(1)]
        (cells[current] if current is not None else preamble).append(line)
    nb = joined.notebook
    first = True
    for index, cell in enumerate(nb.cells, start=1):
        if index in cells:
            body = (preamble if first else []) + cells[index]
            first = False
            trailing = "\n" if cell.source.endswith("\n") else ""
            cell.source = "\n".join(body) + trailing
    return nbformat.writes(nb) + "\n"
