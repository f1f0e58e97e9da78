"""neuron-migrator command line.

    neuron-migrator scan PATH... [--target portable|neuron|xla|inf1] [--format text|json|sarif|github|junit]
                                 [--output-file FILE] [--fail-on error|warning|info|never] [--select NRN1]
                                 [--extend-select NRN9] [--ignore NRN209] [--baseline FILE] [--exit-zero]
                                 [--report-unused-noqa] [-j N] [--no-cache]
    neuron-migrator fix PATH... [--target ...] [--write | --diff] [--unsafe-fixes] [--select/--extend-select/--ignore ...]
    neuron-migrator baseline create PATH... [--output FILE]
    neuron-migrator rules [NRN101 | test DIR] [--format text|json]
    neuron-migrator instances [--format text|json]
    neuron-migrator generate KIND --instance-type TYPE --region REGION --output DIR [...] [--spec FILE]
        KIND: launch-template (--format json|cloudformation), cloudformation, terraform, parallelcluster, eks, user-data

Settings come from [tool.neuron-migrator] in the nearest pyproject.toml up from the first PATH
(see migrator/settings.py); flags given on the command line override them.

Exit codes: 0 clean (or --exit-zero); 1 findings at or above --fail-on (scan) or files left to
change (fix without --write, fix --diff); 2 usage, configuration or tool errors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer

from migrator.core.catalogue import TARGETS
from migrator.core.findings import FAIL_ON
from migrator.core.version import __version__


def _plain_params(params):
    """Help shows a flag as a flag and a value by its name (`--target TARGET`, `PATH...`):
    Typer 0.2x would print Python types there (`<str>`, `<list[Path]>`, `<bool>`)."""
    for param in params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif param.metavar is None:
            longest = max(param.opts, key=len).lstrip("-")
            param.metavar = longest.upper().replace("-", "_")
        if param.param_type_name == "argument":
            param.display_type_rich = lambda ctx: None  # the name column already shows the metavar
    return params


class _Command(typer.core.TyperCommand):
    def get_params(self, ctx):
        return _plain_params(super().get_params(ctx))


class _Group(typer.core.TyperGroup):
    def get_params(self, ctx):
        return _plain_params(super().get_params(ctx))


app = typer.Typer(cls=_Group, add_completion=False, rich_markup_mode=None, context_settings={"max_content_width": 120}, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Move CUDA PyTorch code to AWS Trainium/Inferentia.")

TARGET_HELP = "Migration target: portable (torch.accelerator), neuron (TorchNeuron, Trn2/Trn3), xla (legacy, Trn1/Inf2), inf1."


def _given(ctx: typer.Context, name: str, value):
    """`value` when the option was on the command line, else None: the configuration (or the
    spec file) decides, and the default shown in --help applies only when neither does."""
    source = ctx.get_parameter_source(name)
    return None if source is None or source.name in ("DEFAULT", "DEFAULT_MAP") else value


def _fail(message: str) -> "typer.Exit":
    from migrator.core.lines import printable

    typer.echo(f"neuron-migrator: error: {printable(message)}", err=True)
    return typer.Exit(2)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise _fail(f"--target: '{target}' is not one of {', '.join(TARGETS)}")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"neuron-migrator {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version.")) -> None:
    """Scan, fix and deploy PyTorch code for AWS Neuron."""


def _settings(config: Optional[Path], paths=()):
    """Settings from `--config`, else from the nearest pyproject.toml up from the first path
    given (the working directory when none), as ruff finds its configuration."""
    from migrator.settings import SettingsError, load_settings

    try:
        return load_settings(config, start=Path(paths[0]) if paths else None)
    except SettingsError as exc:
        raise _fail(str(exc)) from None


MAX_JOBS = 256


def _codes(values, flag: str) -> tuple[str, ...]:
    """Rule id prefixes from the command line (repeated, or comma-separated as in ruff),
    checked as the configuration's are."""
    from migrator.settings import is_rule_code

    codes = [part.strip() for value in values for part in value.split(",") if part.strip()]
    for value in codes:
        if not is_rule_code(value):
            raise _fail(f"{flag}: '{value}' is not a rule id or prefix such as NRN1 or NRN101")
    return tuple(v.upper() for v in codes)


def _known(codes: tuple[str, ...], flag: str, extend_rules) -> tuple[str, ...]:
    """`codes`, when each selects some rule (a typo would silently turn a CI check off)."""
    if not codes:
        return codes
    from migrator.api import RuleError, rules

    try:
        ids = [r.id for r in rules(extend_rules).rules]
    except RuleError as exc:
        raise _fail(str(exc)) from None
    for code in codes:
        if not any(i.startswith(code) for i in ids):
            raise _fail(f"{flag}: '{code}' matches no rule; see `neuron-migrator rules`")
    return codes


def _selection(settings, select, extend_select) -> tuple[str, ...]:
    """`--select` (else the configured selection), plus `--extend-select`; empty = every rule."""
    base = _known(_codes(select, "--select"), "--select", settings.extend_rules) or settings.select
    extra = _known(_codes(extend_select, "--extend-select"), "--extend-select", settings.extend_rules)
    return base + tuple(c for c in extra if c not in base) if base else ()


