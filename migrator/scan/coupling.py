"""Which fixes of one file go together, and which must wait for a person (issue: rewrites that survive).

A rewrite of one expression can change what another one means. This module looks at all the
fixes a pass would make in a module and holds back the ones whose partners cannot be rewritten,
so a coupled group is rewritten all together or left all for a person:

- **Guards.** `torch.cuda.is_available()` rewritten to `torch.accelerator.is_available()` opens
  the guarded code to Trainium and the CPU's siblings. The guard is rewritten only if every
  CUDA-only finding it guards (in an `and`, the branch of an `if`/`IfExp`, or behind a name the
  guard was assigned to) is rewritten too, or runs without CUDA (`runs_without_cuda` in its
  rule); otherwise the guard and its members stay, with a reason.
- **CUDA-only branches.** Code inside `if device == "cuda":` (or `"cuda" in ...`,
  `x.is_cuda`) already runs only on a GPU: it is left as it is, adding no second guard.
- **Coupled rules** (`fix.coupled_with` in a rule): a stream is not rewritten while the stream
  selection that uses it, in the same function, is left for a person.
- **Float64.** A model cast to float32 while `torch.from_numpy` keeps feeding it float64 data
  crashes at its first layer: NRN303 waits until every NumPy conversion in the file is
  converted too.

It also chooses two renderings the rule templates cannot express: a duplicate
`torch.cuda.manual_seed(s)` right after `torch.manual_seed(s)` is deleted (`torch.manual_seed`
seeds every device), and a device count that sizes `mp.spawn(nprocs=...)` is at least 1, so a
CPU run trains with one process instead of silently spawning none.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from migrator.core.findings import Finding
from migrator.scan.resolve import dotted_name
from migrator.scan.values import ModuleValues, Parents, cuda_branch
from migrator.scan.walk import walk

__all__ = ["hold_back", "manual_seed_duplicate", "sizes_processes", "already_guarded", "script_device_type", "blocks"]


def _descendants(node: cst.CSTNode) -> set[int]:
    out, stack = set(), [node]
    while stack:
        current = stack.pop()
        out.add(id(current))
        stack.extend(current.children)
    return out



def _guard_regions(finding: Finding, module: cst.Module, parents: Parents) -> list[cst.CSTNode]:
    """What `torch.cuda.is_available()` at `finding` decides: the code that runs only when it is True."""
    call = finding.plan.context.get("call") if finding.plan else None
    if call is None:
        return []
    regions: list[cst.CSTNode] = []
    node: cst.CSTNode = call
    negated = False
    for child, parent in parents.chain(call):
        if isinstance(parent, cst.BooleanOperation):
            if isinstance(parent.operator, cst.And) and child is parent.left:
                regions.append(parent.right)
            node = parent
            continue
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            negated = not negated
            node = parent
            continue
        if isinstance(parent, (cst.If, cst.IfExp, cst.While)) and child is parent.test:
            branch = parent.orelse if negated else parent.body
            if branch is not None:
                regions.append(branch)
            elif isinstance(parent, cst.If):
                # `if not torch.cuda.is_available(): sys.exit(...)`: what follows runs only with CUDA.
                # An `elif`: what follows the whole if/elif chain.
                statement: cst.CSTNode = parent
                block = parents.of.get(id(statement))
                while isinstance(block, cst.If) and block.orelse is statement:
                    statement, block = block, parents.of.get(id(block))
                body = getattr(block, "body", ())
                if isinstance(body, cst.BaseSuite):  # a block a parent map skips (syntax_only)
                    body = body.body
                body = list(body or ()) if isinstance(body, (list, tuple)) else []
                if statement in body:
                    regions.extend(body[body.index(statement) + 1:])
            break
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and child is parent.value and not negated:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            names = {dotted_name(t) for t in targets} - {None}
            scope = parents.scope(parent) or module
            regions.extend(_uses_as_test(scope, names))
            break
        if isinstance(parent, (cst.Arg, cst.Call, cst.Expr, cst.Return, cst.Assert, cst.SimpleStatementLine,
                               cst.IndentedBlock, cst.Module)):
            break
        node = parent
    return regions


def _unrecognised_cuda(regions: list[cst.CSTNode], members: list[Finding], module: cst.Module,
                       parents: Parents) -> str | None:
    """The first `.cuda` reference in `regions` that no member finding covers, as code, else None.

    `self.torch.cuda.empty_cache()` (torch kept on an attribute), `backend.cuda.x` or `gpu.cuda()`
    on an alias the scan cannot resolve are no findings, yet they are as CUDA-only as the calls
    that are: a guard opened to every accelerator would run them without CUDA (and, ahead of an
    `elif` for another vendor, take that vendor's branch away from it).
    """
    covered: set[int] = set()
    for member in members:
        for node in (member.plan.node, member.plan.context.get("call")):
            if isinstance(node, cst.CSTNode):
                covered |= _descendants(node)
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if id(node) in covered:
                return False
            if node.attr.value == "cuda" and cuda_branch(node, parents) is None:
                found.append(node)
                return False
            return True

    for region in regions:
        walk(region, _Find())
        if found:
            parent = parents.of.get(id(found[0]))
            shown = parent if isinstance(parent, (cst.Attribute, cst.Call)) else found[0]
            parent = parents.of.get(id(shown))
            if isinstance(parent, cst.Call) and parent.func is shown:
                shown = parent
            return module.code_for_node(shown).strip().splitlines()[0][:80]
    return None


def _uses_as_test(scope: cst.CSTNode, names: set[str]) -> list[cst.CSTNode]:
    """Bodies of the `if`/`IfExp` in `scope` whose test is one of `names` (or starts an `and` with it)."""
    out: list[cst.CSTNode] = []

    def leftmost(test: cst.BaseExpression) -> cst.BaseExpression:
        while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            test = test.left
        return test

    class _Find(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            if dotted_name(leftmost(node.test)) in names:
                out.append(node.body)

        def visit_IfExp(self, node: cst.IfExp) -> None:
            if dotted_name(leftmost(node.test)) in names:
                out.append(node.body)

    walk(scope, _Find())  # read-only: the scan's walk, not libcst's rebuilding visit
    return out


def _line(finding: Finding, locate: Callable[[Finding], Finding] = lambda f: f) -> str:
    finding = locate(finding)
    return f"line {finding.span.line}" + (f" of cell {finding.cell}" if finding.cell else "")


def hold_back(module: cst.Module, findings: list[Finding], fixable: Callable[[Finding], bool],
              parents: Parents | None = None, locate: Callable[[Finding], Finding] = lambda f: f) -> dict[int, str]:
    """Findings (by id) whose fix must not be applied in this pass, each with the reason.

    Args:
        module: the parsed module the findings' nodes belong to.
        findings: this pass's findings.
        fixable: whether a finding's fix would apply on its own (allowed and renders).
        parents: the module's parent map, if the caller has one.
        locate: maps a finding to its place in the file as the user wrote it (for the reasons).
    """
    parents = parents or Parents(module)
    held: dict[int, str] = {}
    cuda_only: dict[int, cst.BaseExpression] = {}
    for finding in findings:
        node = finding.plan.node if finding.plan else None
        if node is None:
            continue
        test = cuda_branch(node, parents)
        if test is not None:
            cuda_only[id(finding)] = test
            held[id(finding)] = f"runs only on CUDA, inside `if {module.code_for_node(test).strip()}`: left as it is"
    guard_holds(module, findings, fixable, parents, locate, held, cuda_only)
    coupled_holds(findings, fixable, parents, locate, held)
    # A float32 model fed float64 NumPy data fails at its first layer.
    casts = [f for f in findings if f.rule_id == "NRN303" and id(f) not in held]
    if casts:
        conversions = _numpy_conversions(module)
        covered = {id(f.plan.context.get("call")) for f in findings if f.rule_id == "NRN308" and fixable(f) and id(f) not in held}
        open_calls = [c for c in conversions if id(c) not in covered]
        if open_calls:
            where = module.code_for_node(open_calls[0]).strip().splitlines()[0][:60]
            for finding in casts:
                held[id(finding)] = (f"`{where}` keeps feeding float64 NumPy data: a float32 model would fail on it; "
                                     "convert the data and the model together (`.astype(np.float32)`, `.float()`)")
    return held


def guard_holds(module: cst.Module, findings: list[Finding], fixable: Callable[[Finding], bool], parents: Parents,
                locate: Callable[[Finding], Finding] = lambda f: f, held: dict[int, str] | None = None,
                cuda_only: dict[int, Any] | None = None) -> dict[int, str]:
    """The `torch.cuda.is_available()` guards (by id) that stay as they are, because they open
    CUDA code `fix` cannot rewrite or cannot see, with the findings inside them; adds to `held`
    (findings already held: not read again) and returns it. `scan` asks the same (engine)."""
    held = {} if held is None else held
    cuda_only = cuda_only or {}
    for finding in findings:
        if finding.plan is None or finding.plan.values.get("name") != "torch.cuda.is_available" or id(finding) in held:
            continue
        regions = _guard_regions(finding, module, parents)
        if not regions:
            continue
        inside: set[int] = set()
        for region in regions:
            inside |= _descendants(region)
        members = [f for f in findings if f is not finding and f.plan is not None and f.plan.node is not None and id(f.plan.node) in inside]
        blockers = [f for f in members if id(f) not in cuda_only and not fixable(f) and not f.plan.rule.raw.get("runs_without_cuda")]
        unknown = None if blockers else _unrecognised_cuda(regions, members, module, parents)
        if blockers:
            first = blockers[0]
            held[id(finding)] = (f"guards `{first.snippet}` ({first.rule_id}, {_line(first, locate)}), which has no automatic rewrite: "
                                 "rewriting the guard alone would run it without CUDA; change the two together by hand")
        elif unknown is not None:
            held[id(finding)] = (f"guards `{unknown}`, CUDA code the scan cannot follow (no finding of its own): rewriting the "
                                 "guard alone would run it without CUDA; change the two together by hand")
        if blockers or unknown is not None:
            for member in members:
                held.setdefault(id(member), f"inside a `torch.cuda.is_available()` guard ({_line(finding, locate)}) that stays as it is")
    return held


def coupled_holds(findings: list[Finding], fixable: Callable[[Finding], bool], parents: Parents,
                  locate: Callable[[Finding], Finding] = lambda f: f, held: dict[int, str] | None = None) -> dict[int, str]:
    """The findings (by id) whose fix goes with a partner rule's in the same function (NRN105's
    `accelerator="gpu"` with NRN312's `precision="16-mixed"`) while the partner's cannot be
    applied or is held; adds to `held` and returns it. `scan` asks the same (engine)."""
    held = {} if held is None else held
    by_scope: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.plan is not None and finding.plan.node is not None:
            by_scope.setdefault(id(parents.scope(finding.plan.node)), []).append(finding)
    for group in by_scope.values():
        for finding in group:
            partners = set((finding.plan.rule.fix or {}).get("coupled_with", []))
            if not partners or id(finding) in held or not fixable(finding):
                continue  # (a finding with no rewrite of its own is not held: it may block the file)
            stuck = next((g for g in group if g.rule_id in partners and (not fixable(g) or id(g) in held)), None)
            if stuck is not None:
                held[id(finding)] = (f"goes with `{stuck.snippet}` ({stuck.rule_id}, {_line(stuck, locate)}), which has no automatic "
                                     "rewrite: change them together by hand")
    return held


def _numpy_conversions(module: cst.Module) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            name = dotted_name(node.func) or ""
            if name.endswith("from_numpy"):
                found.append(node)

    walk(module, _Find())  # read-only: the scan's walk, not libcst's rebuilding visit
    return found


def manual_seed_duplicate(finding: Finding, module: cst.Module, parents: Parents) -> cst.SimpleStatementLine | None:
    """The statement `torch.cuda.manual_seed(s)` when `torch.manual_seed(s)` precedes it in the same
    block, or is the very next statement (no CUDA random numbers can be drawn in between)."""
    call = finding.plan.context.get("call") if finding.plan else None
    if call is None:
        return None
    expr, line = parents.of.get(id(call)), None
    if isinstance(expr, cst.Expr):
        line = parents.of.get(id(expr))
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    block = parents.of.get(id(line))
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or line not in body:
        return None
    args = module.code_for_node(call).split("(", 1)[1]
    at = body.index(line)
    for stmt in [*body[:at], *body[at + 1: at + 2]]:
        code = module.code_for_node(stmt).strip()
        if code.endswith(f"manual_seed({args}") and ".cuda." not in code and code.split("(", 1)[0].endswith("torch.manual_seed"):
            return line
    return None


def sizes_processes(cand: Any, values: ModuleValues, parents: Parents) -> bool:
    """Whether the device count of candidate `cand` (a finding's plan) decides how many
    processes `mp.spawn` starts."""
    call = cand.context.get("call") if cand is not None else None
    if call is None:
        return False
    parent = parents.of.get(id(call))
    while isinstance(parent, cst.IfExp):  # `args.procs if args.cpu else torch.cuda.device_count()`
        parent = parents.of.get(id(parent))
    if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value in ("nprocs", "nproc_per_node"):
        return True
    if isinstance(parent, cst.Assign):
        function = parents.scope(parent)
        scope = values.scope(function)
        for target in parent.targets:
            if isinstance(target.target, cst.Name) and target.target.value in scope.owner(target.target.value).nprocs_names:
                return True
    return False


def already_guarded(node: cst.CSTNode, module: cst.Module, parents: Parents) -> bool:
    """Whether `node` runs only behind an accelerator guard (`if torch.cuda.is_available():`, or the
    `torch.accelerator` one it becomes): a guarded rewrite inside needs no second guard."""
    for child, parent in parents.chain(node):
        if isinstance(parent, (cst.If, cst.IfExp)) and child is parent.body:
            test = module.code_for_node(parent.test)
            if ("cuda.is_available()" in test or "accelerator.is_available()" in test) and "not " not in test:
                return True
    return False


def script_device_type(node: cst.CSTNode, values: ModuleValues, parents: Parents) -> str | None:
    """The script's own device-type variable where `node` can read it (`device_type`), else None.

    The variable of the enclosing function, or a module global read from inside a function
    (which runs after the module has set it). Reusing it keeps one source of truth: a
    `--device=cpu` run keeps a CPU autocast and GradScaler.
    """
    function = parents.scope(node)
    scope = values.scope(function) if function is not None else values.module
    for name in ("device_type",):
        owner = scope.owner(name)
        if name in owner.bound and name in owner.text_names | owner.assigned_other and (owner is scope or function is not None):
            if owner is values.module and function is None:
                return None  # module level: the name may be set below this line
            return name
    return None


def blocks(finding: Finding, fixable: bool) -> bool:
    """Whether `finding` keeps its file on CUDA after every other fix (a blocker).

    A blocker is a device, runtime or distributed finding (the CUDA-only calls that fail without
    CUDA) that `fix` cannot rewrite (`fixable` False), outside a CUDA-only branch, whose rule's
    code does not run harmlessly without CUDA. `fix` leaves a file with a blocker unchanged
    unless told `--partial`, and `scan` marks none of its findings fixable.
    """
    if fixable or finding.plan is None or finding.plan.node is None:
        return False
    if finding.plan.context.get("manual_reason") or finding.plan.rule.raw.get("runs_without_cuda"):
        return False
    return finding.category in ("device", "runtime", "distributed") and finding.severity is not None and finding.severity.rank > 0
