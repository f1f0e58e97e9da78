"""`assess` reports as a reader sees them: the figures of each section in text, Markdown and
HTML; the cases without a cost, an unknown model, an empty tree; hostile file names; an HTML
page that loads nothing; JSON that reads back as it was written.

The fixture is a trimmed assessment in the shape of `migrator/schemas/assess.v1.schema.json`
(checked against it below), with the figures of the first sample of the contract.
"""

import copy
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from migrator.assess.render import RENDERERS, to_html, to_json, to_markdown, to_text

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = {
    "schema_version": 1,
    "tool": {"name": "neuron-migrator", "version": "0.6.0"},
    "generated": "2026-12-01",
    "target": "portable",
    "paths": ["samples"],
    "readiness": {
        "files": 12, "lines": 1840, "files_with_findings": 7,
        "findings": 58, "auto_fixed": 31, "unsafe_fixed": 4, "manual": 23, "blockers": 3,
        "lines_affected": 52, "auto_fixed_percent": 53.4, "unsafe_fixes": False,
        "by_category": [
            {"category": "device", "findings": 20, "auto_fixed": 18, "unsafe_fixed": 0, "manual": 2, "blockers": 0},
            {"category": "kernels", "findings": 3, "auto_fixed": 0, "unsafe_fixed": 0, "manual": 3, "blockers": 3},
        ],
        "blocker_list": [
            {"rule_id": "NRN601", "path": "samples/ext/setup.py", "line": 4, "message": "CUDAExtension builds a kernel",
             "reason": "custom CUDA kernels have no Neuron build: port to NKI"},
        ],
        "files_detail": [
            {"path": "samples/train_amp.py", "findings": 9, "auto_fixed": 7, "unsafe_fixed": 1, "manual": 1,
             "blockers": 0, "lines_affected": 8, "effort_hours": [1.5, 4.0]},
        ],
    },
    "effort": {
        "buckets": {
            "none": {"hours": [0.0, 0.1], "meaning": "automatic rewrite: review the diff"},
            "low": {"hours": [0.25, 1.0], "meaning": "a local change a person makes by hand"},
            "medium": {"hours": [2.0, 8.0], "meaning": "a change across a file"},
            "high": {"hours": [16.0, 40.0], "meaning": "a port: kernels, a new library"},
        },
        "counts": {"none": 31, "low": 15, "medium": 9, "high": 3},
        "hours": [60.0, 180.0],
        "hours_per_day": 8,
        "person_days": [7.5, 22.5],
        "dominant_files": [{"path": "samples/ext/setup.py", "hours": [16.0, 40.0], "share": 0.45}],
    },
    "migration_paths": [
        {"family": "trn2", "use": "training", "path": "TorchNeuron (native neuron device)",
         "status": "public beta (Neuron 2.33)", "why": "training code found (optimizer steps in 3 files)",
         "source": "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/"},
    ],
    "models": {
        "found": [
            {"name": "meta-llama/Llama-3.1-8B", "how": "from_pretrained", "model_type": "llama",
             "where": [{"path": "samples/serve.py", "line": 12}],
             "support": {
                 "trn2": [{"library": "vLLM Neuron", "use": "inference", "source": "https://docs.vllm.ai/",
                           "date": "2026-10-19"}],
                 "trn1": [],
                 "inf2": [{"library": "Optimum Neuron", "use": "inference", "source": "https://huggingface.co/docs",
                           "date": "2026-08"}],
             }},
            {"name": "acme/secret-model", "how": "from_pretrained", "model_type": None,
             "where": [{"path": "samples/x.py", "line": 3}], "support": None},
        ],
        "families": ["trn1", "trn2", "trn3", "inf2"],
        "lists": [{"library": "NxD Inference", "use": "inference", "families": ["trn2", "trn3"],
                   "source": "https://awsdocs-neuron.readthedocs-hosted.com/nxdi", "date": "2026-07-28",
                   "status": "maintenance since 2.30"}],
    },
    "cost": {
        "currency": "USD", "period": "month", "region": "us-east-1",
        "assumptions": {"usable_memory_fraction": 0.9, "activation_allowance": 0.3, "throughput_ratio": 1.0,
                        "throughput_ratio_source": "assumption: no sourced GPU-to-Neuron throughput figure",
                        "day_rate": 800, "threshold": 10000, "hours_per_day": 8},
        "workloads": [
            {"name": "llama-finetune", "kind": "training", "model": "meta-llama/Llama-3.1-8B",
             "parameters_billion": 8.0, "memory_need_gib": 178.8, "region": "us-east-1",
             "purchase_option": "on-demand",
             "memory_formula": "8.0e9 params × 16 B (bf16 weights, gradients, fp32 Adam states) "
                               "× (1 + 0.3 activations)",
             "gpu": {"instance_type": "p4d.24xlarge", "count": 4, "hours": 720, "usd_per_hour": 32.77,
                     "monthly": 94377.6, "accelerator_memory_gib": 320,
                     "price_source": "usage.ai blog, 2026-06 (secondary)"},
             "neuron": {"instance_type": "trn1.32xlarge", "instances": 4, "hours": 720, "usd_per_hour": 21.5,
                        "monthly": 61920.0, "accelerator_memory_gib": 512,
                        "price_source": "usage.ai blog, 2026-06 (secondary)"},
             "throughput_ratio": 1.0, "throughput_ratio_source": "assumption: no sourced figure",
             "savings_monthly": 32457.6, "savings_percent": 34.4, "break_even_ratio": 0.656},
        ],
        "totals": {"gpu_monthly": 94377.6, "neuron_monthly": 61920.0, "savings_monthly": 32457.6,
                   "inference_gpu_monthly": 0.0},
        "effort_cost": [6000.0, 18000.0],
        "payback_months": [0.18, 0.55],
        "below_threshold": True,
        "verdict": "Inference spend USD 0 per month is below the USD 10,000 threshold: "
                   "the engineering effort likely exceeds the savings.",
        "notes": ["p4d.24xlarge: price from a secondary source"],
        "gpu_data_source": "EC2 DescribeInstanceTypes GpuInfo (secondary)",
    },
    "cost_error": None,
    "notes": ["Throughput ratio 1.0 is an assumption, not a measurement."],
}