def _scan_options(settings, target, select, ignore, exclude, extend_exclude, jobs, unused_noqa, no_cache, cache_dir,
                  progress=None, force_exclude=None, extend_select=(), framework_source=None):
    from migrator.api import ScanOptions
    from migrator.api import default_cache_dir

    target = target or settings.target
    _check_target(target)
    if not 0 <= jobs <= MAX_JOBS:
        raise _fail(f"--jobs: {jobs} is not between 0 (one per CPU) and {MAX_JOBS}")
    excludes = tuple(exclude) or settings.exclude
    if cache_dir is not None and str(cache_dir).strip() in ("", "."):
        raise _fail("--cache-dir: give a folder of its own (not empty, not the current folder)")
    cache = None if no_cache else (cache_dir or default_cache_dir())
    return ScanOptions(
        target=target, select=_selection(settings, select, extend_select),
        ignore=_known(_codes(ignore, "--ignore"), "--ignore", settings.extend_rules) or settings.ignore,
        exclude=excludes + settings.extend_exclude + tuple(extend_exclude), per_file_ignores=settings.per_file_ignores,
        root=settings.root, extend_rules=settings.extend_rules, report_unused_noqa=unused_noqa,
        jobs=jobs or (os.cpu_count() or 1), cache_dir=cache, progress=progress, test_files=settings.test_files,
        force_exclude=settings.force_exclude if force_exclude is None else force_exclude,
        max_file_size=settings.max_file_size, torch_version=settings.torch_version,
        framework_source=settings.framework_source if framework_source is None else framework_source,
    )


