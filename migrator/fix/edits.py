"""Each finding's fix as edits: the rewrite `fix` makes of a file, split into the findings' parts.

The fixer rewrites a whole file at once (coupled fixes, imports added once, rescans until
nothing changes), so a finding's edits are read off that one rewrite: every changed stretch
of lines that overlaps an applied finding belongs to it, and the stretches no finding
overlaps (added imports, the `DEVICE` constant, helpers, pruned imports) are shared by every
fix of the file, as ruff repeats an import edit on each fix that needs it. Applying one
finding's edits to the original therefore gives that fix with what it needs to run.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import replace
from typing import Iterable, Sequence

from migrator.core.findings import Edit, Finding, Safety
from migrator.core.lines import line_opcodes, split_lines

__all__ = ["attach_edits", "apply_edits"]


def _position(offsets: list[int], lines: list[str], offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset; the end of a file without a final newline
    is the end of its last line."""
    index = bisect.bisect_right(offsets, offset) - 1
    if index >= len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
        index = len(lines) - 1
    return index + 1, offset - offsets[index] + 1


def _trimmed(removed: str, added: str) -> tuple[int, int]:
    """How many leading and trailing characters `removed` and `added` share."""
    head = 0
    while head < min(len(removed), len(added)) and removed[head] == added[head]:
        head += 1
    tail = 0
    while tail < min(len(removed), len(added)) - head and removed[-1 - tail] == added[-1 - tail]:
        tail += 1
    return head, tail


