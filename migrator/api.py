"""Library entry points. Nothing here prints or exits; the CLI is a thin shell over these.

    report = scan_paths(["src/"], ScanOptions(target="neuron"))
    for finding in report.findings: ...
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from .catalogue import Catalogue, load_catalogue
from .discover import discover, is_test_path
from .findings import Finding, Severity, Span
from .fsutil import ChangedOnDisk, Unreadable, atomic_write, digest, read_limited
from .lines import printable, split_lines
from .suppress import apply_suppressions, python_comment_lines

if TYPE_CHECKING:
    from .engine import RuleIndex
    from .outcome import FixOutcome

__all__ = ["ScanOptions", "ScanReport", "FileFix", "scan_paths", "scan_source", "fix_paths", "fix_source"]


@dataclass(frozen=True)
class ScanOptions:
    """What to scan for.

    Attributes:
        target: `portable` (default), `neuron`, `xla` or `inf1`.
        select/ignore: rule id prefixes (`NRN2` = every runtime rule).
        exclude: gitignore-style patterns of paths to skip.
        test_files: `scan` (default; findings are marked `is_test`), `lower` (one severity lower
            in test files) or `exclude` (test files are not reported).
        per_file_ignores: (gitignore-style pattern, rule id prefixes) pairs; patterns are
            relative to `root` (the folder of the configuration file).
        extend_rules: extra rule folders (team rules, NRN9xx).
        report_unused_noqa: report `# noqa` codes that suppress nothing (NRN001).
        jobs: worker processes (1 = in process; never more than the CPUs or the files).
        force_exclude: apply `exclude` to files named in `paths` too (pre-commit names each file).
        cache_dir: where to keep results between runs (None = no cache; the CLI uses the
            user cache folder, see `cache.user_cache_dir`).
        max_file_size: files larger than this many bytes are not read (one NRN000 finding
            instead); parsing costs about 500 bytes of memory per byte of Python source.
        progress: callback(done, total) after each file, for progress bars.
    """

    target: str = "portable"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: Path | None = None
    extend_rules: tuple[Path, ...] = ()
    report_unused_noqa: bool = False
    jobs: int = 1
    cache_dir: Path | None = None
    force_exclude: bool = False
    max_file_size: int = 5 * 1024 * 1024  # the largest .py file in PyTorch 2.13 is 1.3 MiB
    test_files: str = "scan"
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)


@dataclass
class ScanReport:
    """Findings plus run figures: files scanned, lines read, seconds of wall time, cache hits."""

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    seconds: float = 0.0
    cached: int = 0

    @property
    def internal_errors(self) -> int:
        """Files on which the tool itself failed (NRN000 internal-error; the CLI exits 2)."""
        return sum(1 for f in self.findings if f.rule_name == "internal-error")

    def count_at_or_above(self, level: Severity) -> int:
        return sum(1 for f in self.findings if f.severity.rank >= level.rank)


_INDEX_CACHE: dict[tuple, "RuleIndex"] = {}
PARALLEL_MIN_BYTES = 512 * 1024


def catalogue_for(options: ScanOptions) -> Catalogue:
    """The rules a scan with `options` runs (selection and target applied)."""
    return load_catalogue(options.extend_rules).select(options.select, options.ignore).for_target(options.target)


def _index(options: ScanOptions) -> "RuleIndex":
    from .engine import RuleIndex  # libcst loads only when something must be parsed

    key = (options.select, options.ignore, options.target, options.extend_rules)
    if key not in _INDEX_CACHE:
        everything = load_catalogue(options.extend_rules).for_target(options.target)
        enabled = {r.id for r in catalogue_for(options).rules}
        _INDEX_CACHE[key] = RuleIndex(everything, enabled)
    return _INDEX_CACHE[key]


def _parse_error(path: str, message: str, line: int = 1, column: int = 1, cell: int | None = None,
                 prefix: str = "file not scanned: ", severity: Severity = Severity.WARNING) -> Finding:
    return Finding(
        rule_id="NRN000", rule_name="parse-error", category="tool", severity=severity,
        path=path, span=Span(line, column, line, column), message=f"{prefix}{message}", cell=cell,
        snippet=message,
    )


def _internal_error(path: str, exc: BaseException) -> Finding:
    """A bug in the tool on one file: reported, the run goes on, and the exit code becomes 2."""
    return replace(_parse_error(path, f"internal error: {exc!r}"), rule_name="internal-error")


# UTF-32 first: its little-endian BOM starts with UTF-16's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _wide_encoding(data: bytes) -> str | None:
    """`utf-16-le` and the like for a UTF-16/32 file (by its BOM), else None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def _decode(data: bytes) -> str:
    """Text of a non-Python file: UTF-8 (BOM allowed), UTF-16/32 with a BOM (Windows editors
    save requirements files so), else Latin-1 as a lossless fallback."""
    wide = _wide_encoding(data)
    if wide:
        try:
            return data[4 if "32" in wide else 2:].decode(wide)
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