HOSTILE = "x|y<script>alert(1)</script>[bold]z.py"
SECTIONS = ["Readiness", "Effort", "Migration path", "Models", "Cost", "Notes"]


SCHEMA = json.loads((ROOT / "migrator" / "schemas" / "assess.v1.schema.json").read_text(encoding="utf-8"))


def sample(**changes):
    out = copy.deepcopy(SAMPLE)
    out.update(changes)
    return out


class _Page(HTMLParser):
    """What a browser would show or fetch: visible text, tags, attributes, style sheets."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.tags, self.styles, self._in_style = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        (self.styles if self._in_style else self.text).append(data)


def page(document: str) -> _Page:
    parser = _Page()
    parser.feed(document)
    parser.close()
    return parser


def rendered_markdown(document: str) -> str:
    """Markdown as GitHub shows it (CommonMark with tables and strikethrough), as HTML, by
    markdown-it, the parser rich itself depends on."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(document)


def shown(fmt: str, assessment, width: int = 200) -> str:
    """The report as a reader sees it, whitespace collapsed: HTML and Markdown as rendered."""
    if fmt == "text":
        out = to_text(assessment, width=width)
    elif fmt == "html":
        out = " ".join(page(to_html(assessment)).text)
    else:
        out = " ".join(page(rendered_markdown(to_markdown(assessment))).text)
    return " ".join(out.split())


FORMATS = ["text", "markdown", "html"]