def _progress_bar():
    """A rich progress bar on stderr, only when stderr is a terminal (and the scan is long)."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import Progress

    progress = Progress(console=Console(stderr=True), transient=True)
    task = progress.add_task("scanning", total=None)

    def update(done: int, total: int) -> None:
        if total >= 200 and not progress.live.is_started:
            progress.start()
        progress.update(task, completed=done, total=total)

    return progress, update


CONFIG_HELP = "pyproject.toml whose tool.neuron-migrator table to use, instead of searching up from the first PATH."
CONFIG_DEFAULT = "the nearest one with the table"
CACHE_DEFAULT = "the user cache folder"
SELECT_HELP = "Only rules whose id starts with this; replaces the configured selection (repeatable)."
EXTEND_SELECT_HELP = "Rules to add to the configured (or default) selection (repeatable)."
IGNORE_HELP = "Skip rules whose id starts with this; replaces the configured list (repeatable)."
FRAMEWORK_HELP = "Also scan PyTorch's own source (torch/, a vendored copy); by default each such package is one NRN002 finding."


@app.command(cls=_Command)
def scan(
    ctx: typer.Context,
    # Text, not Path: the fix hint repeats the paths as they were typed (`src/`).
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH", show_default=".", help="Files or folders to scan (as ruff, the current folder when none is given)."),
    target: str = typer.Option("portable", "--target", "-t", metavar="TARGET", help=TARGET_HELP),
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text, json, sarif, github or junit."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL", help="Lowest severity that makes the exit code 1: error, warning, info or never."),
    select: List[str] = typer.Option([], "--select", metavar="CODE", help=SELECT_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODE", help=EXTEND_SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODE", help=IGNORE_HELP),
    exclude: List[str] = typer.Option([], "--exclude", metavar="PATTERN", help="gitignore-style pattern of paths to skip; replaces the configured list (repeatable)."),
    extend_exclude: List[str] = typer.Option([], "--extend-exclude", metavar="PATTERN", help="Pattern to skip in addition (repeatable)."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", metavar="FILE", help="Report only findings not recorded in this baseline file."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings reach --fail-on."),
    unused_noqa: bool = typer.Option(False, "--report-unused-noqa", help="Report `# noqa` codes that suppress nothing (NRN001)."),
    jobs: int = typer.Option(0, "--jobs", "-j", metavar="N", help="Worker processes (0 = one per CPU)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the result cache."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", metavar="DIR", show_default=CACHE_DEFAULT, help="Result cache folder (e.g. ~/.cache/neuron-migrator on Linux)."),
    statistics: bool = typer.Option(False, "--statistics", help="Also print counts per category."),
    force_exclude: bool = typer.Option(False, "--force-exclude/--no-force-exclude", help="Apply the excludes to files named on the command line too (the pre-commit hooks do)."),
    framework_source: bool = typer.Option(False, "--framework-source/--no-framework-source", help=FRAMEWORK_HELP),
    output_file: Optional[Path] = typer.Option(None, "--output-file", "-o", metavar="FILE", show_default="stdout", help="Write the report to this file (replaced atomically), in any --format."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", show_default=CONFIG_DEFAULT, help=CONFIG_HELP),
) -> None:
    """Report migration blockers in PATHS."""
    paths = paths or ["."]
    from migrator.api import scan_paths
    from migrator.api import REPORT_FORMATS, BaselineError, RuleError, filter_new, project_root, read_baseline, render
    from migrator.core.findings import Severity

    target, fail_on, force_exclude, framework_source = (_given(ctx, n, v) for n, v in (
        ("target", target), ("fail_on", fail_on), ("force_exclude", force_exclude), ("framework_source", framework_source)))
    settings = _settings(config, paths)
    if fmt not in REPORT_FORMATS:
        raise _fail(f"--format: '{fmt}' is not one of {', '.join(REPORT_FORMATS)}")
    fail_on = fail_on or settings.fail_on
    if fail_on not in FAIL_ON:
        raise _fail(f"--fail-on: '{fail_on}' is not one of error, warning, info, never")
    progress, update = _progress_bar()
    options = _scan_options(settings, target, select, ignore, exclude, extend_exclude, jobs, unused_noqa, no_cache, cache_dir,
                            update, force_exclude, extend_select, framework_source)
    if fmt in ("json", "sarif"):  # these formats carry each fix's edits
        options = dataclasses.replace(options, fix_edits=True)
    try:
        known = read_baseline(baseline) if baseline else None
        report = scan_paths(paths, options)
    except (FileNotFoundError, RuleError, BaselineError) as exc:
        raise _fail(str(exc)) from None
    finally:
        if progress is not None:
            progress.stop()
    _warn_if_empty(report)
    findings = (filter_new(report.findings, known, root=project_root(paths, settings.root)) if known is not None
                else report.findings)
    if known and report.findings and len(findings) == len(report.findings):
        # Every entry missed: almost always paths recorded from another project root.
        typer.echo(f"neuron-migrator: warning: no finding matched the {sum(known.values())} entries of {baseline}; "
                   "was it made for these paths (baseline create from the project root)?", err=True)
    color = fmt == "text" and output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    stats = {"files": report.files, "lines": report.lines, "seconds": report.seconds, "statistics": statistics,
             "target": options.target, "extend_rules": options.extend_rules, "color": color,
             "baselined": len(report.findings) - len(findings) if known is not None else None,
             "fix_command": _fix_command(options.target, paths, select=select, extend_select=extend_select, ignore=ignore,
                                         exclude=exclude, extend_exclude=extend_exclude, force_exclude=force_exclude,
                                         config=config)}
    _emit(render(fmt, findings, stats), output_file)
    if report.internal_errors:
        raise _fail(f"the tool failed on {report.internal_errors} file(s); see the NRN000 findings that say 'internal error'")
    if not exit_zero and fail_on != "never" and any(f.severity.rank >= Severity(fail_on).rank for f in findings):
        raise typer.Exit(1)


def _warn_if_empty(report) -> None:
    """As ruff: a run that found nothing to scan says so (on stderr; the exit code is unchanged)."""
    if report.files == 0 and not any(f.rule_id == "NRN002" for f in report.findings):
        # (PyTorch's own source left out says so itself: NRN002)
        typer.echo("neuron-migrator: warning: No files to scan found under the given path(s)", err=True)


def _fix_command(target: str, paths, *, config=None, force_exclude=None, **lists) -> str:
    """The `fix` command line that rewrites what this scan reported: the same target, the same
    selection and excludes as given on the command line (the configuration is found again from
    the same paths), and the same paths."""
    import shlex

    words = ["neuron-migrator", "fix", "--target", target]
    for name, values in lists.items():
        words += [part for value in values for part in (f"--{name.replace('_', '-')}", value)]
    if force_exclude is not None:
        words.append("--force-exclude" if force_exclude else "--no-force-exclude")
    if config is not None:
        words += ["--config", str(config)]
    names = [str(p) for p in paths]
    if any(name.startswith("-") for name in names):
        words.append("--")
    return shlex.join(words + names)


def _emit(text: str, output_file: Optional[Path]) -> None:
    """The report on stdout, or in `output_file` (atomic: a reader never sees half a report)."""
    if output_file is None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except _OutputLost as exc:  # a full disk behind `> file`
            raise _fail(str(exc)) from None
        except OSError as exc:  # the same, where main() did not wrap the stream
            raise _fail(f"cannot write to standard output: {exc.strerror or exc}") from None
        return
    from migrator.core.fsutil import replace_file

    try:
        Path(output_file).parent.mkdir(parents=True, exist_ok=True)  # as ruff does
        replace_file(output_file, text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise _fail(f"--output-file: {output_file}: cannot write: {exc.strerror or exc}") from None


baseline_app = typer.Typer(cls=_Group, rich_markup_mode=None, no_args_is_help=True, help="Record today's findings so that only new ones fail.")
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("create", cls=_Command)
def baseline_create(
    ctx: typer.Context,
    paths: List[Path] = typer.Argument(..., metavar="PATH", help="Files or folders to scan."),
    output: Path = typer.Option(Path(".neuron-migrator-baseline.json"), "--output", "-o", metavar="FILE", help="Baseline file to write."),
    target: str = typer.Option("portable", "--target", "-t", metavar="TARGET", help=TARGET_HELP),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", show_default=CONFIG_DEFAULT, help=CONFIG_HELP),
) -> None:
    """Write a baseline of the current findings (use it with `scan --baseline FILE`)."""
    from migrator.api import RuleError, project_root, scan_paths, write_baseline

    target = _given(ctx, "target", target)
    settings = _settings(config, paths)
    options = _scan_options(settings, target, [], [], [], [], 0, False, True, None)
    try:
        report = scan_paths(paths, options)
    except (FileNotFoundError, RuleError) as exc:
        raise _fail(str(exc)) from None
    _warn_if_empty(report)
    try:
        count = write_baseline(report.findings, output, root=project_root(paths, settings.root))
    except OSError as exc:
        raise _fail(f"--output: {exc}") from None
    typer.echo(f"wrote {output}: {count} findings recorded")


@app.command(cls=_Command)
def fix(
    ctx: typer.Context,
    paths: Optional[List[Path]] = typer.Argument(None, metavar="PATH", show_default=".", help="Files or folders to fix (as scan, the current folder when none is given)."),
    target: str = typer.Option("portable", "--target", "-t", metavar="TARGET", help=TARGET_HELP),
    write: bool = typer.Option(False, "--write", help="Write the changes (default: print a unified diff)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply fixes that may change numerics or behaviour."),
    diff: bool = typer.Option(False, "--diff", help="Only print the diff (nothing is written, even with --write) and a one-line summary; exit 1 when files would change."),
    partial: bool = typer.Option(False, "--partial", help="Also rewrite files that keep a CUDA-only call with no automatic rewrite (by default such a file is left unchanged, with the blocker named)."),
    select: List[str] = typer.Option([], "--select", metavar="CODE", help=SELECT_HELP),
    extend_select: List[str] = typer.Option([], "--extend-select", metavar="CODE", help=EXTEND_SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODE", help=IGNORE_HELP),
    exclude: List[str] = typer.Option([], "--exclude", metavar="PATTERN", help="gitignore-style pattern of paths to skip; replaces the configured list (repeatable)."),
    extend_exclude: List[str] = typer.Option([], "--extend-exclude", metavar="PATTERN", help="Pattern to skip in addition (repeatable)."),
    force_exclude: bool = typer.Option(False, "--force-exclude/--no-force-exclude", help="Apply the excludes to files named on the command line too (the pre-commit hooks do)."),
    framework_source: bool = typer.Option(False, "--framework-source/--no-framework-source", help=FRAMEWORK_HELP),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", show_default=CONFIG_DEFAULT, help=CONFIG_HELP),
) -> None:
    """Rewrite what can be rewritten safely; print a diff unless --write."""
    from migrator.api import fix_paths

    target, unsafe_fixes, force_exclude, framework_source = (_given(ctx, n, v) for n, v in (
        ("target", target), ("unsafe_fixes", unsafe_fixes), ("force_exclude", force_exclude),
        ("framework_source", framework_source)))
    paths = paths or [Path(".")]
    settings = _settings(config, paths)
    options = _scan_options(settings, target, select, ignore, exclude, extend_exclude, 1, False, True, None, force_exclude=force_exclude,
                            extend_select=extend_select, framework_source=framework_source)
    unsafe = settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
    write = write and not diff  # as ruff: --diff never writes
    try:
        results = fix_paths(paths, options, unsafe=unsafe, write=write, partial=partial)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    pending = not write and any(r.outcome.changed and not r.error for r in results)
    if not write:
        for result in results:
            if result.outcome.changed and not result.error:
                # On a terminal, code from the repository is shown escaped; on a pipe the
                # diff stays a patch that applies byte for byte.
                sys.stdout.write(result.diff if not sys.stdout.isatty() else _printable_diff(result.diff))
    if diff:
        _diff_summary(results)
    else:
        _fix_report(results, write)
    failed = sum(1 for r in results if r.error)
    if failed:
        raise typer.Exit(2)
    if pending:
        raise typer.Exit(1)


def _diff_summary(results) -> None:
    """`fix --diff`: on stderr, what failed and one line of counts (ruff's "Would fix N errors")."""
    from migrator.core.lines import printable

    changed = [r for r in results if r.outcome.changed and not r.error]
    fixes = sum(len(r.outcome.applied) for r in changed)
    manual = sum(len(r.outcome.manual) for r in results if not r.error)
    for r in results:
        if r.error:
            typer.echo(f"{printable(r.path)}: not changed: {printable(r.error)}", err=True)
    files = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    typer.echo(f"Would fix {fixes} finding{'s' if fixes != 1 else ''} in {files}; {manual} left for a person"
               + (f"; {sum(1 for r in results if r.error)} failed." if any(r.error for r in results) else "."), err=True)


def _printable_diff(diff: str) -> str:
    from migrator.core.lines import printable

    return "".join(printable(line) + "\n" for line in diff.split("\n")[:-1])


def _fix_column(rule) -> str:
    """`safe`/`unsafe` with the targets that have a fix (`-` when none)."""
    if not rule.fix:
        return "-"
    by_safety: dict[str, list[str]] = {}
    for target, entry in rule.fix["targets"].items():
        by_safety.setdefault(entry.get("safety", rule.fix["safety"]), []).append(target)
    return "; ".join(f"{safety} ({', '.join(targets)})" for safety, targets in by_safety.items())


def _where(finding) -> str:
    from migrator.core.lines import printable

    return printable(finding.location)


def _fix_report(results, write: bool) -> None:
    """On stderr: each fix with its title and safety, what is left and why, what failed, and a table per rule."""
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    from migrator.core.lines import printable

    err = Console(stderr=True, highlight=False, emoji=False, width=max(100, shutil.get_terminal_size((100, 20)).columns))
    verb = "Fixed" if write else "Fixable"
    fixed: Counter = Counter()
    left: Counter = Counter()
    names: dict[str, tuple[str, str]] = {}
    applied = sorted((f for r in results if not r.error for f in r.outcome.applied),
                     key=lambda f: (f.path, f.cell or 0, f.span.line, f.span.column))
    # Without --write nothing changed on disk: report positions in the files as they are.
    manual = [(f if write else r.outcome.as_before(f), why) for r in results for f, why in r.outcome.manual]
    failed = [r for r in results if r.error]
    if applied:
        err.print(f"{verb}:", markup=False)
        for f in applied:
            err.print(f"  {_where(f)} {f.rule_id} [{f.fix.safety.value}] {printable(f.fix.title)}", markup=False, soft_wrap=True)
    if manual:
        err.print("Left for a person:", markup=False)
        for f, why in manual:
            err.print(f"  {_where(f)} {f.rule_id} {printable(f.message)} [{printable(why)}]", markup=False, soft_wrap=True)
    if failed:
        err.print("Failed (file left unchanged):", markup=False)
        for r in failed:
            err.print(f"  {printable(r.path)}: not changed: {printable(r.error)}", markup=False, soft_wrap=True)
    for f in applied:
        fixed[f.rule_id] += 1
        names[f.rule_id] = (f.rule_name, f.category)
    for f, _ in manual:
        left[f.rule_id] += 1
        names[f.rule_id] = (f.rule_name, f.category)
    if names:
        table = Table(title=None, show_edge=False, pad_edge=False)
        for column in ("rule", "name", "category"):
            table.add_column(column)
        for column in (verb.lower(), "left for a person"):
            table.add_column(column, justify="right")
        for rule_id in sorted(names):
            table.add_row(rule_id, *names[rule_id], str(fixed[rule_id]), str(left[rule_id]))
        err.print(table)
    err.print(f"{len(applied)} {verb.lower()}, {len(manual)} left for a person, {len(failed)} failed.", markup=False)


@app.command(cls=_Command)
def rules(
    args: Optional[List[str]] = typer.Argument(None, metavar="RULE", help="NRNxxx to explain one rule, a prefix (NRN4) to list the rules it starts, or `test DIR` to check a rule folder's examples."),
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text or json (the list, or one rule)."),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", show_default=CONFIG_DEFAULT, help="pyproject.toml whose tool.neuron-migrator table to use (extend-rules), instead of searching up from here."),
) -> None:
    """List the rule catalogue (or the rules a prefix starts), explain one rule, or test a folder of team rules."""
    from migrator.api import RuleError, rule_record, rules as load_rules

    args = args or []
    if fmt not in ("text", "json"):
        raise _fail(f"--format: '{fmt}' is not one of text, json")
    settings = _settings(config)
    if args[:1] == ["test"]:
        if len(args) != 2:
            raise _fail("usage: neuron-migrator rules test DIR")
        return _rules_test(Path(args[1]))
    try:
        catalogue = load_rules(settings.extend_rules)
    except RuleError as exc:
        raise _fail(str(exc)) from None
    if len(args) > 1:
        raise _fail(f"one rule id or prefix at a time (or `rules test DIR`): got {' '.join(args)}")
    try:
        r = catalogue.by_id(args[0]) if args else None
    except KeyError:
        r = None
    if r is None:
        # No argument, or a prefix as --select takes it (`rules NRN4`): the list.
        listed = [rule for rule in catalogue.rules if not args or rule.id.startswith(args[0].upper())]
        if not listed:
            raise _fail(f"no rule id is or starts with '{args[0]}'; see `neuron-migrator rules`")
        if fmt == "json":
            typer.echo(json.dumps([rule_record(rule) for rule in listed], indent=2))
            return
        typer.echo(f"{'id':7} {'name':30} {'category':13} {'portable':8} {'neuron':8} {'xla':8} {'inf1':8} fix")
        for rule in listed:
            sev = [(rule.severity_for(t).value if rule.severity_for(t) else "off") for t in TARGETS]
            typer.echo(f"{rule.id:7} {rule.name:30} {rule.category:13} {sev[0]:8} {sev[1]:8} {sev[2]:8} {sev[3]:8} {_fix_column(rule)}")
        return
    if fmt == "json":
        typer.echo(json.dumps(rule_record(r, details=True), indent=2))
        return
    typer.echo(f"{r.id} {r.name}: {r.summary}\n")
    typer.echo(f"What it does\n  {r.docs['what'].strip()}\n\nWhy is this bad?\n  {r.docs['why'].strip()}\n")
    bad = r.examples["bad"][0]
    typer.echo("Example\n" + "".join(f"  {line}\n" for line in bad["code"].splitlines()))
    if "fixed" in bad:
        typer.echo(f"Fixed (target {bad.get('target', 'portable')})\n" + "".join(f"  {line}\n" for line in bad["fixed"].splitlines()))
    if r.fix:
        typer.echo(f"Fix safety\n  {r.fix['safety']}: {r.fix_safety_text()}\n")
    typer.echo("References\n" + "".join(f"  {u}\n" for u in r.docs["references"]))