@contextlib.contextmanager
def _deep_recursion(limit: int = 8000):
    """Room for the recursive passes over a syntax tree as deep as guard.MAX_DEPTH allows
    (about 2.5 frames per level; CPython's default limit of 1,000 stops at ~400 levels)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _prefilter_text(raw: bytes) -> bytes:
    """The bytes the prefilter looks at: the source itself, or, under a coding cookie for a
    codec that is not ASCII-compatible (`utf-7`, `unicode_escape`: Python runs such a file),
    the decoded text, so a cookie cannot hide `torch.cuda` from the scan."""
    if b"coding" not in raw[:400]:
        return raw
    try:
        encoding = _python_encoding(raw)
    except (SyntaxError, LookupError):
        return raw
    if encoding in ("utf-8", "utf-8-sig", "ascii", "latin-1", "iso-8859-1") or encoding.startswith(("iso-8859", "cp125")):
        return raw
    try:
        return raw.decode(encoding).encode("utf-8", "surrogatepass")
    except (UnicodeDecodeError, LookupError, ValueError):
        return raw


def _unparsable(raw: bytes) -> str | None:
    """Why a Python source must not reach libcst (see guard.py), or None."""
    return _checked(raw)[0]


def _checked(raw: bytes):
    """`_unparsable`'s answer and the `ast` tree of the source (None when not parsed)."""
    from .guard import checked_tree

    if _wide_encoding(raw):
        return f"encoded as {_wide_encoding(raw)[:6].upper()}, which Python cannot run; save it as UTF-8", None
    if b"\x00" in raw:
        return "the file contains null bytes (binary, or UTF-16 without a byte-order mark)", None
    return checked_tree(raw)


def scan_source(data: bytes | str, path: str, kind: str = "python", options: ScanOptions = ScanOptions()) -> list[Finding]:
    """Scan one file's content.

    Args:
        data: the raw bytes (encoding detected as Python does) or text.
        path: the path to report (POSIX).
        kind: `python`, `notebook`, `shell`, `dockerfile` or `requirements`.

    Returns:
        Findings in source order, `# noqa` suppressions applied; a file that cannot be decoded
        or parsed yields one `NRN000` finding instead (the scan goes on).
    """
    index = _index(options)
    is_test = is_test_path(path)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    unused = options.report_unused_noqa
    try:
        with _deep_recursion():
            findings = _scan_source(raw, path, kind, options, index, is_test, unused)
    except RecursionError:
        findings = [_parse_error(path, "too deeply nested to scan")]
    timed_out = index.take_timeouts()
    if timed_out:
        findings.insert(0, _parse_error(path, f"rule {', '.join(timed_out)}: pattern search ran out of time "
                                           "on this file; those matches are missing", prefix="file partly scanned: "))
    return findings


