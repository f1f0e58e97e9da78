"""`--format text`: findings grouped by file, then a summary line (ruff-like)."""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import Any, Sequence

from migrator.core.findings import Finding, Severity
from migrator.core.lines import printable


def _location(f: Finding) -> str:
    return printable(f.location)


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def render_text(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    """`path:line:col NRNxxx [*] message (severity)`; `[*]` marks a safe fix for the scanned target.

    With `stats["color"]` (the CLI sets it only for a terminal without NO_COLOR) the output is
    coloured with rich; otherwise it is plain text. `stats["fix_command"]` is the `fix` command
    line the summary suggests (default: `neuron-migrator fix --target TARGET`).
    """
    color = bool(stats and stats.get("color"))
    if color:
        from rich.markup import escape
    else:
        def escape(text: str) -> str:
            return text
    lines: list[str] = []
    for path, group in groupby(findings, key=lambda f: f.path):
        lines.append(f"[bold]{escape(printable(path))}[/bold]" if color else printable(path))
        for f in group:
            mark = "[*] " if f.fixable and f.fix.safety.value == "safe" else ""
            test = ", test file" if f.is_test else ""
            severity = f.severity.value
            if color:
                lines.append(f"  {escape(_location(f))} [{_STYLE[severity]}]{f.rule_id}[/] {escape(mark + printable(f.message))}"
                             f" ([{_STYLE[severity]}]{severity}[/]{test})")
            else:
                lines.append(f"  {_location(f)} {f.rule_id} {mark}{printable(f.message)} ({severity}{test})")
    by_severity = Counter(f.severity.value for f in findings)
    fixable = sum(1 for f in findings if f.fixable and f.fix.safety.value == "safe")
    unsafe = sum(1 for f in findings if f.fixable and f.fix.safety.value == "unsafe")
    parts = ", ".join(f"{by_severity[s]} {s}" for s in (v.value for v in Severity.highest_first()) if by_severity[s])
    summary = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if parts:
        summary += f" ({parts})"
    if stats:
        files = stats["files"]
        summary += f" in {files} file{'s' if files != 1 else ''}, {stats['lines']} lines, {stats['seconds']:.1f} s"
        left_out = sum(1 for f in findings if f.rule_id == "NRN002")
        if left_out:
            # New-user helper: "1 finding in 0 files" read as a contradiction.
            summary += f" ({left_out} package{'s' if left_out != 1 else ''} of PyTorch's own source left out: NRN002)"
    target = (stats or {}).get("target")
    if fixable:
        # The hint holds for the target (and the selection) the scan was made for: the CLI hands
        # the whole command in `fix_command`, so copying it fixes what was reported.
        command = (stats or {}).get("fix_command") or "neuron-migrator fix" + (f" --target {target}" if target else "")
        summary += f"; {fixable} fixable with `{escape(printable(command))}`"
    if unsafe:
        summary += f"; {unsafe} more with `--unsafe-fixes`"
    if stats and stats.get("baselined"):
        summary += f"; {stats['baselined']} more in the baseline"
    lines.append(summary + ".")
    if stats and stats.get("statistics"):
        lines.append("By category:")
        for category, n in sorted(Counter(f.category for f in findings).items(), key=lambda kv: -kv[1]):
            lines.append(f"  {n:6d}  {category}")
    text = "\n".join(lines) + "\n"
    if not color:
        return text
    import io

    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=100000, highlight=False, emoji=False).print(text, end="")
    return buffer.getvalue()
