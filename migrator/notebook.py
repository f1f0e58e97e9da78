"""Jupyter notebooks as one Python module: code cells joined, IPython magics masked.

Lines of the joined module map back to (cell number, line in cell); cell numbers are 1-based
over all cells, as Jupyter shows them. `!cmd` lines and `%%bash` cells are returned as shell
text so shell rules see them.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field

import nbformat

__all__ = ["JoinedNotebook", "join_cells", "split_cells"]

_MARK = "# nrn-cell {index}"
_MAGIC = re.compile(r"^(\s*)([%!].*)$")
# A line magic is masked as an import statement, so a magic among the first imports (`!pip install
# ...`) keeps the import block contiguous for fixes that add imports or definitions after it; the
# lines of a `%%` cell are masked as `pass`, so nothing is ever inserted into such a cell.
_MASK = "import nrn_magic  # nrn-magic {key}"
_CELL_MASK = "pass  # nrn-magic {key}"
_OPEN, _CLOSE = "([{", ")]}"
_SHELL_LINE = ("!", "%pip ", "%conda ", "%mamba ")
_SHELL_CELLS = ("%%bash", "%%sh", "%%script bash", "%%script sh")
# Cell magics whose body is Python run by the kernel (timed, captured, profiled): scanned and fixed
# as Python, with only the magic line masked.
_PYTHON_CELLS = {"%%time", "%%timeit", "%%capture", "%%prun", "%%debug"}


@dataclass
class JoinedNotebook:
    """A notebook's code as one module."""

    notebook: nbformat.NotebookNode
    source: str
    text: str
    line_map: list[tuple[int, int]]  # joined line (0-based index) -> (cell, line)
    magics: dict[str, str] = field(default_factory=dict)
    cell_magics: set[int] = field(default_factory=set)  # cells that start with `%%`
    shell: list[tuple[int, int, str]] = field(default_factory=list)  # (cell, first line, text)

    def locate(self, line: int) -> tuple[int, int]:
        return self.line_map[min(line, len(self.line_map)) - 1]


def join_cells(text: str) -> JoinedNotebook:
    """Parse notebook JSON text.

    Raises:
        ValueError: not a notebook (bad JSON or schema).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. MissingIDFieldWarning: the notebook is only read
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types
        raise ValueError(f"not a readable notebook: {exc}") from None
    out: list[str] = []
    line_map: list[tuple[int, int]] = []
    joined = JoinedNotebook(nb, "", text, line_map)
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        out.append(_MARK.format(index=index))
        line_map.append((index, 1))
        lines = cell.source.splitlines()
        cell_magic = bool(lines) and lines[0].lstrip().startswith("%%")
        python_body = cell_magic and lines[0].split()[0] in _PYTHON_CELLS
        if python_body:
            cell_magic = False
        if cell_magic:
            joined.cell_magics.add(index)
        if lines and lines[0].strip().startswith(_SHELL_CELLS):
            joined.shell.append((index, 2, "\n".join(lines[1:])))
        depth = 0
        continued = False
        for n, line in enumerate(lines, start=1):
            # `!=` or `% 3` continuing an open bracket or a backslash line is Python, not a magic.
            m = _MAGIC.match(line) if depth == 0 and not continued else None
            if m or cell_magic:
                key = f"{index}.{n}"
                joined.magics[key] = line
                indent = m.group(1) if m else ""
                if m and m.group(2).startswith(_SHELL_LINE) and not cell_magic:
                    joined.shell.append((index, n, m.group(2)[1:]))  # `!cmd`, `%pip install ...`
                line = f"{indent}{(_CELL_MASK if cell_magic else _MASK).format(key=key)}"
            else:
                depth = max(0, depth + sum(line.count(c) for c in _OPEN) - sum(line.count(c) for c in _CLOSE))
                continued = line.rstrip().endswith("\\")
            out.append(line)
            line_map.append((index, n))
    joined.source = "\n".join(out) + "\n"
    return joined


def locator(code: str):
    """Map a line of (possibly rewritten) joined code to (cell, line in cell), by its markers."""
    line_map: list[tuple[int, int]] = []
    cell, n = 0, 0
    for line in code.splitlines():
        m = re.fullmatch(r"# nrn-cell (\d+)", line)
        if m:
            cell, n = int(m.group(1)), 0
        else:
            n += 1
        line_map.append((cell or 1, max(n, 1)))

    def locate(line: int) -> tuple[int, int]:
        return line_map[min(line, len(line_map)) - 1] if line_map else (1, line)

    return locate


def split_cells(joined: JoinedNotebook, new_source: str) -> str:
    """Write `new_source` (the joined module after a fix) back into the notebook's cells.

    Outputs, metadata and non-code cells are untouched. Returns the notebook JSON text.
    """
    cells: dict[int, list[str]] = {}
    current: int | None = None
    preamble: list[str] = []
    carried: list[str] = []
    for line in new_source.splitlines():
        m = re.fullmatch(r"# nrn-cell (\d+)", line)
        if m:
            current = int(m.group(1))
            cells[current] = []
            continue
        masked = re.search(r"(?:import nrn_magic|pass)  # nrn-magic (\d+\.\d+)$", line)
        if masked:
            line = joined.magics[masked.group(1)]
        elif current in joined.cell_magics:
            carried.append(line)  # code a fix placed in a `%%` cell belongs to the next Python cell
            continue
        elif current is not None and carried and current not in joined.cell_magics:
            cells[current].extend(carried)
            carried = []
        (cells[current] if current is not None else preamble).append(line)
    # Edit the original JSON, not nbformat's model, so nothing but the changed sources differs
    # (no ids added, no other cells, outputs or metadata rewritten).
    raw = json.loads(joined.text)
    first = True
    for index, cell in enumerate(raw.get("cells", []), start=1):
        if index in cells:
            take_preamble = first and index not in joined.cell_magics
            body = (preamble if take_preamble else []) + cells[index]
            first = first and not take_preamble
            original = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            eol = "\r\n" if "\r\n" in original else "\n"  # keep the cell's own line endings
            new = eol.join(body) + (eol if original.endswith("\n") else "")
            if new != original:
                cell["source"] = new.splitlines(keepends=True) if isinstance(cell["source"], list) else new
    indent = _indent_of(joined.text)
    out = json.dumps(raw, indent=indent, ensure_ascii=joined.text.isascii())
    return out + ("\n" if joined.text.endswith("\n") else "")


def _indent_of(text: str) -> int | None:
    """The indentation the notebook was written with (nbformat writes 1), or None if compact."""
    m = re.search(r"\n( +)\"", text)
    return len(m.group(1)) if m else None