def _scan_source(raw: bytes, path: str, kind: str, options: ScanOptions, index: "RuleIndex", is_test: bool,
                 unused: bool) -> list[Finding]:
    import libcst as cst

    from .engine import mark_blocked, scan_python, scan_text
    from .parse import parse_module
    from .prune import prune_source

    if kind == "python":
        # A UTF-16 file hides its text from the byte-level prefilter: it is reported, not passed.
        if not (index.python_may_match(_prefilter_text(raw), path) or (unused and b"noqa" in raw) or b"\x00" in raw):
            return []
        problem, tree = _checked(raw)
        if problem:
            return [_parse_error(path, problem, severity=Severity.ERROR)]
        # Statements no rule can match are blanked before libcst parses (prune.py); with
        # unused-noqa reporting every comment matters, so the file is parsed whole.
        pruned = None if unused or tree is None else prune_source(raw, tree, index, path)
        del tree
        if pruned is not None and not pruned.may_match:
            return []
        try:
            module = parse_module(raw if pruned is None else pruned.source)
        except cst.ParserSyntaxError as exc:
            return [_parse_error(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)]
        except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
            return [_parse_error(path, f"cannot decode: {exc}")]
        except RecursionError:
            return [_parse_error(path, "too deeply nested to parse")]
        line_map = None
        try:
            source = original = raw.decode(module.encoding)
            if pruned is not None:
                source = pruned.source.decode(module.encoding)
                line_map = lambda number: (None, pruned.line(number))  # noqa: E731
        except (UnicodeDecodeError, LookupError):
            if pruned is not None:
                module = cst.parse_module(raw)
            source = original = module.code
        found = scan_python(module, path, index, options.target, is_test=is_test, source=source, original=original,
                            line_map=line_map)
        lines = split_lines(original)
        if unused or _noqa_may_apply(found, lines):  # only then can a `# noqa` matter (tokenizing costs)
            lines = python_comment_lines(lines)
        # A file `fix` leaves whole (a CUDA-only call it cannot rewrite) has nothing fixable.
        return mark_blocked(apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused))
    text = _decode(raw)
    if kind == "notebook":
        return _scan_notebook(text, path, index, options, is_test)
    lines = split_lines(text)
    found = scan_text(text, path, kind, index, options.target, is_test=is_test)
    return apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused)


def _noqa_may_apply(found: list[Finding], lines: list[str]) -> bool:
    """Whether a `# noqa` can suppress one of `found`: one of the lines a finding spans, or a
    line that may be a file-level `# neuron-migrator: noqa`, says noqa. Where none does, the
    raw lines suppress exactly what the comment-only lines would (suppress.py)."""
    if not found:
        return False
    for finding in found:
        for number in range(finding.span.line, min(finding.span.end_line, len(lines)) + 1):
            if "noqa" in lines[number - 1].lower():
                return True
    return any("noqa" in line.lower() and "neuron-migrator" in line.lower() for line in lines)


