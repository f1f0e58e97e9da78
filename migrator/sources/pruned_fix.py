"""A file's fix computed on its pruned text, for the edits of a scan's JSON and SARIF output.

`scan --format json` gives each fixable finding its fix as edits (`edits.attach_edits`), read
off the rewrite `fix` makes of the whole file. Most of a large file is code no rule looks at,
and parsing, rescanning and generating it is most of that time. Here the fixer runs on the file
with such statements left out (the scan's own test, sources/prune.py, with more kept, below):
each run of left-out sibling statements stands as one placeholder statement
`pass  # nrn-elided-N`, and the rewrite is spliced back into the file by putting each run where
its placeholder stands. `PrunedFix.fix` gives back the outcome the whole file's fix would
give, or the reason it cannot be sure of that; the caller then fixes the whole file.

Why the outcome is the whole file's, character for character:

- **The fixer's scans.** Each rescan parses the pruned text but works in the file's text as it
  would be (the spliced text): rules that read the whole file read it, positions are reported
  in it and `# noqa` comments are read from it (`_Rescan`). The first scan must give exactly
  the scan's own findings. Before a rescan of a rewritten text, the left-out statements are
  tested again against the spliced text, each on its own, with the scan's test
  (`prune.left_out`): a rewrite may make one of them matter (an import it adds that a
  left-out statement uses, a name it now passes as a device). One that would be kept now
  makes the whole file's fix the only sure one.
- **What the fixer reads besides findings.** It chooses names (`DEVICE`, helper names) by
  regex over the module's text: every statement that holds any name it may choose is kept
  whole. It adds imports after the module docstring and the leading imports (libcst's
  AddImportsVisitor reads only those), the constant and helpers before the first statement
  after them (where it stands, not what it says; it may get blank lines before it, which a
  placeholder takes as that statement would): that head is kept whole. Statements that hold
  `device_type` (script_device_type reads it from ModuleValues), `from_numpy` (NRN303 waits
  for every NumPy conversion of the module), `nprocs` (process counts) and, with an NRN207
  finding or a `cuda.manual_seed` in the file, `manual_seed` (a duplicate seed is found
  among the statements around it; kept whole) are kept. So are statements holding `.cuda` in a
  file that says `is_available` (a guard is not opened over CUDA code the scan cannot follow,
  `self.torch.cuda.x()`) and
  `import torch` (a module that imports torch only under a condition gets no unconditional
  import). In a script the fixer drops a
  `from` import once a fix replaced its last use: statements naming such an import are kept,
  and one a fix asks to drop that a left-out statement still names makes it fall back.
- **The module's layout.** libcst indents the blocks a fix adds (a helper's body, an `if`
  guard) like the file's first indented block, and ends new lines like its first line: the
  top-level statement holding the first indented block is kept (a placeholder inside it has
  its run's indentation), and a pruned text whose first line ending or final newline differs
  from the file's makes it fall back.
- **Where each run stands.** A placeholder is an inert statement, and the fixer replaces,
  removes and inserts statements as nodes, so a run of statements stands after the rewrite
  exactly where its placeholder stands, with the same comments before and after it. A
  placeholder that is changed, gone or repeated makes it fall back.
- **The result compiles**, as the whole file's fix checks.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from migrator.core.findings import Finding
from migrator.core.lines import split_lines
from migrator.core.options import ScanOptions

if TYPE_CHECKING:
    import libcst as cst

    from migrator.fix.outcome import FixOutcome
    from migrator.scan.index import RuleIndex

__all__ = ["PrunedFix", "prepare"]

_MARK = "nrn-elided-"
_PLACEHOLDER = re.compile(r"pass  # nrn-elided-(\d+)")
# Statements holding these are kept, their blocks still pruned one statement at a time
# (what the fixer reads of them is where they are, not what is around them).
_OPEN_WORDS = (b"device_type", b"from_numpy", b"nprocs", b"nproc_per_node")
_SEED_RULE = "NRN207"  # its fix looks for `torch.manual_seed` among the statements around it


class _Fallback(Exception):
    """The pruned fix cannot be shown to be the whole file's (the message says why)."""


@dataclass
class _Run:
    """Left-out sibling statements that stand as one placeholder."""

    placeholder: str  # the placeholder line, with the line ending of the run's last line
    text: str  # the run's lines as in the file
    lines: int  # how many lines `text` holds
    statements: list[tuple[int, int]]  # each statement's first and last line, 0-based within `text`


