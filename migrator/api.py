"""Library entry points. Nothing here prints or exits; the CLI is a thin shell over these.

    report = scan_paths(["src/"], ScanOptions(target="neuron"))
    for finding in report.findings: ...
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from migrator.core.catalogue import Catalogue, load_catalogue, not_scanned as _parse_error
from migrator.sources.discover import discover, gitignore_spec, is_test_path, framework_root
from migrator.core.options import ScanOptions
from migrator.sources import source_for
from migrator.sources.codec import before_text, decode_python, decode_text, encode, prefilter_text, unparsable
from migrator.core.findings import Finding, Safety, Severity
from migrator.core.fsutil import ChangedOnDisk, Unreadable, atomic_write, digest, read_limited
from migrator.core.lines import printable, split_lines

if TYPE_CHECKING:
    from migrator.assess.cost import FleetError  # noqa: F401 - imported on first use (__getattr__)
    from migrator.deploy.generate import KINDS as GENERATE_KINDS  # noqa: F401
    from migrator.deploy.launch_template import SpecError  # noqa: F401
    from migrator.scan.engine import RuleIndex
    from migrator.fix.outcome import FixOutcome

__all__ = ["ScanOptions", "ScanReport", "FileFix", "scan_paths", "scan_source", "fix_paths", "fix_source",
           "render", "REPORT_FORMATS", "default_cache_dir", "rules", "rule_record", "check_example", "test_rules",
           "read_baseline", "filter_new", "write_baseline", "project_root", "instances", "generate", "GENERATE_KINDS",
           "BaselineError", "RuleError", "SpecError", "assess", "render_assessment", "ASSESS_FORMATS", "FleetError"]


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
        """Files on which the tool itself failed (NRN000 "internal error"; the CLI exits 2)."""
        return sum(1 for f in self.findings if f.rule_id == "NRN000" and f.snippet.startswith(_INTERNAL))

    def count_at_or_above(self, level: Severity) -> int:
        return sum(1 for f in self.findings if f.severity.rank >= level.rank)


_INDEX_CACHE: dict[tuple, "RuleIndex"] = {}
PARALLEL_MIN_BYTES = 512 * 1024


def catalogue_for(options: ScanOptions) -> Catalogue:
    """The rules a scan with `options` runs (selection and target applied)."""
    return load_catalogue(options.extend_rules).select(options.select, options.ignore).for_target(options.target)


def _index(options: ScanOptions) -> "RuleIndex":
    from migrator.scan.engine import RuleIndex  # libcst loads only when something must be parsed

    key = (options.select, options.ignore, options.target, options.extend_rules)
    if key not in _INDEX_CACHE:
        everything = load_catalogue(options.extend_rules).for_target(options.target)
        enabled = {r.id for r in catalogue_for(options).rules}
        _INDEX_CACHE[key] = RuleIndex(everything, enabled)
    return _INDEX_CACHE[key]




_INTERNAL = "internal error: "


def _internal_error(path: str, exc: BaseException) -> Finding:
    """A bug in the tool on one file: reported, the run goes on, and the exit code becomes 2."""
    return _parse_error(path, f"{_INTERNAL}{exc!r}")








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






@contextlib.contextmanager
def _gc_paused():
    """The cycle collector off while one file is scanned. Parsing allocates millions of nodes,
    and each collection walks every live one: about a sixth of a cold scan. A file's scan
    leaves no cyclic garbage (tests/test_scan_speed.py checks), so none piles up; the collector
    runs as usual between files, and stays off if it was off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _scan_source(raw: bytes, path: str, kind: str, options: ScanOptions, index: "RuleIndex", is_test: bool,
                 unused: bool) -> list[Finding]:
    found = source_for(kind).scan(raw, path, options, index, is_test, unused)
    if kind in ("python", "notebook") and _older_than_target(options):
        # Every rewrite of code needs the target's PyTorch (fixer._check_torch): with an older
        # one (configured, or the project's pin) `fix` rewrites none, so none is fixable.
        found = [replace(f, fix=replace(f.fix, available=False)) if f.fixable else f for f in found]
    return found