def _join_notebook(text: str, path: str):
    """The notebook's code cells joined, the parsed module (None when no part of it can be
    parsed safely) and the NRN000 findings for what was left out.

    A cell that is not usable (see `join_cells`), would crash the parser (guard.py) or does not
    parse on its own (Jupyter compiles each cell alone) is reported and left out; the other cells
    are scanned and fixed as usual.

    Raises:
        ValueError: not a notebook.
    """
    import libcst as cst

    from .notebook import cell_code, join_cells

    def hazard(code: str) -> str | None:
        return _unparsable(code.encode("utf-8", "surrogatepass"))

    joined = join_cells(text)
    problems = [_parse_error(path, f"cell skipped: {why}", cell=cell, prefix="") for cell, why in joined.problems]
    if hazard(joined.source) is None:
        try:
            return joined, cst.parse_module(joined.source), problems
        except cst.ParserSyntaxError as exc:
            cell, line = joined.locate(exc.raw_line)
            whole = _parse_error(path, f"syntax error: {exc.message}", line, exc.raw_column + 1, cell)
    else:
        whole = _parse_error(path, hazard(joined.source) or "")
    broken: dict[int, Finding] = {}
    for cell, code in cell_code(joined).items():
        why = hazard(code)
        if why:
            broken[cell] = _parse_error(path, f"cell skipped: {why}", cell=cell, prefix="")
            continue
        try:
            cst.parse_module(code)
        except cst.ParserSyntaxError as exc:
            broken[cell] = _parse_error(path, f"cell skipped: syntax error: {exc.message}", exc.raw_line,
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


def _scan_notebook(text: str, path: str, index: "RuleIndex", options: ScanOptions, is_test: bool) -> list[Finding]:
    from .engine import mark_blocked, scan_python, scan_text

    try:
        joined, module, problems = _join_notebook(text, path)
    except ValueError as exc:
        return [_parse_error(path, str(exc))]
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


def _per_file_filter(options: ScanOptions) -> Callable[[Finding], bool]:
    """True for a finding that `per_file_ignores` does not drop."""
    if not options.per_file_ignores:
        return lambda f: True
    import pathspec

    root = (options.root or Path.cwd()).resolve()
    specs = [(pathspec.GitIgnoreSpec.from_lines([pattern]), codes) for pattern, codes in options.per_file_ignores]

    def keep(f: Finding) -> bool:
        try:
            rel = Path(f.path).resolve().relative_to(root).as_posix()
        except ValueError:
            rel = f.path
        return not any(spec.match_file(rel) and any(f.rule_id.startswith(c) for c in codes) for spec, codes in specs)

    return keep


_LOWER = {Severity.ERROR: Severity.WARNING, Severity.WARNING: Severity.INFO, Severity.INFO: Severity.INFO}


def _test_policy(f: Finding, policy: str) -> Finding:
    return replace(f, severity=_LOWER[f.severity]) if policy == "lower" and f.is_test else f


def _read(path: str, options: ScanOptions) -> bytes | Finding:
    """The file's bytes, or the NRN000 finding that says why it was not read."""
    try:
        return read_limited(path, options.max_file_size)
    except Unreadable as exc:
        # Python runs a file of any size: one left unscanned must not pass a blocking hook.
        too_big = "limit" in str(exc)
        return _parse_error(Path(path).as_posix(), str(exc), severity=Severity.ERROR if too_big else Severity.WARNING)
    except OSError as exc:
        return _parse_error(Path(path).as_posix(), f"cannot read: {exc.strerror or exc}")


def _scan_file(args: tuple[str, str, ScanOptions]) -> tuple[list[Finding], int]:
    path, kind, options = args
    data = _read(path, options)
    if isinstance(data, Finding):
        return [data], 0
    try:
        findings = scan_source(data, Path(path).as_posix(), kind, options)
    except Exception as exc:  # noqa: BLE001 - one file's crash is reported, the run goes on (exit 2)
        findings = [_internal_error(Path(path).as_posix(), exc)]
    # Results cross processes and the cache: CST nodes stay in the process that parsed them.
    return [_strip(f) for f in findings] if options.jobs > 1 or options.cache_dir else findings, data.count(b"\n")


def _strip(f: Finding) -> Finding:
    return replace(f, node=None, plan=None)


def scan_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions()) -> ScanReport:
    """Scan files and folders (see `discover` for what is walked).

    With `options.cache_dir`, files whose content, catalogue, target and tool version are
    unchanged since the last run are not parsed again (results are identical either way).

    Raises:
        FileNotFoundError: a given path does not exist.
        catalogue.RuleError: a rule file is broken.
    """
    from .cache import ResultCache

    start = time.perf_counter()
    catalogue = catalogue_for(options)  # fail early on a broken catalogue
    unlisted: list[tuple[Path, str]] = []
    files = [(str(p), kind) for p, kind in discover(paths, options.exclude, force_exclude=options.force_exclude,
                                                    root=options.root, errors=unlisted)]
    report = ScanReport(files=len(files))
    report.findings.extend(_parse_error(where.as_posix(), why, prefix="") for where, why in unlisted)
    cache = ResultCache.open(options.cache_dir, catalogue, options) if options.cache_dir else None
    results: dict[str, tuple[list[Finding], int]] = {}
    todo: list[tuple[str, str, ScanOptions]] = []
    digests: dict[str, str] = {}
    for path, kind in files:
        if cache is not None:
            data = _read(path, options)
            digests[path] = "" if isinstance(data, Finding) else digest(data)
            hit = cache.get(path, digests[path])
            if hit is not None:
                results[path] = hit
                continue
        todo.append((path, kind, options))
    report.cached = len(results)
    done = len(results)
    if options.progress:
        options.progress(done, len(files))
    # Starting worker processes costs more than parsing a few ordinary files (pre-commit).
    size = sum(_size(path) for path, _, _ in todo)
    if options.jobs > 1 and len(todo) > 1 and size > PARALLEL_MIN_BYTES:
        with ProcessPoolExecutor(max_workers=max(1, min(options.jobs, len(todo), os.cpu_count() or 1))) as pool:
            stream = pool.map(_scan_file, todo, chunksize=max(1, min(16, len(todo) // (options.jobs * 8))))
            for (path, _, _), result in zip(todo, stream):
                results[path] = result
                done += 1
                if options.progress:
                    options.progress(done, len(files))
    else:
        for item in todo:
            results[item[0]] = _scan_file(item)
            done += 1
            if options.progress:
                options.progress(done, len(files))
    if cache is not None:
        for path, _, _ in todo:
            cache.put(path, digests[path], *results[path])
        cache.save()
    keep = _per_file_filter(options)
    for path, _ in files:
        found, lines = results[path]
        report.findings.extend(_test_policy(f, options.test_files) for f in found
                               if keep(f) and not (options.test_files == "exclude" and f.is_test))
        report.lines += lines
    report.seconds = time.perf_counter() - start
    return report


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


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
            split_lines(self.before, keepends=True), split_lines(self.outcome.source, keepends=True),
            fromfile=f"a/{printable(self.path.lstrip('/'))}", tofile=f"b/{printable(self.path.lstrip('/'))}",
        ))


def fix_source(data: bytes | str, path: str, kind: str = "python", options: ScanOptions = ScanOptions(),
               unsafe: bool = False, only: tuple[str, int, int] | None = None, partial: bool = False) -> FixOutcome:
    """Fix one file's content in memory; returns the new text and what was applied or left.

    `only` = (rule_id, line, column) applies just that finding's fix (SARIF gives one fix per result).
    `partial`: also rewrite a Python file that keeps a CUDA-only call with no automatic rewrite
    (by default it is left unchanged and the blocker is reported).
    """
    from .outcome import FixOutcome

    index = _index(options)
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if kind == "python" and not index.python_may_match(_prefilter_text(raw), path):
        return FixOutcome(_decode(raw))  # nothing the catalogue looks for: not parsed, not changed
    problem = _unparsable(raw) if kind == "python" else None
    if problem:
        return FixOutcome(_decode(raw), failed=f"not rewritten: {problem}")
    try:
        with _deep_recursion():
            return _fix_source(data, raw, path, kind, options, index, unsafe, only, partial)
    except RecursionError:
        return FixOutcome(_decode(raw), failed="not rewritten: too deeply nested")


def _fix_source(data: bytes | str, raw: bytes, path: str, kind: str, options: ScanOptions, index: "RuleIndex",
                unsafe: bool, only: tuple[str, int, int] | None, partial: bool) -> FixOutcome:
    import libcst as cst

    from .engine import scan_python, scan_text
    from .outcome import FixOutcome
    from .textfix import fix_text_lines

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
        from .fixer import fix_python  # libcst.codemod is slow to import: only for Python

        def scan(module):
            lines = python_comment_lines(split_lines(module.code))
            found = scan_python(module, path, index, options.target, is_test=is_test)
            return apply_suppressions(found, lambda cell: lines, path=path)

        # Another module may import a name from this one (`from common import autocast`): unused
        # imports are dropped only from scripts, which nothing imports.
        script = re.search(r"""__name__\s*==\s*['"]__main__['"]""", text) is not None
        return fix_python(text, scan, options.target, unsafe=unsafe, only=only, partial=partial,
                          prune_imports=script and not path.endswith("__init__.py"))
    if kind == "notebook":
        return _fix_notebook(text, path, index, options, unsafe, is_test, only, partial)
    lines = split_lines(text)
    findings = apply_suppressions(scan_text(text, path, kind, index, options.target, is_test=is_test),
                                  lambda cell: lines, path=path)
    if only is not None:
        findings = [f for f in findings if (f.rule_id, f.span.line, f.span.column) == only]
    return fix_text_lines(text, findings, options.target, unsafe=unsafe, file_kind=kind)


def _decode_python(data: bytes) -> str:
    """Python source text by its coding cookie or BOM, as Python reads it (no parse: a source
    libcst cannot parse safely must still be shown and left alone).

    Raises:
        SyntaxError, LookupError, UnicodeDecodeError: a bad cookie or undecodable bytes.
    """
    return data.decode(_python_encoding(data))


def _python_encoding(data: bytes) -> str:
    """The codec Python reads `data` with (coding cookie or BOM; PEP 263). Raises SyntaxError."""
    import io
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def _fix_notebook(text: str, path: str, index: "RuleIndex", options: ScanOptions, unsafe: bool, is_test: bool,
                  only: tuple | None = None, partial: bool = False) -> FixOutcome:
    import libcst as cst  # noqa: F401

    from .engine import scan_python
    from .fixer import fix_python
    from .notebook import locator, split_cells
    from .outcome import FixOutcome

    try:
        joined, module, problems = _join_notebook(text, path)
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

    outcome = fix_python(joined.source, scan, options.target, unsafe=unsafe, only=only, partial=partial)
    outcome.manual.extend((p, "cell left unchanged: it was not scanned") for p in problems)
    if outcome.failed:
        outcome.source = text
        return outcome
    shell_changed = _fix_notebook_shell(joined, path, index, options, unsafe, is_test, cells, outcome, only)
    if not outcome.changed and not shell_changed:
        outcome.source = text
        return outcome
    outcome.source = split_cells(joined, outcome.source)
    return outcome


def _fix_notebook_shell(joined, path: str, index, options: ScanOptions, unsafe: bool, is_test: bool, cells, outcome, only) -> bool:
    """Apply text fixes to `!cmd` lines (in joined.magics); `%%bash` cells are left for a person."""
    from .engine import scan_text
    from .textfix import fix_text_lines

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


def fix_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions(), *,
              unsafe: bool = False, write: bool = False, partial: bool = False) -> list[FileFix]:
    """Fix every file under `paths`; write only when `write` is True (`partial`: see `fix_source`).

    A write is atomic and keeps the file's encoding, BOM, newline style and mode; a file that
    changed on disk since it was read, or whose rewrite fails, is left untouched and reported in
    `FileFix.error`. Files with nothing to report are omitted.
    """
    from .outcome import FixOutcome

    results: list[FileFix] = []
    # Writes stay inside what was asked for: a symbolic link is rewritten only when its target
    # lies under one of these (a named file's own folder counts).
    roots = [str(Path(p) if Path(p).is_dir() else Path(p).parent) for p in paths]
    unlisted: list[tuple[Path, str]] = []
    for p, kind in discover(paths, options.exclude, force_exclude=options.force_exclude, root=options.root,
                            errors=unlisted):
        path = p.as_posix()
        data = _read(str(p), options)
        if isinstance(data, Finding):
            results.append(FileFix(path, "", FixOutcome(""), error=data.snippet))
            continue
        try:
            outcome = fix_source(data, path, kind, options, unsafe, partial=partial)
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
                atomic_write(p, _encode(outcome.source, data, kind), expected_digest=digest(data), roots=roots)
                fixed.written = True
            except (ChangedOnDisk, OSError) as exc:
                fixed.error = str(exc)
        results.append(fixed)
    results.extend(FileFix(folder.as_posix(), "", FixOutcome(""), error=why) for folder, why in unlisted)
    return results


def _before_text(data: bytes, kind: str) -> str:
    try:
        return _decode_python(data) if kind == "python" else _decode(data)
    except Exception:  # noqa: BLE001
        return _decode(data)


def _encode(text: str, original: bytes, kind: str) -> bytes:
    """Encode like the original: Python by its own coding cookie/BOM (libcst), others UTF-8/BOM."""
    import libcst as cst

    if kind == "python":
        module = cst.parse_module(original)
        return cst.parse_module(text).with_changes(encoding=module.encoding).bytes
    wide = _wide_encoding(original)
    if wide:
        return original[:4 if "32" in wide else 2] + text.encode(wide)
    bom = original.startswith(b"\xef\xbb\xbf")
    try:
        original.decode("utf-8-sig")
        return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    except UnicodeDecodeError:
        return text.encode("latin-1")