class _Layout:
    """Where the placeholders stand in one text of the pruned module, and the file's text it stands for."""

    def __init__(self, runs: Sequence[_Run], code: str) -> None:
        parts: list[str] = []
        at = 0
        line = 1  # line of `code` at offset `at`
        self.code_lines: list[int] = []  # line of each placeholder in `code`, in order
        self.whole_lines: list[int] = []  # line where its run starts in the file's text
        self.shifts: list[int] = [0]  # lines the file's text has more than `code` after the first k placeholders
        self.order: list[int] = []  # run number of each placeholder
        seen: set[int] = set()
        for match in _PLACEHOLDER.finditer(code):
            number = int(match.group(1))
            start = code.rfind("\n", 0, match.start()) + 1
            if number >= len(runs) or number in seen:
                raise _Fallback("a placeholder is repeated")
            run = runs[number]
            end = start + len(run.placeholder)
            if code[start:end] != run.placeholder or (not run.placeholder.endswith("\n") and end != len(code)):
                raise _Fallback("a placeholder was changed")
            seen.add(number)
            line += code.count("\n", at, start)
            parts.append(code[at:start])
            parts.append(run.text)
            self.code_lines.append(line)
            self.whole_lines.append(line + self.shifts[-1])
            self.shifts.append(self.shifts[-1] + run.lines - 1)
            self.order.append(number)
            line += run.placeholder.count("\n")
            at = end
        if len(seen) != len(runs):
            raise _Fallback("a placeholder is gone")
        parts.append(code[at:])
        self.whole = "".join(parts)

    def line(self, number: int) -> int:
        """The line of the file's text that line `number` of the code is (a placeholder's: its run's first)."""
        k = bisect.bisect_right(self.code_lines, number)
        if k and self.code_lines[k - 1] == number:
            return self.whole_lines[k - 1]
        return number + self.shifts[k]

    def statements(self, runs: Sequence[_Run]) -> list[tuple[int, int]]:
        """Lines of every left-out statement in the file's text."""
        out = []
        for number, first in zip(self.order, self.whole_lines):
            out.extend((first + a, first + b) for a, b in runs[number].statements)
        return out


class PrunedFix:
    """One file, pruned for its fix; `fix` gives the outcome of the whole file's fix."""

    def __init__(self, raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", findings: Sequence[Finding],
                 source: str, whole: str, runs: list[_Run], encoding: str, seed: bool,
                 from_imports: set[tuple[str, str, str | None]]) -> None:
        self.raw, self.path, self.options, self.index = raw, path, options, index
        self.findings = findings
        self.source = source  # the pruned text, with placeholders
        self.whole = whole  # the file's text
        self.runs = runs
        self.encoding = encoding
        self.seed_kept = seed  # statements holding `manual_seed` are kept
        self.from_imports = from_imports  # (module, name, asname) of every `from m import n as a` of a script
        self._module: "cst.Module | None" = None  # the parse of `source`, shared by the safe and unsafe fixes
        self._layouts: dict[str, _Layout] = {}

    def layout(self, code: str) -> _Layout:
        found = self._layouts.get(code)
        if found is None:
            if len(self._layouts) >= 8:
                self._layouts.clear()
            found = self._layouts[code] = _Layout(self.runs, code)
        return found

    def whole_text(self, code: str) -> str:
        return self.layout(code).whole

    def fix(self, unsafe: bool) -> "FixOutcome | str":
        """The whole file's fix outcome (text and positions in the file), or why it cannot be given."""
        from migrator.fix.fixer import fix_python
        from migrator.sources.python import is_script

        rescan = _Rescan(self)
        try:
            outcome = fix_python(self.source, rescan, self.options.target, unsafe=unsafe, partial=False,
                                 prune_imports=is_script(self.whole, self.path), torch_version=self.options.torch_version,
                                 parse=self._parse, whole=self.whole_text, leftovers=False)
            if outcome.failed:
                raise _Fallback(f"the pruned fix failed: {outcome.failed}")
            if rescan.initial != _places(self.findings):
                raise _Fallback("the first scan of the pruned text differs from the scan")
            if outcome.applied and is_script(self.whole, self.path):
                self._check_dropped_imports(outcome.applied)
            text = self.whole_text(outcome.source)
            if outcome.applied and text not in rescan.compiled:
                _compile(text)  # a rescanned text was compiled by its check; the last one may not be rescanned
            outcome.source = text
            return outcome
        except _Fallback as exc:
            return str(exc)
        except RecursionError:
            return "too deeply nested"  # the whole file's fix says what it says of that
        except Exception as exc:  # noqa: BLE001 - a bug here must not change an edit: the whole file's fix decides
            return f"internal error: {exc!r}"

    def _parse(self, text: str) -> "cst.Module":
        from migrator.sources.parse import parse_module

        if text is not self.source:
            return parse_module(text)
        if self._module is None:
            self._module = parse_module(text)
        return self._module  # immutable: the safe and the unsafe fix start from the same tree

    def _check_dropped_imports(self, applied: Sequence[Finding]) -> None:
        """fixer._remove_replaced_imports drops an import of a name a fix replaced when the module
        no longer uses it: a left-out statement may still use it, or import it in a function."""
        import libcst as cst

        names: set[str] = set()
        for finding in applied:
            node, qname = finding.plan.node, finding.plan.values.get("name", "")
            if isinstance(node, cst.Name) and "." in qname:
                # What _remove_replaced_imports asks RemoveImportsVisitor to drop, if the file
                # has it (a fix adds no `from` import, so one the file had).
                module_name, obj = qname.rsplit(".", 1)
                asname = None if node.value == obj else node.value
                if (module_name, obj, asname) in self.from_imports:
                    names.add(asname or obj)
        if names:
            words = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
            if any(words.search(run.text) for run in self.runs):
                raise _Fallback("a left-out statement names an import a fix may drop")

    def check_left_out(self, layout: _Layout) -> None:
        """Every left-out statement would still be left out of the file's text `layout.whole`."""
        from migrator.sources.prune import DECIDE, KEEP_OPEN, KEEP_WHOLE, left_out

        # Parsed from the text: a rewrite may have moved a coding cookie off lines 1-2.
        tree = _compile(layout.whole)
        try:
            raw = layout.whole.encode(self.encoding)
        except UnicodeEncodeError:
            raise _Fallback("the rewritten file does not encode") from None
        wanted = layout.statements(self.runs)
        firsts = [first for first, _ in wanted]
        lasts = [last for _, last in wanted]

        def keep(stmt: ast.stmt, first: int, last: int) -> int:
            # Decide only the left-out statements; open the ones around them; keep the rest unread.
            k = bisect.bisect_left(firsts, first)
            if k < len(firsts) and firsts[k] == first and lasts[k] == last:
                return DECIDE
            if k < len(firsts) and firsts[k] <= last:
                return KEEP_OPEN
            return KEEP_WHOLE

        found = left_out(raw, tree, self.index, self.path, keep)
        if found is None:
            raise _Fallback("the rewritten file cannot be pruned")
        regions = {(first, last) for first, last, _nested, _block in found[0]}
        if not all(statement in regions for statement in wanted):
            raise _Fallback("a rewrite made a left-out statement matter")


