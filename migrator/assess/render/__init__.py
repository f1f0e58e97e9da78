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

import json
from collections.abc import Callable

from migrator.assess.render.html import to_html
from migrator.assess.render.layout import Assessment
from migrator.assess.render.markdown import to_markdown
from migrator.assess.render.text import to_text

__all__ = ["RENDERERS", "to_html", "to_json", "to_markdown", "to_text"]


def to_json(assessment: Assessment) -> str:
    """The assessment as JSON: indented by 2, keys in their order, non-ASCII kept, newline at the end."""
    return json.dumps(assessment, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[Assessment], str]] = {
    "text": to_text, "json": to_json, "markdown": to_markdown, "html": to_html}
