"""The edits of a JSON/SARIF scan, computed on the pruned text (sources/pruned_fix.py), equal the whole file's.

Each case is built so that a careless pruned fix would give other edits than the whole file's
fix: the statement that looks unrelated holds the name the fixer must avoid, the seed the fix
deletes a duplicate of, the NumPy conversion that holds a fix back, the use that keeps an
import. Every case is fixed both ways; the findings with their edits must be equal, and the
cases pin whether the pruned fix was used (and something was left out) or fell back, and why,
so a test cannot pass by always fixing the whole file.
"""

import textwrap
from unittest import mock

import pytest

from migrator import ScanOptions
from migrator.api import _index, _scan_source, _with_edits
from migrator.sources import pruned_fix
from migrator.sources.discover import is_test_path


def both_ways(source: str, path: str = "pkg/mod.py", options: ScanOptions = ScanOptions()):
    """(findings with edits from the pruned fix, from the whole file's fix, fallback reasons)."""
    raw = textwrap.dedent(source).encode()
    found = _scan_source(raw, path, "python", options, _index(options), is_test_path(path), False)
    assert any(f.fixable for f in found), "a case needs a fixable finding"
    fallbacks: list[str] = []
    pruned = [f.to_dict() for f in _with_edits(raw, path, "python", options, found, fallbacks=fallbacks)]
    whole = [f.to_dict() for f in _with_edits(raw, path, "python", options, found, pruned=False)]
    return pruned, whole, fallbacks


def left_out(source: str, path: str = "pkg/mod.py") -> list[str]:
    """The text of each run of statements the pruned fix leaves out."""
    raw = textwrap.dedent(source).encode()
    options = ScanOptions()
    found = _scan_source(raw, path, "python", options, _index(options), is_test_path(path), False)
    prepared = pruned_fix.prepare(raw, path, options, _index(options), found)
    assert not isinstance(prepared, str), prepared
    return [run.text for run in prepared.runs]


def edits_text(findings) -> str:
    return "\n".join(e["content"] for f in findings if f.get("fix") for e in f["fix"].get("edits", []))


def same_and_pruned(source: str, path: str = "pkg/mod.py") -> list[dict]:
    pruned, whole, fallbacks = both_ways(source, path)
    assert pruned == whole
    assert fallbacks == []
    assert edits_text(whole), "the case must have edits"
    return whole


UNRELATED = '''
        def unrelated(a, b):
            return a + b
        '''


def test_constant_goes_after_the_imports_when_the_next_statement_is_left_out():
    source = '''
        """A module."""
        import torch

        LIMIT = 3


        def step(model):
            return model.cuda()
        ''' + UNRELATED
    whole = same_and_pruned(source)
    assert "DEVICE = torch.accelerator" in edits_text(whole)
    runs = left_out(source)
    assert any("LIMIT = 3" in run for run in runs) and any("def unrelated" in run for run in runs)


def test_a_left_out_mention_of_DEVICE_renames_the_constant_in_both():
    # `_constant_name` searches the module's text: the docstring's `DEVICE` makes it NRN_DEVICE.
    source = '''
        import torch


        def describe():
            """Reads the DEVICE setting."""
            return 1


        def step(model):
            return model.cuda()
        ''' + UNRELATED
    whole = same_and_pruned(source)
    assert "NRN_DEVICE = torch.accelerator" in edits_text(whole)
    runs = left_out(source)
    assert not any("DEVICE" in run for run in runs) and any("def unrelated" in run for run in runs)


def test_helper_inserted_after_the_imports():
    source = '''
        import torch

        SIZES = [1, 2, 3]


        def step(x):
            return x.cuda(1)
        ''' + UNRELATED
    whole = same_and_pruned(source)
    assert "def accelerator_device(index):" in edits_text(whole)
    assert any("SIZES" in run for run in left_out(source))


def test_a_left_out_mention_of_the_helper_name_renames_the_helper_in_both():
    source = '''
        import torch


        def first(a):
            return a


        def accelerator_device():
            return "mine"


        def step(x):
            return x.cuda(1)
        ''' + UNRELATED
    whole = same_and_pruned(source)
    assert "def Nrnaccelerator_device(index):" in edits_text(whole)
    assert not any("accelerator_device" in run for run in left_out(source))


def test_added_blocks_are_indented_like_the_files_first_block_even_when_it_is_left_out():
    # libcst indents a helper's body like the module's first indented block: two spaces here,
    # in a function the scan leaves out; the rest of the file uses four.
    source = '''
        import torch


        def unrelated(a):
          return a


        def step(x):
            return x.cuda(1)
        '''
    whole = same_and_pruned(source)
    assert '\n  """Device `index`' in edits_text(whole)
    assert any("return a" in run for run in left_out(source))


