"""Jupyter notebooks as one Python module: code cells joined, IPython magics masked.

Lines of the joined module map back to (cell number, line in cell); cell numbers are 1-based
over all cells, as Jupyter shows them. `!cmd` lines and `%%bash` cells are returned as shell
text so shell rules see them.

A notebook is hostile input: the JSON is read here, not by nbformat's validator, so one cell that
is not usable (not an object, no `cell_type`, a `source` that is not text) is recorded in
`JoinedNotebook.problems` and skipped while the other cells are scanned. A fix writes back only
the bytes of the `source` values it changed; everything else in the file stays as it was.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from json.decoder import scanstring

import nbformat

from migrator.core.lines import split_lines

__all__ = ["JoinedNotebook", "cell_code", "join_cells", "split_cells"]

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

JsonPath = tuple  # keys and list indices from the document root to one value
_MARKER = re.compile(r"# nrn-cell (\d+)")
_MASKED = re.compile(r"(?:import nrn_magic|pass)  # nrn-magic (\d+\.\d+)$")
@dataclass
class JoinedNotebook:
    """A notebook's code as one module.

    Attributes:
        notebook: the cells as nbformat 4 nodes, numbered as in the file: `cell_type`, and for a
            code cell `source` as one string (other cells have ""); a cell that could not be
            read is a placeholder with `cell_type` "unusable" and is listed in `problems`.
        source: the joined module.
        text: the notebook file's text, as given.
        line_map: joined line (0-based index) -> (cell, line in cell).
        magics: masked line key ("cell.line") -> the original line.
        cell_magics: cells that start with a `%%` magic whose body is not Python.
        shell: (cell, first line, text) of `!cmd` lines and `%%bash` cells.
        problems: (cell, message) for each cell that was skipped because it is not usable.
        source_paths: cell -> JSON path of its source value in `text` (used by `split_cells`).
    """

    notebook: nbformat.NotebookNode
    source: str
    text: str
    line_map: list[tuple[int, int]]  # joined line (0-based index) -> (cell, line)
    magics: dict[str, str] = field(default_factory=dict)
    cell_magics: set[int] = field(default_factory=set)  # cells that start with `%%`
    shell: list[tuple[int, int, str]] = field(default_factory=list)  # (cell, first line, text)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (cell, why it was skipped)
    source_paths: dict[int, JsonPath] = field(default_factory=dict)

    def locate(self, line: int) -> tuple[int, int]:
        return self.line_map[min(line, len(self.line_map)) - 1]


def _load(text: str) -> dict:
    try:
        raw = json.loads(text)
    except RecursionError:
        raise ValueError("not a readable notebook: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and int() of a number with too many digits
        raise ValueError(f"not a readable notebook: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"not a readable notebook: the top-level JSON value is not an object ({_json_type(raw)})")
    return raw


def _cells(raw: dict) -> tuple[list[tuple[object, JsonPath]], str]:
    """Every cell with its JSON path, over all worksheets for nbformat 2/3, and the source key."""
    if isinstance(raw.get("cells"), list):
        # nbformat 1 kept a code cell's text under "code"; nbformat 4 (and 1's other cells) "source".
        key = "code" if raw.get("nbformat") == 1 else "source"
        return [(cell, ("cells", i)) for i, cell in enumerate(raw["cells"])], key
    if "cells" in raw:
        raise ValueError("not a readable notebook: `cells` is not a list")
    sheets = raw.get("worksheets")
    if not isinstance(sheets, list):
        raise ValueError("not a readable notebook: no `cells` list")
    cells: list[tuple[object, JsonPath]] = []
    for w, sheet in enumerate(sheets):
        if not isinstance(sheet, dict) or not isinstance(sheet.get("cells", []), list):
            raise ValueError(f"not a readable notebook: worksheet {w + 1} has no `cells` list")
        cells += [(cell, ("worksheets", w, "cells", i)) for i, cell in enumerate(sheet.get("cells", []))]
    return cells, "input"  # nbformat 2/3 code cells keep their text under "input"


def _cell_source(cell: object, key: str) -> tuple[str, str, str | None]:
    """(cell type, source text, None), or ("", "", why the cell is not usable)."""
    if not isinstance(cell, dict):
        return "", "", f"cell is not a JSON object ({_json_type(cell)})"
    kind = cell.get("cell_type")
    if not isinstance(kind, str):
        return "", "", "cell has no `cell_type`"
    if kind != "code":
        return kind, "", None  # not scanned: its source does not matter
    if key not in cell:
        return "", "", f"code cell has no `{key}`"
    value = cell[key]
    if isinstance(value, list):
        bad = next((n for n, part in enumerate(value, start=1) if not isinstance(part, str)), None)
        if bad is not None:
            return "", "", f"`{key}` item {bad} is not a string ({_json_type(value[bad - 1])})"
        value = "".join(value)
    elif not isinstance(value, str):
        return "", "", f"`{key}` is not a string or a list of strings ({_json_type(value)})"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # `"\ud800"` decodes to a lone surrogate, which no parser takes
        return "", "", f"`{key}` holds a lone surrogate escape (not valid Unicode)"
    return kind, value, None


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def join_cells(text: str, skip: Iterable[int] = ()) -> JoinedNotebook:
    """Parse notebook JSON text.

    Args:
        text: the notebook file's text.
        skip: cell numbers to leave out of the joined module (e.g. a cell that does not parse);
            they are not recorded in `problems` and a fix leaves them as they are.

    Returns:
        The joined notebook; cells that are not usable are listed in `problems` and left out.

    Raises:
        ValueError: not a notebook (not JSON, not an object, no list of cells).
    """
    raw = _load(text)
    entries, key = _cells(raw)
    skipped = set(skip)
    nodes: list[nbformat.NotebookNode] = []
    out: list[str] = []
    line_map: list[tuple[int, int]] = []
    nb = nbformat.NotebookNode(nbformat=4, cells=nodes)  # the nbformat 4 view of any version
    joined = JoinedNotebook(nb, "", text, line_map)
    for index, (cell, path) in enumerate(entries, start=1):
        kind, source, problem = _cell_source(cell, key)
        if problem is not None:
            joined.problems.append((index, problem))
            nodes.append(nbformat.NotebookNode(cell_type="unusable", source=""))
            continue
        nodes.append(nbformat.NotebookNode(cell_type=kind, source=source))
        if kind != "code" or index in skipped:
            continue
        lines = split_lines(source)
        forged = next((n for n, line in enumerate(lines, start=1) if _MARKER.fullmatch(line) or _MASKED.search(line)),
                      None)
        if forged is not None:  # it would be read back as a cell boundary or a masked magic
            joined.problems.append(
                (index, f"line {forged} looks like one of this tool's markers (`# nrn-cell`, `# nrn-magic`)"))
            continue
        joined.source_paths[index] = path + (key,)
        out.append(_MARK.format(index=index))
        line_map.append((index, 1))
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
        magic_open: tuple[str, int | None] | None = None  # a line magic ending in `\`: (indent, its shell entry)
        for n, line in enumerate(lines, start=1):
            if magic_open is not None and not cell_magic:
                # IPython joins a line magic ending in a backslash with the next line
                # (`!pip install torch \` / `    --index-url ...`): one command, masked as one.
                magic_key = f"{index}.{n}"
                joined.magics[magic_key] = line
                indent, entry = magic_open
                if entry is not None:
                    cell_no, first, text = joined.shell[entry]
                    joined.shell[entry] = (cell_no, first, f"{text}\n{line}")
                magic_open = (indent, entry) if line.rstrip().endswith("\\") else None
                out.append(f"{indent}{_MASK.format(key=magic_key)}")
                line_map.append((index, n))
                continue
            # `!=` or `% 3` continuing an open bracket or a backslash line is Python, not a magic.
            m = _MAGIC.match(line) if depth == 0 and not continued else None
            if m or cell_magic:
                magic_key = f"{index}.{n}"
                joined.magics[magic_key] = line
                indent = m.group(1) if m else ""
                entry = None
                if m and m.group(2).startswith(_SHELL_LINE) and not cell_magic:
                    entry = len(joined.shell)
                    joined.shell.append((index, n, m.group(2)[1:]))  # `!cmd`, `%pip install ...`
                if m and not cell_magic and line.rstrip().endswith("\\"):
                    magic_open = (indent, entry)
                line = f"{indent}{(_CELL_MASK if cell_magic else _MASK).format(key=magic_key)}"
            else:
                depth = max(0, depth + sum(line.count(c) for c in _OPEN) - sum(line.count(c) for c in _CLOSE))
                continued = line.rstrip().endswith("\\")
            out.append(line)
            line_map.append((index, n))
    joined.source = "\n".join(out) + "\n"
    return joined


def cell_code(joined: JoinedNotebook) -> dict[int, str]:
    """The joined module's code of each cell (magics masked), as Jupyter compiles it: alone.

    Lets a caller find the cells that do not parse on their own and join again without them.
    """
    code: dict[int, list[str]] = {}
    for line, (cell, _) in zip(split_lines(joined.source), joined.line_map):
        if _MARKER.fullmatch(line):
            code[cell] = []
        else:
            code[cell].append(line)
    return {cell: "\n".join(lines) + "\n" for cell, lines in code.items()}


def locator(code: str):
    """Map a line of (possibly rewritten) joined code to (cell, line in cell), by its markers."""
    line_map: list[tuple[int, int]] = []
    cell, n = 0, 0
    for line in split_lines(code):
        m = _MARKER.fullmatch(line)
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

    Only the JSON values of the sources that changed are replaced, each written in the form the
    cell had (one string or a list of lines, its own indentation and escaping); every other byte
    of the file is kept. Returns the notebook JSON text.

    Raises:
        ValueError: a changed cell's source cannot be found in the text (not expected: the text
            is the one `join_cells` read).
    """
    cells: dict[int, list[str]] = {}
    current: int | None = None
    preamble: list[str] = []
    carried: list[str] = []
    for line in split_lines(new_source):
        m = _MARKER.fullmatch(line)
        if m:
            current = int(m.group(1))
            cells[current] = []
            continue
        masked = _MASKED.search(line)
        if masked:
            line = joined.magics[masked.group(1)]
        elif current in joined.cell_magics:
            carried.append(line)  # code a fix placed in a `%%` cell belongs to the next Python cell
            continue
        elif current is not None and carried and current not in joined.cell_magics:
            cells[current].extend(carried)
            carried = []
        (cells[current] if current is not None else preamble).append(line)
    edits: dict[JsonPath, str] = {}
    first = True
    for index in sorted(cells):
        if index not in joined.source_paths:
            continue
        take_preamble = first and index not in joined.cell_magics
        body = (preamble if take_preamble else []) + cells[index]
        first = first and not take_preamble
        original = joined.notebook.cells[index - 1].source
        new = _with_endings(body, original)
        if new != original:
            edits[joined.source_paths[index]] = new
    if not edits:
        return joined.text
    spans = _value_spans(joined.text, edits)
    out: list[str] = []
    end = 0
    for path, (start, stop) in sorted(spans.items(), key=lambda item: item[1]):
        out += [joined.text[end:start], _rewrite_value(joined.text, start, stop, edits[path])]
        end = stop
    out.append(joined.text[end:])
    return "".join(out)


