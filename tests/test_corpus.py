"""Recall and precision per category on tests/corpus/ (see its README for the annotations)."""

import re
from collections import Counter
from pathlib import Path

from conftest import ROOT
from migrator import ScanOptions, scan_paths

CORPUS = ROOT / "tests" / "corpus"
TARGET = 0.97


def expectations() -> tuple[set[tuple[str, int, str]], set[tuple[str, int]]]:
    expected, ok = set(), set()
    for path in sorted(CORPUS.iterdir()):
        if path.suffix in (".md", ".expect"):
            continue
        sidecar = path.with_name(path.name + ".expect")
        if sidecar.exists():
            for line in sidecar.read_text().splitlines():
                number, _, cats = line.partition(":")
                expected |= {(path.name, int(number), c.strip()) for c in cats.split(",")}
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            m = re.search(r"#\s*expect:\s*([a-z, ]+)$", line)
            if m:
                expected |= {(path.name, number, c.strip()) for c in m.group(1).split(",")}
            elif re.search(r"#\s*ok$", line):
                ok.add((path.name, number))
    return expected, ok


def test_recall_and_precision_per_category_are_at_least_97_percent(monkeypatch):
    expected, ok = expectations()
    # Scanned from its parent as `corpus/...`: these files are programs, not tests, and a path
    # through this repository's tests/ folder would mark every one a test file.
    monkeypatch.chdir(CORPUS.parent)
    found = {(Path(f.path).name, f.span.line, f.category) for f in scan_paths([CORPUS.name], ScanOptions()).findings}
    assert not {(n, l) for n, l, _ in found} & ok, "a finding on a line marked # ok"
    categories = sorted({c for _, _, c in expected | found})
    table, failures = [], []
    for category in categories:
        exp = {e for e in expected if e[2] == category}
        got = {f for f in found if f[2] == category}
        recall = len(exp & got) / len(exp) if exp else 1.0
        precision = len(exp & got) / len(got) if got else 1.0
        table.append(f"{category:13} expected {len(exp):3} found {len(got):3} recall {recall:.2f} precision {precision:.2f}")
        if recall < TARGET or precision < TARGET:
            failures.append(category)
    print("\n".join(table))
    assert failures == [], "\n".join(table) + f"\nmissed: {sorted(expected - found)}\nextra: {sorted(found - expected)}"
    assert Counter(c for _, _, c in expected).keys() >= {"device", "runtime", "precision", "distributed", "compilation",
                                                          "kernels", "environment", "dependencies"}