class _Rescan:
    """The fixer's scan of a pruned module, in the file's text (see the module docstring)."""

    def __init__(self, owner: PrunedFix) -> None:
        self.owner = owner
        self.initial: list[tuple] | None = None  # places of the first scan's findings
        self.compiled: set[str] = set()  # file texts compiled by a check of a rescan

    def __call__(self, module: "cst.Module") -> list[Finding]:
        from migrator.fix.fixer import module_code
        from migrator.scan.engine import scan_python
        from migrator.scan.suppress import apply_suppressions, python_comment_lines
        from migrator.sources.python import noqa_may_apply, statement_lines_of

        owner = self.owner
        code = module_code(module)
        layout = owner.layout(code)
        if code != owner.source:
            owner.check_left_out(layout)
            self.compiled.add(layout.whole)
        found = scan_python(module, owner.path, owner.index, owner.options.target, is_test=_is_test(owner.path), source=code,
                            original=layout.whole, line_map=lambda number: (None, layout.line(number)),
                            statement_lines=statement_lines_of(code))
        lines = split_lines(layout.whole)
        if noqa_may_apply(found, lines):  # as the scan: only then can a `# noqa` matter
            lines = python_comment_lines(lines)
        found = apply_suppressions(found, lambda cell: lines, path=owner.path)
        if self.initial is None:
            self.initial = _places(found)
        elif not owner.seed_kept and any(f.rule_id == _SEED_RULE for f in found):
            raise _Fallback(f"{_SEED_RULE} appeared in a rescan, and `manual_seed` was not kept")
        return found


def _is_test(path: str) -> bool:
    from migrator.sources.discover import is_test_path

    return is_test_path(path)


def _places(findings: Sequence[Finding]) -> list[tuple]:
    return sorted((f.rule_id, f.span.line, f.span.column, f.span.end_line, f.span.end_column, f.snippet)
                  for f in findings if f.cell is None)


def _compile(text: str | bytes) -> ast.Module:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _Fallback(f"the spliced text does not compile: {exc}") from None


