"""`--format sarif`: SARIF 2.1.0 with rule metadata, help links and fixes.

Fixes are real edits: the file is fixed in memory (safe fixes, the scan's target) and each
changed hunk becomes a replacement (character offsets into the original file). A result gets the
hunks that touch its lines; hunks elsewhere (added imports, the DEVICE constant) go with the
file's first fixable result.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from ..findings import Finding

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _region(f: Finding) -> dict[str, Any]:
    return {"startLine": f.span.line, "startColumn": f.span.column, "endLine": f.span.end_line,
            "endColumn": f.span.end_column}


def _hunks(path: str, target: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(first line, last line, replacement) for each change `fix` would make to `path`."""
    from ..api import ScanOptions, fix_source
    from ..discover import file_kind

    kind = file_kind(Path(path))
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if kind is None or kind == "notebook":
        return []
    outcome = fix_source(data, path, kind, ScanOptions(target=target))
    if outcome.failed or not outcome.changed:
        return []
    from ..api import _before_text

    old = _before_text(data, kind).splitlines(keepends=True)
    new = outcome.source.splitlines(keepends=True)
    offsets = [0]
    for line in old:
        offsets.append(offsets[-1] + len(line))
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1 and i2 - i1 > 1:
            # Line-for-line changes: one replacement per line, so each finding gets its own.
            for k in range(i2 - i1):
                out.append((i1 + k + 1, i1 + k + 1, {
                    "deletedRegion": {"charOffset": offsets[i1 + k], "charLength": len(old[i1 + k])},
                    "insertedContent": {"text": new[j1 + k]}}))
            continue
        replacement = {"deletedRegion": {"charOffset": offsets[i1], "charLength": offsets[i2] - offsets[i1]},
                       "insertedContent": {"text": "".join(new[j1:j2])}}
        out.append((i1 + 1, max(i1 + 1, i2), replacement))
    return out


def render_sarif(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    from ..catalogue import load_catalogue

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
    target = (stats or {}).get("target", "portable")
    hunks = {path: _hunks(path, target) for path in sorted({f.path for f in findings if f.fixable})}
    given: set[tuple[str, int]] = set()
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.rule_id,
            "ruleIndex": index[f.rule_id],
            "level": _LEVEL[f.severity.value],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}, "region": _region(f)}}],
            "partialFingerprints": {"neuronMigrator/v1": f.fingerprint},
            "properties": {"category": f.category, "fixable": f.fixable, "isTest": f.is_test},
        }
        if f.cell is not None:
            result["properties"]["cell"] = f.cell
        if f.fixable and f.cell is None:
            spans = [(g.span.line, g.span.end_line) for g in findings if g.path == f.path and g.fixable]
            first = (f.path, -1) not in given
            mine = []
            for n, (a, b, replacement) in enumerate(hunks.get(f.path, [])):
                touches = a <= f.span.end_line and b >= f.span.line
                orphan = not any(a <= end and b >= start for start, end in spans)
                if (f.path, n) not in given and (touches or (first and orphan)):
                    mine.append(replacement)
                    given.add((f.path, n))
            given.add((f.path, -1))
            if mine:
                result["fixes"] = [{
                    "description": {"text": f"{f.fix.title} ({f.fix.safety.value} fix)"},
                    "artifactChanges": [{"artifactLocation": {"uri": f.path}, "replacements": mine}],
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
