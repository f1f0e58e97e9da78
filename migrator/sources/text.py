"""Line-based source kinds (shell, Dockerfile, requirements, conda, pyproject, setup.cfg, CUDA
sources): regular-expression rules on the decoded text, fixed line by line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from migrator.core.findings import Finding
from migrator.core.lines import split_lines
from migrator.core.options import ScanOptions
from migrator.scan.suppress import apply_suppressions
from migrator.sources.codec import decode_text

if TYPE_CHECKING:
    from migrator.fix.outcome import FixOutcome
    from migrator.scan.engine import RuleIndex

__all__ = ["scanner", "fixer"]


def scanner(kind: str):
    def scan(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", is_test: bool, unused: bool) -> list[Finding]:
        from migrator.scan.engine import scan_text

        text = decode_text(raw)
        lines = split_lines(text)
        found = scan_text(text, path, kind, index, options.target, is_test=is_test)
        return apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused)

    return scan


def fixer(kind: str):
    def fix(text: str, path: str, options: ScanOptions, index: "RuleIndex", unsafe: bool, is_test: bool,
            only: tuple | None, partial: bool) -> "FixOutcome":
        from migrator.fix.textfix import fix_text_lines
        from migrator.scan.engine import scan_text

        lines = split_lines(text)
        findings = apply_suppressions(scan_text(text, path, kind, index, options.target, is_test=is_test),
                                      lambda cell: lines, path=path)
        if only is not None:
            findings = [f for f in findings if (f.rule_id, f.span.line, f.span.column) == only]
        return fix_text_lines(text, findings, options.target, unsafe=unsafe, file_kind=kind)

    return fix
