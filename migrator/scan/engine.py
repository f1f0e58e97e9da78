"""Match the catalogue against one file's source and yield `Finding`s.

Python is parsed once with libcst; rules are data compiled into an index (scan/index.py), and
one context pass (scan/context.py) hands each node to the matcher of each rule kind
(scan/matchers/, one module per kind); the candidates become findings here. Other file kinds
(shell, Dockerfile, requirements) are matched line by line with the rules' `text` matchers.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.core.findings import Finding, Fix, Safety, Severity, Span
from migrator.core.lines import split_lines
from migrator.scan.candidate import Candidate, ParseFailure
from migrator.scan.config_keys import key_paths
from migrator.scan.context import Context
from migrator.scan.index import RuleIndex
from migrator.scan.positions import node_ranges
from migrator.scan.values import Parents, cuda_branch
from migrator.scan.version_gate import version_tuple
from migrator.scan.walk import walk

__all__ = ["RuleIndex", "Candidate", "scan_python", "scan_text", "ParseFailure", "mark_blocked"]

def _snippet(module: cst.Module, node: cst.CSTNode) -> str:
    code = module.code_for_node(node).strip()
    return code.splitlines()[0][:200] if code else ""


def scan_python(
    module: cst.Module,
    path: str,
    index: RuleIndex,
    target: str,
    *,
    is_test: bool = False,
    line_map: Any = None,
    source: str | None = None,
    whole_file: bool = False,
    original: str | None = None,
    statement_lines: Any = None,
) -> list[Finding]:
    """Match one parsed module; return findings in source order.

    Args:
        module: the parsed libcst module (not copied; findings keep references to its nodes).
        path: the path to report.
        index: the compiled catalogue.
        target: `portable`, `neuron`, `xla` or `inf1`: decides severities, messages and fixes.
        line_map: optional callable line -> (cell, line) for notebooks (cell None: a pruned
            source's line -> the file's line, see sources/prune.py).
        source: the module's text if known (saves generating it again).
        whole_file: mark no finding fixable when the file has a blocker (`mark_blocked`). The
            scan API applies that after suppressions instead; the fixer decides with what it can
            render, and `--partial`.
        original: the file's whole text when `module` was parsed from a pruned copy
            (sources/prune.py), for the rules that look at the whole file (`module_contains`).
        statement_lines: the line each statement of `module.body` starts on (prune.statement_lines),
            so that positions are computed from the statements with findings only.
    """
    collector = Context(index, module, path, is_test)
    collector._code = original
    owners: dict[int, int] = {}  # id(candidate node) -> index of its statement in module.body
    for number, statement in enumerate(module.body):  # as walk(module, collector): it has no visit_Module
        first = len(collector.candidates)
        walk(statement, collector)
        # A value reported where a name is set (argument._match_held) may sit in an earlier statement.
        owners.update((id(c.node), c.context.get("statement", number)) for c in collector.candidates[first:])
    collector.settle_vendor_arms()
    collector.settle_held_strings()
    collector.settle_spoofs()
    if not collector.candidates:
        return []
    if collector.cuda_tests:
        collector.candidates = _mark_cuda_only(collector, module)
        if not collector.candidates:
            return []
    ranges = node_ranges(module, module.code if source is None else source, [c.node for c in collector.candidates],
                         statement_lines, owners)
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    host = _host_pytorch(target)
    for cand in collector.candidates:
        if id(cand.node) in collector.suppressed and cand.rule.id not in _self_suppressing(cand):
            continue
        if host is not None and "old_torch" in cand.context and host >= cand.context["old_torch"]:
            continue  # a fallback for an older PyTorch than this target's hosts run
        key = (cand.rule.id, id(cand.node))
        if key in seen:
            continue
        seen.add(key)
        line, column, end_line, end_column = ranges[id(cand.node)]
        cell = None
        if line_map is not None:
            cell, line = line_map(line)
            _, end_line = line_map(end_line)
        findings.append(_finding(cand, path, target, Span(line, column + 1, end_line, end_column + 1),
                                 _snippet(module, cand.node), cell, is_test))
    findings.sort(key=lambda f: (f.cell or 0, f.span.line, f.span.column, f.rule_id))
    findings = _mark_held(findings, module)
    if whole_file:
        findings = mark_blocked(findings)
    return findings


def _mark_held(findings: list[Finding], module: cst.Module) -> list[Finding]:
    """What `fix` holds back (coupling.guard_holds and coupled_holds, the same questions fix's
    hold_back asks), marked here so that `scan`'s fixable marks and counts say what `fix` does:
    held whatever the safety, not fixable (with the reason; a finding with no fix inside a guard
    that stays blocks nothing, as in fix); held only when unsafe fixes are off, fixable with
    --unsafe-fixes. The holds: a `torch.cuda.is_available()` guard over CUDA code with no
    rewrite or that the scan cannot follow, with what it opens; a fix coupled with a partner
    rule's (NRN105 `accelerator="gpu"` with NRN312 `precision="16-mixed"`) whose partner's is
    not applied."""
    from dataclasses import replace

    from migrator.scan.coupling import coupled_holds, guard_holds

    guards = any(f.plan is not None and f.plan.values.get("name") == "torch.cuda.is_available" for f in findings)
    coupled = any(f.plan is not None and (f.plan.rule.fix or {}).get("coupled_with") for f in findings)
    if not guards and not coupled:
        return findings
    parents = Parents(module, syntax_only=True)
    cuda_only = {id(f): test for f in findings if f.plan is not None and f.plan.node is not None
                 and (test := cuda_branch(f.plan.node, parents)) is not None}

    def holds(safe_only: bool) -> dict[int, str]:
        def fixable(f: Finding) -> bool:
            return f.fix is not None and f.fix.available and (not safe_only or f.fix.safety is Safety.SAFE)

        held = guard_holds(module, findings, fixable, parents, cuda_only=cuda_only) if guards else {}
        return coupled_holds(findings, fixable, parents, held=held) if coupled else held

    held, held_safe = holds(False), holds(True)
    out = []
    for finding in findings:
        if id(finding) in held and finding.plan is not None and not finding.plan.context.get("manual_reason"):
            finding.plan.context = {**finding.plan.context, "manual_reason": held[id(finding)]}
        if finding.fix is not None and finding.fix.available and id(finding) in held:
            finding = replace(finding, fix=replace(finding.fix, available=False))
        elif finding.fix is not None and finding.fix.available and id(finding) in held_safe and finding.fix.safety is Safety.SAFE:
            finding = replace(finding, fix=replace(finding.fix, safety=Safety.UNSAFE))
        out.append(finding)
    return out


def _host_pytorch(target: str) -> tuple[int, ...] | None:
    """The oldest PyTorch a host of `target` runs (`host_pytorch` in rules/targets.yaml), or None."""
    from migrator.core.catalogue import load_targets

    return version_tuple(load_targets().get(target, {}).get("host_pytorch"))


def mark_blocked(findings: list[Finding]) -> list[Finding]:
    """In a file with a blocker, no finding is fixable: `fix` leaves the file whole (see coupling.blocks)."""
    from dataclasses import replace

    from migrator.scan.coupling import blocks

    blocker = next((f for f in findings if blocks(f, f.fix is not None and f.fix.available)), None)
    if blocker is None:
        # A would-be blocker whose only rewrite is unsafe: plain `fix` leaves the file whole, so
        # its safe fixes apply only with --unsafe-fixes too.
        if any(f.fix is not None and f.fix.available and f.fix.safety is Safety.UNSAFE and blocks(f, False) for f in findings):
            return [replace(f, fix=replace(f.fix, safety=Safety.UNSAFE)) if f.fix is not None and f.fix.available else f
                    for f in findings]
        return findings
    where = f"`{blocker.snippet}` ({blocker.rule_id}, line {blocker.span.line})"
    out = []
    for finding in findings:
        if finding.fix is not None and finding.fix.available and finding.plan is not None:
            finding.plan.context = {**finding.plan.context, "manual_reason": (
                f"not rewritten: {where} has no automatic rewrite, so the file would still need CUDA; "
                "change it by hand and run fix again, or pass --partial")}
            finding = replace(finding, fix=replace(finding.fix, available=False))
        out.append(finding)
    return out


def _mark_cuda_only(collector: Context, module: cst.Module) -> list[Candidate]:
    """Code inside `if device == "cuda":` runs only on a GPU: `fix` leaves it as it is.

    It is still reported (the branch is skipped on Neuron), without a fix. Inside a test on the
    resolved accelerator (`DEVICE.type == "cuda"`, as `fix` writes it) it is not reported.
    """
    parents = Parents(module, syntax_only=True)
    accelerators = collector.values.module.accelerator_names
    kept = []
    for cand in collector.candidates:
        test = cuda_branch(cand.node, parents) if cand.node is not None else None
        if test is None:
            kept.append(cand)
            continue
        code = module.code_for_node(test).strip()
        if any(re.search(rf"\b{re.escape(name)}\.type\b", code) for name in accelerators):
            continue
        cand.context = {**cand.context, "manual_reason": f"runs only on CUDA, inside `if {code}`: left as it is"}
        kept.append(cand)
    return kept


def _self_suppressing(cand: Candidate) -> set[str]:
    # Argument and guarded matches suppress their own node against other rules, not themselves.
    return {cand.rule.id} if cand.context.get("argument") is not None or cand.context.get("device_kind") else set()


def _finding(cand: Candidate, path: str, target: str, span: Span, snippet: str, cell: int | None, is_test: bool) -> Finding:
    rule = cand.rule
    fix = None
    if rule.fix:
        entry = rule.fix_for(target)
        available = entry is not None
        if available and rule.fix["kind"] == "text":
            # A text fix rewrites shell/Dockerfile/requirements lines, never Python strings, and
            # only lines its `when` pattern accepts.
            line = cand.context.get("line_text")
            available = line is not None and ("when" not in entry or re.search(entry["when"], line) is not None)
        if cand.node is None and (rule.fix["kind"] != "text" or cand.context.get("file_kind") == "yaml"):
            # A line of a YAML config matched by a rule whose fix rewrites Python, or a config key
            # (what it means is the program's): reported for a person.
            available = False
        if cand.context.get("manual_reason"):
            available = False
        if available and rule.fix["kind"] == "template" and "expr" not in entry and cand.values.get("name") not in entry.get("by_name", {}):
            available = False  # `by_name` has no rewrite for this name
        fix = Fix(
            title=(entry or {}).get("title", rule.fix["title"]),
            safety=Safety((entry or {}).get("safety", rule.fix["safety"])),
            available=available,
        )
    values = dict(cand.values)
    # Reference, call, import and method matches fill only `name`; text and string matches only
    # `value`. A rule that mixes kinds under one message (NRN704) would otherwise print a literal
    # "{value}" for some of its findings: each stands in for the other where it is missing.
    if "name" in values:
        values.setdefault("value", values["name"])
    if "value" in values:
        values.setdefault("name", values["value"])
    try:
        message = rule.message_for(target).format(**values)
    except (KeyError, IndexError):
        message = rule.message_for(target)
    severity = rule.severity_for(target)
    if cand.context.get("scaffold"):
        # Issue 11's Precision list: test scaffolding (a skip condition, an expected failure) is info, saying so.
        severity = Severity.INFO
        message += f" (test scaffolding: {cand.context['scaffold']})"
    return Finding(
        rule_id=rule.id, rule_name=rule.name, category=rule.category, severity=severity,
        path=path, span=span, message=message, fix=fix, cell=cell, is_test=is_test, snippet=snippet,
        node=cand.node, plan=cand,
    )


def scan_text(text: str, path: str, file_kind: str, index: RuleIndex, target: str, *, is_test: bool = False,
              cell: int | None = None, line_offset: int = 0) -> list[Finding]:
    """Match `text` rules line by line (comment lines skipped) in a non-Python file."""
    findings: list[Finding] = []
    rules = [(p, r) for p, r, kinds in index.text if file_kind in kinds and r.id in index.enabled and (r.in_tests or not is_test)
             and not (id(p) in index.text_paths and index.text_paths[id(p)].search(path.replace("\\", "/")))]
    once: set[int] = set()
    code: str | None = None
    for p, _ in rules:
        unless, single = index.text_options.get(id(p), (None, False))
        if unless is not None and code is None:
            code = "\n".join(line for line in split_lines(text) if not _is_comment(line, file_kind))
        if unless is not None and unless.search(code or ""):
            once.add(id(p))  # the file already has what the rule asks for: nothing to report
        elif single:
            once.add(-id(p))
    if not rules:
        return findings
    lines = split_lines(text)
    keys: list[str] | None = None  # the setting each line belongs to, for rules with `in_keys`
    for lineno, line in enumerate(lines, start=1):
        if _is_comment(line, file_kind):
            continue
        matched: set[str] = set()
        for pattern, rule in rules:
            if id(pattern) in once:
                continue
            if id(pattern) in index.text_keys:
                if keys is None:
                    keys = key_paths(lines, file_kind)
                if not index.text_keys[id(pattern)].search(keys[lineno - 1]):
                    continue
            for m in pattern.finditer(line):
                if -id(pattern) in once:
                    once.add(id(pattern))  # `once`: this was the file's first match
                matched.add(rule.id)
                repeat = index.text_repeat.get(id(pattern))
                while m is not None:
                    cand = Candidate(rule, None, {"value": _match_value(m).strip()},
                                     {"line": lineno + line_offset, "match": m, "line_text": line, "file_kind": file_kind})
                    span = Span(lineno + line_offset, _value_start(m) + 1, lineno + line_offset, m.end() + 1)
                    findings.append(_finding(cand, path, target, span, line.strip()[:200], cell, is_test))
                    # `repeat_after`: the command's other packages, each tried where the last ended.
                    m = repeat.match(line, m.end()) if repeat is not None and m.end() > m.start() else None
                break
        if file_kind in ("shell", "dockerfile") and line.endswith("\\") and lineno < len(lines):
            findings.extend(_across_continuation(rules, once, matched, line, lines[lineno], lineno + line_offset,
                                                 path, target, file_kind, cell, is_test))
    return findings


def _is_comment(line: str, file_kind: str) -> bool:
    """A comment line, not read by text rules; a shell script's `#SBATCH` lines are Slurm's
    directives, read like commands."""
    stripped = line.lstrip()
    return stripped.startswith("#") and not (file_kind == "shell" and stripped.startswith("#SBATCH"))


def _value_start(m: re.Match[str]) -> int:
    """Where a finding starts: the match, or for a `repeat_after` match (which begins where the
    last one ended) its `value`."""
    if m.pos and "value" in m.re.groupindex and m.start("value") >= 0:
        return m.start("value")
    return m.start()


def _match_value(m: re.Match[str]) -> str:
    """What the message names: the pattern's `value` group where it has one (`16-mixed` of
    `precision: 16-mixed`), else the whole match."""
    return m.group("value") if "value" in m.re.groupindex and m.group("value") is not None else m.group(0)


def _across_continuation(rules: list, once: set[int], matched: set[str], line: str, following: str, lineno: int,
                         path: str, target: str, file_kind: str, cell: int | None, is_test: bool) -> list[Finding]:
    """Matches that a `\\`-continued line splits (`--backend \\` then `nccl`): each line alone
    misses them. Read on the two lines joined as the shell joins them (the backslash and the
    line end removed), reported over both, for a person (a text fix rewrites one line)."""
    head = line[:-1]
    if re.search(r"(^|\s)#", head):
        return []  # the backslash is inside a comment: it continues nothing
    pad = " " if head[:1] == "-" else ""  # a flag at the start of a continued line still starts a word
    joined = pad + head + following
    split = len(pad) + len(head)  # offsets from here on are on the following line
    out: list[Finding] = []
    alone: dict[str, set[int]] | None = None  # per rule, where its matches on the following line alone end
    for pattern, rule in rules:
        if id(pattern) in once or rule.id in matched:
            continue
        for m in pattern.finditer(joined):
            if m.start() >= split or m.end() <= split:
                continue  # wholly on one line: that line's own scan reports it
            if alone is None:
                alone = {}
                for p, r in rules:
                    for own in p.finditer(following):
                        alone.setdefault(r.id, set()).add(own.end())
            if m.end() - split in alone.get(rule.id, ()):
                continue  # the same text the following line reports by itself
            if -id(pattern) in once:
                once.add(id(pattern))
            cand = Candidate(rule, None, {"value": " ".join(_match_value(m).split())}, {
                "line": lineno, "line_text": joined, "file_kind": file_kind,
                "manual_reason": "split over a continued line: change both lines by hand"})
            span = Span(lineno, max(m.start() - len(pad), 0) + 1, lineno + 1, m.end() - split + 1)
            out.append(_finding(cand, path, target, span, joined.strip()[:200], cell, is_test))
            matched.add(rule.id)
            break
    return out
