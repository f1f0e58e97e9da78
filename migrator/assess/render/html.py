"""One self-contained HTML page with inline SVG charts; every data string is escaped and only
http(s) URLs become links."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrator.assess.render.layout import (
    CHART_FILES,
    Assessment,
    Block,
    Bullets,
    Cell,
    Grid,
    Link,
    Para,
    _cell_text,
    _files_by_effort,
    _heading,
    _is_number,
    _money,
    _num,
    _pair,
    _range,
    _sections,
    _str,
    _total_percent,
)
from migrator.core.lines import printable

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