@pytest.mark.parametrize("name", ["sample", "empty", "hostile", "no-fleet", "cost-error", "no-neuron-plan"])
def test_the_fixtures_are_valid_assessments(name):
    fixture = {"sample": SAMPLE, "empty": EMPTY, "hostile": hostile(), "no-fleet": sample(cost=None),
               "cost-error": sample(cost=None, cost_error="no price"), "no-neuron-plan": no_neuron_plan()}[name]
    jsonschema.validate(fixture, SCHEMA)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("section, figures", [
    ("heading", ["neuron-migrator 0.6.0 assessment", "paths samples", "target portable", "generated 2026-12-01"]),
    ("readiness", ["58 findings in 7 of 12 files", "31 auto-fixed (53.4%)", "23 left for a person", "3 blockers",
                   "device", "kernels", "NRN601", "samples/ext/setup.py:4", "port to NKI", "samples/train_amp.py",
                   "1.5–4"]),
    ("effort", ["automatic rewrite: review the diff", "0.25–1", "16–40", "60–180 hours", "7.5–22.5 person-days",
                "45%"]),
    ("migration path", ["trn2", "TorchNeuron (native neuron device)", "public beta (Neuron 2.33)",
                        "optimizer steps in 3 files"]),
    ("models", ["meta-llama/Llama-3.1-8B", "llama", "vLLM Neuron (inference)", "Optimum Neuron (inference)",
                "not listed", "samples/serve.py:12", "NxD Inference", "maintenance since 2.30", "2026-07-28",
                "2026-10-19"]),
    ("cost", ["p4d.24xlarge × 4", "trn1.32xlarge × 4", "32.77", "21.50", "94,377.60", "61,920.00",
              "32,457.60 (34.4%)", "0.656", "USD 6,000–18,000", "0.18–0.55 months",
              "below the USD 10,000 threshold",
              "178.8", "usage.ai blog, 2026-06 (secondary)", "800 USD per person-day", "us-east-1", "on-demand",
              "assumption: no sourced figure", "price from a secondary source", "GpuInfo (secondary)"]),
    ("notes", ["Throughput ratio 1.0 is an assumption, not a measurement."]),
])
def test_each_section_shows_its_key_figures(fmt, section, figures):
    report = shown(fmt, SAMPLE)
    missing = [f for f in figures if f not in report]
    assert missing == [], f"{section} in {fmt}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_sections_come_in_order(fmt):
    out = {"text": to_text(SAMPLE), "markdown": to_markdown(SAMPLE), "html": to_html(SAMPLE)}[fmt]
    heading = {"text": r"^{} ─", "markdown": r"^## {}$", "html": r"<h2>{}</h2>"}[fmt]
    where = [re.search(heading.format(re.escape(s)), out, re.MULTILINE) for s in SECTIONS]
    assert all(where), [s for s, w in zip(SECTIONS, where, strict=True) if not w]
    assert [w.start() for w in where] == sorted(w.start() for w in where)


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_a_fleet_file_the_cost_says_so(fmt):
    report = shown(fmt, sample(cost=None, cost_error=None))
    assert "no fleet file given (--fleet): cost not computed" in report
    assert "94,377.60" not in report and "Verdict" not in report


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cost_error_is_shown_instead_of_the_cost(fmt):
    report = shown(fmt, sample(cost=None, cost_error="no price for trn3.48xlarge in us-west-1"))
    assert "no price for trn3.48xlarge in us-west-1" in report
    assert "no fleet file given" not in report and "94,377.60" not in report


def _row(fmt: str, assessment, first_cell: str) -> str:
    """The table row whose first cell is `first_cell`, as shown."""
    if fmt == "text":
        return next(line for line in to_text(assessment, width=200).splitlines() if line.startswith(first_cell))
    if fmt == "markdown":
        return next(line for line in to_markdown(assessment).splitlines() if line.startswith(f"| {first_cell} |"))
    rows = re.findall(r"<tr>(.*?)</tr>", to_html(assessment))
    return next(" ".join(page(r).text) for r in rows if re.match(f"<td[^>]*>{re.escape(first_cell)}</td>", r))


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unknown_model_is_unknown_not_guessed(fmt):
    row = _row(fmt, SAMPLE, "acme/secret-model")
    assert row.count("unknown") == 1 + len(SAMPLE["models"]["families"])  # its type and every family
    assert "not listed" not in row and "llama" not in row
    known = _row(fmt, SAMPLE, "meta-llama/Llama-3.1-8B")
    assert "unknown" not in known and "not listed" in known  # trn1: an empty list; trn3: not in any list


