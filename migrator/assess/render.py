"""Render an assessment as text, JSON, Markdown or one self-contained HTML page.

The input is the assessment dict `assess` builds (`migrator/schemas/assess.v1.schema.json`):
`paths` (what was scanned), `readiness` (counts of findings by category and file), `effort`
(hours as `[low, high]` ranges), `migration_paths` (the Neuron path per family and use),
`models` (model names found and the libraries that list them), `cost` (USD per month today
and on Neuron; `null` without a fleet file, `cost_error` then says why when there is a reason)
and `notes`. Shares are fractions 0..1, percentages are 0..100.

Every renderer is pure: it returns a string and never prints. The figures are laid out once, in
a small document model (sections of paragraphs, tables and lists), and each format writes that
model, so text, Markdown and HTML always show the same numbers.

Every string in the assessment is hostile: file paths, messages and model names come from the
scanned repository. Control characters become visible escapes (`printable`); the text report
builds rich `Text` objects (no markup is read from data); Markdown escapes what would change a
table or inject HTML; HTML escapes everything and links only http(s) URLs.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from migrator.core.lines import printable

__all__ = ["RENDERERS", "to_html", "to_json", "to_markdown", "to_text"]

Assessment = Mapping[str, Any]

# The readiness table and the files table show this many files; the HTML effort chart more,
# because a bar costs less room than a table row.
TOP_FILES = 10
CHART_FILES = 15


# --------------------------------------------------------------------------- document model


@dataclass(frozen=True)
class Link:
    """A hyperlink to documentation; `url` is always http(s) (see `_source`)."""

    text: str
    url: str


Cell = str | Link


@dataclass(frozen=True)
class Para:
    """A paragraph; `label` (our words, e.g. "Verdict") is shown in bold before the text."""

    text: str
    label: str = ""
    callout: bool = False  # the one conclusion of its section, set apart where the format can


@dataclass(frozen=True)
class Bullets:
    """A titled list of plain-text items."""

    title: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class Grid:
    """A table: `numeric` holds the indexes of right-aligned columns; with `total` the last row
    sums the others and is set apart. A table of sentences sets `keys`, the number of leading
    columns that name a row: where it does not fit (a terminal), each row is then shown as a
    record, its keys on one line and the other columns as `label: value` lines below."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: frozenset[int] = frozenset()
    total: bool = False
    keys: int = 0


Block = Para | Bullets | Grid


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]


# --------------------------------------------------------------------------- number formats