def _older_than_target(options: ScanOptions) -> bool:
    """Whether the project's PyTorch (`options.torch_version`) is older than the target's
    rewrites need (`requires_torch` in rules/targets.yaml)."""
    if options.torch_version is None:
        return False
    from migrator.core.catalogue import load_targets
    from migrator.scan.version_gate import version_tuple

    have = version_tuple(options.torch_version)
    needed = load_targets().get(options.target, {}).get("requires_torch")
    return have is not None and needed is not None and have < tuple(int(x) for x in str(needed).split("."))


def _fix_source(data: bytes | str, raw: bytes, path: str, kind: str, options: ScanOptions, index: "RuleIndex",
                unsafe: bool, only: tuple[str, int, int] | None, partial: bool) -> FixOutcome:
    import libcst as cst

    from migrator.fix.outcome import FixOutcome

    if isinstance(data, bytes):
        try:
            text = decode_python(data) if kind == "python" else decode_text(data)
        except cst.ParserSyntaxError as exc:
            return FixOutcome(decode_text(data), failed=f"does not parse: {exc.message} (line {exc.raw_line})")
        except (UnicodeDecodeError, LookupError, SyntaxError, RecursionError) as exc:
            return FixOutcome(decode_text(data), failed=f"cannot decode: {exc}")
    else:
        text = data
    return source_for(kind).fix(text, path, options, index, unsafe, is_test_path(path), only, partial)


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
            with _gc_paused():  # not around the fix below: the fixer's codemods do leave cycles
                findings = _scan_source(raw, path, kind, options, index, is_test, unused)
            if options.fix_edits:
                findings = _with_edits(raw, path, kind, options, findings)
    except RecursionError:
        findings = [_parse_error(path, "too deeply nested to scan")]
    timed_out = index.take_timeouts()
    if timed_out:
        findings.insert(0, _parse_error(path, f"rule {', '.join(timed_out)}: pattern search ran out of time "
                                           "on this file; those matches are missing", prefix="file partly scanned: "))
    return findings


def _with_edits(raw: bytes, path: str, kind: str, options: ScanOptions, findings: list[Finding], *,
                pruned: bool = True, fallbacks: list[str] | None = None) -> list[Finding]:
    """`findings` with each fixable one's edits, read off the file's in-memory `fix` (safe
    fixes, then unsafe ones; see `edits.attach_edits`).

    Where the kind offers it (`Source.prepare_edits`: Python, sources/pruned_fix.py), the fix is
    computed on the file with the statements no rule can match left out, where that gives the
    whole file's fix exactly; else on the whole file. `pruned=False` always fixes the whole file
    (bench/edits_diff.py compares the two); `fallbacks` collects why the pruned fix was not
    used, one reason per fix."""
    from migrator.fix.edits import attach_edits
    from migrator.fix.outcome import FixOutcome

    source = source_for(kind)
    wanted = {f.fix.safety for f in findings if f.fixable and f.cell is None}
    if not wanted or not source.edits:
        return findings
    before = before_text(raw, kind)
    plain = replace(options, fix_edits=False)
    edits_only = replace(options, fix_edits=True)  # `fix` is read only for its edits (python.fix)
    prepared = source.prepare_edits(raw, path, plain, _index(plain), findings) if pruned and source.prepare_edits else None
    held: set[tuple[Safety, str, int]] = set()
    if kind not in ("python", "notebook") and sum(f.fixable for f in findings) <= _TEXT_EDITS_ALONE:
        return _text_edits(raw, path, kind, edits_only, findings, before)
    for safety in (s for s in (Safety.SAFE, Safety.UNSAFE) if s in wanted):
        unsafe = safety is Safety.UNSAFE
        outcome = prepared if prepared is None or isinstance(prepared, str) else prepared.fix(unsafe)
        if not isinstance(outcome, FixOutcome):
            if outcome is not None and fallbacks is not None:
                fallbacks.append(outcome)  # why the pruned fix is not the whole file's here
            outcome = _fix(raw, path, kind, edits_only, unsafe, None, False, scan_first=False)
        if outcome.failed:
            continue
        applied = {(f.rule_id, f.span.line) for f in outcome.applied}
        held |= {(safety, f.rule_id, f.span.line) for f in findings
                 if f.fixable and f.cell is None and f.fix.safety is safety and (f.rule_id, f.span.line) not in applied}
        if outcome.changed:
            findings = attach_edits(before, outcome.source, findings, outcome.applied, safety, outcome.resolved)
    # What `fix` holds back (a guard over CUDA code it cannot rewrite, a coupled partner) is
    # not fixable: a fixable finding is one `fix` rewrites (findings.v1.schema.json).
    return [replace(f, fix=replace(f.fix, available=False)) if f.fixable and (f.fix.safety, f.rule_id, f.span.line) in held
            else f for f in findings]