def _rules_test(folder: Path) -> None:
    """Validate a team's rule folder and run its embedded examples, like `fixit test`."""
    from migrator.api import RuleError, test_rules

    try:
        own, results = test_rules(folder)
    except (RuleError, NotADirectoryError) as exc:
        raise _fail(str(exc)) from None
    failures = passed = 0
    for case_id, problems in results:
        if problems:
            failures += 1
            for problem in problems:
                typer.echo(f"FAIL {problem}")
        else:
            passed += 1
            typer.echo(f"ok   {case_id}")
    typer.echo(f"{passed} passed, {failures} failed")
    if failures or not own:
        raise typer.Exit(1)


@app.command(cls=_Command)
def instances(fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text or json.")) -> None:
    """Print the instance catalog (each fact with its source, its link and confidence)."""
    from migrator.api import instances as load_instances

    catalog = load_instances()
    sources = catalog.pop("_sources")
    if fmt == "json":
        typer.echo(json.dumps(catalog, indent=2, sort_keys=True))
        return
    if fmt != "text":
        raise _fail(f"--format: '{fmt}' is not one of text, json")
    typer.echo(f"{'type':16} {'chips':>5} {'cores':>5} {'accel GiB':>9} {'vCPU':>5} {'mem GiB':>7} {'cards':>5} {'EFA':>4}  targets      confidence")
    marked = False
    for name, i in catalog.items():
        def cell(fact: str, width: int) -> str:
            nonlocal marked
            weak = fact in (i.get("facts") or {})
            marked = marked or weak
            return f"{str(i[fact]) + ('*' if weak else ''):>{width}}"
        typer.echo(f"{name:16} {cell('chips', 5)} {cell('neuron_cores', 5)} {cell('accelerator_memory_gib', 9)} {cell('vcpus', 5)} "
                   f"{cell('memory_gib', 7)} {cell('network_cards', 5)} {cell('efa_interfaces', 4)}  {','.join(i['targets']):12} {i['confidence']}")
    if marked:
        typer.echo("* this fact has its own source and confidence (below)")
    typer.echo("\nSources")
    for name, i in catalog.items():
        typer.echo(f"  {name:16} {i['source']}")
        for fact, own in (i.get("facts") or {}).items():
            typer.echo(f"    {fact + '*':16} {own['source']} ({own['confidence']})")
    typer.echo("\nLinks")
    cited: dict[str, dict[str, list[str]]] = {}
    for name, i in catalog.items():
        for source, url in i["source_links"].items():
            cited.setdefault(source, {}).setdefault(url, [])
            if i["family"] not in cited[source][url]:
                cited[source][url].append(i["family"])
    for source in sources:
        if source not in cited:
            continue
        typer.echo(f"  {source:16} {sources[source]['title']}")
        for url, families in cited[source].items():
            which = f"{', '.join(families)}: " if isinstance(sources[source]["url"], dict) else ""
            typer.echo(f"  {'':16}   {which}{url}")


@app.command(cls=_Command)
def assess(
    ctx: typer.Context,
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH", show_default=".", help="Files or folders to assess."),
    target: str = typer.Option("portable", "--target", "-t", metavar="TARGET", help=TARGET_HELP),
    fleet: Optional[Path] = typer.Option(None, "--fleet", metavar="FILE", help="YAML of today's GPU workloads (see samples/fleet.yaml); turns on the cost part."),
    prices: Optional[str] = typer.Option(None, "--prices", metavar="FILE|aws", help="Prices file with a source per row (see samples/prices.yaml), or `aws` to query the AWS Price List API now."),
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text, json, markdown or html (one self-contained page)."),
    output: Optional[Path] = typer.Option(None, "--output", "--output-file", "-o", metavar="FILE", show_default="stdout", help="Write the report to this file (replaced atomically)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Count the unsafe rewrites as done by `fix` too (effort none)."),
    family: List[str] = typer.Option([], "--family", metavar="FAMILY", help="Instance family for the migration path and model support: trn1, trn2, trn3, inf2 (repeatable; default: those the target reaches)."),
    select: List[str] = typer.Option([], "--select", metavar="CODE", help=SELECT_HELP),
    ignore: List[str] = typer.Option([], "--ignore", metavar="CODE", help=IGNORE_HELP),
    exclude: List[str] = typer.Option([], "--exclude", metavar="PATTERN", help="gitignore-style pattern of paths to skip (repeatable)."),
    jobs: int = typer.Option(0, "--jobs", "-j", metavar="N", help="Worker processes (0 = one per CPU)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the result cache."),
    framework_source: bool = typer.Option(False, "--framework-source/--no-framework-source", help=FRAMEWORK_HELP),
    config: Optional[Path] = typer.Option(None, "--config", metavar="FILE", show_default=CONFIG_DEFAULT, help=CONFIG_HELP),
) -> None:
    """Readiness, effort, migration path, model support and cost of moving PATHS to Neuron.

    Exit 0 with a report, 2 on a bad flag, fleet or prices file (nothing is written then).
    """
    paths = paths or ["."]
    from migrator.api import ASSESS_FORMATS, FleetError, RuleError, assess as run_assess, render_assessment

    target, framework_source = _given(ctx, "target", target), _given(ctx, "framework_source", framework_source)
    settings = _settings(config, paths)
    if fmt not in ASSESS_FORMATS:
        raise _fail(f"--format: '{fmt}' is not one of {', '.join(ASSESS_FORMATS)}")
    known_families = ("trn1", "trn2", "trn3", "inf2", "inf1")
    for name in family:
        if name not in known_families:
            raise _fail(f"--family: '{name}' is not one of {', '.join(known_families)}")
    if prices is not None and fleet is None:
        raise _fail("--prices: give --fleet too (prices are used only for the cost part)")
    if prices not in (None, "aws") and not Path(prices).is_file():
        raise _fail(f"--prices: {prices}: no such file (or give `aws`)")
    options = _scan_options(settings, target, select, ignore, exclude, (), jobs, False, no_cache, None,
                            framework_source=framework_source)
    try:
        assessment = run_assess(paths, options, unsafe_fixes=unsafe_fixes or settings.unsafe_fixes, fleet_file=fleet,
                                prices=prices, families=tuple(dict.fromkeys(family)))
    except (FileNotFoundError, RuleError, FleetError) as exc:
        raise _fail(str(exc)) from None
    # On a terminal the text report fits its width (new-user helper: 100 columns wrapped at 80),
    # within 60-160 columns; in a file or a pipe it stays 100 columns wide, the same everywhere.
    width = min(160, max(60, shutil.get_terminal_size((100, 24)).columns)) if output is None and sys.stdout.isatty() else 100
    _emit(render_assessment(fmt, assessment, width=width), output)
    if output is not None:
        typer.echo(f"wrote {output}", err=True)


# Shown in `generate --help`; tests/test_friction.py checks them against DeploymentSpec's defaults.
GENERATE_DEFAULTS = {"name": "neuron", "workload": "training", "nodes": 1, "capacity": "on-demand",
                     "root_volume_gib": 512, "kubernetes_version": "1.34", "plain_ami": False}


@app.command(cls=_Command)
def generate(
    ctx: typer.Context,
    kind: str = typer.Argument(..., metavar="KIND", help="launch-template, cloudformation, terraform, parallelcluster, eks or user-data."),
    output: Path = typer.Option(..., "--output", "-o", metavar="DIR", help="Folder to write into (created; nothing is written on error)."),
    spec: Optional[Path] = typer.Option(None, "--spec", metavar="FILE", help="YAML spec file with the fields below (see samples/deploy-spec.yaml); flags override it."),
    fmt: str = typer.Option("json", "--format", metavar="FORMAT", help="launch-template only: json (boto3 / aws-cli payloads) or cloudformation."),
    instance_type: Optional[str] = typer.Option(None, "--instance-type", metavar="TYPE", help="e.g. trn2.48xlarge (see `neuron-migrator instances`)."),
    region: Optional[str] = typer.Option(None, "--region", metavar="REGION", help="AWS region, e.g. us-east-2."),
    name: str = typer.Option(GENERATE_DEFAULTS["name"], "--name", metavar="NAME", help="Prefix of resource names and the Name tag."),
    workload: str = typer.Option(GENERATE_DEFAULTS["workload"], "--workload", metavar="WORKLOAD", help="training or inference."),
    nodes: int = typer.Option(GENERATE_DEFAULTS["nodes"], "--nodes", metavar="N", help="Number of instances; multi-node training needs EFA."),
    target: Optional[str] = typer.Option(None, "--target", metavar="TARGET", show_default="the hardware's", help="neuron, xla or inf1."),
    efa: Optional[bool] = typer.Option(None, "--efa/--no-efa", show_default="when the type has EFA", help="EFA on every network card."),
    subnet_id: List[str] = typer.Option([], "--subnet-id", metavar="ID", help="Subnet for the nodes (repeatable; the first is used)."),
    security_group_id: List[str] = typer.Option([], "--security-group-id", metavar="ID", help="Extra security groups (the EFA group is always created)."),
    key_name: Optional[str] = typer.Option(None, "--key-name", metavar="NAME", help="Optional EC2 key pair (no SSH rule is opened)."),
    capacity: str = typer.Option(GENERATE_DEFAULTS["capacity"], "--capacity", metavar="CAPACITY", help="on-demand, reservation or capacity-block."),
    capacity_reservation_id: Optional[str] = typer.Option(None, "--capacity-reservation-id", metavar="ID", help="cr-... for reservation and capacity-block."),
    root_volume_gib: int = typer.Option(GENERATE_DEFAULTS["root_volume_gib"], "--root-volume-gib", metavar="GIB", help="Root gp3 volume in GiB (>= 512 on Trn)."),
    ami_ssm_parameter: Optional[str] = typer.Option(None, "--ami-ssm-parameter", metavar="PATH", show_default="the Neuron DLAMI's for the hardware", help="SSM parameter path of the AMI."),
    ami_id: Optional[str] = typer.Option(None, "--ami-id", metavar="AMI", help="A pinned AMI id instead of an SSM parameter."),
    plain_ami: bool = typer.Option(GENERATE_DEFAULTS["plain_ami"], "--plain-ami/--dlami", help="--plain-ami: the AMI is not a Neuron DLAMI, so user data installs Neuron."),
    s3_prefix: Optional[str] = typer.Option(None, "--s3-prefix", metavar="URL", help="s3://bucket/prefix the nodes may read (data, compile cache)."),
    kubernetes_version: str = typer.Option(GENERATE_DEFAULTS["kubernetes_version"], "--kubernetes-version", metavar="VERSION", help="eks only: EKS version."),
    image: Optional[str] = typer.Option(None, "--image", metavar="IMAGE", show_default="the Neuron DLC for the target and workload, where one is published", help="eks only: container image of the example workload."),
    tag: List[str] = typer.Option([], "--tag", metavar="KEY=VALUE", help="Tag for every resource (repeatable)."),
    cluster_name: Optional[str] = typer.Option(None, "--cluster-name", metavar="NAME", show_default="--name", help="eks only: the EKS cluster's name (discovery tag, access entry)."),
    fsx_storage_gib: Optional[int] = typer.Option(None, "--fsx-storage-gib", metavar="GIB", help="Create an FSx for Lustre file system of this size at /fsx (1200, 2400 or n x 2400)."),
    fsx_file_system_id: Optional[str] = typer.Option(None, "--fsx-file-system-id", metavar="ID", help="Mount this existing FSx for Lustre file system (fs-...) at /fsx."),
    fsx_mount_name: Optional[str] = typer.Option(None, "--fsx-mount-name", metavar="NAME", help="The existing file system's mount name (8 characters)."),
    kms_key_arn: Optional[str] = typer.Option(None, "--kms-key-arn", metavar="ARN", show_default="AWS managed keys", help="KMS key for EBS volumes and FSx."),
    vpc_cidr: Optional[str] = typer.Option(None, "--vpc-cidr", metavar="CIDR", help="The VPC's IPv4 CIDR (for --restrict-egress)."),
    restrict_egress: Optional[bool] = typer.Option(None, "--restrict-egress/--open-egress", show_default="--open-egress", help="Egress only to the VPC (VPC endpoints) and the EFA group."),
) -> None:
    """Deployment configs for trn1/trn1n/trn2/trn2u/trn3/inf2, checked before anything is written."""
    from migrator.api import GENERATE_KINDS as KINDS, SpecError, generate as generate_kind

    # A spec file's values count unless the flag itself was given.
    fmt, name, workload, nodes, capacity, root_volume_gib, plain_ami, kubernetes_version = (
        _given(ctx, n, v) for n, v in (("fmt", fmt), ("name", name), ("workload", workload), ("nodes", nodes),
                                       ("capacity", capacity), ("root_volume_gib", root_volume_gib),
                                       ("plain_ami", plain_ami), ("kubernetes_version", kubernetes_version)))

    kinds = ["launch-template", *[k for k in KINDS if not k.startswith("launch-template")]]
    if kind not in kinds:
        raise _fail(f"KIND: '{kind}' is not one of {', '.join(kinds)}")
    if kind == "launch-template":
        fmt = fmt or "json"
        if fmt not in ("json", "cloudformation"):
            raise _fail(f"--format: '{fmt}' is not one of json, cloudformation")
        kind = f"launch-template-{fmt}"
    elif fmt is not None:
        raise _fail(f"--format: only launch-template has formats; '{kind}' writes one format")
    tags = []
    for item in tag:
        if "=" not in item:
            raise _fail(f"--tag: '{item}' is not KEY=VALUE")
        key, _, value = item.partition("=")
        tags.append((key, value))
    flags = {
        "instance_type": instance_type, "region": region, "name": name, "workload": workload, "nodes": nodes,
        "target": target, "efa": efa, "subnet_ids": tuple(subnet_id), "security_group_ids": tuple(security_group_id),
        "key_name": key_name, "capacity": capacity, "capacity_reservation_id": capacity_reservation_id,
        "root_volume_gib": root_volume_gib, "ami_ssm_parameter": ami_ssm_parameter, "ami_id": ami_id,
        "plain_ami": plain_ami, "s3_prefix": s3_prefix, "kubernetes_version": kubernetes_version, "image": image,
        "tags": tuple(tags), "cluster_name": cluster_name, "fsx_storage_gib": fsx_storage_gib,
        "fsx_file_system_id": fsx_file_system_id, "fsx_mount_name": fsx_mount_name, "kms_key_arn": kms_key_arn,
        "vpc_cidr": vpc_cidr, "restrict_egress": restrict_egress,
    }
    try:
        result = generate_kind(kind, spec, flags, output)
    except (SpecError, ValueError) as exc:
        raise _fail(str(exc)) from None
    for path in result.files:
        typer.echo(f"{'replaced' if path in result.replaced else 'wrote'} {path}")
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)


