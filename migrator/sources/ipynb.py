"""Jupyter notebooks as a source kind: code cells joined into one module (see notebook.py),
`!cmd` lines scanned as shell; fixes are split back into the cells."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from migrator.core.catalogue import not_scanned
from migrator.core.findings import Finding
from migrator.core.lines import split_lines
from migrator.core.options import ScanOptions
from migrator.fix.outcome import FixOutcome
from migrator.scan.suppress import apply_suppressions, python_comment_lines
from migrator.sources.codec import decode_text, unparsable

if TYPE_CHECKING:
    from migrator.scan.engine import RuleIndex

__all__ = ["scan", "fix", "join_notebook"]


def scan(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", is_test: bool, unused: bool) -> list[Finding]:
    return scan_notebook(decode_text(raw), path, index, options, is_test)


def fix(text: str, path: str, options: ScanOptions, index: "RuleIndex", unsafe: bool, is_test: bool,
        only: tuple | None, partial: bool) -> FixOutcome:
    return fix_notebook(text, path, index, options, unsafe, is_test, only, partial)


def join_notebook(text: str, path: str):
    """The notebook's code cells joined, the parsed module (None when no part of it can be
    parsed safely) and the NRN000 findings for what was left out.

    A cell that is not usable (see `join_cells`), would crash the parser (guard.py) or does not
    parse on its own (Jupyter compiles each cell alone) is reported and left out; the other cells
    are scanned and fixed as usual.

    Raises:
        ValueError: not a notebook.
    """
    import libcst as cst

    from migrator.sources.notebook import cell_code, join_cells

    def hazard(code: str) -> str | None:
        return unparsable(code.encode("utf-8", "surrogatepass"))

    joined = join_cells(text)
    problems = [not_scanned(path, f"cell skipped: {why}", cell=cell, prefix="") for cell, why in joined.problems]
    if hazard(joined.source) is None:
        try:
            return joined, cst.parse_module(joined.source), problems
        except cst.ParserSyntaxError as exc:
            cell, line = joined.locate(exc.raw_line)
            whole = not_scanned(path, f"syntax error: {exc.message}", line, exc.raw_column + 1, cell)
    else:
        whole = not_scanned(path, hazard(joined.source) or "")
    broken: dict[int, Finding] = {}
    for cell, code in cell_code(joined).items():
        why = hazard(code)
        if why:
            broken[cell] = not_scanned(path, f"cell skipped: {why}", cell=cell, prefix="")
            continue
        try:
            cst.parse_module(code)
        except cst.ParserSyntaxError as exc:
            broken[cell] = not_scanned(path, f"cell skipped: syntax error: {exc.message}", exc.raw_line,
                                        exc.raw_column + 1, cell, prefix="")
    if not broken:
        return joined, None, problems + [whole]
    joined = join_cells(text, skip=broken)
    problems = sorted(problems + list(broken.values()), key=lambda f: f.cell or 0)
    if hazard(joined.source) is not None:
        return joined, None, problems + [whole]
    try:
        return joined, cst.parse_module(joined.source), problems
    except cst.ParserSyntaxError:
        return joined, None, problems + [whole]

def scan_notebook(text: str, path: str, index: "RuleIndex", options: ScanOptions, is_test: bool) -> list[Finding]:
    from migrator.scan.engine import mark_blocked, scan_python, scan_text

    try:
        joined, module, problems = join_notebook(text, path)
    except ValueError as exc:
        return [not_scanned(path, str(exc))]
    findings: list[Finding] = []
    for cell, first, shell in joined.shell:
        findings += scan_text(shell, path, "shell", index, options.target, is_test=is_test, cell=cell, line_offset=first - 1)
    if module is not None:
        findings += scan_python(module, path, index, options.target, is_test=is_test, line_map=joined.locate,
                                source=joined.source)
    findings.sort(key=lambda f: (f.cell or 0, f.span.line, f.span.column))
    cells = {i: python_comment_lines(split_lines(c.source))
             for i, c in enumerate(joined.notebook.cells, start=1) if c.cell_type == "code"}
    # Problems are added after suppression: a `# noqa` cannot hide a cell that was not scanned.
    found = mark_blocked(apply_suppressions(findings, lambda cell: cells.get(cell, []), path=path, cells=list(cells),
                                            report_unused=options.report_unused_noqa))
    return sorted(found + problems, key=lambda f: (f.cell or 0, f.span.line, f.span.column))

def fix_notebook(text: str, path: str, index: "RuleIndex", options: ScanOptions, unsafe: bool, is_test: bool,
                  only: tuple | None = None, partial: bool = False) -> FixOutcome:
    import libcst as cst  # noqa: F401

    from migrator.scan.engine import scan_python
    from migrator.fix.fixer import fix_python
    from migrator.sources.notebook import locator, split_cells

    try:
        joined, module, problems = join_notebook(text, path)
    except ValueError as exc:
        return FixOutcome(text, failed=str(exc))
    if module is None:
        return FixOutcome(text, failed=f"not rewritten: {problems[-1].snippet}")
    if '"worksheets"' in text and joined.notebook.get("nbformat", 4) >= 4 and _nbformat_major(text) < 4:
        return FixOutcome(text, failed="nbformat 3 notebooks are scanned but not rewritten; "
                                       "upgrade with `jupyter nbconvert --to notebook --nbformat 4`")
    cells = {i: split_lines(c.source) for i, c in enumerate(joined.notebook.cells, start=1) if c.cell_type == "code"}

    def scan(module):
        # Locate by the cell markers of the current code: earlier passes may have added lines.
        code = module.code
        locate = locator(code)
        found = scan_python(module, path, index, options.target, is_test=is_test, line_map=locate, source=code)
        current: dict[int, list[str]] = {}
        for number, line in enumerate(split_lines(code), start=1):
            cell, _ = locate(number)
            if not line.startswith("# nrn-cell "):
                current.setdefault(cell, []).append(line)
        current = {cell: python_comment_lines(lines) for cell, lines in current.items()}
        return apply_suppressions(found, lambda cell: current.get(cell, []), path=path)

    outcome = fix_python(joined.source, scan, options.target, unsafe=unsafe, only=only, partial=partial,
                         torch_version=options.torch_version)
    outcome.manual.extend((p, "cell left unchanged: it was not scanned") for p in problems)
    if outcome.failed:
        outcome.source = text
        return outcome
    shell_changed = _fix_shell_lines(joined, path, index, options, unsafe, is_test, cells, outcome, only)
    if not outcome.changed and not shell_changed:
        outcome.source = text
        return outcome
    outcome.source = split_cells(joined, outcome.source)
    return outcome

def _fix_shell_lines(joined, path: str, index, options: ScanOptions, unsafe: bool, is_test: bool, cells, outcome, only) -> bool:
    """Apply text fixes to `!cmd` lines (in joined.magics); `%%bash` cells are left for a person."""
    from migrator.scan.engine import scan_text
    from migrator.fix.textfix import fix_text_lines

    changed = False
    for cell, first, shell in joined.shell:
        found = scan_text(shell, path, "shell", index, options.target, is_test=is_test, cell=cell, line_offset=first - 1)
        found = apply_suppressions(found, lambda c: cells.get(c, []), path=path)
        if only is not None:
            found = [f for f in found if (f.rule_id, f.span.line, f.span.column) == only]
        key = f"{cell}.{first}"
        magic = joined.magics.get(key, "")
        if not found:
            continue
        if not magic.lstrip().startswith(("!", "%")) or "\n" in shell:
            outcome.manual.extend((f, "no automatic fix for %%bash cells in notebooks") for f in found)
            continue
        # Spans count lines within the cell; the shell text here is the one line.
        local = [replace(f, span=replace(f.span, line=1)) for f in found]
        fixed = fix_text_lines(shell, local, options.target, unsafe=unsafe, file_kind="shell")
        original = {id(a): b for a, b in zip(local, found)}  # report at the cell line, not line 1
        outcome.manual.extend((original[id(f)], why) for f, why in fixed.manual)
        outcome.applied.extend(original[id(f)] for f in fixed.applied)
        if fixed.source != shell:
            indent = magic[: len(magic) - len(magic.lstrip())]
            joined.magics[key] = f"{indent}{magic.lstrip()[0]}{fixed.source}"
            changed = True
    return changed

def _nbformat_major(text: str) -> int:
    import json

    try:
        return int(json.loads(text).get("nbformat", 4))
    except (ValueError, TypeError, AttributeError):
        return 4