def _is_number(value: Any) -> bool:
    """An int or a finite float (JSON numbers; `true` is no number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _num(value: Any, places: int = 2) -> str:
    """`1,840`, `7.5`, `0.656` (places=3): thousands separated, trailing zeros dropped."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        text = f"{value:,.{places}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return printable(str(value))


def _money(value: Any, cents: bool = True) -> str:
    """USD: `94,377.60`, or `6,000` without `cents` when whole (the header or sentence names
    the currency)."""
    if not _is_number(value):
        return "n/a"
    return f"{value:,.2f}" if cents or value != int(value) else f"{int(value):,}"


def _pair(value: Any) -> tuple[float, float] | None:
    """A `[low, high]` range as two floats, or None when it is not one."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_number(v) for v in value):
        return float(value[0]), float(value[1])
    return None


def _range(value: Any, unit: str = "", places: int = 2, money: bool = False) -> str:
    """`60–180 h`; a range whose ends agree is one number."""
    pair = _pair(value)
    if pair is None:
        return "n/a"
    fmt = (lambda v: _money(v, cents=False)) if money else (lambda v: _num(v, places))
    low, high = fmt(pair[0]), fmt(pair[1])
    text = low if low == high else f"{low}–{high}"
    return f"{text} {unit}" if unit else text


def _percent(fraction: Any) -> str:
    """A 0..1 share as `45%`."""
    if not _is_number(fraction):
        return "n/a"
    return f"{_num(fraction * 100, 1)}%"


def _str(value: Any, missing: str = "") -> str:
    return missing if value is None else str(value)


def _plural(count: Any, word: str) -> str:
    return f"{_num(count)} {word}{'' if count == 1 else 's'}"


def _source(value: Any) -> Cell:
    """A documentation source: a `Link` when it is an http(s) URL, else its text.

    Anything else (`javascript:`, `file:`, a relative path) stays text, so no renderer ever
    writes a link the data chose the scheme of.
    """
    text = _str(value, "n/a")
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if parts.scheme.lower() in ("http", "https") and parts.netloc and text.isprintable() and " " not in text:
        # the host names the site; a placeholder host ("https://...") would name nothing
        return Link(parts.netloc if any(c.isalnum() for c in parts.netloc) else text, text)
    return text


def _cell_text(cell: Cell) -> str:
    return cell.url if isinstance(cell, Link) else cell


# --------------------------------------------------------------------------- the sections


def _files_by_effort(readiness: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Files with findings, most effort (high end, then low end) first."""
    def key(f: Mapping[str, Any]) -> tuple[float, float, str]:
        pair = _pair(f.get("effort_hours")) or (0.0, 0.0)
        return (-pair[1], -pair[0], _str(f.get("path")))
    return sorted(readiness.get("files_detail") or [], key=key)


def _location(path: Any, line: Any, cell: Any = None) -> str:
    """`path:line`, `path:cell 3:line` in a notebook, `path` alone for a whole-file record (line 0)."""
    where = _str(path, "?") + (f":cell {cell}" if cell else "")
    return f"{where}:{line}" if line else where


def _readiness(r: Mapping[str, Any]) -> Section:
    findings = r.get("findings") or 0
    files = r.get("files") or 0
    if findings:
        overall = (f"{_plural(findings, 'finding')} in {_num(r.get('files_with_findings'))} of "
                   f"{_plural(files, 'file')} ({_num(r.get('lines'))} lines, {_num(r.get('lines_affected'))} "
                   f"affected): {_num(r.get('auto_fixed'))} auto-fixed ({_num(r.get('auto_fixed_percent'), 1)}%), "
                   f"{_num(r.get('unsafe_fixed'))} with an unsafe fix (unsafe fixes "
                   f"{'on' if r.get('unsafe_fixes') else 'off'}), {_num(r.get('manual'))} left for a person, "
                   f"{_plural(r.get('blockers') or 0, 'blocker')}.")
    else:
        overall = f"No findings in {_plural(files, 'file')} ({_num(r.get('lines') or 0)} lines): nothing to migrate."
    blocks: list[Block] = [Para(overall, "Overall", callout=True)]
    keys = ("findings", "auto_fixed", "unsafe_fixed", "manual", "blockers")
    rows = [(_str(c.get("category"), "?"), *(_num(c.get(k)) for k in keys)) for c in r.get("by_category") or []]
    if rows:
        rows.append(("total", *(_num(r.get(k)) for k in keys)))
        blocks.append(Grid("By category", ("Category", "Findings", "Auto-fixed", "Unsafe fixes", "Left for a person",
                                           "Blockers"), tuple(rows), frozenset(range(1, 6)), total=True))
    blockers = r.get("blocker_list") or []
    if blockers:
        blocks.append(Grid("Blockers", ("Rule", "Where", "Why it blocks", "Message"), tuple(
            (_str(b.get("rule_id"), "?"), _location(b.get("path"), b.get("line"), b.get("cell")),
             _str(b.get("reason")), _str(b.get("message"))) for b in blockers), keys=2))
    else:
        blocks.append(Para("No blockers.", "Blockers"))
    ranked = _files_by_effort(r)
    if ranked:
        # the columns that make the effort; the by-category table has the rest
        keys = ("findings", "auto_fixed", "manual", "blockers")
        rows = [(_str(f.get("path"), "?"), *(_num(f.get(k)) for k in keys), _range(f.get("effort_hours")))
                for f in ranked[:TOP_FILES]]
        title = "Top files by effort" + (f" ({TOP_FILES} of {len(ranked)})" if len(ranked) > TOP_FILES else "")
        blocks.append(Grid(title, ("File", "Findings", "Auto-fixed", "Left for a person", "Blockers", "Effort (h)"),
                           tuple(rows), frozenset(range(1, 6))))
    return Section("Readiness", tuple(blocks))


def _effort(e: Mapping[str, Any]) -> Section:
    counts = e.get("counts") or {}
    rows = tuple((_str(name), _num(counts.get(name, 0)), _range(b.get("hours")), _str(b.get("meaning")))
                 for name, b in (e.get("buckets") or {}).items())
    blocks: list[Block] = []
    if rows:
        blocks.append(Grid("Buckets", ("Bucket", "Findings", "Hours each", "Meaning"), rows, frozenset({1, 2})))
    blocks.append(Para(f"{_range(e.get('hours'), 'hours')}, {_range(e.get('person_days'), 'person-days')} "
                       f"at {_num(e.get('hours_per_day'))} hours a day.", "Total"))
    dominant = e.get("dominant_files") or []
    if dominant:
        blocks.append(Grid("Dominant files", ("File", "Hours", "Share of the total"), tuple(
            (_str(f.get("path"), "?"), _range(f.get("hours")), _percent(f.get("share"))) for f in dominant),
            frozenset({1, 2})))
    return Section("Effort", tuple(blocks))


def _migration_paths(assessment: Assessment) -> list[Mapping[str, Any]]:
    return [p for p in assessment.get("migration_paths") or [] if isinstance(p, Mapping)]


def _scanned(assessment: Assessment) -> list[str]:
    return [p for p in assessment.get("paths") or [] if isinstance(p, str)]


def _paths(assessment: Assessment) -> Section:
    paths = _migration_paths(assessment)
    if not paths:
        return Section("Migration path", (Para("No migration path was determined."),))
    rows = tuple((_str(p.get("family"), "?"), _str(p.get("use")), _str(p.get("path")), _str(p.get("status")),
                  _str(p.get("why")), _source(p.get("source"))) for p in paths)
    return Section("Migration path", (Grid("", ("Family", "Use", "Path", "Status", "Why", "Source"), rows, keys=2),))


def _support(model: Mapping[str, Any], family: str) -> str:
    """Who lists `model` for `family`: `vLLM Neuron (inference)`, "not listed", or "unknown"
    when the model itself is unknown (nothing is looked up or guessed)."""
    support = model.get("support")
    if not isinstance(support, Mapping):
        return "unknown"
    entries = support.get(family) or []
    if not entries:
        return "not listed"
    return "; ".join(f"{_str(s.get('library'), '?')}" + (f" ({s['use']})" if s.get("use") else "") for s in entries)


def _models(m: Mapping[str, Any]) -> Section:
    found = m.get("found") or []
    families = [str(f) for f in m.get("families") or []]
    blocks: list[Block] = []
    if found:
        blocks.append(Grid("Models found: who lists them, per Neuron family", ("Model", "Model type", *families),
                           tuple((_str(model.get("name"), "?"), _str(model.get("model_type"), "unknown"),
                                  *(_support(model, f) for f in families)) for model in found), keys=2))
        places = []
        for model in found:
            where = model.get("where") or []
            text = ", ".join(_location(w.get("path"), w.get("line")) for w in where[:5])
            more = f" (+{len(where) - 5} more)" if len(where) > 5 else ""
            places.append((_str(model.get("name"), "?"), _str(model.get("how")), text + more))
        blocks.append(Grid("Where they are named", ("Model", "Named by", "Found at"), tuple(places)))
    else:
        blocks.append(Para("No model names found in the code."))
    lists = [(_str(x.get("library"), "?"), _str(x.get("use")), ", ".join(map(str, x.get("families") or [])),
              _str(x.get("status")), _str(x.get("date")), x.get("source")) for x in m.get("lists") or []]
    # A model's support entry names its own list (source, date); show each once, also when
    # `lists` leaves it out.
    seen = {(x[0], x[-1]) for x in lists}
    for model in found:
        support = model.get("support") if isinstance(model.get("support"), Mapping) else {}
        for family in families:
            for entry in support.get(family) or []:
                key = (_str(entry.get("library"), "?"), entry.get("source"))
                if key not in seen:
                    seen.add(key)
                    lists.append((key[0], _str(entry.get("use")), family, _str(entry.get("status")),
                                  _str(entry.get("date")), entry.get("source")))
    if lists:
        blocks.append(Grid("Support lists read", ("Library", "Use", "Families", "Status", "Date", "Source"),
                           tuple((*x[:-1], _source(x[-1])) for x in lists), keys=2))
    return Section("Models", tuple(blocks))


def _side(side: Mapping[str, Any] | None) -> tuple[str, str, str, str]:
    """(instances, hours, USD per hour, USD per month) of one side of a workload; a workload
    with no Neuron plan has None for that side."""
    if not isinstance(side, Mapping):
        return ("no plan: stays on GPUs", "", "", "")
    count = side.get("count", side.get("instances"))
    return (f"{_str(side.get('instance_type'), '?')} × {_num(count)}", _num(side.get("hours")),
            _money(side.get("usd_per_hour")), _money(side.get("monthly")))


def _savings(amount: Any, percent: Any) -> str:
    """`32,457.60 (34.4%)`: the amount saved per month and its share of today's cost."""
    text = _money(amount)
    return f"{text} ({_num(percent, 1)}%)" if _is_number(percent) else text


def _total_percent(totals: Mapping[str, Any]) -> float | None:
    """Total savings as a percentage of today's monthly cost (None when today costs nothing)."""
    gpu, saved = totals.get("gpu_monthly"), totals.get("savings_monthly")
    return saved / gpu * 100 if _is_number(gpu) and gpu and _is_number(saved) else None


_ASSUMPTION_UNITS = {"day_rate": "USD per person-day", "threshold": "USD per month", "hours_per_day": "hours"}


def _cost_money(cost: Mapping[str, Any], currency: str) -> list[Block]:
    """What each workload costs today and on Neuron, what it saves, when the work pays back."""
    workloads = cost.get("workloads") or []
    totals = cost.get("totals") or {}
    blocks: list[Block] = []
    if workloads:
        rows: list[tuple[Cell, ...]] = []
        for w in workloads:
            name = _str(w.get("name"), "?") + (f" ({w['kind']})" if w.get("kind") else "")
            rows.append((name, "today", *_side(w.get("gpu"))))
            rows.append(("", "on Neuron", *_side(w.get("neuron"))))
        blocks.append(Grid(f"Workloads ({currency})", ("Workload", "Side", "Instances", "Hours",
                                                       f"{currency}/hour each", f"{currency}/month"),
                           tuple(rows), frozenset({3, 4, 5})))
        savings = [(_str(w.get("name"), "?"), _money((w.get("gpu") or {}).get("monthly")),
                    _money((w.get("neuron") or {}).get("monthly")),
                    _savings(w.get("savings_monthly"), w.get("savings_percent")),
                    _num(w.get("break_even_ratio"), 3), _num(w.get("throughput_ratio"), 3)) for w in workloads]
        savings.append(("total", _money(totals.get("gpu_monthly")), _money(totals.get("neuron_monthly")),
                        _savings(totals.get("savings_monthly"), _total_percent(totals)), "", ""))
        blocks.append(Grid(f"Savings ({currency} per month)", (
            "Workload", "Today", "On Neuron", "Savings", "Break-even throughput ratio", "Throughput ratio used"),
            tuple(savings), frozenset(range(1, 6)), total=True))
    blocks.append(Para(f"{currency} {_money(totals.get('inference_gpu_monthly'))} per month.",
                       "Inference spend today"))
    payback = (f"pays back in {_range(cost.get('payback_months'), 'months')}" if _pair(cost.get("payback_months"))
               else "does not pay back: no savings")
    blocks.append(Para(f"{currency} {_range(cost.get('effort_cost'), money=True)} of engineering; {payback}.",
                       "Payback"))
    if cost.get("verdict"):
        blocks.append(Para(_str(cost.get("verdict")), "Verdict", callout=True))
    return blocks


def _cost_basis(cost: Mapping[str, Any]) -> list[Block]:
    """What the figures rest on: memory sizing, price sources, assumptions."""
    workloads = cost.get("workloads") or []
    blocks: list[Block] = []
    if workloads:
        blocks.append(Grid("Sizing", ("Workload", "Model", "Parameters (billion)", "Memory need (GiB)",
                                      "Memory today (GiB)", "Memory on Neuron (GiB)"), tuple((
            _str(w.get("name"), "?"), _str(w.get("model"), "unknown"), _num(w.get("parameters_billion")),
            _num(w.get("memory_need_gib"), 1), _num((w.get("gpu") or {}).get("accelerator_memory_gib")),
            _num((w.get("neuron") or {}).get("accelerator_memory_gib"))) for w in workloads), frozenset(range(2, 6))))
    formulas = tuple(f"{_str(w.get('name'), '?')}: {w['memory_formula']} = {_num(w.get('memory_need_gib'), 1)} GiB"
                     for w in workloads if w.get("memory_formula"))
    if formulas:
        blocks.append(Bullets("Memory need", formulas))
    if workloads:
        columns = ("Workload", "Side", "Instance type", "Region", "Purchase option", "Source")
        blocks.append(Grid("Prices", columns, tuple(
            (_str(w.get("name"), "?"), label, _str(w[side].get("instance_type"), "?"),
             _str(w.get("region", cost.get("region"))), _str(w.get("purchase_option")),
             _source(w[side].get("price_source")))
            for w in workloads for side, label in (("gpu", "today"), ("neuron", "on Neuron"))
            if isinstance(w.get(side), Mapping)), keys=2))
        blocks.append(Bullets("Throughput ratio (Neuron throughput per GPU throughput)", tuple(
            f"{_str(w.get('name'), '?')}: {_num(w.get('throughput_ratio'), 3)}"
            + (f" ({w['throughput_ratio_source']})" if w.get("throughput_ratio_source") else "")
            for w in workloads)))
    assumptions = cost.get("assumptions") or {}
    if assumptions:
        blocks.append(Grid("Assumptions", ("Assumption", "Value"), tuple(
            (str(key).replace("_", " "), _num(value, 3) + (f" {_ASSUMPTION_UNITS[key]}" if key in _ASSUMPTION_UNITS
                                                           else "")) for key, value in assumptions.items())))
    if cost.get("gpu_data_source"):
        blocks.append(Para(_str(cost.get("gpu_data_source")), "GPU instance data"))
    notes = tuple(str(n) for n in cost.get("notes") or [])
    if notes:
        blocks.append(Bullets("Cost notes", notes))
    return blocks


def _cost(assessment: Assessment) -> Section:
    cost = assessment.get("cost")
    if not isinstance(cost, Mapping):
        error = assessment.get("cost_error")
        text = f"Cost not computed: {error}" if error else "no fleet file given (--fleet): cost not computed"
        return Section("Cost", (Para(text, callout=True),))
    currency = _str(cost.get("currency"), "USD")
    return Section("Cost", tuple(_cost_money(cost, currency) + _cost_basis(cost)))


def _notes(assessment: Assessment) -> Section | None:
    notes = [str(n) for n in assessment.get("notes") or []]
    return Section("Notes", (Bullets("", tuple(notes)),)) if notes else None


def _sections(assessment: Assessment) -> list[Section]:
    """The report, in order: readiness, effort, migration path, models, cost, notes."""
    sections = [_readiness(assessment.get("readiness") or {}), _effort(assessment.get("effort") or {}),
                _paths(assessment), _models(assessment.get("models") or {}), _cost(assessment)]
    notes = _notes(assessment)
    return sections + ([notes] if notes else [])


def _heading(assessment: Assessment) -> tuple[str, str]:
    """(title, one line of context: paths, target, date)."""
    tool = assessment.get("tool") or {}
    title = f"{_str(tool.get('name'), 'neuron-migrator')} {_str(tool.get('version'))}".strip() + " assessment"
    parts = []
    if _scanned(assessment):
        parts.append("paths " + ", ".join(_scanned(assessment)))
    if assessment.get("target"):
        parts.append(f"target {assessment['target']}")
    if assessment.get("generated"):
        parts.append(f"generated {assessment['generated']}")
    return title, " · ".join(parts)


# --------------------------------------------------------------------------- JSON


def to_json(assessment: Assessment) -> str:
    """The assessment as JSON: indented by 2, keys in their order, non-ASCII kept, newline at the end."""
    return json.dumps(assessment, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


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


# --------------------------------------------------------------------------- Markdown

_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Characters that start emphasis, code, links, strikethrough, math or a table cell in GitHub
# Markdown; a backslash makes each literal.
_MD_PUNCT = set("\\`*_[]|~$")


def _md(text: str) -> str:
    """`text` as literal GitHub Markdown inline content: no HTML, no table breaks, no formatting."""
    out = []
    for ch in printable(text):  # newlines and other controls become visible `\x0a`-style escapes
        if ch in _MD_ESCAPES:
            out.append(_MD_ESCAPES[ch])
        elif ch in _MD_PUNCT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _md_lead(text: str) -> str:
    """`_md(text)` for the start of a line, where `#`, `+`, `-`, `=` or `1.` would begin a
    heading or a list."""
    out = _md(text)
    if out[:1] in ("#", "+", "-", "="):
        return "\\" + out
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", out)


def _md_url(url: str) -> str:
    # characters that would end the link destination or the table cell
    return quote(url, safe=":/?#@!$&'*+,;=%-._~[]")


def _md_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f"[{_md(cell.text)}]({_md_url(cell.url)})"
    return _md(cell) if cell else " "


def _md_grid(grid: Grid) -> list[str]:
    lines = [f"**{_md(grid.title)}**", ""] if grid.title else []
    lines.append("| " + " | ".join(_md(c) for c in grid.columns) + " |")
    lines.append("| " + " | ".join("---:" if i in grid.numeric else "---" for i in range(len(grid.columns))) + " |")
    for i, row in enumerate(grid.rows):
        cells = [_md_cell(c) for c in row]
        if grid.total and i == len(grid.rows) - 1:
            cells = [f"**{c}**" if c.strip() else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def to_markdown(assessment: Assessment) -> str:
    """The assessment as GitHub Markdown (a PR comment, a CI job summary): `##` sections, pipe tables."""
    title, context = _heading(assessment)
    lines = [f"**{_md(title)}**" + (f" · {_md(context)}" if context else ""), ""]
    for section in _sections(assessment):
        lines += [f"## {_md(section.title)}", ""]
        for block in section.blocks:
            if isinstance(block, Para):
                lines.append(f"**{_md(block.label)}:** {_md(block.text)}" if block.label else _md_lead(block.text))
            elif isinstance(block, Bullets):
                if block.title:
                    lines += [f"**{_md(block.title)}**", ""]
                lines += [f"- {_md_lead(item)}" for item in block.items]
            else:
                lines += _md_grid(block)
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- HTML


def _h(text: Any) -> str:
    return html.escape(printable(_str(text)), quote=True)


def _html_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f'<a href="{_h(cell.url)}" title="{_h(cell.url)}" rel="noopener noreferrer">{_h(cell.text)}</a>'
    return _h(cell)


def _keep_whole(cell: Cell) -> bool:
    """A short value or a name (`us-east-1`, `2026-07-28`, `llama-finetune`): browsers break
    lines after hyphens, which splits exactly these."""
    text = _cell_text(cell)
    return len(text) <= 16 or (len(text) <= 32 and not any(ch.isspace() for ch in text))


def _html_grid(grid: Grid) -> str:
    def cls(i: int, cell: Cell | None = None) -> str:
        if i in grid.numeric:
            return ' class="num"'
        return ' class="nw"' if cell is not None and _keep_whole(cell) else ""
    # a table of two or three columns spread over the whole page is hard to read across
    table = "<table>" if len(grid.columns) > 3 else '<table class="narrow">'
    parts = [f"<h3>{_h(grid.title)}</h3>" if grid.title else "", f'<div class="scroll">{table}', "<thead><tr>"]
    parts += [f'<th scope="col"{cls(i)}>{_h(c)}</th>' for i, c in enumerate(grid.columns)]
    parts.append("</tr></thead><tbody>")
    for r, row in enumerate(grid.rows):
        total = grid.total and r == len(grid.rows) - 1
        parts.append('<tr class="total">' if total else "<tr>")
        parts += [f"<td{cls(i, c)}>{_html_cell(c)}</td>" for i, c in enumerate(row)]
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def _html_block(block: Block) -> str:
    if isinstance(block, Para):
        label = f"<strong>{_h(block.label)}:</strong> " if block.label else ""
        tag = '<p class="callout">' if block.callout else "<p>"
        return f"{tag}{label}{_h(block.text)}</p>"
    if isinstance(block, Bullets):
        title = f"<h3>{_h(block.title)}</h3>" if block.title else ""
        return title + "<ul>" + "".join(f"<li>{_h(i)}</li>" for i in block.items) + "</ul>"
    return _html_grid(block)


# Okabe–Ito: distinguishable with every common form of colour blindness.
OKABE_ITO = {"green": "#009E73", "orange": "#E69F00", "sky": "#56B4E9", "vermillion": "#D55E00",
             "blue": "#0072B2", "grey": "#8C8C8C"}
_CHART_W = 1040
_CHAR_W = 7.0  # width of one character at the 13 px label size, for layout only


def _ticks(top: float, integer: bool = False) -> list[float]:
    """Round axis ticks from 0 to at least `top` (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1.0, math.ceil(step))
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _short_money(value: float) -> str:
    if value >= 1_000_000:
        return f"{_num(value / 1_000_000, 1)}M"
    if value >= 1000:
        return f"{_num(value / 1000, 1)}k"
    return _num(value, 0)


def _shorten(text: str, chars: int) -> str:
    """The end of a path (its file name matters most) in at most `chars` characters."""
    text = printable(text)
    return text if len(text) <= chars else "…" + text[-(chars - 1):]


def _svg_text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{attrs}>{_h(text)}</text>'


@dataclass(frozen=True)
class _Bar:
    """One horizontal bar: `segments` are (value, colour) from the axis outwards; with `overlay`
    the segments are drawn on top of each other from 0 (a range: low drawn over high)."""

    label: str
    segments: tuple[tuple[float, str], ...]
    end_label: str
    tooltip: str
    overlay: bool = False
    group_gap: bool = False  # space above this bar: the first bar of a group


@dataclass(frozen=True)
class _Frame:
    """Where a chart's plot sits in its SVG, in SVG units, and how values map onto it."""

    left: float
    top: float
    width: float
    height: float
    scale: float  # SVG units per value unit

    def x(self, value: float) -> float:
        return self.left + value * self.scale


def _svg_axes(frame: _Frame, ticks: Sequence[float], tick_format: Callable[[float], str], axis_label: str,
              y_label: str) -> list[str]:
    """Grid lines, tick labels, both axes and their labels (the y label turned on its side)."""
    top, bottom = frame.top - 6, frame.top + frame.height
    out = []
    for t in ticks:
        out.append(f'<line x1="{frame.x(t):.1f}" y1="{top}" x2="{frame.x(t):.1f}" y2="{bottom}" class="grid"/>')
        out.append(_svg_text(frame.x(t), bottom + 18, tick_format(t), "middle", "tick"))
    out.append(f'<line x1="{frame.left}" y1="{top}" x2="{frame.left}" y2="{bottom}" class="axis"/>')
    out.append(f'<line x1="{frame.left}" y1="{bottom}" x2="{frame.left + frame.width}" y2="{bottom}" class="axis"/>')
    out.append(_svg_text(frame.left + frame.width / 2, bottom + 42, axis_label, "middle", "alabel"))
    middle = frame.top + frame.height / 2
    out.append(f'<text x="12" y="{middle:.1f}" text-anchor="middle" class="alabel" '
               f'transform="rotate(-90 12 {middle:.1f})">{_h(y_label)}</text>')
    return out


def _svg_bar(frame: _Frame, bar: _Bar, y: float, height: int) -> list[str]:
    """One bar with its tooltip, the counts inside a stacked bar's parts, and its end label."""
    out = [f"<g><title>{_h(bar.tooltip)}</title>"]
    start = 0.0
    for value, colour in bar.segments:
        x0 = frame.x(0.0 if bar.overlay else start)
        w = value * frame.scale
        if w > 0:
            out.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{w:.1f}" height="{height}" fill="{colour}"/>')
            # a count inside each part of a stacked bar; a bar of one part is labelled at its end
            if len(bar.segments) > 1 and not bar.overlay and w >= len(_num(value)) * _CHAR_W + 8:
                ink = "on-light" if colour in (OKABE_ITO["orange"], OKABE_ITO["sky"]) else "on-dark"
                out.append(_svg_text(x0 + w / 2, y + height / 2 + 4.5, _num(value), "middle", f"inbar {ink}"))
        start += value
    end = max((v for v, _ in bar.segments), default=0.0) if bar.overlay else start
    out.append(_svg_text(frame.x(end) + 8, y + height / 2 + 4.5, bar.end_label, cls="value"))
    out.append("</g>")
    return out


def _svg_chart(key: str, title: str, description: str, legend: Sequence[tuple[str, str]], bars: Sequence[_Bar],
               axis_label: str, y_label: str, tick_format: Callable[[float], str], integer: bool = False,
               empty: str = "", label_chars: int = 44, bar_h: int = 20, group_labels: bool = False) -> str:
    """A horizontal bar chart as inline SVG, 1040 units wide: title, legend, labelled bars, an x
    axis with units, and `<title>`/`<desc>` for screen readers.

    Labels are cut to `label_chars` from the left (a path's file name matters most). With
    `group_labels` a bar labelled "" belongs to the bar above it, and the group's label is
    centred on all its bars.
    """
    label_w = min(label_chars, max([len(printable(b.label)) for b in bars] + [8])) * _CHAR_W + 14
    # room at the right for the longest value written after a bar's end
    right = max([len(printable(b.end_label)) for b in bars] + [4]) * _CHAR_W + 24
    row_h = bar_h + 10
    heights = [row_h + (14 if b.group_gap else 0) for b in bars]
    longest = max([(max(v for v, _ in b.segments) if b.overlay else sum(v for v, _ in b.segments))
                   for b in bars if b.segments] + [0.0])
    ticks = _ticks(longest, integer)
    width = _CHART_W - 34 - label_w - right
    frame = _Frame(34 + label_w, 80, width, (sum(heights) if bars else 60) + 6, width / ticks[-1])
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_CHART_W} {frame.top + frame.height + 56:.0f}" '
            f'role="img" aria-labelledby="{key}-title {key}-desc" aria-label="{_h(title)}" class="chart">'),
           f'<title id="{key}-title">{_h(title)}</title><desc id="{key}-desc">{_h(description)}</desc>',
           _svg_text(0, 22, title, cls="ctitle")]
    x = 0.0
    for name, colour in legend:
        out.append(f'<rect x="{x:.1f}" y="40" width="14" height="14" rx="2" fill="{colour}"/>')
        out.append(_svg_text(x + 20, 52, name, cls="legend"))
        x += 20 + len(name) * _CHAR_W + 28
    out += _svg_axes(frame, ticks, tick_format, axis_label, y_label)
    if not bars:
        out.append(_svg_text(frame.left + frame.width / 2, frame.top + frame.height / 2 + 4, empty, "middle", "empty"))
    y = frame.top
    groups: list[tuple[float, float, str]] = []  # (first bar's top, last bar's bottom, label)
    for bar, h in zip(bars, heights, strict=True):
        by = y + h - row_h + (row_h - bar_h) / 2
        if bar.label or not group_labels or not groups:
            groups.append((by, by + bar_h, bar.label))
        else:
            groups[-1] = (groups[-1][0], by + bar_h, groups[-1][2])
        out += _svg_bar(frame, bar, by, bar_h)
        y += h
    for y0, y1, label in groups:
        out.append(_svg_text(frame.left - 10, (y0 + y1) / 2 + 4.5, _shorten(label, label_chars), "end", "label"))
    out.append("</svg>")
    return "".join(out)