def test_a_seed_duplicate_is_found_beside_a_statement_the_scan_leaves_out():
    # `torch.manual_seed(seed)` matches no rule: the scan leaves it out, but the NRN207 fix
    # deletes `torch.cuda.manual_seed_all(seed)` only because it follows it.
    source = '''
        import random
        import torch


        def set_seed(seed):
            random.seed(seed)
            torch.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)
        ''' + UNRELATED
    pruned, whole, fallbacks = both_ways(source)
    assert pruned == whole and fallbacks == []
    fixed = [f for f in whole if f["rule_id"] == "NRN207"]
    assert fixed and fixed[0]["fix"]["edits"][0]["content"] == ""  # deleted
    assert any("def unrelated" in run for run in left_out(source))


def test_a_numpy_conversion_the_scan_leaves_out_still_holds_float64_back():
    # hold_back waits with NRN303 while any `from_numpy` of the module is left as it is; one
    # of an attribute is no NRN308 finding, so the scan leaves `load` out.
    source = '''
        import numpy as np
        import torch


        def cast(model):
            return model.to(torch.float64)


        def load(path):
            return torch.from_numpy(path.values)
        ''' + UNRELATED
    pruned, whole, fallbacks = both_ways(source)
    assert pruned == whole and fallbacks == []
    assert not edits_text(whole)  # NRN303 is held back: no edit
    assert not any("from_numpy" in run for run in left_out(source))


def test_the_scripts_own_device_type_variable_is_read_where_the_scan_leaves_it_out():
    source = '''
        import os
        import torch

        device_type = os.environ.get("KIND", "cpu")


        def step(model, x):
            with torch.cuda.amp.autocast():
                return model(x)
        ''' + UNRELATED
    whole = same_and_pruned(source)
    assert "autocast(device_type, " in edits_text(whole)  # the variable, not DEVICE.type


SCRIPT_DTYPE = '''
    import torch
    from torch import float64

    KINDS = {"double": float64}


    def cast(x):
        return x.to(float64)


    if __name__ == "__main__":
        cast(torch.zeros(1))
    '''


def test_a_script_import_used_only_in_a_left_out_statement_stays():
    # In a script the fixer drops `from torch import float64` once no use is left; `KINDS` is
    # no dtype context (the scan leaves it out), but it still uses the import.
    options = ScanOptions()
    raw = textwrap.dedent(SCRIPT_DTYPE).encode()
    found = _scan_source(raw, "train.py", "python", options, _index(options), False, False)
    fallbacks: list[str] = []
    pruned = _with_edits(raw, "train.py", "python", options, found, fallbacks=fallbacks)
    whole = _with_edits(raw, "train.py", "python", options, found, pruned=False)
    assert [f.to_dict() for f in pruned] == [f.to_dict() for f in whole] and fallbacks == []
    assert any(f.fix and f.fix.edits for f in whole)
    # It is kept for the fix (the scan alone leaves it out).
    assert not any("KINDS" in run for run in left_out(SCRIPT_DTYPE, "train.py"))


def test_falls_back_when_a_fix_would_drop_an_import_a_left_out_statement_uses():
    # Without the statements naming the import kept, the check on the dropped imports decides.
    with mock.patch.object(pruned_fix, "_replaceable", return_value=[]):
        pruned, whole, fallbacks = both_ways(SCRIPT_DTYPE, "train.py")
        assert any("KINDS" in run for run in left_out(SCRIPT_DTYPE, "train.py"))
    assert pruned == whole
    assert fallbacks == ["a left-out statement names an import a fix may drop"]


def test_falls_back_when_an_added_import_makes_a_left_out_statement_matter():
    # `torch` is bound by no import: `torch.cuda.synchronize()` matches nothing and is left
    # out. The fix adds `import torch` (for DEVICE); in the whole file's next pass that call
    # is a finding and gets rewritten too.
    source = '''
        import torch.nn as nn


        def later():
            torch.cuda.synchronize()


        def step(model):
            return model.cuda()
        '''
    assert any("torch.cuda.synchronize()" in run for run in left_out(source))
    pruned, whole, fallbacks = both_ways(source)
    assert pruned == whole
    assert "torch.accelerator.synchronize()" in edits_text(whole)
    assert fallbacks == ["a rewrite made a left-out statement matter"]


def test_falls_back_when_the_pruned_text_would_end_its_lines_otherwise():
    # libcst ends the lines a fix adds like the file's first line; that line belongs to a
    # left-out statement whose last line ends otherwise.
    raw = b"SIZES = (\n    1,\r\n)\r\n\r\n\r\ndef step(x):\r\n    return x.cuda()\r\n"
    options = ScanOptions()
    found = _scan_source(raw, "pkg/mod.py", "python", options, _index(options), False, False)
    fallbacks: list[str] = []
    pruned = _with_edits(raw, "pkg/mod.py", "python", options, found, fallbacks=fallbacks)
    whole = _with_edits(raw, "pkg/mod.py", "python", options, found, pruned=False)
    assert [f.to_dict() for f in pruned] == [f.to_dict() for f in whole]
    assert "DEVICE = torch.accelerator" in edits_text([f.to_dict() for f in whole])
    assert fallbacks == ["the pruned text ends its lines otherwise (libcst's default newline)"]


