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
from migrator.sources.codec import checked, prefilter_text

if TYPE_CHECKING:
    from migrator.fix.outcome import FixOutcome
    from migrator.scan.engine import RuleIndex

__all__ = ["scan", "fix", "is_script", "noqa_may_apply", "statement_lines_of"]


def scan(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", is_test: bool, unused: bool) -> list[Finding]:
    """Findings of one Python file, `# noqa` applied; one NRN000 finding when it is not parsed."""
    import libcst as cst

    from migrator.scan.engine import mark_blocked, scan_python
    from migrator.sources.parse import parse_module
    from migrator.sources.prune import prune_source, statement_lines

    # A UTF-16 file hides its text from the byte-level prefilter: it is reported, not passed.
    if not (index.python_may_match(prefilter_text(raw), path) or (unused and b"noqa" in raw) or b"\x00" in raw):
        return []
    problem, tree = checked(raw)
    if problem:
        return [not_scanned(path, problem, severity=Severity.ERROR)]
    # Statements no rule can match are left out before libcst parses (prune.py); with
    # unused-noqa reporting every comment matters, so the file is parsed whole.
    pruned = None if unused or tree is None else prune_source(raw, tree, index, path)
    if pruned is not None and not pruned.may_match:
        return []
    # Where each statement starts, so positions are generated for the statements with findings only.
    lines_of_statements = statement_lines(tree, pruned) if tree is not None else None
    del tree
    try:
        module = parse_module(raw if pruned is None else pruned.source)
    except cst.ParserSyntaxError as exc:
        return [not_scanned(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)]
    except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return [not_scanned(path, f"cannot decode: {exc}")]
    except RecursionError:
        return [not_scanned(path, "too deeply nested to parse")]
    line_map = None
    try:
        source = original = raw.decode(module.encoding)
        if pruned is not None:
            source = pruned.source.decode(module.encoding)
            line_map = lambda number: (None, pruned.line(number))  # noqa: E731
    except (UnicodeDecodeError, LookupError):
        if pruned is not None:
            module, lines_of_statements = cst.parse_module(raw), None
        source = original = module.code
    found = scan_python(module, path, index, options.target, is_test=is_test, source=source, original=original,
                        line_map=line_map, statement_lines=lines_of_statements)
    lines = split_lines(original)
    if unused or noqa_may_apply(found, lines):  # only then can a `# noqa` matter (tokenizing costs)
        lines = python_comment_lines(lines)
    # A file `fix` leaves whole (a CUDA-only call it cannot rewrite) has nothing fixable.
    return mark_blocked(apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused))


def noqa_may_apply(found: list[Finding], lines: list[str]) -> bool:
    """Whether a `# noqa` can suppress one of `found`: one of the lines a finding spans, or a
    line that may be a file-level `# neuron-migrator: noqa`, says noqa. Where none does, the
    raw lines suppress exactly what the comment-only lines would (suppress.py)."""
    if not found:
        return False
    # Each line is read once, however many findings it holds (one line may hold thousands).
    checked: set[int] = set()
    for finding in found:
        for number in range(finding.span.line, min(finding.span.end_line, len(lines)) + 1):
            if number not in checked:
                checked.add(number)
                if "noqa" in lines[number - 1].lower():
                    return True
    return any("noqa" in line.lower() and "neuron-migrator" in line.lower() for line in lines)


def statement_lines_of(code: str) -> list[int] | None:
    """Where each top-level statement of `code` starts, from CPython's parser (a tenth of the
    cost of generating the module's text to place findings; positions.node_ranges checks each
    statement's text and falls back to the whole module), or None when CPython cannot parse it."""
    import ast

    from migrator.sources.prune import statement_lines

    try:
        return statement_lines(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def fix(text: str, path: str, options: ScanOptions, index: "RuleIndex", unsafe: bool, is_test: bool,
        only: tuple | None, partial: bool) -> "FixOutcome":
    """One Python file's rewrite (see `fixer.fix_python`). With `options.fix_edits` it is read
    only for its edits (`api._with_edits`): what is left for a person is not worked out."""
    from migrator.fix.fixer import fix_python, module_code  # libcst.codemod is slow to import: only for Python
    from migrator.sources.parse import parse_module
    from migrator.scan.engine import scan_python

    def rescan(module):
        code = module_code(module)  # generated once per module (the fixer asks for it too)
        lines = python_comment_lines(split_lines(code))
        found = scan_python(module, path, index, options.target, is_test=is_test, source=code,
                            statement_lines=statement_lines_of(code))
        return apply_suppressions(found, lambda cell: lines, path=path)

    # The unvalidated parse (sources/parse.py): the fixer's own nodes are still validated.
    return fix_python(text, rescan, options.target, unsafe=unsafe, only=only, partial=partial,
                      prune_imports=is_script(text, path), torch_version=options.torch_version, parse=parse_module,
                      leftovers=not options.fix_edits)


def is_script(text: str, path: str) -> bool:
    """Whether `fix` may drop the imports it made unused: another module may import a name from
    this one (`from common import autocast`), so only from scripts, which nothing imports."""
    return re.search(r"""__name__\s*==\s*['"]__main__['"]""", text) is not None and not path.endswith("__init__.py")
