"""The one record every part of neuron-migrator passes around.

Lines and columns are 1-based everywhere (columns count characters, as editors do).
A notebook finding also carries the 1-based cell number; its line is then within the cell.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Severity", "Safety", "Span", "Edit", "Fix", "Finding", "CATEGORIES", "FAIL_ON"]

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
        """0 for info, 1 for warning, 2 for error (the declaration order)."""
        return _ORDER.index(self)

    @classmethod
    def highest_first(cls) -> tuple["Severity", ...]:
        """error, warning, info: the order reports list them in."""
        return tuple(reversed(_ORDER))


_ORDER = tuple(Severity)
# `--fail-on` / `fail-on`: a severity, or never.
FAIL_ON = tuple(s.value for s in reversed(_ORDER)) + ("never",)


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
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column) with `content`.

    Positions are 1-based and count characters of the file as read (end exclusive), so an
    insertion has start == end. An edit that ends after the last line ends at
    (last line + 1, 1). A notebook's edits are not given (its lines are per cell).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_dict(self) -> dict[str, Any]:
        """ruff's JSON shape: `content`, `location` and `end_location` as {row, column}."""
        return {"content": self.content, "location": {"row": self.line, "column": self.column},
                "end_location": {"row": self.end_line, "column": self.end_column}}


@dataclass(frozen=True)
class Fix:
    """A rewrite offered for one finding (ruff's Fix: title, applicability, edits).

    Attributes:
        title: what the fix changes, imperative (`Use torch.accelerator.synchronize`).
        safety: the applicability: `safe` fixes are applied by `fix`; `unsafe` ones only with
            `--unsafe-fixes`.
        available: False when the rule has a fix for other targets but not the chosen one,
            when `fix` leaves the file whole (a blocker), and, where edits were asked for,
            when `fix` holds this instance back (a guard over CUDA code it cannot rewrite, a
            coupled partner: scan/coupling.py).
        edits: the text changes that apply this fix, with the imports or `DEVICE` constant it
            needs, in file order; empty unless the scan was asked for them
            (`ScanOptions.fix_edits`, which `--format json` and `sarif` set), or where the
            rewrite changes no line the finding spans. Applying one finding's edits gives
            what `fix` writes for it; an import edit is repeated on every fix that needs it.
    """

    title: str
    safety: Safety
    available: bool = True
    edits: tuple[Edit, ...] = ()


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
    def location(self) -> str:
        """`path:line:column`, with `cell N:` before the line in a notebook (raw: escape the
        path before it reaches a terminal, see `lines.printable`)."""
        cell = f"cell {self.cell}:" if self.cell else ""
        return f"{self.path}:{cell}{self.span.line}:{self.span.column}"

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.available

    @property
    def fingerprint(self) -> str:
        """A hash of rule id, path and flagged text: stable when lines above move."""
        text = " ".join(self.snippet.split())
        raw = f"{self.rule_id}\0{self.path}\0{self.cell or 0}\0{text}"
        # A file name that is not valid UTF-8 reaches us with surrogate escapes (os.fsdecode).
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:16]

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
            "fix": None if not self.fixable else {
                "applicability": self.fix.safety.value, "message": self.fix.title,
                "edits": [e.to_dict() for e in self.fix.edits]},
            "is_test": self.is_test,
            "fingerprint": self.fingerprint,
        }

    def to_record(self) -> dict[str, Any]:
        """Everything `from_dict` needs to rebuild this finding (the result cache's shape)."""
        return {
            "rule_id": self.rule_id, "rule_name": self.rule_name, "category": self.category,
            "severity": self.severity.value, "path": self.path,
            "span": [self.span.line, self.span.column, self.span.end_line, self.span.end_column],
            "message": self.message, "cell": self.cell, "is_test": self.is_test, "snippet": self.snippet,
            "fix": None if self.fix is None else [self.fix.title, self.fix.safety.value, self.fix.available,
                                                  [[e.line, e.column, e.end_line, e.end_column, e.content] for e in self.fix.edits]],
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Finding":
        """Rebuild a finding from `to_record()`'s shape, checking every field's type.

        Raises:
            ValueError, TypeError, KeyError: the data does not have that shape.
        """
        if not isinstance(data, dict):
            raise TypeError("a finding must be an object")
        text = {k: data[k] for k in ("rule_id", "rule_name", "category", "path", "message", "snippet")}
        if not all(isinstance(v, str) for v in text.values()):
            raise TypeError("text fields must be strings")
        span = data["span"]
        if not (isinstance(span, list) and len(span) == 4 and all(type(v) is int for v in span)):
            raise TypeError("span must be four integers")
        cell = data["cell"]
        if cell is not None and type(cell) is not int:
            raise TypeError("cell must be an integer or null")
        if not isinstance(data["is_test"], bool):
            raise TypeError("is_test must be a boolean")
        fix = data["fix"]
        if fix is not None:
            if not (isinstance(fix, list) and len(fix) == 4 and isinstance(fix[0], str) and isinstance(fix[2], bool)
                    and isinstance(fix[3], list)):
                raise TypeError("fix must be [title, safety, available, edits]")
            edits = []
            for e in fix[3]:
                if not (isinstance(e, list) and len(e) == 5 and all(type(v) is int for v in e[:4]) and isinstance(e[4], str)):
                    raise TypeError("an edit must be four integers and a string")
                edits.append(Edit(*e))
            fix = Fix(fix[0], Safety(fix[1]), fix[2], tuple(edits))
        return cls(severity=Severity(data["severity"]), span=Span(*span), cell=cell, is_test=data["is_test"],
                   fix=fix, **text)
