"""Pruning (prune.py) leaves out only what cannot change a finding: findings equal a full parse.

Each case is built so that a careless pruning would change the findings: the definition that
looks unrelated holds the alias, the variable, the decorator or the binding a finding elsewhere
depends on. Every case is scanned twice, pruned and whole, and the findings must be equal; the
cases also pin which lines were left out, so a test cannot pass by pruning nothing.
"""

import ast
import textwrap
from pathlib import Path
from unittest import mock

import pytest

from migrator import ScanOptions, scan_source
from migrator.api import _index
from migrator.sources.prune import prune_source

ROOT = Path(__file__).resolve().parents[1]
HEADER = "# a module\n# of a project\n"


def whole_and_pruned(source: str | bytes, path: str = "x.py", options: ScanOptions = ScanOptions()):
    pruned = [f.to_dict() for f in scan_source(source, path, "python", options)]
    with mock.patch("migrator.sources.prune.prune_source", return_value=None):
        whole = [f.to_dict() for f in scan_source(source, path, "python", options)]
    return whole, pruned


def blanked(source: str, options: ScanOptions = ScanOptions(), path: str = "x.py") -> list[int]:
    """Line numbers (1-based) of the file that pruning leaves out or turns into `pass`."""
    raw = source.encode()
    out = prune_source(raw, ast.parse(raw), _index(options), path)
    if out is None:
        return []
    before = raw.split(b"\n")
    if not out.may_match:
        return list(range(1, len(before) + 1))  # nothing can match: not parsed at all
    before, after = raw.split(b"\n"), out.source.split(b"\n")
    assert len(after) == len(out.origin) and out.origin == sorted(set(out.origin))
    kept = set()
    for line, origin in zip(after, out.origin):
        if line == before[origin - 1]:
            kept.add(origin)  # copied as it was: columns stay
        else:
            assert line.strip() == b"pass", (line, before[origin - 1])
    return [n for n in range(1, len(before) + 1) if n not in kept]