# Above this many fixable findings in one line-based file, one fix per finding would cost the
# square of the file: the edits are read off the whole file's rewrite, as for Python.
_TEXT_EDITS_ALONE = 200


def _text_edits(raw: bytes, path: str, kind: str, options: ScanOptions, findings: list[Finding], before: str) -> list[Finding]:
    """Edits of a line-based file (shell, Dockerfile, requirements, configs), each finding's read
    off a fix of that finding alone. A text finding stands for every match of its rule on its
    line, and one line can hold several rules' matches (`CMD [..., "--fp16", "--backend", "nccl"]`):
    the whole file's rewrite cannot tell them apart by column. Such files are small; a finding
    whose fix does not apply alone is not fixable."""
    from migrator.core.findings import Edit
    from migrator.fix.edits import attach_edits
    from migrator.fix.textfix import match_replacements

    out = list(findings)
    for i, finding in enumerate(findings):
        if not finding.fixable or finding.cell is not None:
            continue
        safety = finding.fix.safety
        only = (finding.rule_id, finding.span.line, finding.span.column)
        outcome = _fix(raw, path, kind, options, safety is Safety.UNSAFE, only, False, scan_first=False)
        if outcome.failed or not outcome.changed or not outcome.applied:
            out[i] = replace(finding, fix=replace(finding.fix, available=False))
            continue
        attached = attach_edits(before, outcome.source, [finding], outcome.applied, safety)[0]
        old_lines, new_lines = split_lines(before, keepends=True), split_lines(outcome.source, keepends=True)
        at = finding.span.line - 1
        if len(old_lines) == len(new_lines) and old_lines[:at] + old_lines[at + 1:] == new_lines[:at] + new_lines[at + 1:]:
            # Only its line changed: the edits are the rule's matches and their replacements, so
            # the edits of two findings on one line never overlap. (A fix that also adds lines,
            # NRN802's index URLs, keeps the edits attach_edits reads off the rewrite.)
            own = tuple(Edit(finding.span.line, start + 1, finding.span.line, end + 1, text)
                        for start, end, text in match_replacements(old_lines[at], finding, options.target))
            if own:
                attached = replace(attached, fix=replace(attached.fix, edits=own))
        out[i] = attached
    return out


def _per_file_filter(options: ScanOptions) -> Callable[[Finding], bool]:
    """True for a finding that `per_file_ignores` does not drop."""
    if not options.per_file_ignores:
        return lambda f: True
    root = (options.root or Path.cwd()).resolve()
    specs = [(gitignore_spec([pattern]), codes) for pattern, codes in options.per_file_ignores]

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


