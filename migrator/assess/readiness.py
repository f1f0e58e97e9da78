"""Readiness and effort of a tree, from the scan's findings and what `fix` did with them
(assess, part 1). No second scanner: the findings are the scan's, and "rewritten" means `fix`
applied that finding's rewrite in memory.

Effort per finding, in hours [low, high]: `none` when `fix` rewrites it (with `--unsafe-fixes`
also the unsafe rewrites), else its rule's bucket for the target (`effort:` in the rule file;
`catalogue.DEFAULT_EFFORT` when a team rule names none); a blocker's port counts once per rule
and library named (the other findings of it count `low`), and a CUDA-only library imported with a
fallback (`try/except ImportError`, `if is_x_available():`) is no blocker and counts `low`. The hours of each bucket are stated
assumptions (data/assumptions.yaml, overridable in the fleet file).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Iterable

from migrator.core.catalogue import EFFORTS, Catalogue
from migrator.core.findings import Finding

__all__ = ["finding_key", "readiness_section", "effort_section"]

SAFE, UNSAFE = "safe", "unsafe"


def finding_key(f: Finding) -> tuple:
    """What identifies one finding across a scan and a fix of the same bytes."""
    return (f.path, f.cell, f.rule_id, f.span.line, f.span.column)


_NAMED = re.compile(r"`([A-Za-z_][\w-]*)")


def _port_key(f: Finding) -> tuple[str, str]:
    """One port per blocker rule and library (or kernel) named: `deepspeed` and `deepspeed.utils`
    in 20 files are one replacement of deepspeed, not twenty."""
    m = _NAMED.search(f.message)
    return (f.rule_id, m.group(1) if m else f.message)


class _Buckets:
    """Effort bucket per finding. A blocker's port is counted once per rule and library; the
    other findings of that port count as `low` (wiring the replacement in)."""

    def __init__(self, rewritten: dict[tuple, str], catalogue: Catalogue, target: str, unsafe_fixes: bool,
                 optional: set[tuple[str, int]]) -> None:
        self.rewritten, self.catalogue, self.target, self.unsafe_fixes = rewritten, catalogue, target, unsafe_fixes
        self.optional = optional
        self.ported: set[tuple[str, str]] = set()

    def blocker(self, f: Finding) -> str | None:
        """Why `f` blocks the move, or None (rewritten, no blocker rule, or an optional import)."""
        if self.rewritten.get(finding_key(f)) is not None or (f.path, f.span.line) in self.optional:
            return None
        rule = _rule(self.catalogue, f.rule_id)
        return rule.blocker if rule is not None else None

    def __call__(self, f: Finding) -> str:
        how = self.rewritten.get(finding_key(f))
        if how == SAFE or (how == UNSAFE and self.unsafe_fixes):
            return "none"
        rule = _rule(self.catalogue, f.rule_id)
        if rule is None:
            return "medium"
        bucket = rule.effort_for(self.target)
        if rule.blocker and (f.path, f.span.line) in self.optional:
            return "low"  # the code has a fallback: check that it is the path Neuron takes
        if rule.blocker:
            key = _port_key(f)
            if key in self.ported:
                return "low"
            self.ported.add(key)
        return bucket


def readiness_section(findings: Iterable[Finding], rewritten: dict[tuple, str], catalogue: Catalogue, target: str,
                      unsafe_fixes: bool, files: int, lines: int, effort_hours: dict[str, Any],
                      optional: set[tuple[str, int]] = frozenset()) -> dict[str, Any]:
    """The report's `readiness` part.

    Args:
        rewritten: finding_key -> "safe" (fix rewrites it) or "unsafe" (only with --unsafe-fixes).
        optional: (path, line) of imports with a fallback (`inventory.Inventory.optional_imports`):
            a CUDA-only library imported there is not a blocker.
        effort_hours: the assumptions' `effort` mapping ({bucket: {hours: [lo, hi], meaning}}).
    """
    findings = list(findings)
    cats: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(
        ("findings", "auto_fixed", "unsafe_fixed", "manual", "blockers"), 0))
    per_file: dict[str, dict[str, Any]] = {}
    blockers = []
    touched: set[tuple[str, Any, int]] = set()
    bucket_of = _Buckets(rewritten, catalogue, target, unsafe_fixes, set(optional))
    for f in findings:
        how = rewritten.get(finding_key(f))
        blocker = bucket_of.blocker(f)
        c = cats[f.category]
        d = per_file.setdefault(f.path, {"path": f.path, "findings": 0, "auto_fixed": 0, "unsafe_fixed": 0,
                                         "manual": 0, "blockers": 0, "lines": set(), "effort_hours": [0.0, 0.0]})
        for counts in (c, d):
            counts["findings"] += 1
            counts["auto_fixed" if how == SAFE else "unsafe_fixed" if how == UNSAFE else "manual"] += 1
            if blocker:
                counts["blockers"] += 1
        if blocker:
            blockers.append({"rule_id": f.rule_id, "path": f.path, "line": f.span.line, "cell": f.cell,
                             "message": f.message, "reason": blocker})
        lo, hi = effort_hours[bucket_of(f)]["hours"]
        d["effort_hours"][0] += lo
        d["effort_hours"][1] += hi
        for line in range(f.span.line, max(f.span.line, f.span.end_line) + 1):
            d["lines"].add((f.cell, line))
            touched.add((f.path, f.cell, line))
    details = []
    for d in per_file.values():
        d["lines_affected"] = len(d.pop("lines"))
        d["effort_hours"] = [round(x, 2) for x in d["effort_hours"]]
        details.append(d)
    details.sort(key=lambda d: (-d["effort_hours"][1], -d["findings"], d["path"]))
    total = len(findings)
    auto = sum(c["auto_fixed"] for c in cats.values())
    unsafe = sum(c["unsafe_fixed"] for c in cats.values())
    return {
        "files": files, "lines": lines, "files_with_findings": len(per_file), "findings": total,
        "auto_fixed": auto, "unsafe_fixed": unsafe, "manual": total - auto - unsafe, "blockers": len(blockers),
        "lines_affected": len(touched),
        "auto_fixed_percent": round(100 * (auto + (unsafe if unsafe_fixes else 0)) / total, 1) if total else 100.0,
        "unsafe_fixes": unsafe_fixes,
        "by_category": [{"category": k, **v} for k, v in sorted(cats.items(), key=lambda kv: (-kv[1]["findings"], kv[0]))],
        "blocker_list": blockers[:200],
        "files_detail": details,
    }


def _rule(catalogue: Catalogue, rule_id: str):
    try:
        return catalogue.by_id(rule_id)
    except KeyError:
        return None


def effort_section(findings: Iterable[Finding], rewritten: dict[tuple, str], catalogue: Catalogue, target: str,
                   unsafe_fixes: bool, assumptions: dict[str, Any], files_detail: list[dict[str, Any]],
                   optional: set[tuple[str, int]] = frozenset()) -> dict[str, Any]:
    """The report's `effort` part: findings per bucket, summed hours, person-days, dominant files."""
    buckets = assumptions["effort"]
    counts = dict.fromkeys(EFFORTS, 0)
    hours = [0.0, 0.0]
    bucket_of = _Buckets(rewritten, catalogue, target, unsafe_fixes, set(optional))
    for f in findings:
        b = bucket_of(f)
        counts[b] += 1
        hours[0] += buckets[b]["hours"][0]
        hours[1] += buckets[b]["hours"][1]
    per_day = assumptions["hours_per_day"]
    top = [d for d in files_detail if d["effort_hours"][1] > 0][:10]
    dominant = [{"path": d["path"], "hours": d["effort_hours"],
                 "share": round(d["effort_hours"][1] / hours[1], 3) if hours[1] else 0.0} for d in top]
    return {"buckets": {b: buckets[b] for b in EFFORTS}, "counts": counts,
            "hours": [round(h, 2) for h in hours], "hours_per_day": per_day,
            "person_days": [round(hours[0] / per_day, 2), round(hours[1] / per_day, 2)],
            "dominant_files": dominant}