def _readiness_chart(r: Mapping[str, Any]) -> str:
    colours = (OKABE_ITO["green"], OKABE_ITO["orange"], OKABE_ITO["sky"], OKABE_ITO["vermillion"])
    bars, desc = [], []
    for c in r.get("by_category") or []:
        def n(key: str, c: Mapping[str, Any] = c) -> float:
            v = c.get(key)
            return float(v) if _is_number(v) and v > 0 else 0.0
        # blockers are findings left for a person too; the bar shows them apart so nothing counts twice
        values = (n("auto_fixed"), n("unsafe_fixed"), max(0.0, n("manual") - n("blockers")), n("blockers"))
        name = _str(c.get("category"), "?")
        summary = (f"{name}: {_num(c.get('findings'))} findings, {_num(c.get('auto_fixed'))} auto-fixed, "
                   f"{_num(c.get('unsafe_fixed'))} unsafe fixes, {_num(c.get('manual'))} left for a person, "
                   f"{_num(c.get('blockers'))} of them blockers")
        desc.append(summary)
        bars.append(_Bar(name, tuple(zip(values, colours)), _num(c.get("findings")), summary))
    legend = tuple(zip(("auto-fixed", "unsafe fixes", "left for a person", "blockers (left for a person)"), colours))
    return _svg_chart("readiness", "Readiness by category", "; ".join(desc) or "No findings.", legend, bars,
                      "findings (count)", "category", lambda v: _num(v, 0), integer=True, empty="No findings",
                      label_chars=24)