def _with_endings(body: list[str], original: str) -> str:
    """`body`'s lines joined with the cell's own line endings: where the cell mixes `\n` and
    `\r\n`, each line the fix left as it was keeps its own, and new lines take the cell's
    most common one."""
    crlf = original.count("\r\n")
    eol = "\r\n" if crlf and crlf * 2 >= original.count("\n") else "\n"
    tail = eol if original.endswith("\n") else ""
    if not crlf or crlf == original.count("\n"):
        return eol.join(body) + tail
    import difflib

    old_lines = original.splitlines(keepends=True)
    endings = [eol] * len(body)
    matcher = difflib.SequenceMatcher(None, [line.rstrip("\r\n") for line in old_lines], body, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            line = old_lines[block.a + k]
            endings[block.b + k] = line[len(line.rstrip("\r\n")):] or eol
    if not tail and endings:
        endings[-1] = ""
    return "".join(line + end for line, end in zip(body, endings))


# --- Locating values in the JSON text --------------------------------------------------------------
# The stdlib decoder skips each value (C speed); only the objects and arrays on the way to the
# wanted paths are walked here. Duplicate keys resolve as `json.loads` does: the last one wins.

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _members(text: str, start: int) -> list[tuple[str | int, int, int]]:
    """(key or index, value start, value end) of the object or array that starts at `start`."""
    close = "}" if text[start] == "{" else "]"
    out: list[tuple[str | int, int, int]] = []
    i = _WS.match(text, start + 1).end()
    if text[i] == close:
        return out
    while True:
        if close == "}":
            if text[i] != '"':
                raise ValueError(f"expected a key at offset {i}")
            key, i = scanstring(text, i + 1)
            i = _WS.match(text, i).end()
            if text[i] != ":":
                raise ValueError(f"expected ':' at offset {i}")
            i = _WS.match(text, i + 1).end()
        else:
            key = len(out)
        _, end = _DECODER.raw_decode(text, i)
        out.append((key, i, end))
        i = _WS.match(text, end).end()
        if text[i] == close:
            return out
        if text[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _WS.match(text, i + 1).end()


def _value_spans(text: str, paths: Iterable[JsonPath]) -> dict[JsonPath, tuple[int, int]]:
    """The (start, end) offsets in `text` of the JSON value at each path."""
    spans: dict[JsonPath, tuple[int, int]] = {}
    children: dict[int, dict[str | int, tuple[int, int]]] = {}  # container start -> its members
    try:
        root = _WS.match(text).end()
        for path in paths:
            start, end = root, None
            for step in path:
                if start not in children:
                    if text[start] not in "{[":
                        raise ValueError(f"no {step!r} in a JSON scalar")
                    children[start] = {key: (a, b) for key, a, b in _members(text, start)}
                if step not in children[start]:
                    raise ValueError(f"no {step!r} at offset {start}")
                start, end = children[start][step]
            spans[path] = (start, end)
    except (IndexError, RecursionError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"cannot locate a cell's source in the notebook text: {exc}") from None
    return spans


# --- Writing one source value in the form of the one it replaces -----------------------------------

_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}")


def _rewrite_value(text: str, start: int, stop: int, new: str) -> str:
    old = text[start:stop]
    ascii_only = _ensure_ascii(old, text)
    if not old.startswith("["):
        return json.dumps(new, ensure_ascii=ascii_only)
    lines = split_lines(new, keepends=True)
    items = _members(text, start)
    if not lines:
        return "[]"
    if not items:
        return _layout_empty(text, start, lines, ascii_only)
    raw = [text[a:b] for _, a, b in items]
    before = [json.loads(r) for r in raw]
    # Lines the fix did not touch keep their exact bytes; only new or changed lines are serialised.
    written: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, lines, autojunk=False).get_opcodes():
        if op == "equal":
            written += raw[i1:i2]
        else:
            written += [json.dumps(line, ensure_ascii=ascii_only) for line in lines[j1:j2]]
    first_gap = text[start + 1:items[0][1]]
    last_gap = text[items[-1][2]:stop - 1]
    if len(items) > 1:
        sep = text[items[0][2]:items[1][1]]  # `,` with the whitespace around it
    elif "\n" in first_gap:
        sep = "," + first_gap
    else:  # one item on one line: separate as the file does after a key (`json.dumps` or compact)
        sep = ", " if text[:start].rstrip(" \t\r\n") != text[:start] else ","
    return "[" + first_gap + sep.join(written) + last_gap + "]"