CASES = {
    # A def that mentions nothing itself but uses a module-level alias of a CUDA call.
    "alias import": ("""
        from torch.cuda import synchronize as wait_gpu
        import torch.cuda as tc

        def unrelated(a, b):
            return a + b

        def step():
            wait_gpu()

        def query():
            return tc.get_device_properties(0)
        """, [6, 7]),
    # The function passes a global as map_location: the module-level string is a device.
    "module-level device variable": ("""
        import torch
        checkpoint_place = "cuda:0"

        def restore(path):
            return torch.load(path, map_location=checkpoint_place)

        def unrelated():
            return 1
        """, [9, 10]),
    # A class body binds at module level (ModuleValues has no class scope): `slot` is an index.
    "class attribute used as a device index": ("""
        import torch  # on cuda

        class Settings:
            slot = 0

        class Other:
            width = 3

        t = torch.ones(2).to(slot)
        """, [8, 9]),
    "decorators": ("""
        import torch

        @torch.cuda.amp.custom_fwd
        def forward(ctx, x):
            return x

        @staticmethod
        def helper(x):
            return x
        """, [7, 9, 10, 11]),
    # Callers pass "cuda" to a function: the keyword is a device context at the call.
    "functions whose callers pass cuda": ("""
        import torch

        def run(model, device):
            return model.to(device)

        def unrelated(model):
            return model

        out = run(net, device="cuda")
        """, [3, 5, 6, 8, 9]),
    # Nested classes bind at module level too; methods of a kept class are pruned one by one.
    "nested classes": ("""
        import torch  # on cuda

        class Outer:
            class Inner:
                dev_slot = 0

            def method(self):
                return self

        t = torch.ones(2).to(dev_slot)
        """, [9, 10]),
    "except-as, global and match names resolve like any Name": ("""
        from torch import cuda

        def guard():
            try:
                pass
            except Exception as cuda:
                pass

        def declare():
            global cuda

        def unrelated():
            return 2
        """, [14, 15]),
    # Escapes cannot hide a device string: constants are compared evaluated.
    "escaped device string": ("""
        import torch  # not "cuda" in the text

        def pick():
            return torch.device("\\x63uda")

        def unrelated():
            return 3
        """, [8, 9]),
    "statements sharing a line are kept": ("""
        import torch
        a = 1; b = torch.cuda.device_count()
        x = 1; y = 2
        z = 3
        """, [6]),
    "elif and else blocks are pruned inside a kept if": ("""
        import sys
        import torch

        if sys.platform == "linux":
            def a():
                return 1
        elif sys.platform == "darwin":
            def b():
                torch.cuda.synchronize()
        else:
            def c():
                return 3
        """, [7, 8, 13, 14]),
    "module-level import used by a kept def": ("""
        import os
        import torch.cuda as accel
        import json

        def f():
            accel.synchronize()
        """, [3, 5]),
    "loops are kept whole": ("""
        import torch

        for batch in loader:
            def helper():
                return 1
            x = torch.ones(1).cuda()
        """, []),
    "function-level import binds for that function only": ("""
        import os

        def f():
            from torch import cuda
            cuda.synchronize()

        def g():
            return os.getpid()
        """, [9, 10]),
    "argument rule needs its argument": ("""
        import torch

        def build():
            return torch.tensor([1.0])

        def build64():
            return torch.tensor([1.0], dtype=torch.float64)
        """, [5, 6]),
    # Inside a kept function, statements are pruned one by one; what they bind stays when the
    # function's other statements (or nested functions) name it.
    "function body: an import used further down": ("""
        def f():
            from torch.cuda import synchronize as wait_gpu
            unrelated = 1
            wait_gpu()
        """, [5]),
    "function body: a local index variable": ("""
        import torch  # on cuda

        def f(x):
            slot = 0
            unrelated = 2
            return x.to(slot)
        """, [3, 7]),
    "function body: a variable of the enclosing function": ("""
        import torch  # on cuda

        def outer():
            slot = 0
            note = "text"
            def inner(t):
                return t.to(slot)
            return inner
        """, [3, 7, 10]),
    # issue 11: the new matches reach the engine through the pruned text.
    "function body: torch bound by pytest.importorskip": ("""
        import pytest

        def test_sync():
            torch = pytest.importorskip("torch")
            unrelated = 1
            torch.cuda.synchronize()
        """, [7]),
    "an allow-list of device types": ("""
        def check(accelerator):
            unrelated = 1
            if accelerator not in {"cpu", "gpu", "mps"}:
                raise ValueError(accelerator)
        """, [4, 6]),
    "a model moved before a trace, on a pruned line": ("""
        import torch_neuronx

        model = build()
        model.to(device)
        traced = torch_neuronx.trace(model, example)
        """, [5, 6]),
    # The argument shapes the recall work added: a value in an IfExp, under a dict key, in a name.
    "argument values through IfExp, dict keys and names": ("""
        import lightning.pytorch as pl
        import torch
        from lightning.pytorch.cli import LightningCLI

        def build(qlora):
            unrelated = 1
            return pl.Trainer(precision=None if qlora else "16-mixed")

        def cli():
            LightningCLI(trainer_defaults={"precision": "16-mixed", "accelerator": "gpu"})

        def compile_blocks(model, compile_mode):
            note = 2
            return torch.compile(model, mode=compile_mode)
        """, [8, 15]),
    # A value held in a name (argument._match_held): the statements that set it stay.
    "argument values held in names, set in the function and at module level": ("""
        import lightning as L
        from transformers import TrainingArguments
        FP16 = True
        NOTE = 1

        def main(args):
            precision = "16-mixed" if args.fp16 else "32-true"
            unrelated = 2
            if args.quantize:
                precision = None
            L.Trainer(precision=precision)
            return TrainingArguments(output_dir="out", fp16=FP16)
        """, [6, 10]),
    # Every other way to bind a held name stops values.ModuleValues from following it, so the
    # statements that do it stay (hostile-input helper: each of these changed the findings).
    "held names rebound by except-as, del, a global in a function and a star import": ("""
        import lightning as L
        precision = "16-mixed"
        FP16 = True
        NOTE = 1
        try:
            pass
        except Exception as precision:
            pass

        def f():
            global FP16
            unrelated = 2
            FP16 = False

        if NOTE:
            from cfgmod import *
        L.Trainer(precision=precision)
        L.Fabric(precision=FP16)
        L.Trainer(precision="16-mixed")
        """, [6, 14]),
    "function body: a global the function passes as a device": ("""
        import torch
        place = "cuda:1"

        def f(model):
            print("moving")
            return model.to(place)
        """, [3, 7]),
    # NRN515 follows a mask held in a name through the function: every binding of such a name
    # stays (the last one may make it an index again), the rest of `forward` is left out.
    "a mask held in a name, rebound, and indexed with": ("""
        import torch

        class Head(torch.nn.Module):
            def forward(self, x, scores, finished):
                h = self.proj(x)
                alive = ~finished
                picked = x[alive]
                alive = alive.long().argmax()
                other = x[alive]
                sel = torch.isin(scores, self.stop) | (scores < 0.1)
                h = h + 1
                return h[sel], picked, other
        """, [7, 13]),
    # A mask passed from name to name (random-program fuzzing: the first binding was left out).
    "a mask held through another name": ("""
        import torch

        class Head(torch.nn.Module):
            def forward(self, x, y, finished):
                h = self.proj(x)
                alive = ~finished & (x < 1)
                if y:
                    i = alive
                    out = x[i]
                return out
        """, [7, 12]),
    # A setting under a key of a dict passed as `**`, held in a name (hostile helper: the pruned
    # scan left the name's assignment out).
    "a name under a key of a dict passed as **": ("""
        from transformers import TrainingArguments
        import os
        FP16 = True
        WORKERS = os.cpu_count()

        def f():
            return TrainingArguments(**{"fp16": FP16})
        """, [6]),
    # The same through a call named by its spelling (precision bench: a transformers pipeline's
    # `self.tokenizer(..., **tokenizer_default_kwargs)` lost its NRN517 in the pruned scan).
    "a dict passed as ** to a callee named by its spelling": ("""
        import os

        class Pipe:
            def preprocess(self, sequences):
                workers = os.cpu_count()
                kwargs = {"padding": True}
                return self.tokenizer(sequences, return_tensors="pt", **kwargs)
        """, [7]),
    # A value an f-string command line takes from a name (strings._held_variants).
    "a name an f-string command line puts in": ("""
        import os
        import subprocess
        PRECISION = "fp16"
        WORKERS = os.cpu_count()

        def launch(script):
            subprocess.run(f"accelerate launch --mixed_precision {PRECISION} {script}", shell=True)
        """, [6]),
    # The hostile helper: a name under a key of a nested config is not followed (pruning
    # left BASE out; the whole scan followed it).
    "a nested config part that holds a name": ("""
        from transformers import TrainingArguments
        import os
        BASE = {"fp16": True}
        CONFIG = {"trainer": BASE}
        WORKERS = os.cpu_count()
        a = TrainingArguments(**CONFIG["trainer"])
        """, [5, 7]),
    # A dict copied into a name before it is passed as `**` (blind corpus 6): the copy's
    # source is followed on both scans.
    "a dict copied into a name": ("""
        import copy
        import os
        from trl import SFTConfig
        BASE = dict(output_dir="o", bf16=True)
        DEFAULT = {"trainer": {"fp16": True}}
        WORKERS = os.cpu_count()

        def build():
            args = dict(BASE)
            cfg = copy.deepcopy(DEFAULT)
            section = cfg["trainer"]
            return SFTConfig(**args), SFTConfig(**section)
        """, [8]),
    # ... and a flag held whole in a name (`{flag}` with flag="--fp16"): the f-string holds no
    # flag of its own, so neither scan reads it.
    "an f-string whose flag is held whole in a name": ("""
        import os
        FLAG = "--fp16"
        WORKERS = os.cpu_count()

        def f(flag="--fp16"):
            return f"python train.py {flag} --x {FLAG}"
        """, [5, 8]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_pruned_scan_equals_whole_scan(name):
    body, pruned_lines = CASES[name]
    source = HEADER + textwrap.dedent(body).lstrip("\n")
    whole, pruned = whole_and_pruned(source)
    assert pruned == whole
    assert blanked(source) == pruned_lines


def test_the_cases_have_findings():
    """The cases above must exercise findings next to the pruned code, not empty files."""
    with_findings = [name for name, (body, _) in CASES.items()
                     if whole_and_pruned(HEADER + textwrap.dedent(body).lstrip("\n"))[0]]
    assert len(with_findings) >= len(CASES) - 2, sorted(set(CASES) - set(with_findings))


def test_module_contains_reads_the_whole_file():
    # NRN405 (xla) reports optimizer.step() only in a file that mentions init_process_group:
    # the mention sits in a def that is pruned.
    source = HEADER + textwrap.dedent("""
        import torch

        def setup():
            return "init_process_group"

        for batch in loader:
            optimizer.step()
        """).lstrip("\n")
    options = ScanOptions(target="xla")
    whole, pruned = whole_and_pruned(source, options=options)
    assert pruned == whole
    assert any(f["rule_id"] == "NRN405" for f in whole)
    assert blanked(source, options) == [3, 5, 6]  # `import torch` too: nothing else names torch


def test_noqa_with_unused_reporting_parses_the_whole_file():
    source = HEADER + "import torch\n\ndef f():\n    return 1  # noqa: NRN101\n\nx = y.cuda()\n"
    options = ScanOptions(report_unused_noqa=True)
    whole, pruned = whole_and_pruned(source, options=options)
    assert pruned == whole
    assert [f["rule_id"] for f in whole] == ["NRN001", "NRN101"]
    # Without unused-noqa reporting the def is pruned, and suppressions still read the original.
    source = HEADER + "import torch\n\ndef f():\n    return 1  # noqa: NRN101\n\nx = y.cuda()  # noqa\n"
    whole, pruned = whole_and_pruned(source)
    assert pruned == whole == []
    assert blanked(source) == [3, 5, 6]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_ends_and_columns_are_kept(newline):
    source = (HEADER + "import torch\n\ndef f():\n    return 1\n\nx = y.cuda()").replace("\n", newline)
    whole, pruned = whole_and_pruned(source.encode())
    assert pruned == whole
    assert [(f["line"], f["column"]) for f in whole] == [(8, 5)]


@pytest.mark.parametrize("raw", [
    b"# a\n# b\nimport torch\n\rdef f():\n    return 1\n\nx = y.cuda()\n",  # a lone carriage return
    b"# -*- coding: utf-7 -*-\nimport torch\n\n\ndef f():\n    return 1\n\nx = y.cuda()\n",
])
def test_files_pruning_cannot_handle_are_parsed_whole(raw):
    assert prune_source(raw, ast.parse(raw), _index(ScanOptions())) is None
    whole, pruned = whole_and_pruned(raw)
    assert pruned == whole


def test_latin1_file_is_pruned_and_equal():
    raw = "# -*- coding: latin-1 -*-\n# é\nimport torch\n\ndef f():\n    return 'é'\n\nx = y.cuda()  # é\n".encode("latin-1")
    assert prune_source(raw, ast.parse(raw), _index(ScanOptions())) is not None
    whole, pruned = whole_and_pruned(raw)
    assert pruned == whole and whole


def _python_sources():
    for folder in ("samples", "tests/corpus", "tests/programs", "rules"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path


@pytest.mark.parametrize("target", ["portable", "neuron", "xla"])
def test_every_corpus_file_and_rule_example_scans_the_same_pruned(target):
    """Differential check on every Python file of the project's corpora and every rule example
    (moved below a header so that nothing stands on the unprunable first lines)."""
    from migrator.core.catalogue import load_catalogue
    from migrator.testing import collect_examples

    options = ScanOptions(target=target)
    sources = [(p.read_bytes(), p.as_posix()) for p in _python_sources()]
    for case in collect_examples(load_catalogue()):
        ex = case.example
        if ex.get("file_kind", "python") == "python" and ex.get("target", "portable") == target:
            code = HEADER + "\n\ndef unrelated_helper(a):\n    return a\n\n\n" + ex["code"]
            sources.append((code.encode(), ex.get("path", "example.py")))
    pruned_any = 0
    for raw, path in sources:
        whole, pruned = whole_and_pruned(raw, path, options)
        assert pruned == whole, path
        try:
            tree = ast.parse(raw)
        except SyntaxError:
            continue
        pruned_any += prune_source(raw, tree, _index(options), path) is not None
    assert pruned_any > len(sources) // 2


def test_a_file_where_nothing_can_match_is_not_parsed():
    # The prefilter passes it (`.cuda` and "cuda" appear), yet no statement can hold a finding.
    source = HEADER + 'import torch\n\ndef f(x):\n    """Moves x to "cuda" like x.cuda() would."""\n    return x\n'
    raw = source.encode()
    assert _index(ScanOptions()).python_may_match(raw)
    out = prune_source(raw, ast.parse(raw), _index(ScanOptions()))
    assert out is not None and not out.may_match
    whole, pruned = whole_and_pruned(source)
    assert pruned == whole == []


def test_a_module_docstring_on_line_1_is_left_out_unless_a_coding_cookie_would_move_up():
    source = '"""Docs.\n\nMore docs.\n"""\nimport torch\nx = y.cuda()\n'
    assert blanked(source) == [1, 2, 3, 4, 5]  # `import torch` too: nothing names torch
    assert whole_and_pruned(source)[0] == whole_and_pruned(source)[1] != []
    # Python ignores a cookie below a docstring; with the docstring gone it would count.
    source = '"""Docs."""\n# -*- coding: latin-1 -*-\nimport torch\nx = y.cuda()\n'
    assert 1 not in blanked(source)
    whole, pruned = whole_and_pruned(source)
    assert pruned == whole != []