def _effort_chart(r: Mapping[str, Any]) -> str:
    ranked = _files_by_effort(r)[:CHART_FILES]
    bars, desc = [], []
    for f in ranked:
        low, high = _pair(f.get("effort_hours")) or (0.0, 0.0)
        path = _str(f.get("path"), "?")
        text = _range(f.get("effort_hours"), "h")
        desc.append(f"{path}: {text}")
        bars.append(_Bar(path, ((max(high, low), OKABE_ITO["sky"]), (low, OKABE_ITO["blue"])), text,
                         f"{path}: {text}", overlay=True))
    title = "Effort by file" + (f" (top {len(ranked)})" if ranked else "")
    legend = (("low estimate", OKABE_ITO["blue"]), ("high estimate", OKABE_ITO["sky"]))
    return _svg_chart("effort", title, "; ".join(desc) or "No files with findings.", legend, bars,
                      "person-hours (bar: high estimate, dark part: low estimate)", "file", lambda v: _num(v, 1),
                      empty="No files with findings", bar_h=18)


def _cost_chart(cost: Mapping[str, Any]) -> str:
    currency = _str(cost.get("currency"), "USD")
    today, neuron = OKABE_ITO["orange"], OKABE_ITO["blue"]
    groups = [(_str(w.get("name"), "?"), (w.get("gpu") or {}).get("monthly"),
               (w["neuron"].get("monthly") if isinstance(w.get("neuron"), Mapping) else None), w.get("savings_percent"))
              for w in cost.get("workloads") or []]
    totals = cost.get("totals") or {}
    if groups:
        groups.append(("total", totals.get("gpu_monthly"), totals.get("neuron_monthly"), _total_percent(totals)))
    bars, desc = [], []
    for name, gpu, on_neuron, percent in groups:
        g = max(0.0, float(gpu)) if _is_number(gpu) else 0.0
        n = max(0.0, float(on_neuron)) if _is_number(on_neuron) else 0.0
        change = ""
        if _is_number(percent):
            change = f" (saves {_num(percent, 1)}%)" if percent >= 0 else f" ({_num(-percent, 1)}% more)"
        desc.append(f"{name}: today {currency} {_money(gpu)}, on Neuron {currency} {_money(on_neuron)} per month")
        bars.append(_Bar(name, ((g, today),), _money(gpu), f"{name} today: {currency} {_money(gpu)} per month",
                         group_gap=bool(bars)))
        bars.append(_Bar("", ((n, neuron),), _money(on_neuron) + change if _is_number(on_neuron) else
                         "no Neuron plan: stays on GPUs",
                         f"{name} on Neuron: {currency} {_money(on_neuron)} per month{change}"))
    return _svg_chart("cost", f"Cost today vs on Neuron ({currency} per month)", "; ".join(desc) or "No workloads.",
                      (("today (GPU)", today), ("on Neuron", neuron)), bars, f"{currency} per month", "workload",
                      _short_money, empty="No workloads", bar_h=18, group_labels=True, label_chars=28)


