"""The text report: rich tables rendered into a plain string (no markup is read from data)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from migrator.assess.render.layout import (
    Assessment,
    Block,
    Bullets,
    Grid,
    Para,
    _cell_text,
    _heading,
    _sections,
)
from migrator.core.lines import printable

# --------------------------------------------------------------------------- text


def _t(text: str, style: str = "") -> Text:
    # Text, never a markup string: `[bold]` in a file name stays as it is.
    return Text(printable(text), style=style)


def _share(wants: Sequence[int], room: int) -> list[int]:
    """Split `room` characters: who wants less than an even share gets all of it, the others
    split the rest evenly."""
    got, left = [0] * len(wants), room
    order = sorted(range(len(wants)), key=lambda k: wants[k])
    for n, k in enumerate(order):
        got[k] = max(0, min(wants[k], left // (len(order) - n)))
        left -= got[k]
    return got


def _text_widths(grid: Grid, width: int) -> list[int] | None:
    """Columns' widths in characters when the table is wider than `width`, else None.

    Left alone, rich shrinks every column alike when a table is too wide: it folds
    `samples/train_amp.py` into `samples/tra` / `in_amp.py` and cuts numbers off. Here numbers
    keep their whole width; the text columns first get their longest word (a path, an instance
    type: what folds badly; at most 36 characters for the first column, a name, and 24 for the
    others), then the rest up to their longest cell, and the numbers' headers what is left.
    """
    n = len(grid.columns)

    def words(text: str) -> list[int]:
        return [len(w) for w in printable(text).split()] or [0]
    header = [max(words(c)) for c in grid.columns]
    cells = [[printable(_cell_text(row[i])) for row in grid.rows] for i in range(n)]
    natural = [max([len(c) for c in cells[i]] + [header[i]]) for i in range(n)]
    budget = width - 3 * n  # a space of padding each side of a cell and a gap between columns
    if sum(max([len(printable(h))] + [len(c) for c in col]) for h, col in zip(grid.columns, cells)) <= budget:
        return None  # fits with headers on one line: rich lays it out as it is
    text = [i for i in range(n) if i not in grid.numeric]
    room = budget - sum(natural[i] for i in range(n) if i in grid.numeric)
    if not text or room < 4 * len(text):
        return None  # too narrow for anything sensible: rich's own squeeze
    least = [min(36 if i == 0 else 24, max([header[i]] + [max(words(c)) for c in cells[i]])) for i in text]
    first = _share(least, room)
    more = _share([natural[i] - w for i, w in zip(text, first)], room - sum(first))
    widths = dict(zip(text, (max(4, a + b) for a, b in zip(first, more))))
    numbers = [i for i in range(n) if i in grid.numeric]  # what is still left: headers on fewer lines
    spare = room - sum(widths.values())
    wider = _share([max(0, len(printable(grid.columns[i])) - natural[i]) for i in numbers], spare)
    widths.update((i, natural[i] + extra) for i, extra in zip(numbers, wider))
    return [widths[i] for i in range(n)]


# rich's SIMPLE_HEAD with a line, not a blank, where a section ends: above a table's total row
_BOX = box.Box("    \n    \n ── \n    \n ── \n    \n    \n    \n")


def _rich_grid(grid: Grid, width: int) -> Table:
    table = Table(title=_t(grid.title) if grid.title else None, title_justify="left", box=_BOX,
                  pad_edge=False, show_edge=False, header_style="bold", title_style="bold")
    widths = _text_widths(grid, width)
    for i, name in enumerate(grid.columns):
        numeric = i in grid.numeric
        # a set width also stops rich's own squeeze, which would undo the sharing
        table.add_column(_t(name), justify="right" if numeric else "left", overflow="fold",
                         width=widths[i] if widths else None)
    for i, row in enumerate(grid.rows):
        last_but_one = grid.total and i == len(grid.rows) - 2
        table.add_row(*(_t(_cell_text(c)) for c in row), end_section=last_but_one)
    return table


def _fits(grid: Grid, width: int) -> bool:
    """Whether every column gets its longest word (nothing folds inside a word) and no column
    wraps to more than a few lines."""
    widths = _text_widths(grid, width)
    if widths is None:
        return True
    for i, w in enumerate(widths):
        for row in grid.rows:
            text = printable(_cell_text(row[i]))
            if max([len(word) for word in text.split()] + [0]) > w or len(text) > 3 * w:
                return False
    return True


def _rich_records(grid: Grid) -> Group:
    """A table of sentences as records: the key cells in bold, then `column: value` lines."""
    parts: list[Any] = []
    if grid.title:
        parts.append(_t(grid.title, "bold"))
    for n, row in enumerate(grid.rows):
        if n:
            parts.append(Text(""))
        parts.append(_t(" · ".join(_cell_text(c) for c in row[:grid.keys] if _cell_text(c)), "bold"))
        fields = Table.grid(padding=(0, 1))
        fields.add_column(no_wrap=True)
        fields.add_column(overflow="fold")
        for name, cell in zip(grid.columns[grid.keys:], row[grid.keys:], strict=True):
            if _cell_text(cell):
                fields.add_row(_t(name + ":"), _t(_cell_text(cell)))
        parts.append(Padding(fields, (0, 0, 0, 2)))
    return Group(*parts)


def _print_block(console: Console, block: Block, width: int) -> None:
    if isinstance(block, Para):
        text = Text()
        if block.label:
            text.append(printable(block.label) + ": ", style="bold")
        text.append(printable(block.text))
        console.print(text)
    elif isinstance(block, Bullets):
        if block.title:
            console.print(_t(block.title, "bold"))
        items = Table.grid(padding=(0, 1))  # a hanging indent for items that wrap
        items.add_column(no_wrap=True)
        items.add_column(overflow="fold")
        for item in block.items:
            items.add_row(Text("-"), _t(item))
        console.print(items)
    elif block.keys and not _fits(block, width):
        console.print(_rich_records(block))
    else:
        console.print(_rich_grid(block, width))


def to_text(assessment: Assessment, width: int = 100) -> str:
    """The assessment as plain text, `width` columns wide (tables by rich, no colour, no escape codes)."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None, highlight=False,
                      markup=False, emoji=False, soft_wrap=False)
    title, context = _heading(assessment)
    console.print(_t(title, "bold"))
    if context:
        console.print(_t(context))
    for section in _sections(assessment):
        console.print()
        console.rule(_t(section.title, "bold"), align="left")
        previous: Block | None = None
        for block in section.blocks:
            # paragraphs run on; a table or a list stands apart from what is around it
            if isinstance(block, Grid) or (previous is not None and not (
                    isinstance(block, Para) and isinstance(previous, Para))):
                console.print()
            _print_block(console, block, width)
            previous = block
    # rich pads every table cell to its column width; the padding at a line's end is noise
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