def _layout_empty(text: str, start: int, lines: list[str], ascii_only: bool) -> str:
    """Lines for what was `[]`, laid out like the notebook: one per line, indented, or compact."""
    unit = _indent_of(text)
    if unit is None:
        return json.dumps(lines, ensure_ascii=ascii_only)
    key_line = text[text.rfind("\n", 0, start) + 1:start]
    indent = key_line[: len(key_line) - len(key_line.lstrip(" \t"))]
    items = ",\n".join(indent + " " * unit + json.dumps(line, ensure_ascii=ascii_only) for line in lines)
    return "[\n" + items + "\n" + indent + "]"


# `\uXXXX` for a character above U+007F, not preceded by an escaped backslash.
_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}")


def _ensure_ascii(old: str, text: str) -> bool:
    """Write non-ASCII as `\\u` escapes only where the value (or else the file) already did.

    A value with raw non-ASCII text is written as is; one with `\\u` escapes for non-ASCII is
    escaped; one with neither follows the file, and a file of plain ASCII stays ASCII.
    """
    if not old.isascii():
        return False
    if _NON_ASCII_ESCAPE.search(old):
        return True
    return text.isascii()


def _indent_of(text: str) -> int | None:
    """The indentation the notebook was written with (nbformat writes 1), or None if compact."""
    m = re.search(r"\n( +)\"", text)
    return len(m.group(1)) if m else None