_CSS = """
:root{--ink:#1f2328;--muted:#59636e;--line:#d8dee4;--bg:#f4f6f8;--card:#fff}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
 font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
main{max-width:1160px;margin:0 auto;padding:28px 24px 48px}
header h1{font-size:24px;margin:0 0 2px}
header p{margin:0;color:var(--muted)}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:20px 0 8px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px}
.kpi .v{display:block;font-size:22px;font-weight:650;font-variant-numeric:tabular-nums;white-space:nowrap}
.kpi .l{display:block;color:var(--muted);font-size:12px;letter-spacing:.03em;text-transform:uppercase}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:20px 24px;margin:16px 0}
.card>h2{font-size:18px;margin:0 0 12px;padding-bottom:8px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:20px 0 8px}
p{margin:8px 0}
figure{margin:0 0 8px}
figure+figure{margin-top:28px;padding-top:20px;border-top:1px solid var(--line)}
.note{color:var(--muted);font-style:italic}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;
 overflow-wrap:break-word}
th{background:var(--bg);font-weight:600;overflow-wrap:normal}
table.narrow{width:auto;min-width:50%}
.callout{background:#f0f6fc;border-left:4px solid #0072B2;padding:8px 12px;border-radius:0 6px 6px 0}
.nw{white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.total td{font-weight:650;border-top:2px solid var(--ink)}
a{color:#0b5cad}
ul{margin:8px 0;padding-left:22px}
svg.chart{display:block;width:100%;height:auto}
svg.chart text{font-family:inherit;font-size:13px;fill:var(--ink)}
svg.chart .ctitle{font-size:16px;font-weight:650}
svg.chart .tick,svg.chart .alabel{fill:var(--muted)}
svg.chart .alabel{font-size:12px}
svg.chart .inbar{font-size:12px;font-weight:600}
svg.chart .on-dark{fill:#fff}
svg.chart .empty{fill:var(--muted);font-style:italic}
svg.chart .grid{stroke:#e6eaee;stroke-width:1}
svg.chart .axis{stroke:#8c959f;stroke-width:1}
@media print{body{background:#fff}.card{break-inside:avoid;border-color:#bbb}}
"""


