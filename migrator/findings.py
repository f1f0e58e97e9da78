"""The one record every part of neuron-migrator passes around.

Lines and columns are 1-based everywhere (columns count characters, as editors do).
A notebook finding also carries the 1-based cell number; its line is then within the cell.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Severity", "Safety", "Span", "Fix", "Finding", "CATEGORIES"]

# Category slugs by the hundreds digit of a rule id (architecture.md, "Names").
CATEGORIES: dict[int, str] = {
    0: "tool",  # NRN000 parse-error, NRN001 unused-noqa
    1: "device",
    2: "runtime",
    3: "precision",
    4: "distributed",
    5: "compilation",
    6: "kernels",
    7: "environment",
    8: "dependencies",
    9: "custom",
}


class Severity(str, enum.Enum):
    """How much a finding blocks a migration; ordered info < warning < error."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Safety(str, enum.Enum):
    """Whether a fix keeps behaviour on the GPU (`safe`) or may change it (`unsafe`)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Span:
    """Where a finding is: 1-based start and end line/column (end column is exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Fix:
    """A rewrite offered for one finding.

    Attributes:
        title: what the fix changes, imperative (`Use torch.accelerator.synchronize`).
        safety: `safe` fixes are applied by `fix`; `unsafe` ones only with `--unsafe-fixes`.
        available: False when the rule has a fix for other targets but not the chosen one.
    """

    title: str
    safety: Safety
    available: bool = True


@dataclass(frozen=True)
class Finding:
    """One problem found at one place.

    Attributes:
        rule_id: `NRN` + three digits; the hundreds digit is the category.
        rule_name: kebab-case name of the flagged pattern.
        category: slug from `CATEGORIES`.
        severity: severity for the target the scan ran with.
        path: path as given or found, POSIX separators.
        span: location (1-based).
        message: what is wrong.
        fix: the offered rewrite, or None.
        cell: 1-based notebook cell number, or None.
        is_test: True when the path looks like a test file.
        snippet: the flagged source text (used for the fingerprint).
    """

    rule_id: str
    rule_name: str
    category: str
    severity: Severity
    path: str
    span: Span
    message: str
    fix: Fix | None = None
    cell: int | None = None
    is_test: bool = False
    snippet: str = ""
    # The libcst node and fix plan stay out of equality, repr and JSON (Fixit's LintViolation).
    node: Any = field(default=None, compare=False, repr=False, hash=False)
    plan: Any = field(default=None, compare=False, repr=False, hash=False)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.available

    @property
    def fingerprint(self) -> str:
        """A hash of rule id, path and flagged text: stable when lines above move."""
        text = " ".join(self.snippet.split())
        raw = f"{self.rule_id}\0{self.path}\0{self.cell or 0}\0{text}"
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (see README, "JSON output")."""
        return {
            "rule_id": self.rule_id,
            "rule_name": self.rule_name,
            "category": self.category,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "cell": self.cell,
            "message": self.message,
            "fixable": self.fixable,
            "fix_safety": self.fix.safety.value if self.fixable else None,
            "fix_title": self.fix.title if self.fixable else None,
            "is_test": self.is_test,
            "fingerprint": self.fingerprint,
        }