EMPTY = {
    "schema_version": 1, "tool": {"name": "neuron-migrator", "version": "0.6.0"}, "generated": "2026-12-01",
    "target": "portable",
    "readiness": {"files": 0, "lines": 0, "files_with_findings": 0, "findings": 0, "auto_fixed": 0, "unsafe_fixed": 0,
                  "manual": 0, "blockers": 0, "lines_affected": 0, "auto_fixed_percent": 0.0, "unsafe_fixes": False,
                  "by_category": [], "blocker_list": [], "files_detail": []},
    "effort": {"buckets": SAMPLE["effort"]["buckets"], "counts": {"none": 0, "low": 0, "medium": 0, "high": 0},
               "hours": [0.0, 0.0], "hours_per_day": 8, "person_days": [0.0, 0.0], "dominant_files": []},
    "paths": ["empty"], "migration_paths": [], "models": {"found": [], "families": ["trn1", "trn2"], "lists": []},
    "cost": None, "cost_error": None, "notes": [],
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_tree_reports_nothing_to_do(fmt):
    report = shown(fmt, EMPTY)
    assert "No findings in 0 files" in report
    assert "No blockers" in report and "No model names found" in report
    assert "0 hours, 0 person-days" in report
    assert "no fleet file given (--fleet)" in report


def test_an_empty_tree_still_draws_the_two_charts_with_a_message():
    document = to_html(EMPTY)
    assert document.count("<svg") == 2
    text = " ".join(page(document).text)
    assert "No findings" in text and "No files with findings" in text


def hostile():
    out = sample()
    out["readiness"]["blocker_list"][0]["path"] = HOSTILE
    out["readiness"]["blocker_list"][0]["message"] = "[red]boom[/red] `code` *bold* $x$ line1\nline2"
    out["readiness"]["files_detail"][0]["path"] = HOSTILE
    out["effort"]["dominant_files"][0]["path"] = HOSTILE
    out["models"]["found"][1]["name"] = HOSTILE
    out["notes"].append("a note with <b>html</b> and a | pipe")
    return out


def test_a_hostile_file_name_is_printed_literally_in_text():
    out = to_text(hostile(), width=200)
    assert out.count(HOSTILE) >= 4  # blocker, top file, dominant file, model
    assert "[red]boom[/red] `code` *bold* $x$" in out  # markup in data is not read as markup
    assert "line1\\x0aline2" in out  # a newline in data does not start a line of the report


def _cells(row: str) -> list[str]:
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


def test_markdown_renders_hostile_data_as_literal_table_cells():
    shown_html = rendered_markdown(to_markdown(hostile()))
    parsed = page(shown_html)
    tags = {tag for tag, _ in parsed.tags}
    assert "script" not in tags and "b" not in tags and "em" not in tags and "code" not in tags
    for table in re.findall(r"<table>.*?</table>", shown_html, re.DOTALL):
        widths = {len(re.findall(r"<t[hd][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, re.DOTALL)}
        assert len(widths) == 1, table
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", shown_html, re.DOTALL)]
    assert HOSTILE + ":4" in cells
    assert "[red]boom[/red] `code` *bold* $x$ line1\\x0aline2" in cells


def test_a_hostile_file_name_cannot_break_a_markdown_table_or_inject_html():
    out = to_markdown(hostile())
    assert "<script" not in out and "<b>" not in out and "[bold]" not in out
    for block in re.findall(r"(?:^\|.*\|$\n?)+", out, re.MULTILINE):
        rows = block.splitlines()
        assert len({len(_cells(r)) for r in rows}) == 1, block
    blocker = next(r for r in out.splitlines() if r.startswith("| NRN601 |"))
    assert [html.unescape(re.sub(r"\\(.)", r"\1", c)).strip() for c in _cells(blocker)][1] == HOSTILE + ":4"
    assert "line1\\\\x0aline2" in blocker  # shown as `line1\x0aline2`, on the table's row


def test_a_hostile_file_name_is_escaped_in_html():
    document = to_html(hostile())
    parsed = page(document)
    assert "script" not in {tag for tag, _ in parsed.tags}
    assert "<b>" not in document and "<script" not in document.lower()
    assert HOSTILE in " ".join(parsed.text)
    assert "a note with <b>html</b> and a | pipe" in " ".join(parsed.text)


RESOURCE_TAGS = {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "source", "image",
                 "use", "frame", "base", "form"}


@pytest.mark.parametrize("assessment", [SAMPLE, EMPTY], ids=["sample", "empty"])
def test_the_html_page_loads_nothing(assessment):
    parsed = page(to_html(assessment))
    assert [t for t, _ in parsed.tags if t in RESOURCE_TAGS] == []
    for tag, attrs in parsed.tags:
        assert not {"src", "srcset", "xlink:href", "data", "poster", "action"} & set(attrs), (tag, attrs)
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)  # no event handlers
        if "href" in attrs:
            assert tag == "a" and re.match(r"https?://", attrs["href"]), (tag, attrs)
        assert "url(" not in attrs.get("style", "")
    css = "".join(parsed.styles)
    assert "@import" not in css
    assert all(u.startswith("data:") for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", css))
    assert [t for t, _ in parsed.tags if t == "style"]  # the styling is inline


def test_only_http_sources_become_links():
    bad = sample()
    bad["migration_paths"][0]["source"] = "javascript:alert(1)"
    bad["models"]["lists"][0]["source"] = "file:///etc/passwd"
    parsed = page(to_html(bad))
    hrefs = [a["href"] for t, a in parsed.tags if t == "a"]
    assert "https://docs.vllm.ai/" in hrefs  # a support entry's own list, missing from `lists`
    assert not any(h.startswith(("javascript:", "file:")) for h in hrefs)
    assert "javascript:alert(1)" in " ".join(parsed.text)  # shown, not linked
    good = [a["href"] for t, a in page(to_html(SAMPLE)).tags if t == "a"]
    assert "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/" in good
    markdown = to_markdown(bad)
    assert "](javascript:" not in markdown and "](file:" not in markdown
    assert "](https://awsdocs-neuron.readthedocs-hosted.com/nxdi)" not in markdown  # replaced above
    assert "](https://awsdocs-neuron.readthedocs-hosted.com/en/latest/)" in to_markdown(SAMPLE)


@pytest.mark.parametrize("assessment, charts", [
    (SAMPLE, 3), (sample(cost=None, cost_error=None), 2), (sample(cost=None, cost_error="unknown price"), 2)],
    ids=["cost", "no-fleet", "cost-error"])
def test_html_draws_a_cost_chart_only_with_a_cost(assessment, charts):
    document = to_html(assessment)
    assert document.count("<svg") == charts
    if charts == 2:
        assert "Cost chart:" in " ".join(page(document).text)


def test_each_chart_has_a_title_axis_labels_with_units_and_a_legend():
    svgs = re.findall(r"<svg.*?</svg>", to_html(SAMPLE), re.DOTALL)
    expected = [("Readiness by category", "findings (count)", ["auto-fixed", "unsafe fixes", "left for a person",
                                                                "blockers"]),
                ("Effort by file", "person-hours", ["low estimate", "high estimate"]),
                ("Cost today vs on Neuron (USD per month)", "USD per month", ["today (GPU)", "on Neuron"])]
    for svg, (title, axis, legend) in zip(svgs, expected, strict=True):
        parsed = page(svg)
        root = parsed.tags[0][1]
        assert root["role"] == "img" and root["aria-label"].startswith(title)
        assert re.search(r"<title[^>]*>" + re.escape(title), svg)
        text = " ".join(parsed.text)
        assert axis in text and all(name in text for name in legend), title


def test_the_effort_chart_shows_the_top_15_files():
    many = sample()
    base = many["readiness"]["files_detail"][0]
    many["readiness"]["files_detail"] = [dict(base, path=f"pkg/m{i:02d}.py", effort_hours=[i, 2 * i])
                                         for i in range(1, 21)]
    effort = re.findall(r"<svg.*?</svg>", to_html(many), re.DOTALL)[1]
    assert "pkg/m20.py" in effort and "pkg/m06.py" in effort and "pkg/m05.py" not in effort
    assert "20–40 h" in effort
    text = to_text(many)
    assert "pkg/m11.py" in text and "pkg/m10.py" not in text.split("Effort ─")[0]  # the table: top 10


def test_json_round_trips_and_keeps_non_ascii():
    out = to_json(SAMPLE)
    assert json.loads(out) == SAMPLE
    assert out.endswith("}\n") and "×" in out and '\n  "readiness": {' in out
    assert list(json.loads(out)) == list(SAMPLE)  # keys in their order, not sorted


def test_renderers_are_named_for_the_cli():
    assert set(RENDERERS) == {"text", "json", "markdown", "html"}
    for render in RENDERERS.values():
        assert isinstance(render(SAMPLE), str)


def test_text_is_plain_even_when_the_environment_asks_for_colour(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    out = to_text(hostile())
    assert "\x1b" not in out


@pytest.mark.parametrize("width", [80, 100, 140])
def test_text_keeps_to_its_width_and_does_not_split_numbers(width):
    out = to_text(SAMPLE, width=width)
    assert max(len(line) for line in out.splitlines()) <= width
    for figure in ("94,377.60", "61,920.00", "32,457.60 (34.4%)", "0.656", "samples/ext/setup.py:4"):
        assert figure in out, (width, figure)


def no_neuron_plan():
    out = sample()
    w = out["cost"]["workloads"][0]
    w.update(neuron=None, savings_monthly=None, savings_percent=None, break_even_ratio=None)
    out["cost"]["totals"].update(neuron_monthly=94377.6, savings_monthly=0.0)
    out["cost"]["payback_months"] = None
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_workload_without_a_neuron_plan_stays_on_gpus_and_nothing_pays_back(fmt):
    report = shown(fmt, no_neuron_plan())
    assert "no plan: stays on GPUs" in report
    assert "does not pay back: no savings" in report
    assert "61,920.00" not in report and "0.656" not in report


def test_the_cost_chart_says_which_workload_has_no_neuron_plan():
    cost = re.findall(r"<svg.*?</svg>", to_html(no_neuron_plan()), re.DOTALL)[2]
    assert "no Neuron plan: stays on GPUs" in " ".join(page(cost).text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_notebook_blocker_names_its_cell(fmt):
    notebook = sample()
    notebook["readiness"]["blocker_list"][0].update(path="nb/train.ipynb", cell=3, line=2)
    assert "nb/train.ipynb:cell 3:2" in shown(fmt, notebook)


def test_a_narrow_terminal_shows_long_tables_as_records():
    long = sample()
    long["migration_paths"][0]["why"] = "training code found in 4 files (e.g. " + "a/" * 30 + "train.py)"
    out = to_text(long, width=80)
    assert max(len(line) for line in out.splitlines()) <= 80
    block = out.split("Migration path ─")[1].split("Models ─")[0]
    assert "trn2 · training" in block
    assert "Status: public beta (Neuron 2.33)" in block and "Path:   TorchNeuron (native neuron device)" in block