def test_placeholders_changed_gone_or_repeated_fall_back():
    runs = [pruned_fix._Run("    pass  # nrn-elided-0\n", "    a = 1\n    b = 2\n", 2, [(0, 0), (1, 1)])]
    layout = pruned_fix._Layout(runs, "def f():\n    pass  # nrn-elided-0\n    return 3\n")
    assert layout.whole == "def f():\n    a = 1\n    b = 2\n    return 3\n"
    assert [layout.line(n) for n in (1, 2, 3)] == [1, 2, 4]
    assert layout.statements(runs) == [(2, 2), (3, 3)]
    for code in ("def f():\n    return 3\n",
                 "def f():\n    pass  # nrn-elided-0\n    pass  # nrn-elided-0\n",
                 "def f():\n        pass  # nrn-elided-0\n"):
        with pytest.raises(pruned_fix._Fallback):
            pruned_fix._Layout(runs, code)


def test_a_file_holding_the_placeholder_text_is_fixed_whole():
    source = '''
        import torch

        NOTE = "pass  # nrn-elided-0"


        def step(model):
            return model.cuda()
        ''' + UNRELATED
    pruned, whole, fallbacks = both_ways(source)
    assert pruned == whole and fallbacks == ["the file holds the placeholder text"]


@pytest.mark.parametrize("path", ["samples/train_amp.py", "samples/ddp_nccl.py", "tests/corpus/train_hf.py",
                                  "tests/programs/autodetect_gpt2/train_gpt2.py"])
def test_real_programs_give_the_same_edits(path):
    from conftest import ROOT

    raw = (ROOT / path).read_bytes()
    options = ScanOptions()
    found = _scan_source(raw, path, "python", options, _index(options), is_test_path(path), False)
    fallbacks: list[str] = []
    pruned = _with_edits(raw, path, "python", options, found, fallbacks=fallbacks)
    whole = _with_edits(raw, path, "python", options, found, pruned=False)
    assert [f.to_dict() for f in pruned] == [f.to_dict() for f in whole]
    assert fallbacks == []


def test_cuda_code_the_scan_cannot_follow_and_a_conditional_torch_import_are_seen_by_both():
    # `self.torch.cuda...` is no finding and names no rule; left out, the pruned fix would open
    # the guard over it. `ready`'s rewrite reads the conditionally imported `torch` it read before.
    source = '''
        import os
        HAVE_TORCH = os.environ.get("NO_TORCH") is None
        if HAVE_TORCH:
            import torch


        class Tracker:
            def __init__(self):
                self.torch = torch

            def reset(self):
                if torch.cuda.is_available():
                    self.torch.cuda.reset_peak_memory_stats()


        def ready():
            return torch.cuda.is_available()
        ''' + UNRELATED
    pruned, whole, fallbacks = both_ways(source)
    assert pruned == whole and fallbacks == []
    guards = {f["line"]: f for f in whole if f["rule_id"] == "NRN201"}
    assert len(guards) == 2 and guards[max(guards)]["fix"]["edits"]  # `ready` is rewritten,
    assert not guards[min(guards)]["fixable"]  # the tracker's guard is not: not fixable
    assert "import torch" not in edits_text(whole)
    assert any("def unrelated" in run for run in left_out(source))


def test_the_line_diff_behind_edits_rebuilds_the_new_text_from_the_old():
    # The diff of a fixed file against the scanned one (edits, line maps) matches the common head
    # and tail first: whatever lines repeat, its operations must still turn one into the other.
    import random

    from migrator.core.lines import line_opcodes

    rng = random.Random(7)
    words = ["\n", ")\n", "    pass\n", "x = torch.cuda.current_device()\n", "import torch\n"]
    for _ in range(3000):
        old = [rng.choice(words) for _ in range(rng.randint(0, 25))]
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(new))
            if rng.random() < 0.5:
                new.insert(at, rng.choice(words + ["DEVICE = 'cuda'\n"]))
            elif new:
                del new[min(at, len(new) - 1)]
        rebuilt, at = [], 0
        for tag, i1, i2, j1, j2 in line_opcodes(old, new):
            assert i1 == at
            rebuilt += old[i1:i2] if tag == "equal" else new[j1:j2]
            assert tag != "equal" or old[i1:i2] == new[j1:j2]
            at = i2
        assert at == len(old) and rebuilt == new
