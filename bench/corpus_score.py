#!/usr/bin/env python3
"""Score the linter against an annotated corpus (stdlib only).

    .venv-test/bin/python bench/corpus_score.py tests/corpus-neuron [--json-dir DIR] [--from-json]

The script reads the corpus's annotations, then runs
`python -m migrator scan ... --format json --fail-on never --no-cache --target T` once per target
group, using this interpreter. It prints recall and precision per category, followed by the misses,
the extras, the findings on `# ok` lines and the message checks.
See tests/corpus-neuron/README.md for the annotation format. In short:

    # expect: cat[, cat]        each category must be reported here ("a|b": either one)
    # ok                        nothing may be reported here
    # may: cat[, cat]           optional: neither a miss nor an extra
    # expect-one(G): cat        exactly one finding across every line of group G (may span files)
    # expect-any(G): cat        at least one finding across group G; more are fine
    clauses may be joined with ';'.  NAME.expect sidecars: "LINE: clauses" (bare cats = expect).
    First line "# target: neuron|xla" puts a file in that scan group (default: portable).

Matching rules:
  - A finding matches when the file and category agree and the line is in the same unit as the
    annotation. A unit is a Python statement: the whole span of a simple statement, the header of
    a compound one, one decorator. In shell, Dockerfile, notebook "!" lines and every other text
    file, a unit is one backslash-continued logical line.
  - Notebooks are keyed by (cell, line). `cell` is 1-based and counts every cell, `line` is 1-based
    within the cell; this is how the tool reports notebook findings. A finding without a `cell` is
    mapped back from the raw .ipynb line, or else from the line in the concatenation of the code
    cells.
  - Findings are deduplicated per (file, line, category). Category "tool" (rule NRN000, e.g. "cell
    skipped") is listed apart and not scored.
  - An info finding on an `# ok` line of a test file whose message says it is test code or
    scaffolding is accepted, as the Precision list allows.

--json-dir DIR saves each group's raw scan output as DIR/<target>.json. With --from-json the
script reads those files back instead of scanning.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

CATEGORIES = ["device", "runtime", "precision", "distributed", "compilation", "kernels", "environment", "dependencies"]
SKIP_NAMES = {"README.md", "FIRST_SCAN.txt", "AFTER_SCAN.txt"}
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".git"}
REPO_ROOT = Path(__file__).resolve().parents[1]

_ANN_START = re.compile(r"#\s*(?=(?:expect(?:-one|-any)?\s*(?:\([\w.-]+\))?\s*:|may\s*:|ok(?:\s|$|[(.,;:])))")
_CLAUSE = re.compile(r"^\s*(expect-one|expect-any|expect|may)\s*(?:\(([\w.-]+)\))?\s*:\s*(.*?)\s*$")
_TARGET = re.compile(r"^\s*#\s*target:\s*(portable|neuron|xla|inf1)\b")


# --------------------------------------------------------------------------- annotations
@dataclass
class Clause:
    kind: str                      # expect | may | ok | one | any
    cats: list = field(default_factory=list)   # list of tuples of alternative categories, in written order
    group: str | None = None


def parse_clauses(text: str, bare_is_expect: bool = False) -> list[Clause]:
    out = []
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        if re.match(r"^ok\b", part):
            out.append(Clause("ok"))
            continue
        m = _CLAUSE.match(part)
        if m:
            kind, group, cats = m.groups()
            kind = {"expect-one": "one", "expect-any": "any"}.get(kind, kind)
        elif bare_is_expect:
            kind, group, cats = "expect", None, part
        else:
            continue  # trailing prose after an annotation
        alts = [tuple(dict.fromkeys(a.strip() for a in c.split("|") if a.strip())) for c in cats.split(",")]
        alts = [a for a in alts if a]
        unknown = {c for a in alts for c in a} - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown category {sorted(unknown)} in annotation {text!r}")
        out.append(Clause(kind, alts, group))
    return out


def annotation_of(line: str) -> list[Clause]:
    m = _ANN_START.search(line)
    if not m:
        return []
    return parse_clauses(line[m.end():])


# --------------------------------------------------------------------------- units
def continuation_units(lines: list[str]) -> dict[int, tuple[int, int]]:
    units, start = {}, None
    for i, text in enumerate(lines, 1):
        if start is None:
            start = i
        if not text.rstrip("\n").rstrip().endswith("\\"):
            for j in range(start, i + 1):
                units[j] = (start, i)
            start = None
    if start is not None:
        for j in range(start, len(lines) + 1):
            units[j] = (start, len(lines))
    return units


def python_units(source: str, nlines: int) -> dict[int, tuple[int, int]]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return continuation_units(source.splitlines())
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        for dec in getattr(node, "decorator_list", []) or []:
            spans.append((dec.lineno, dec.end_lineno or dec.lineno))
        if isinstance(body, list) and body and isinstance(body[0], ast.AST):
            end = max(node.lineno, body[0].lineno - 1)
            spans.append((node.lineno, end))
            for name in ("orelse", "finalbody", "handlers"):
                for sub in getattr(node, name, []) or []:
                    if isinstance(sub, ast.ExceptHandler):
                        spans.append((sub.lineno, max(sub.lineno, sub.body[0].lineno - 1)))
        else:
            spans.append((node.lineno, node.end_lineno or node.lineno))
    units = {}
    for i in range(1, nlines + 1):
        best = None
        for s, e in spans:
            if s <= i <= e and (best is None or e - s < best[1] - best[0]):
                best = (s, e)
        units[i] = best or (i, i)
    return units


# --------------------------------------------------------------------------- corpus model
@dataclass
class Expectation:
    file: str
    key: object            # int line, or (cell, line) for notebooks
    alts: tuple
    kind: str              # expect | one | any
    group: str | None = None
    matched_by: list = field(default_factory=list)
    exact: bool = False


@dataclass
class CorpusFile:
    rel: str
    path: Path
    target: str = "portable"
    notebook: bool = False
    lines: dict = field(default_factory=dict)          # key -> source text
    units: dict = field(default_factory=dict)          # key -> unit id
    clauses: dict = field(default_factory=dict)        # key -> [Clause]
    raw_to_key: dict = field(default_factory=dict)     # notebooks: raw json line -> key
    concat_to_key: dict = field(default_factory=dict)  # notebooks: concatenated code line -> key
    is_test: bool = False


def load_corpus(folder: Path) -> list[CorpusFile]:
    files = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or any(p in SKIP_DIRS for p in path.parts):
            continue
        if path.name in SKIP_NAMES or path.suffix == ".expect":
            continue
        rel = path.relative_to(folder).as_posix()
        cf = CorpusFile(rel=rel, path=path)
        cf.is_test = path.name.startswith("test_") or path.name == "conftest.py"
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            load_notebook(cf, text)
        else:
            lines = text.splitlines()
            for i, t in enumerate(lines, 1):
                cf.lines[i] = t
            for t in lines[:3]:
                m = _TARGET.match(t)
                if m:
                    cf.target = m.group(1)
                    break
            units = python_units(text, len(lines)) if path.suffix == ".py" else continuation_units(lines)
            cf.units = {k: (v,) for k, v in units.items()}
            sidecar = path.with_name(path.name + ".expect")
            if sidecar.exists():
                for raw in sidecar.read_text(encoding="utf-8").splitlines():
                    raw = raw.strip()
                    if not raw or raw.startswith("#"):
                        continue
                    num, _, rest = raw.partition(":")
                    cf.clauses[int(num)] = parse_clauses(rest, bare_is_expect=True)
            else:
                for i, t in cf.lines.items():
                    c = annotation_of(t)
                    if c:
                        cf.clauses[i] = c
        files.append(cf)
    return files


def load_notebook(cf: CorpusFile, text: str) -> None:
    cf.notebook = True
    nb = json.loads(text)
    raw_lines = text.splitlines()
    raw_pos = 0
    concat = 0
    for ci, cell in enumerate(nb.get("cells", []), 1):
        src = cell.get("source", "")
        src_lines = src.splitlines() if isinstance(src, str) else "".join(src).splitlines()
        if cell.get("cell_type") == "code":
            source = "\n".join(src_lines)
            try:
                ast.parse(source)
                units = python_units(source, len(src_lines))
            except SyntaxError:
                units = continuation_units(src_lines)
        else:
            units = {i: (i, i) for i in range(1, len(src_lines) + 1)}
        for li, t in enumerate(src_lines, 1):
            key = (ci, li)
            cf.lines[key] = t
            cf.units[key] = (ci, units.get(li, (li, li)))
            if cell.get("cell_type") == "code":
                c = annotation_of(t)
                if c:
                    cf.clauses[key] = c
                concat += 1
                cf.concat_to_key[concat] = key
            needle = json.dumps(t, ensure_ascii=False)[1:-1]
            for r in range(raw_pos, len(raw_lines)):
                if needle and needle in raw_lines[r]:
                    cf.raw_to_key[r + 1] = key
                    raw_pos = r + 1
                    break
        if ci == 1 and src_lines:
            m = _TARGET.match(src_lines[0])
            if m:
                cf.target = m.group(1)


# --------------------------------------------------------------------------- scanning
def run_scans(folder: Path, files: list[CorpusFile], json_dir: Path | None, from_json: bool) -> dict[str, list]:
    groups = defaultdict(list)
    for cf in files:
        groups[cf.target].append(cf)
    results = {}
    # Each scan runs from the corpus folder, with paths relative to it, as a user scans their own
    # repository: a path through this repository's tests/ folder would make every file a test file.
    for target in sorted(groups):
        if from_json:
            results[target] = json.loads((json_dir / f"{target}.json").read_text())
            continue
        if target == "portable":
            paths = ["."]       # whole folder: package-level logic sees every file
        else:
            paths = [os.path.relpath(cf.path, folder) for cf in groups[target]]
        env = dict(os.environ)
        env["NRN_CACHE_DIR"] = tempfile.mkdtemp(prefix="nrn-cache-")
        env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "migrator", "scan", *paths, "--format", "json", "--fail-on", "never",
               "--no-cache", "--target", target]
        proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(f"scan failed for target {target} (rc={proc.returncode}):\n{proc.stderr[-4000:]}")
        try:
            results[target] = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError:
            sys.exit(f"scan for target {target} did not print JSON:\n{proc.stdout[:2000]}\n{proc.stderr[-2000:]}")
        if json_dir:
            json_dir.mkdir(parents=True, exist_ok=True)
            (json_dir / f"{target}.json").write_text(json.dumps(results[target], indent=1))
    return results


@dataclass
class Finding:
    file: str
    key: object
    category: str
    severity: str
    rule_ids: list
    messages: list
    status: str = "extra"     # matched | dup | group | may | ok-line | test-info | extra
    exact: bool = False


def collect_findings(folder: Path, files: list[CorpusFile], results: dict[str, list]):
    by_rel = {cf.rel: cf for cf in files}
    merged: dict[tuple, Finding] = {}
    tool_diags, outside = [], []
    for target, items in results.items():
        for item in items:
            p = Path(item.get("path", ""))
            p = (folder / p).resolve() if not p.is_absolute() else p.resolve()
            try:
                rel = p.relative_to(folder.resolve()).as_posix()
            except ValueError:
                outside.append(item)
                continue
            cf = by_rel.get(rel)
            if cf is None or cf.target != target:
                continue   # e.g. a neuron-target file seen by the portable folder scan
            line = item.get("line")
            if cf.notebook:
                cell = item.get("cell")
                if cell is not None:
                    key = (int(cell), int(line))
                else:
                    key = cf.raw_to_key.get(line) or cf.concat_to_key.get(line) or (0, line)
            else:
                key = line
            cat = item.get("category", "?")
            if cat not in CATEGORIES:
                tool_diags.append((rel, key, item))
                continue
            k = (rel, key, cat)
            f = merged.get(k)
            if f is None:
                f = merged[k] = Finding(rel, key, cat, item.get("severity", "?"), [], [])
            f.rule_ids.append(item.get("rule_id", "?"))
            f.messages.append(item.get("message", ""))
            if item.get("severity") in ("error", "warning"):
                f.severity = item["severity"] if f.severity != "error" else "error"
    return list(merged.values()), tool_diags, outside


# --------------------------------------------------------------------------- matching
def score(files: list[CorpusFile], findings: list[Finding]):
    by_rel = {cf.rel: cf for cf in files}
    expects: list[Expectation] = []
    groups: dict[str, list[Expectation]] = defaultdict(list)
    mays: dict[tuple, set] = defaultdict(set)       # (file, unit) -> cats
    ok_lines: set = set()
    for cf in files:
        for key, clauses in cf.clauses.items():
            for c in clauses:
                if c.kind == "ok":
                    ok_lines.add((cf.rel, key))
                elif c.kind == "may":
                    for alt in c.cats:
                        mays[(cf.rel, cf.units.get(key, key))] |= set(alt)
                elif c.kind == "expect":
                    for alt in c.cats:
                        expects.append(Expectation(cf.rel, key, alt, "expect"))
                else:
                    for alt in c.cats:
                        e = Expectation(cf.rel, key, alt, c.kind, c.group)
                        groups[c.group].append(e)

    def unit(rel, key):
        return by_rel[rel].units.get(key, key)

    # pass 1: exact line, pass 2: same unit
    for exact in (True, False):
        for f in findings:
            if f.status != "extra":
                continue
            for e in expects:
                if e.file != f.file or f.category not in e.alts or e.matched_by:
                    continue
                same = e.key == f.key if exact else unit(e.file, e.key) == unit(f.file, f.key)
                if same:
                    e.matched_by.append(f)
                    e.exact = exact
                    f.status, f.exact = "matched", exact
                    break
    # duplicates: a second finding in a unit whose expectation is already matched
    for f in findings:
        if f.status != "extra":
            continue
        for e in expects:
            if e.file == f.file and f.category in e.alts and unit(e.file, e.key) == unit(f.file, f.key):
                f.status = "dup"
                break
    # groups
    group_report = []
    for name, members in sorted(groups.items()):
        kind = members[0].kind
        cats = list(dict.fromkeys(c for m in members for c in m.alts))
        units_in = {(m.file, unit(m.file, m.key)) for m in members}
        hits = [f for f in findings if f.status == "extra" and f.category in cats and (f.file, unit(f.file, f.key)) in units_in]
        for i, f in enumerate(hits):
            f.status = "group" if (i == 0 or kind == "any") else "extra"
        group_report.append((name, kind, cats, members, hits))
    # may, ok lines, test scaffolding info
    for f in findings:
        if f.status != "extra":
            continue
        if f.category in mays.get((f.file, unit(f.file, f.key)), ()):
            f.status = "may"
        elif (f.file, f.key) in ok_lines:
            cf = by_rel[f.file]
            if cf.is_test and f.severity == "info" and all(re.search(r"\btest|scaffold", m, re.I) for m in f.messages):
                f.status = "test-info"
            else:
                f.status = "ok-line"
    return expects, group_report


# --------------------------------------------------------------------------- message checks
def message_checks(files: list[CorpusFile], findings: list[Finding]):
    by_rel = {cf.rel: cf for cf in files}
    notes = []
    for f in findings:
        src = by_rel[f.file].lines.get(f.key, "")
        for rid, msg in zip(f.rule_ids, f.messages):
            where = f"{f.file}:{fmt_key(f.key)} {rid}"
            if re.search(r"\{[A-Za-z_][A-Za-z0-9_]*\}", msg):
                notes.append(f"{where}: unformatted placeholder in message: {msg!r}")
            if "vllm" in src.lower() and re.search(r"no neuron (build|support|version)|cuda-only", msg, re.I):
                notes.append(f"{where}: vLLM has a Neuron build (vLLM Neuron); message says: {msg!r}")
            if "torch.version.cuda" in src:
                notes.append(f"{where}: review (NRN703): the failure on Neuron hosts is the CUDA build of torch being installed; message: {msg!r}")
            if by_rel[f.file].target == "xla" and ("DistributedDataParallel" in msg or "DDP" in src) and re.search(r"not supported|unsupported", msg, re.I):
                notes.append(f"{where}: DDP on the xla path is covered by Neuron's own DDP tutorial; message: {msg!r}")
            if "sdp_kernel" in src and re.search(r"cudnn", msg, re.I):
                notes.append(f"{where}: sdp_kernel selects SDPA backends (flash/mem-efficient/math), it does not configure cuDNN; message: {msg!r}")
    return notes


# --------------------------------------------------------------------------- report
def fmt_key(key) -> str:
    if isinstance(key, tuple):
        return f"cell {key[0]} line {key[1]}"
    return str(key)


def report(folder, files, findings, expects, group_report, tool_diags, outside, notes) -> str:
    by_rel = {cf.rel: cf for cf in files}
    out = []
    w = out.append
    targets = defaultdict(int)
    for cf in files:
        targets[cf.target] += 1
    w(f"corpus: {folder}  files: {len(files)}  ({', '.join(f'{t}: {n}' for t, n in sorted(targets.items()))})")
    w("scan: python -m migrator scan <group> --format json --fail-on never --no-cache --target <T>")
    w("")
    rows = []
    tot = defaultdict(int)
    for cat in CATEGORIES:
        exp = [e for e in expects if _primary(e) == cat]
        grp = [name for name, _, cats, _, _ in group_report if cats and cats[0] == cat]
        expected = len(exp) + len(grp)
        matched = sum(1 for e in exp if e.matched_by) + sum(
            1 for name, kind, cats, members, hits in group_report if cats and cats[0] == cat and any(h.status == "group" for h in hits))
        scored = [f for f in findings if f.category == cat and f.status not in ("may", "test-info")]
        good = [f for f in scored if f.status in ("matched", "dup", "group")]
        rows.append((cat, expected, len(scored), matched, good))
        for k, v in (("expected", expected), ("found", len(scored)), ("matched", matched), ("good", len(good))):
            tot[k] += v
    w(f"{'category':<13}{'expected':>9}{'found':>7}{'matched':>9}{'recall':>8}{'precision':>11}")
    for cat, expected, found, matched, good in rows:
        w(f"{cat:<13}{expected:>9}{found:>7}{matched:>9}{_pct(matched, expected):>8}{_pct(len(good), found):>11}")
    w(f"{'TOTAL':<13}{tot['expected']:>9}{tot['found']:>7}{tot['matched']:>9}{_pct(tot['matched'], tot['expected']):>8}{_pct(tot['good'], tot['found']):>11}")
    exact = sum(1 for e in expects if e.matched_by and e.exact)
    w("")
    w("expected = expect lines + groups (a group counts once); found = findings deduplicated per (file, line, category),")
    w("minus those on `may` lines and accepted test-scaffolding info; precision = found findings that match an expectation")
    w(f"(or repeat a matched one in the same statement, or fill a group) / found.  Exact-line matches: {exact} of "
      f"{sum(1 for e in expects if e.matched_by)}; the rest matched elsewhere in the same statement.")
    neutral = [f for f in findings if f.status == "may"]
    tinfo = [f for f in findings if f.status == "test-info"]
    w(f"neutral: {len(neutral)} findings on `may` lines, {len(tinfo)} accepted test-scaffolding info findings")

    def src(rel, key):
        return by_rel[rel].lines.get(key, "").strip()[:110]

    w("")
    w("== misses (expected, not reported) ==")
    for e in sorted((e for e in expects if not e.matched_by), key=lambda e: (e.file, str(e.key))):
        w(f"  {e.file}:{fmt_key(e.key)}  [{'|'.join(e.alts)}]  {src(e.file, e.key)}")
    for name, kind, cats, members, hits in group_report:
        if not any(h.status == "group" for h in hits):
            w(f"  group {name} ({kind}) [{'|'.join(cats)}]: nothing reported on its {len(members)} lines "
              f"({', '.join(sorted({m.file + ':' + fmt_key(m.key) for m in members}))})")
    w("")
    w("== extras (reported, not expected) ==")
    for f in sorted((f for f in findings if f.status == "extra"), key=lambda f: (f.file, str(f.key))):
        w(f"  {f.file}:{fmt_key(f.key)}  {f.category}  {','.join(sorted(set(f.rule_ids)))} ({f.severity})  {f.messages[0][:100]}")
        w(f"      | {src(f.file, f.key)}")
    w("")
    w("== findings on `# ok` lines (counted in found, listed here rather than under extras) ==")
    for f in sorted((f for f in findings if f.status == "ok-line"), key=lambda f: (f.file, str(f.key))):
        w(f"  {f.file}:{fmt_key(f.key)}  {f.category}  {','.join(sorted(set(f.rule_ids)))} ({f.severity})  {f.messages[0][:100]}")
        w(f"      | {src(f.file, f.key)}")
    w("")
    w("== groups ==")
    for name, kind, cats, members, hits in group_report:
        got = [h for h in hits if h.status == "group"]
        over = [h for h in hits if h.status == "extra"]
        w(f"  {name} ({kind}, {'|'.join(cats)}, {len(members)} lines): {len(got)} counted, {len(over)} over the limit"
          + ("".join(f"\n      {h.file}:{fmt_key(h.key)} {h.category} {','.join(h.rule_ids)} ({h.status})" for h in hits)))
    if tinfo:
        w("")
        w("== accepted test-scaffolding info ==")
        for f in tinfo:
            w(f"  {f.file}:{fmt_key(f.key)}  {f.category}  {f.messages[0][:100]}")
    w("")
    w("== tool diagnostics (not scored) ==")
    for rel, key, item in tool_diags:
        w(f"  {rel}:{fmt_key(key) if not isinstance(key, int) else key}  {item.get('rule_id')} {item.get('category')}  {item.get('message', '')[:120]}")
    if outside:
        w(f"  {len(outside)} findings outside the corpus folder were ignored")
    w("")
    w("== message checks (Precision list: wrong messages to correct) ==")
    for n in notes or ["  (none)"]:
        w(f"  {n}" if not n.startswith("  ") else n)
    return "\n".join(out) + "\n"


def _primary(e: Expectation) -> str:
    return e.alts[0]  # an "a|b" expectation counts under the category written first


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.0f}%" if b else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--json-dir", type=Path, help="save (or, with --from-json, read) <target>.json scan outputs here")
    ap.add_argument("--from-json", action="store_true", help="read scans from --json-dir instead of running the tool")
    args = ap.parse_args(argv)
    if args.from_json and not args.json_dir:
        ap.error("--from-json needs --json-dir")
    folder = args.folder.resolve()
    files = load_corpus(folder)
    results = run_scans(folder, files, args.json_dir, args.from_json)
    findings, tool_diags, outside = collect_findings(folder, files, results)
    expects, group_report = score(files, findings)
    notes = message_checks(files, findings)
    sys.stdout.write(report(folder, files, findings, expects, group_report, tool_diags, outside, notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
