"""Library entry points. Nothing here prints or exits; the CLI is a thin shell over these.

    report = scan_paths(["src/"], target="neuron")
    for finding in report.findings: ...
"""

from __future__ import annotations

import difflib
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import libcst as cst

from .catalogue import Catalogue, load_catalogue
from .discover import discover, is_test_path
from .engine import RuleIndex, scan_python, scan_text
from .findings import Finding, Severity, Span
from .fixer import FixOutcome, fix_python, fix_text_lines
from .fsutil import ChangedOnDisk, atomic_write, digest

__all__ = ["ScanOptions", "ScanReport", "FileFix", "scan_paths", "scan_source", "fix_paths", "fix_source"]


@dataclass(frozen=True)
class ScanOptions:
    """What to scan for.

    Attributes:
        target: `portable` (default), `neuron`, `xla` or `inf1`.
        select/ignore: rule id prefixes (`NRN2` = every runtime rule).
        exclude: gitignore-style patterns of paths to skip.
        jobs: worker processes (1 = in process).
    """

    target: str = "portable"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    jobs: int = 1


@dataclass
class ScanReport:
    """Findings plus run figures: files scanned, lines read, seconds of wall time."""

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    seconds: float = 0.0

    def count_at_or_above(self, level: Severity) -> int:
        return sum(1 for f in self.findings if f.severity.rank >= level.rank)


_INDEX_CACHE: dict[tuple, RuleIndex] = {}


def _index(options: ScanOptions) -> RuleIndex:
    key = (options.select, options.ignore, options.target)
    if key not in _INDEX_CACHE:
        catalogue = load_catalogue().select(options.select, options.ignore).for_target(options.target)
        _INDEX_CACHE[key] = RuleIndex(catalogue)
    return _INDEX_CACHE[key]


def _parse_error(path: str, message: str, line: int = 1, column: int = 1, cell: int | None = None) -> Finding:
    return Finding(
        rule_id="NRN000", rule_name="parse-error", category="parse", severity=Severity.WARNING,
        path=path, span=Span(line, column, line, column), message=f"file not scanned: {message}", cell=cell,
        snippet=message,
    )


def _decode(data: bytes) -> str:
    """Text of a non-Python file: UTF-8 (BOM allowed), else Latin-1 as a lossless fallback."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def scan_source(data: bytes | str, path: str, kind: str = "python", options: ScanOptions = ScanOptions()) -> list[Finding]:
    """Scan one file's content.

    Args:
        data: the raw bytes (encoding detected as Python does) or text.
        path: the path to report (POSIX).
        kind: `python`, `notebook`, `shell`, `dockerfile` or `requirements`.

    Returns:
        Findings in source order; a file that cannot be decoded or parsed yields one `NRN000`
        finding instead (the scan goes on).
    """
    index = _index(options)
    is_test = is_test_path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if kind == "python":
        if not index.python_may_match(raw.decode("utf-8", errors="replace")):
            return []
        try:
            module = cst.parse_module(raw)
        except cst.ParserSyntaxError as exc:
            return [_parse_error(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)]
        except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
            return [_parse_error(path, f"cannot decode: {exc}")]
        except RecursionError:
            return [_parse_error(path, "too deeply nested to parse")]
        try:
            source = raw.decode(module.encoding)
        except (UnicodeDecodeError, LookupError):
            source = None
        return scan_python(module, path, index, options.target, is_test=is_test, source=source)
    text = _decode(raw)
    if kind == "notebook":
        return _scan_notebook(text, path, index, options, is_test)
    return scan_text(text, path, kind, index, options.target, is_test=is_test)


def _scan_notebook(text: str, path: str, index: RuleIndex, options: ScanOptions, is_test: bool) -> list[Finding]:
    from .notebook import join_cells

    try:
        joined = join_cells(text)
    except ValueError as exc:
        return [_parse_error(path, str(exc))]
    findings: list[Finding] = []
    for cell, first, shell in joined.shell:
        findings += scan_text(shell, path, "shell", index, options.target, is_test=is_test, cell=cell, line_offset=first - 1)
    try:
        module = cst.parse_module(joined.source)
    except cst.ParserSyntaxError as exc:
        cell, line = joined.locate(exc.raw_line)
        return findings + [_parse_error(path, f"syntax error: {exc.message}", line, exc.raw_column + 1, cell)]
    findings += scan_python(module, path, index, options.target, is_test=is_test, line_map=joined.locate,
                            source=joined.source)
    findings.sort(key=lambda f: (f.cell or 0, f.span.line, f.span.column))
    return findings


def _scan_file(args: tuple[str, str, ScanOptions]) -> tuple[list[Finding], int]:
    path, kind, options = args
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return [_parse_error(path, f"cannot read: {exc.strerror}")], 0
    findings = scan_source(data, Path(path).as_posix(), kind, options)
    # Workers return plain findings: CST nodes stay in the process that parsed them.
    if options.jobs > 1:
        findings = [_strip(f) for f in findings]
    return findings, data.count(b"\n")


def _strip(f: Finding) -> Finding:
    from dataclasses import replace

    return replace(f, node=None, plan=None)


def scan_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions()) -> ScanReport:
    """Scan files and folders (see `discover` for what is walked).

    Raises:
        FileNotFoundError: a given path does not exist.
        catalogue.RuleError: a rule file is broken.
    """
    start = time.perf_counter()
    _index(options)  # fail early on a broken catalogue
    files = [(str(p), kind, options) for p, kind in discover(paths, options.exclude)]
    report = ScanReport(files=len(files))
    if options.jobs > 1 and len(files) > 1:
        with ProcessPoolExecutor(max_workers=options.jobs) as pool:
            results = list(pool.map(_scan_file, files, chunksize=max(1, len(files) // (options.jobs * 8))))
    else:
        results = [_scan_file(f) for f in files]
    for findings, lines in results:
        report.findings.extend(findings)
        report.lines += lines
    report.seconds = time.perf_counter() - start
    return report


# --------------------------------------------------------------------------------------------
@dataclass
class FileFix:
    """The outcome of fixing one file: old and new text, applied/manual findings, write status."""

    path: str
    before: str
    outcome: FixOutcome
    written: bool = False
    error: str | None = None

    @property
    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.outcome.source.splitlines(keepends=True),
            fromfile=f"a/{self.path.lstrip('/')}", tofile=f"b/{self.path.lstrip('/')}",
        ))


def fix_source(data: bytes | str, path: str, kind: str = "python", options: ScanOptions = ScanOptions(),
               unsafe: bool = False) -> FixOutcome:
    """Fix one file's content in memory; returns the new text and what was applied or left."""
    index = _index(options)
    raw = data if isinstance(data, bytes) else data.encode("utf-8")
    if kind == "python" and not index.python_may_match(raw.decode("utf-8", errors="replace")):
        return FixOutcome(_decode(raw))  # nothing the catalogue looks for: not parsed, not changed
    if isinstance(data, bytes):
        try:
            text = _decode_python(data) if kind == "python" else _decode(data)
        except cst.ParserSyntaxError as exc:
            return FixOutcome(_decode(data), failed=f"does not parse: {exc.message} (line {exc.raw_line})")
        except (UnicodeDecodeError, LookupError, SyntaxError, RecursionError) as exc:
            return FixOutcome(_decode(data), failed=f"cannot decode: {exc}")
    else:
        text = data
    is_test = is_test_path(path)
    if kind == "python":
        return fix_python(text, lambda m: scan_python(m, path, index, options.target, is_test=is_test), options.target, unsafe=unsafe)
    if kind == "notebook":
        return _fix_notebook(text, path, index, options, unsafe, is_test)
    findings = scan_text(text, path, kind, index, options.target, is_test=is_test)
    return fix_text_lines(text, findings, options.target, unsafe=unsafe)


