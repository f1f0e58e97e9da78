"""`--format sarif`: SARIF 2.1.0 with rule metadata, help links and fixes.

A result's fix is its finding's `Fix.edits` (computed by the scan, see `migrator.fix.edits`) as
replacements by line and column, including the imports or DEVICE constant it needs. Each
fix is self-contained; code scanning applies one at a time. Nothing is re-read here.
"""

from __future__ import annotations

import json
from typing import Any, Sequence
from urllib.parse import quote

from migrator.core.version import __version__
from migrator.core.findings import Finding

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _uri(path: str) -> str:
    """A SARIF artifact URI: a relative reference as given, an absolute path as `file://`, with
    spaces, `%`, `#`, `?` and control characters percent-encoded (RFC 3986)."""
    quoted = quote(path.replace("\\", "/"), safe="/-._~!$&'()*+,;=:@", errors="surrogateescape")
    return f"file://{quoted}" if path.startswith("/") else quoted


def _region(f: Finding) -> dict[str, Any]:
    return {"startLine": f.span.line, "startColumn": f.span.column, "endLine": f.span.end_line,
            "endColumn": f.span.end_column}


def _replacements(f: Finding) -> list[dict[str, Any]]:
    """The finding's fix edits as SARIF replacements (1-based lines and character columns)."""
    return [{"deletedRegion": {"startLine": e.line, "startColumn": e.column, "endLine": e.end_line,
                               "endColumn": e.end_column},
             "insertedContent": {"text": e.content}} for e in f.fix.edits]


def render_sarif(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    from migrator.core.catalogue import load_catalogue

    catalogue = {r.id: r for r in load_catalogue((stats or {}).get("extend_rules", ())).rules}
    used = sorted({f.rule_id for f in findings})
    rules = []
    for rule_id in used:
        spec = catalogue.get(rule_id)
        entry: dict[str, Any] = {"id": rule_id, "name": next(f.rule_name for f in findings if f.rule_id == rule_id)}
        if spec is not None:
            entry.update({
                "shortDescription": {"text": spec.summary},
                "fullDescription": {"text": " ".join(spec.docs["what"].split())},
                "help": {"text": " ".join(spec.docs["why"].split()),
                         "markdown": " ".join(spec.docs["why"].split()) + "\n\n" +
                         "\n".join(f"- <{u}>" for u in spec.docs["references"])},
                "helpUri": spec.docs["references"][0],
                "properties": {"category": spec.category, "tags": [spec.category]},
            })
        rules.append(entry)
    index = {rule_id: i for i, rule_id in enumerate(used)}
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.rule_id,
            "ruleIndex": index[f.rule_id],
            "level": _LEVEL[f.severity.value],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.path)}, "region": _region(f)}}],
            "partialFingerprints": {"neuronMigrator/v1": f.fingerprint},
            "properties": {"category": f.category, "fixable": f.fixable, "isTest": f.is_test},
        }
        if f.cell is not None:
            result["properties"]["cell"] = f.cell
        if f.fixable and f.fix.edits:
            replacements = _replacements(f)
            if replacements:
                result["fixes"] = [{
                    "description": {"text": f"{f.fix.title} ({f.fix.safety.value} fix)"},
                    "artifactChanges": [{"artifactLocation": {"uri": _uri(f.path)}, "replacements": replacements}],
                }]
        results.append(result)
    doc = {
        "$schema": _SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "neuron-migrator", "version": __version__,
                                "informationUri": "https://github.com/neuron-migrator/neuron-migrator", "rules": rules}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2) + "\n"