def with_project_torch(paths: Sequence[str | os.PathLike[str]], options: ScanOptions) -> ScanOptions:
    """`options` with the project's PyTorch version: the configured `torch-version`, else the
    lowest exact `torch==` pin in the project's dependency files (sources/pins.py), so that
    `fix` holds back rewrites the pinned PyTorch cannot run (`torch.accelerator` needs 2.9)."""
    if options.torch_version is not None or not paths:
        return options
    from migrator.sources.pins import pinned_torch

    try:
        pinned = pinned_torch(project_root(paths, options.root))
    except (OSError, ValueError):
        return options
    return replace(options, torch_version=pinned) if pinned else options


def scan_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions()) -> ScanReport:
    """Scan files and folders (see `discover` for what is walked).

    With `options.cache_dir`, files whose content, catalogue, target and tool version are
    unchanged since the last run are not parsed again (results are identical either way).

    Raises:
        FileNotFoundError: a given path does not exist.
        catalogue.RuleError: a rule file is broken.
    """
    from migrator.scan.cache import ResultCache

    start = time.perf_counter()
    options = with_project_torch(paths, options)
    catalogue = catalogue_for(options)  # fail early on a broken catalogue
    unlisted: list[tuple[Path, str]] = []
    files = [(str(p), kind) for p, kind in discover(paths, options.exclude, force_exclude=options.force_exclude,
                                                    root=options.root, errors=unlisted)]
    framework: dict[str, list[str]] = {}
    if not options.framework_source:
        files = _outside_framework(files, framework)
    report = ScanReport(files=len(files))
    report.findings.extend(_parse_error(where.as_posix(), why, prefix="") for where, why in unlisted)
    report.findings.extend(_framework_finding(root, given) for root, given in framework.items())
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
    sizes = {path: _size(path) for path, _, _ in todo}
    if options.jobs > 1 and len(todo) > 1 and sum(sizes.values()) > PARALLEL_MIN_BYTES:
        from concurrent.futures import ProcessPoolExecutor  # here: a warm run starts no process

        # Largest first: a large file handed out last would leave the other workers idle.
        # Results are kept by path, so the output order does not change.
        order = sorted(todo, key=lambda item: -sizes[item[0]])
        # Built once here, the rule index (and libcst, imported with it) reaches every worker
        # ready made (fork), instead of each worker loading it again.
        _index(options)
        with ProcessPoolExecutor(max_workers=max(1, min(options.jobs, len(todo), os.cpu_count() or 1))) as pool:
            stream = pool.map(_scan_file, order, chunksize=max(1, min(16, len(todo) // (options.jobs * 8))))
            for (path, _, _), result in zip(order, stream):
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


def _outside_framework(files: list[tuple[str, str]], framework: dict[str, list[str]]) -> list[tuple[str, str]]:
    """`files` without those under PyTorch's own packages (rules/vocabulary.yaml
    `framework_packages`), which are collected in `framework` by package folder."""
    from migrator.scan.words import FRAMEWORK_PACKAGES

    known: dict[str, str | None] = {}
    kept = []
    for path, kind in files:
        root = framework_root(path, FRAMEWORK_PACKAGES, known)
        if root is None:
            kept.append((path, kind))
        else:
            framework.setdefault(root, []).append(path)
    return kept


def _framework_finding(root: str, files: list[str]) -> Finding:
    """The one NRN002 finding for a package of PyTorch's own source, at its `__init__.py`,
    spelled as the paths were given (`files` are its files, as discovered)."""
    from migrator.core.catalogue import tool_finding
    from migrator.core.findings import Span

    first = Path(files[0])
    depth = len(Path(os.path.relpath(os.path.abspath(first), root)).parts)
    folder = first.parents[depth - 1] if depth <= len(first.parents) else Path(root)
    name = os.path.basename(root)
    count = f"{len(files):,} file{'s' if len(files) != 1 else ''}"
    return tool_finding("NRN002", (folder / "__init__.py").as_posix(), Span(1, 1, 1, 1), files=count, package=name,
                        snippet=name)


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
    return _fix(data, path, kind, options, unsafe, only, partial, scan_first=True)


def _fix(data: bytes | str, path: str, kind: str, options: ScanOptions, unsafe: bool, only: tuple[str, int, int] | None,
         partial: bool, scan_first: bool) -> FixOutcome:
    """fix_source; `scan_first`: scan before fixing, to skip a file with no finding (the edits
    of a scan's JSON skip it: that scan found fixable findings, and its timed-out patterns are
    still to be reported)."""
    from migrator.fix.outcome import FixOutcome

    index = _index(options)
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if kind == "python" and not index.python_may_match(prefilter_text(raw), path):
        return FixOutcome(decode_text(raw))  # nothing the catalogue looks for: not parsed, not changed
    if kind == "python" and only is None and scan_first and isinstance(data, bytes):
        # The fix rescans the whole file; the scan (pruned, see sources/prune.py) finds the same
        # findings for a fraction of that. Where it finds none, the fix cannot change anything.
        unchanged = _nothing_to_fix(raw, path, options, index)
        if unchanged is not None:
            return FixOutcome(unchanged)
    problem = unparsable(raw) if kind == "python" else None
    if problem:
        return FixOutcome(decode_text(raw), failed=f"not rewritten: {problem}")
    try:
        with _deep_recursion():
            return _fix_source(data, raw, path, kind, options, index, unsafe, only, partial)
    except RecursionError:
        return FixOutcome(decode_text(raw), failed="not rewritten: too deeply nested")














def _nothing_to_fix(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex") -> str | None:
    """The file's text when a scan of it has no finding at all (then `fix` leaves it as it is,
    with nothing for a person either), else None (also when the scan could not tell: a parse
    problem is an NRN000 finding, a timed-out pattern may have missed one)."""
    try:
        with _deep_recursion(), _gc_paused():
            found = _scan_source(raw, path, "python", options, index, is_test_path(path), False)
    except RecursionError:
        return None
    if found or index.take_timeouts():
        return None
    try:
        return decode_python(raw)  # what the fix would have given back: the text it read
    except (UnicodeDecodeError, LookupError, SyntaxError):
        return None


def fix_paths(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions(), *,
              unsafe: bool = False, write: bool = False, partial: bool = False) -> list[FileFix]:
    """Fix every file under `paths`; write only when `write` is True (`partial`: see `fix_source`).

    A write is atomic and keeps the file's encoding, BOM, newline style and mode; a file that
    changed on disk since it was read, or whose rewrite fails, is left untouched and reported in
    `FileFix.error`. Files with nothing to report are omitted.
    """
    from migrator.fix.outcome import FixOutcome

    options = with_project_torch(paths, options)
    results: list[FileFix] = []
    # Writes stay inside what was asked for: a symbolic link is rewritten only when its target
    # lies under one of these (a named file's own folder counts).
    roots = [str(Path(p) if Path(p).is_dir() else Path(p).parent) for p in paths]
    unlisted: list[tuple[Path, str]] = []
    found = [(str(p), kind) for p, kind in discover(paths, options.exclude, force_exclude=options.force_exclude,
                                                    root=options.root, errors=unlisted)]
    if not options.framework_source:
        found = _outside_framework(found, {})  # PyTorch's own source is not rewritten (NRN002)
    for name, kind in found:
        p = Path(name)
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
        fixed = FileFix(path, before_text(data, kind), outcome)
        if outcome.failed:
            fixed.error = outcome.failed
        if not outcome.changed and not outcome.manual and not outcome.failed:
            continue
        if write and outcome.changed and not outcome.failed:
            try:
                atomic_write(p, encode(outcome.source, data, kind), expected_digest=digest(data), roots=roots)
                fixed.written = True
            except (ChangedOnDisk, OSError) as exc:
                fixed.error = str(exc)
            except (RecursionError, MemoryError, ValueError, UnicodeError) as exc:
                fixed.error = f"not written: {exc!r}"  # the file stays as it was; the run goes on
        results.append(fixed)
    results.extend(FileFix(folder.as_posix(), "", FixOutcome(""), error=why) for folder, why in unlisted)
    return results






# -- the other commands: the CLI reaches every part through these -----------------------------
from migrator.core.catalogue import RuleError  # noqa: E402
from migrator.report import REPORTERS  # noqa: E402
from migrator.report.baseline import BaselineError, filter_new, project_root, read_baseline, write_baseline  # noqa: E402

REPORT_FORMATS = tuple(REPORTERS)


def __getattr__(name: str):
    """GENERATE_KINDS, SpecError and FleetError, imported on first use: deploy and assess pull in
    jsonschema, jinja2 and pydantic, about a second of every warm scan that never needs them."""
    if name == "GENERATE_KINDS":
        from migrator.deploy.generate import KINDS

        return KINDS
    if name == "SpecError":
        from migrator.deploy.launch_template import SpecError

        return SpecError
    if name == "FleetError":
        from migrator.assess.cost import FleetError

        return FleetError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule_record(rule, details: bool = False) -> dict:
    """One rule as data (`rules --format json`; see `migrator.docgen.rule_record`)."""
    from migrator.docgen import rule_record as record

    return record(rule, details)


def render(fmt: str, findings: Sequence[Finding], stats: dict | None = None) -> str:
    """The report of `findings` in `fmt` (one of REPORT_FORMATS). Raises KeyError."""
    return REPORTERS[fmt](findings, stats)


def default_cache_dir() -> Path:
    """The result cache folder when none is given (`NRN_CACHE_DIR`, else the user cache)."""
    from migrator.scan.cache import user_cache_dir

    return user_cache_dir() / "scan"


def rules(extend_rules: Sequence[Path] = ()) -> Catalogue:
    """The whole catalogue, built-in and team rules. Raises RuleError."""
    return load_catalogue(tuple(extend_rules))


def check_example(case, extend_rules: tuple = ()) -> list[str]:
    """The problems with one embedded rule example (see `migrator.testing`); empty = passes."""
    from migrator.testing import check_example as check

    return check(case, scan_source, fix_source, extend_rules, scan_paths)


def test_rules(folder: Path) -> tuple[int, list[tuple[str, list[str]]]]:
    """`rules test DIR`: validate a team's rule folder and run its examples (as `fixit test`).

    Returns:
        (how many of the folder's rules there are, [(example id, its problems)] in order).
    Raises:
        RuleError: a rule file is broken. NotADirectoryError: `folder` is not a folder.
    """
    from migrator.testing import collect_examples

    if not Path(folder).is_dir():
        raise NotADirectoryError(f"{folder}: not a folder")
    catalogue = load_catalogue([folder])
    own = Catalogue(tuple(r for r in catalogue.rules if Path(folder).resolve() in r.path.resolve().parents))
    return len(own.rules), [(case.id, check_example(case, (folder,))) for case in collect_examples(own)]


def instances() -> dict[str, dict]:
    """The instance catalog: per type its facts, source, confidence and `source_links`
    ({source name: URL}), with `sources` ({name: {title, url}}) under the key "_sources"."""
    from migrator.deploy.launch_template import load_instances, load_sources, source_links

    out: dict[str, dict] = {name: {**entry, "source_links": source_links(name)} for name, entry in load_instances().items()}
    out["_sources"] = load_sources()
    return out


def generate(kind: str, spec_file: Path | None, flags: dict, output: Path):
    """Build the deployment spec (file, then flags) and write `kind` into `output`.

    Returns a GenerateResult (files, replaced, notes). Raises SpecError or ValueError, and
    then nothing is written.
    """
    from migrator.deploy.generate import generate as generate_kind
    from migrator.deploy.spec import build_spec

    return generate_kind(kind, build_spec(spec_file, flags), output)


ASSESS_FORMATS = ("text", "json", "markdown", "html")


def assess(paths: Sequence[str | os.PathLike[str]], options: ScanOptions = ScanOptions(), *,
           unsafe_fixes: bool = False, fleet_file: Path | None = None, prices: str | Path | None = None,
           families: Sequence[str] = (), pricing_client=None) -> dict:
    """Readiness, effort, migration path, model support and cost of the code under `paths`.

    The findings are `scan_paths`'s; "rewritten" means `fix_source(partial=True)` applies the
    finding's rewrite in memory, as `fix --partial` would (plain `fix` holds a file back until
    its blockers are handled by hand); a second pass with `unsafe=True`, on files with unsafe
    fixes, tells the unsafe rewrites apart.
    `fleet_file` (YAML, `migrator/schemas/fleet.schema.json`) turns on the cost part, priced
    from `prices`: a prices file or `"aws"` (the Price List API through boto3's `pricing`
    client, `pricing_client` if given). `families` defaults to those the target reaches.
    Returns the dict of `migrator/schemas/assess.v1.schema.json`.

    Raises:
        FleetError: a bad fleet or prices file (checked before anything is scanned).
        FileNotFoundError: a path does not exist.
    """
    from migrator.assess import FAMILIES_BY_TARGET, build_assessment
    from migrator.assess.cost import aws_prices, load_fleet, load_prices
    from migrator.assess.inventory import take_inventory
    from migrator.assess.readiness import finding_key
    from migrator.deploy.launch_template import load_instances

    neuron_types = load_instances()
    fleet = load_fleet(Path(fleet_file), neuron_types) if fleet_file is not None else None
    if prices is None or fleet is None:
        price_source = None
    elif str(prices) == "aws":
        def price_source(types: set[str], region: str):
            return aws_prices(types, region, pricing_client)
    else:
        price_source = load_prices(Path(prices))
    for p in paths:
        if not os.path.lexists(p):
            raise FileNotFoundError(f"{p}: no such file or directory")
    report = scan_paths(paths, replace(options, fix_edits=False))
    rewritten: dict[tuple, str] = {}
    # `fix` may rewrite a finding the scan marks unavailable (held back by a blocker; --partial).
    fixable = sorted({f.path for f in report.findings if f.fix is not None})
    with_unsafe = {f.path for f in report.findings if f.fix is not None and f.fix.safety is Safety.UNSAFE}
    from migrator.sources.discover import file_kind

    for path in fixable:
        kind = file_kind(Path(path))
        data = _read(path, options)
        if kind is None or isinstance(data, Finding):
            continue
        passes = ((False, "safe"), (True, "unsafe")) if path in with_unsafe else ((False, "safe"),)
        for unsafe, label in passes:
            try:
                outcome = fix_source(data, path, kind, options, unsafe, partial=True)
            except Exception:  # noqa: BLE001 - a crash in one file's rewrite counts its findings as manual
                break
            for f in outcome.applied:
                rewritten.setdefault(finding_key(f), label)
    inventory = take_inventory(paths, options.exclude, options.max_file_size, options.root)
    return build_assessment(
        paths=[os.fspath(p) for p in paths], target=options.target, findings=report.findings, rewritten=rewritten,
        catalogue=catalogue_for(options), files=report.files, lines=report.lines, inventory=inventory,
        unsafe_fixes=unsafe_fixes, families=tuple(families) or FAMILIES_BY_TARGET[options.target], fleet=fleet,
        prices=price_source, neuron_types=neuron_types)


def render_assessment(fmt: str, assessment: dict, width: int = 100) -> str:
    """The assessment as `text`, `json`, `markdown` or `html` (one self-contained page)."""
    from migrator.assess.render import RENDERERS

    if fmt == "text":
        return RENDERERS[fmt](assessment, width=width)
    return RENDERERS[fmt](assessment)