def _decode_python(data: bytes) -> str:
    module = cst.parse_module(data) if data else cst.parse_module("")
    return module.code


def _fix_notebook(text: str, path: str, index: RuleIndex, options: ScanOptions, unsafe: bool, is_test: bool) -> FixOutcome:
    from .notebook import join_cells, split_cells

    try:
        joined = join_cells(text)
    except ValueError as exc:
        return FixOutcome(text, failed=str(exc))
    outcome = fix_python(
        joined.source,
        lambda m: scan_python(m, path, index, options.target, is_test=is_test, line_map=joined.locate),
        options.target, unsafe=unsafe,
    )
    for cell, first, shell in joined.shell:
        for finding in scan_text(shell, path, "shell", index, options.target, is_test=is_test, cell=cell, line_offset=first - 1):
            outcome.manual.append((finding, "no automatic fix for shell lines in notebooks"))
    if outcome.failed or not outcome.changed:
        outcome.source = text
        return outcome
    outcome.source = split_cells(joined, outcome.source)
    return outcome


def fix_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions(), *,
              unsafe: bool = False, write: bool = False) -> list[FileFix]:
    """Fix every file under `paths`; write only when `write` is True.

    A write is atomic and keeps the file's encoding, BOM, newline style and mode; a file that
    changed on disk since it was read, or whose rewrite fails, is left untouched and reported in
    `FileFix.error`. Files with nothing to report are omitted.
    """
    results: list[FileFix] = []
    for p, kind in discover(paths, options.exclude):
        path = p.as_posix()
        try:
            data = p.read_bytes()
        except OSError as exc:
            results.append(FileFix(path, "", FixOutcome(""), error=f"cannot read: {exc.strerror}"))
            continue
        try:
            outcome = fix_source(data, path, kind, options, unsafe)
        except Exception as exc:  # noqa: BLE001 - a crash in one file's rewrite leaves it untouched
            results.append(FileFix(path, "", FixOutcome(""), error=f"internal error while fixing: {exc!r}"))
            continue
        fixed = FileFix(path, _before_text(data, kind), outcome)
        if outcome.failed:
            fixed.error = outcome.failed
        if not outcome.changed and not outcome.manual and not outcome.failed:
            continue
        if write and outcome.changed and not outcome.failed:
            try:
                atomic_write(p, _encode(outcome.source, data, kind), expected_digest=digest(data))
                fixed.written = True
            except (ChangedOnDisk, OSError) as exc:
                fixed.error = str(exc)
        results.append(fixed)
    return results


def _before_text(data: bytes, kind: str) -> str:
    try:
        return _decode_python(data) if kind == "python" else _decode(data)
    except Exception:  # noqa: BLE001
        return _decode(data)


def _encode(text: str, original: bytes, kind: str) -> bytes:
    """Encode like the original: Python by its own coding cookie/BOM (libcst), others UTF-8/BOM."""
    if kind == "python":
        module = cst.parse_module(original)
        return cst.parse_module(text).with_changes(encoding=module.encoding).bytes
    bom = original.startswith(b"\xef\xbb\xbf")
    try:
        original.decode("utf-8-sig")
        return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    except UnicodeDecodeError:
        return text.encode("latin-1")
