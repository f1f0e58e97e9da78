"""The document model every format writes: the assessment laid out once as sections of
paragraphs, tables and lists, with the number formats, so text, Markdown and HTML show the same
figures (see `migrator.assess.render`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from migrator.core.lines import printable

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
        keys = ("findings", "auto_fixed", "unsafe_fixed", "manual", "blockers")
        rows = [(_str(f.get("path"), "?"), *(_num(f.get(k)) for k in keys), _range(f.get("effort_hours")))
                for f in ranked[:TOP_FILES]]
        title = "Top files by effort" + (f" ({TOP_FILES} of {len(ranked)})" if len(ranked) > TOP_FILES else "")
        blocks.append(Grid(title, ("File", "Findings", "Auto-fixed", "Unsafe fixes", "Left for a person", "Blockers",
                                   "Effort (h)"), tuple(rows), frozenset(range(1, 7))))
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
    if _is_number(m.get("not_shown")) and m["not_shown"] > 0:
        blocks.append(Para(f"{_num(m['not_shown'])} more model names are not shown (the first 300 are).", "More"))
    blocks.append(Para(_str(m.get("looked_for")) or "from_pretrained(\"org/name\"), model classes imported from "
                       "transformers, model_type in config.json files, TorchTitan model names.", "Looked for"))
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
            _rate(side.get("usd_per_hour")), _money(side.get("monthly")))


def _rate(value: Any) -> str:
    """USD per hour with the digits the price has (`5.672`, `0.512`), at least two."""
    if not _is_number(value):
        return "n/a"
    text = f"{value:,.4f}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.split(".")[1])) if "." in text else f"{text}.00"


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


