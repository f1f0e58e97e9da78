"""Python files as a source kind: parsed with libcst after the guard's checks, scanned by the
engine, fixed by the fixer."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from migrator.core.catalogue import not_scanned
from migrator.core.findings import Finding, Severity
from migrator.core.lines import split_lines
from migrator.core.options import ScanOptions
from migrator.scan.suppress import apply_suppressions, python_comment_lines
from migrator.sources.codec import prefilter_text, unparsable

if TYPE_CHECKING:
    from migrator.fix.outcome import FixOutcome
    from migrator.scan.engine import RuleIndex

__all__ = ["scan", "fix"]


def scan(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", is_test: bool, unused: bool) -> list[Finding]:
    """Findings of one Python file, `# noqa` applied; one NRN000 finding when it is not parsed."""
    import libcst as cst

    from migrator.scan.engine import mark_blocked, scan_python

    # A UTF-16 file hides its text from the byte-level prefilter: it is reported, not passed.
    if not (index.python_may_match(prefilter_text(raw), path) or (unused and b"noqa" in raw) or b"\x00" in raw):
        return []
    problem = unparsable(raw)
    if problem:
        return [not_scanned(path, problem, severity=Severity.ERROR)]
    try:
        module = cst.parse_module(raw)
    except cst.ParserSyntaxError as exc:
        return [not_scanned(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)]
    except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return [not_scanned(path, f"cannot decode: {exc}")]
    except RecursionError:
        return [not_scanned(path, "too deeply nested to parse")]
    try:
        source = raw.decode(module.encoding)
    except (UnicodeDecodeError, LookupError):
        source = module.code
    found = scan_python(module, path, index, options.target, is_test=is_test, source=source)
    lines = split_lines(source)
    if found or unused:  # only then can a `# noqa` matter (tokenizing costs)
        lines = python_comment_lines(lines)
    # A file `fix` leaves whole (a CUDA-only call it cannot rewrite) has nothing fixable.
    return mark_blocked(apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused))


def fix(text: str, path: str, options: ScanOptions, index: "RuleIndex", unsafe: bool, is_test: bool,
        only: tuple | None, partial: bool) -> "FixOutcome":
    """One Python file's rewrite (see `fixer.fix_python`)."""
    from migrator.fix.fixer import fix_python  # libcst.codemod is slow to import: only for Python
    from migrator.scan.engine import scan_python

    def rescan(module):
        lines = python_comment_lines(split_lines(module.code))
        found = scan_python(module, path, index, options.target, is_test=is_test)
        return apply_suppressions(found, lambda cell: lines, path=path)

    # Another module may import a name from this one (`from common import autocast`): unused
    # imports are dropped only from scripts, which nothing imports.
    script = re.search(r"""__name__\s*==\s*['"]__main__['"]""", text) is not None
    return fix_python(text, rescan, options.target, unsafe=unsafe, only=only, partial=partial,
                      prune_imports=script and not path.endswith("__init__.py"), torch_version=options.torch_version)