def _kpis(assessment: Assessment) -> str:
    r, e = assessment.get("readiness") or {}, assessment.get("effort") or {}
    tiles = [("findings", _num(r.get("findings") or 0)),
             ("auto-fixed", f"{_num(r.get('auto_fixed_percent') or 0, 1)}%"),
             ("blockers", _num(r.get("blockers") or 0)),
             ("effort", _range(e.get("hours"), "h")),
             ("person-days", _range(e.get("person_days")))]
    cost = assessment.get("cost")
    if isinstance(cost, Mapping):
        savings = (cost.get("totals") or {}).get("savings_monthly")
        tiles.append((f"{_str(cost.get('currency'), 'USD')} saved a month", _money(savings)))
    return '<div class="kpis">' + "".join(
        f'<div class="kpi"><span class="v">{_h(v)}</span><span class="l">{_h(label)}</span></div>'
        for label, v in tiles) + "</div>"


def to_html(assessment: Assessment) -> str:
    """The assessment as one self-contained HTML5 page: inline CSS, three inline SVG charts
    (readiness, effort, cost; the cost chart only with a cost), then the report's tables.

    The page loads nothing: no script, font, image or stylesheet from anywhere, and a
    Content-Security-Policy that forbids them in case a browser finds one.
    """
    title, context = _heading(assessment)
    readiness = assessment.get("readiness") or {}
    cost = assessment.get("cost")
    charts = [_readiness_chart(readiness), _effort_chart(readiness)]
    if isinstance(cost, Mapping):
        charts.append(_cost_chart(cost))
    else:
        error = assessment.get("cost_error")
        note = f"Cost chart: cost not computed: {error}" if error else (
            "Cost chart: no fleet file given (--fleet): cost not computed")
        charts.append(f'<p class="note">{_h(note)}</p>')
    body = [f"<header><h1>{_h(title)}</h1>" + (f"<p>{_h(context)}</p>" if context else "") + "</header>",
            _kpis(assessment),
            '<section class="card" aria-label="Charts"><h2>Overview</h2>'
            + "".join(c if c.startswith("<p") else f"<figure>{c}</figure>" for c in charts) + "</section>"]
    for section in _sections(assessment):
        body.append(f'<section class="card"><h2>{_h(section.title)}</h2>'
                    + "".join(_html_block(b) for b in section.blocks) + "</section>")
    return ("<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            'base-uri \'none\'; form-action \'none\'">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_h(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


RENDERERS: dict[str, Callable[[Assessment], str]] = {
    "text": to_text, "json": to_json, "markdown": to_markdown, "html": to_html}