class _OutputLost(Exception):
    """Standard output or error could not be written (a full disk behind `> file`)."""


class _Stream:
    """Standard output or error that outlives its reader: once a pipe's reader has gone (`| head`),
    the rest is dropped and the command ends with its own exit code (click would exit 1, which
    here means "findings"); any other write error ends the run with exit 2 and one line."""

    def __init__(self, stream, name: str):
        self._stream = stream
        self._name = name

    def write(self, text):
        if isinstance(text, str) and not text:
            return 0  # click probes a stream with empty writes; /dev/full fails even those
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)
        except OSError as exc:
            self._drop()
            raise _OutputLost(f"cannot write to standard {self._name}: {exc.strerror or exc}") from None

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()
        except OSError as exc:
            self._drop()
            raise _OutputLost(f"cannot write to standard {self._name}: {exc.strerror or exc}") from None

    def _drop(self):
        # What is still buffered goes to /dev/null, so the interpreter's last flush is quiet too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _guard_streams() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # closed by the caller (`>&-`): what would go there is dropped
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
            continue
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            continue  # not a file (an embedding program's stream): leave it alone
        setattr(sys, name, _Stream(stream, "output" if name == "stdout" else "error"))


def main() -> None:
    """Console-script entry point; usage errors exit 2 (click's convention), and so does a
    crash of the tool itself (never 1, which means "findings")."""
    _guard_streams()
    try:
        try:
            app()
        finally:
            sys.stdout.flush()  # buffered output meets a full disk here, not silently at exit
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except _OutputLost as exc:
        try:
            sys.stderr.write(f"neuron-migrator: error: {exc}\n")
            sys.stderr.flush()
        except _OutputLost:
            pass
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - a bug in the tool: exit 2, never 1
        import traceback

        traceback.print_exc(file=sys.stderr)
        typer.echo(f"neuron-migrator: internal error: {exc!r} (please report it)", err=True)
        sys.exit(2)