class _Text:
    """The scanned text with line offsets, to turn character offsets into (line, column)."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text, keepends=True)
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line))

    def edit(self, start: int, end: int, content: str) -> Edit:
        return Edit(*_position(self.offsets, self.lines, start), *_position(self.offsets, self.lines, end), content)

    def line_of(self, offset: int) -> int:
        return _position(self.offsets, self.lines, offset)[0]


def _owner(findings: Sequence[Finding], owners: list[int], line: int, column: int) -> int | None:
    """The applied finding a change at (line, column) belongs to: the one whose span holds it,
    else the nearest one on that line."""
    on_line = [i for i in owners if findings[i].span.line <= line <= findings[i].span.end_line]
    for i in on_line:
        s = findings[i].span
        if (line, column) >= (s.line, s.column) and (line, column) <= (s.end_line, s.end_column):
            return i
    return min(on_line, key=lambda i: abs(findings[i].span.column - column), default=None)


def _balanced(old: str, new: str) -> bool:
    """Whether replacing `old` by `new` keeps brackets and quotes balanced (a split that cuts a
    rewrite in the middle of a call does not)."""
    pairs = ("()", "[]", "{}")
    return (all(new.count(a) - new.count(b) == old.count(a) - old.count(b) for a, b in pairs)
            and all(new.count(q) % 2 == old.count(q) % 2 for q in "\"'"))


def _text_of(before: str, offsets: list[int], edit: Edit) -> str:
    return before[offsets[edit.line - 1] + edit.column - 1:offsets[edit.end_line - 1] + edit.end_column - 1]


def _segments(old: list[str], new: list[str], findings: Sequence[Finding], hit: list[int], i1: int, i2: int,
              j1: int, j2: int) -> list[tuple[int | None, int, int, int, int]]:
    """A changed stretch (old lines i1:i2 became new lines j1:j2) cut into runs of lines that
    belong to one finding: (owner or None, old start, old end, new start, new end)."""
    if len(hit) <= 1 or i2 - i1 == 1:
        return [(hit[0] if hit else None, i1, i2, j1, j2)]
    # As many lines as before: each line was rewritten in place. Otherwise pair each old line
    # with its most similar new line; new lines before a pair (a guard `if` a fix put above a
    # call) go with it, what is left after the last with the last.
    segments: list[list] = []
    at = j1
    for k in range(i1, i2):
        if i2 - i1 == j2 - j1:
            best = j1 + k - i1
        else:
            best, score = None, 0.4
            for m in range(at, j2):
                ratio = difflib.SequenceMatcher(None, old[k], new[m], autojunk=False).ratio()
                if ratio > score:
                    best, score = m, ratio
        end_new = j2 if k == i2 - 1 else (at if best is None else best + 1)
        who = _owner(findings, hit, k + 1, 1)
        if segments and segments[-1][0] == who:
            segments[-1][2], segments[-1][4] = k + 1, end_new
        else:
            segments.append([who, k, k + 1, at, end_new])
        at = end_new
    return [tuple(s) for s in segments]


def _by_column(findings: Sequence[Finding], hit: list[int], who: int | None, line: int, base: int, removed: str,
               added: str) -> list[tuple[int | list[int] | None, int, int, str]]:
    """(owner, start, end, content) for one stretch starting at old `line` (offset `base`):
    one edit for `who`, or, when several findings sit on that one line, one per finding by
    the columns of the characters that change."""
    on_line = [i for i in hit if findings[i].span.line <= line <= findings[i].span.end_line]
    # A character diff costs the square of the length: a long line shared by many fixes goes
    # whole to each of them.
    if len(on_line) <= 1 or "\n" in removed.rstrip("\r\n") or len(removed) + len(added) > 4000:
        head, tail = _trimmed(removed, added)
        return [(who if len(on_line) <= 1 else on_line, base + head, base + len(removed) - tail,
                 added[head:len(added) - tail])]
    runs: list[list] = []  # [owner, old start, old end, new start, new end]
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(a=removed, b=added, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        owner = _owner(findings, on_line, line, a1 + 1)
        if runs and runs[-1][0] == owner:
            runs[-1][2], runs[-1][4] = a2, b2
        else:
            runs.append([owner, a1, a2, b1, b2])
    return [(owner, base + a1, base + a2, added[b1:b2]) for owner, a1, a2, b1, b2 in runs]


def attach_edits(before: str, after: str, findings: Sequence[Finding], applied: Iterable[Finding],
                 safety: Safety, resolved: Iterable[Finding] = ()) -> list[Finding]:
    """`findings` with edits on each fixable one of `safety` that `applied` names.

    Args:
        before: the file's text as scanned (what the findings' positions refer to).
        after: the text `fix` made of it.
        findings: the scan's findings (positions in `before`).
        applied: the fixes `fix` applied (FixOutcome.applied, positions mapped to `before`);
            a finding counts as applied when one of them has its rule id and first line.
        safety: only fixes of this applicability get edits (the others keep theirs).
        resolved: the part of `applied` another fix's rewrite resolved (FixOutcome.resolved):
            each gets the edits of the applied fix on its lines.

    Returns:
        A new list in the same order; a finding whose fix did not change any line it spans
        gets no edits.
    """
    done = {(f.rule_id, f.span.line) for f in applied}
    followers = {(f.rule_id, f.span.line) for f in resolved}
    every = [i for i, f in enumerate(findings)
             if f.fixable and f.cell is None and (f.rule_id, f.span.line) in done]
    owners = [i for i in every if (findings[i].rule_id, findings[i].span.line) not in followers]
    own: dict[int, list[Edit]] = {i: [] for i in every}
    shared: list[Edit] = []
    text = _Text(before)
    new = split_lines(after, keepends=True)
    offsets = text.offsets
    for tag, i1, i2, j1, j2 in line_opcodes(text.lines, new):
        if tag == "equal":
            continue
        hit = [i for i in owners if findings[i].span.line <= i2 and findings[i].span.end_line >= i1 + 1]
        pieces: list[tuple[list[int], Edit]] = []
        for who, a1, a2, b1, b2 in _segments(text.lines, new, findings, hit, i1, i2, j1, j2):
            removed, added = "".join(text.lines[a1:a2]), "".join(new[b1:b2])
            if who is None:
                # A change no finding sits on (an import the rewrite dropped or edited, a
                # constant, a helper): every fix gets only what it adds, never a deletion,
                # since one fix alone may leave other uses of a dropped name.
                kept = set(text.lines[a1:a2])
                extra = "".join(line for line in new[b1:b2] if line not in kept)
                if extra:
                    pieces.append(([], text.edit(offsets[a1], offsets[a1], extra)))
                continue
            parts = _by_column(findings, hit, who, a1 + 1, offsets[a1], removed, added)
            if not all(_balanced(before[start:end], content) for _, start, end, content in parts):
                on_lines = [i for i in hit if findings[i].span.line <= a2 and findings[i].span.end_line >= a1 + 1]
                head, tail = _trimmed(removed, added)
                parts = [(on_lines, offsets[a1] + head, offsets[a2] - tail, added[head:len(added) - tail])]
            pieces.extend(([w] if isinstance(w, int) else w, text.edit(start, end, content))
                          for w, start, end, content in parts)
        if not all(_balanced(_text_of(before, offsets, e), e.content) for _, e in pieces if _):
            # The split does not hold together: the whole stretch goes to every fix on it.
            removed, added = "".join(text.lines[i1:i2]), "".join(new[j1:j2])
            head, tail = _trimmed(removed, added)
            pieces = [(hit, text.edit(offsets[i1] + head, offsets[i2] - tail, added[head:len(added) - tail]))]
        for who, edit in pieces:
            if not who:
                shared.append(edit)
            for i in who:
                own[i].append(edit)
    for i in every:
        if i not in owners:
            # Resolved by another fix's rewrite of the code around it (`mode=` of the
            # `torch.compile(...)` a backend fix rewrites whole): that fix's edits are its fix.
            span = findings[i].span
            lead = next((j for j in owners if own[j] and findings[j].span.line <= span.end_line
                         and findings[j].span.end_line >= span.line), None)
            if lead is not None:
                own[i] = list(own[lead])
    out = list(findings)
    for i in every:
        f = out[i]
        if f.fix.safety is not safety or not own[i]:
            continue
        edits = sorted(own[i] + shared, key=lambda e: (e.line, e.column))
        out[i] = replace(f, fix=replace(f.fix, edits=tuple(edits)))
    return out


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """`text` with `edits` applied (they must not overlap); for tests and editors."""
    lines = split_lines(text, keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return offsets[min(line, len(lines) + 1) - 1] + column - 1

    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        start, end = offset(e.line, e.column), offset(e.end_line, e.end_column)
        text = text[:start] + e.content + text[end:]
    return text