def prepare(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", findings: Sequence[Finding]) -> PrunedFix | str:
    """`raw` pruned for its fix (`findings`: the scan's), or why the whole file must be fixed."""
    try:
        return _prepare(raw, path, options, index, findings)
    except RecursionError:
        return "too deeply nested"
    except Exception as exc:  # noqa: BLE001 - a bug here must not change an edit: the whole file's fix decides
        return f"internal error: {exc!r}"


def _prepare(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", findings: Sequence[Finding]) -> PrunedFix | str:
    from migrator.fix.fixer import chosen_names
    from migrator.sources.codec import checked, decode_python, python_encoding
    from migrator.sources.prune import left_out, line_starts
    from migrator.sources.python import is_script

    if _MARK.encode() in raw:
        return "the file holds the placeholder text"
    problem, tree = checked(raw)
    if problem or tree is None:
        return "not parsed"
    try:
        encoding = python_encoding(raw)
        whole = decode_python(raw)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return "not decoded"
    starts = line_starts(raw)
    words = list(_OPEN_WORDS)
    from_imports = _from_imports(tree) if is_script(whole, path) else set()
    words.extend(asname.encode() for module, name, asname in _replaceable(from_imports, index))
    # NRN207 may also appear only once a guard around it is rewritten.
    seed = any(f.rule_id == _SEED_RULE for f in findings) or re.search(rb"cuda\.manual_seed", raw) is not None
    keep = _keeper(raw, starts, tree, chosen_names(), words, seed)
    found = left_out(raw, tree, index, path, keep)
    if found is None:
        return "the file cannot be pruned"
    if not found[0]:
        return "nothing left out"
    source, runs = _elide(raw, starts, found[0])
    try:
        pruned = PrunedFix(raw, path, options, index, findings, source.decode(encoding), whole,
                           [_Run(placeholder.decode(encoding), text.decode(encoding), lines, statements)
                            for placeholder, text, lines, statements in runs], encoding, seed, from_imports)
        if pruned.whole_text(pruned.source) != whole:
            return "the spliced text is not the file's"
        if _newline(pruned.source) != _newline(whole) or _ends_line(pruned.source) != _ends_line(whole):
            return "the pruned text ends its lines otherwise (libcst's default newline)"
    except (UnicodeDecodeError, LookupError, _Fallback):
        return "the spliced text is not the file's"
    return pruned


def _from_imports(tree: ast.Module) -> set[tuple[str, str, str | None]]:
    """(module, name, asname or None) of every absolute `from m import n [as a]` of the file
    (imports are statements: only statement lists are walked, not expressions)."""
    out: set[tuple[str, str, str | None]] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom):
            if node.module and not node.level:
                out.update((node.module, alias.name, alias.asname) for alias in node.names)
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if type(block) is list:
                stack.extend(block)
    return out


def _replaceable(from_imports: set[tuple[str, str, str | None]], index: "RuleIndex") -> list[tuple[str, str, str]]:
    """Those `from` imports whose `m.n` a rule names: in a script, the fixer drops such an import
    once a fix replaced its last use (fixer._remove_replaced_imports); as (module, name, local name)."""
    from migrator.sources.prune import names_a_rule

    return [(module, name, asname or name) for module, name, asname in sorted(from_imports, key=str)
            if name != "*" and names_a_rule(index, f"{module}.{name}")]


def _newline(text: str) -> str | None:
    """The first line ending of `text`: libcst's `Module.default_newline`, for the lines a fix adds."""
    found = re.search(r"\r\n?|\n", text)
    return found.group(0) if found else None


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def _keeper(raw: bytes, starts: list[int], tree: ast.Module, names: set[str], words: list[bytes], seed: bool):
    """The `keep` hook of prune.left_out for a fix (see the module docstring): the head and the
    statements holding one of `names` (and `manual_seed` when `seed`) whole, those holding one of
    `words` open."""
    from migrator.sources.prune import DECIDE, KEEP_OPEN, KEEP_WHOLE

    head = {id(stmt) for stmt in _head(tree.body)}
    # libcst takes the module's indent from its first indented block (`Module.default_indent`).
    first_block = next((id(stmt) for stmt in tree.body if _opens_block(stmt, raw, starts)), None)
    whole_words = [re.escape(n.encode()) for n in sorted(names)]
    whole_pattern = rb"\b(?:" + b"|".join(whole_words) + rb")\b"
    if seed:
        whole_pattern += rb"|manual_seed"
    whole_lines = _lines_matching(raw, starts, re.compile(whole_pattern))
    open_pattern = rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b|\bimport[ \t]+torch\b"
    if b"is_available" in raw:  # a guard (NRN201) may be held back by CUDA code that is no finding
        open_pattern += rb"|\.[ \t]*cuda\b"
    open_lines = _lines_matching(raw, starts, re.compile(open_pattern))

    def holds(lines: list[int], first: int, last: int) -> bool:
        k = bisect.bisect_left(lines, first)
        return k < len(lines) and lines[k] <= last

    def keep(stmt: ast.stmt, first: int, last: int) -> int:
        if id(stmt) in head or holds(whole_lines, first, last):
            return KEEP_WHOLE
        if holds(open_lines, first, last) or id(stmt) == first_block:
            return KEEP_OPEN
        return DECIDE

    return keep


def _opens_block(stmt: ast.stmt, raw: bytes, starts: list[int]) -> bool:
    """Whether `stmt` holds an indented block: a suite whose first statement begins its line
    (not `if x: y`). The first such suite of a file is where its first INDENT token is."""

    def begins_line(node: ast.stmt) -> bool:
        begin = starts[node.lineno - 1]
        return not raw[begin:begin + node.col_offset].strip(b" \t\f")

    orelse = getattr(stmt, "orelse", None) or []
    if (isinstance(stmt, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If)
            and raw[starts[orelse[0].lineno - 1]:].lstrip(b" \t\f").startswith(b"elif")):
        # An `elif` is a clause of this statement, whose `If` node starts at the keyword.
        return (bool(stmt.body) and begins_line(stmt.body[0])) or _opens_block(orelse[0], raw, starts)
    suites = [stmt.body if isinstance(getattr(stmt, "body", None), list) else [], orelse, getattr(stmt, "finalbody", None) or []]
    suites += [handler.body for handler in getattr(stmt, "handlers", None) or []]
    suites += [case.body for case in getattr(stmt, "cases", None) or []]
    return any(suite and isinstance(suite[0], ast.stmt) and begins_line(suite[0]) for suite in suites)


def _lines_matching(raw: bytes, starts: list[int], pattern: re.Pattern[bytes]) -> list[int]:
    out: list[int] = []
    for match in pattern.finditer(raw):
        line = bisect.bisect_right(starts, match.start())
        if not out or out[-1] != line:
            out.append(line)
    return out


def _head(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module docstring and the leading import lines (a superset of what fixer._after_imports
    and libcst's AddImportsVisitor read: they count the statements after them, and give the
    first one blank lines, which a placeholder takes as its run's first statement would)."""
    i = 0
    if body and _docstring_or_strict(body[0]):
        i = 1
    while i < len(body) and _import_line(body[i]):
        i += 1
    return body[:i]


def _docstring_or_strict(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, (ast.Constant, ast.JoinedStr))
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__strict__" for t in stmt.targets)


def _import_line(stmt: ast.stmt) -> bool:
    """fixer._is_import_line in `ast` terms (an `if`/`try` whose body holds only imports counts)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, (ast.Try, ast.If)):
        return bool(stmt.body) and all(_import_line(s) for s in stmt.body)
    return False


def _elide(raw: bytes, starts: list[int], regions: list) -> tuple[bytes, list[tuple[bytes, bytes, int, list[tuple[int, int]]]]]:
    """`raw` with each run of adjacent left-out siblings replaced by one placeholder line:
    (text, [(placeholder line, the run's bytes, its line count, its statements' lines)])."""
    runs: list[list] = []  # [first, last, block, statements]
    for first, last, _nested, block in sorted(regions):
        if runs and runs[-1][2] == block and runs[-1][1] + 1 == first:
            runs[-1][1] = last
            runs[-1][3].append((first, last))
        else:
            runs.append([first, last, block, [(first, last)]])
    out: list[bytes] = []
    found = []
    at = 0  # offset of the first byte not yet copied
    for number, (first, last, _block, statements) in enumerate(runs):
        begin = starts[first - 1]
        end = starts[last] if last < len(starts) else len(raw)
        text = raw[begin:end]
        first_line = raw[begin:starts[first] if first < len(starts) else len(raw)]
        indent = first_line[:len(first_line) - len(first_line.lstrip(b" \t\f"))]
        ending = b"\r\n" if text.endswith(b"\r\n") else b"\n" if text.endswith(b"\n") else b""
        placeholder = indent + f"pass  # {_MARK}{number}".encode() + ending
        out.append(raw[at:begin])
        out.append(placeholder)
        at = end
        found.append((placeholder, text, last - first + 1, [(a - first, b - first) for a, b in statements]))
    out.append(raw[at:])
    return b"".join(out), found
