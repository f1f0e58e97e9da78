"""What a fix did to one file, and whether a finding's fix may be applied (shared by all fixers)."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrator.core.findings import Finding, Safety

__all__ = ["FixOutcome", "allowed"]


@dataclass
class FixOutcome:
    """What one file's fix did.

    Attributes:
        source: the new text (equal to the input when nothing applied).
        applied: findings whose fix was applied, and those another fix's rewrite resolved.
        resolved: the part of `applied` that another fix's rewrite resolved (the `mode=` of a
            `torch.compile(...)` that a backend fix rewrites whole): their edits are that fix's.
        manual: findings left for a person, each with the reason.
        failed: set when the whole file's rewrite was refused (the reason); source is then the input.
    """

    source: str
    applied: list[Finding] = field(default_factory=list)
    resolved: list[Finding] = field(default_factory=list)
    manual: list[tuple[Finding, str]] = field(default_factory=list)
    failed: str | None = None
    # A finding left for a person, as it was in the input (positions before the rewrite), by id.
    before: dict[int, Finding] = field(default_factory=dict)

    def as_before(self, finding: Finding) -> Finding:
        """The finding with its position in the input (what a diff reader sees)."""
        return self.before.get(id(finding), finding)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def allowed(finding: Finding, unsafe: bool) -> str | None:
    """None when the fix may be applied, else why not."""
    if finding.fix is None:
        return "no automatic fix: needs a person"
    if finding.plan is not None and finding.plan.context.get("manual_reason"):
        return finding.plan.context["manual_reason"]
    if not finding.fix.available:
        if finding.plan is not None and finding.plan.rule.fix["kind"] == "text" and finding.plan.node is not None:
            return "no rewrite in Python code (this rule's fix edits command lines in shell, Dockerfile and requirements files): change the value by hand"
        return "no automatic fix for this target"
    if finding.fix.safety is Safety.UNSAFE and not unsafe:
        return f"unsafe fix available ({finding.fix.title}): rerun with --unsafe-fixes"
    return None
