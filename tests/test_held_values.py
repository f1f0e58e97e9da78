"""A precision or backend value held in a name (`precision = "16-mixed" if ... else ...` then
`Trainer(precision=precision)`): the third blind corpus's misses (tests/corpus-neuron-3,
train_lightning.py). The rule examples show the findings; these tests hold what a user would
notice beyond them: where the finding points, that `fix` leaves the value for a person, and that
names the engine already followed keep their fix.
"""

import textwrap

import pytest

from migrator.api import fix_source, scan_source
from migrator.core.options import ScanOptions

LIGHTNING = textwrap.dedent("""\
    import lightning as L

    def main(args):
        precision = "16-mixed" if args.fp16 else "32-true"
        plugins = []
        if args.quantize:
            precision = None
        trainer = L.Trainer(precision=precision, plugins=plugins)
        L.Trainer(precision=precision, max_epochs=1)
        return trainer
    """)


def test_a_held_precision_is_reported_once_where_it_is_set_and_left_for_a_person():
    options = ScanOptions(target="neuron")
    findings = [f for f in scan_source(LIGHTNING, "train.py", "python", options) if f.rule_id == "NRN312"]
    # Two calls read the name: one finding, on the literal a person changes.
    assert [(f.span.line, f.snippet) for f in findings] == [(4, '"16-mixed"')]
    assert not findings[0].fix.available
    outcome = fix_source(LIGHTNING, "train.py", "python", options, unsafe=True)
    assert outcome.source == LIGHTNING
    reasons = [reason for f, reason in outcome.manual if f.rule_id == "NRN312"]
    assert reasons and "`precision`" in reasons[0]


def test_a_module_setting_read_in_a_function_points_at_its_own_line():
    source = textwrap.dedent("""\
        from transformers import TrainingArguments

        LOG_EVERY = 10
        FP16 = True


        def build():
            return TrainingArguments(output_dir="out", fp16=FP16, logging_steps=LOG_EVERY)
        """)
    findings = [f for f in scan_source(source, "train.py", "python", ScanOptions()) if f.rule_id == "NRN313"]
    assert [(f.span.line, f.span.column, f.snippet) for f in findings] == [(4, 8, "True")]


def test_a_name_rebound_in_a_with_block_or_by_a_global_is_not_followed():
    source = textwrap.dedent("""\
        import lightning as L

        precision = "16-mixed"

        def main(cfg):
            global precision
            precision = cfg.precision
            return L.Trainer(precision=precision)

        def other(open_config):
            mode = "16-mixed"
            with open_config() as mode:
                return L.Trainer(precision=mode)
        """)
    assert [f.rule_id for f in scan_source(source, "train.py", "python", ScanOptions()) if f.rule_id == "NRN312"] == []


def test_a_backend_name_keeps_its_fix():
    # `backend = "nccl"` then `init_process_group(backend=backend)`: the engine already follows
    # the name as a backend and rewrites the value per device; the held-value path must not turn
    # that into a finding for a person.
    source = textwrap.dedent("""\
        import torch.distributed as dist

        def setup():
            backend = "nccl"
            dist.init_process_group(backend=backend)
        """)
    findings = [f for f in scan_source(source, "train.py", "python", ScanOptions()) if f.rule_id == "NRN401"]
    assert len(findings) == 1 and findings[0].fix.available
    outcome = fix_source(source, "train.py", "python", ScanOptions())
    assert 'backend = "nccl"' not in outcome.source


@pytest.mark.parametrize("rebinding", [
    "def precision():\n    pass",
    "class precision:\n    pass",
    "from config import *",
    "def set_mode(v):\n    global precision\n    precision = v",
    "match cfg:\n    case [*precision]:\n        pass",
    "match cfg:\n    case {**precision}:\n        pass",
    "del precision",
])
def test_a_name_bound_any_other_way_is_not_followed(rebinding):
    # Found by the hostile-input helper: each of these rebinds the name, so what a plain
    # assignment gave it is no longer known.
    source = f'import lightning as L\nprecision = "16-mixed"\n{rebinding}\nL.Trainer(precision=precision)\n'
    assert [f.rule_id for f in scan_source(source, "train.py", "python", ScanOptions()) if f.rule_id == "NRN312"] == []


def test_a_value_also_set_in_a_branch_on_cuda_is_chosen_per_device():
    source = textwrap.dedent("""\
        import torch
        from transformers import TrainingArguments

        use_fp16 = True
        if not torch.cuda.is_available():
            use_fp16 = False
        args = TrainingArguments(output_dir="out", fp16=use_fp16)
        """)
    assert [f.rule_id for f in scan_source(source, "train.py", "python", ScanOptions()) if f.rule_id == "NRN313"] == []



def test_a_value_on_unless_a_flag_says_otherwise_is_left_for_a_person():
    # Third blind corpus (ray_train.py): `fp16=not USE_BF16` was not reported at all.
    source = textwrap.dedent("""\
        from transformers import TrainingArguments

        def build(args):
            return TrainingArguments(output_dir="out", fp16=not args.no_fp16)
        """)
    options = ScanOptions(target="neuron")
    findings = [f for f in scan_source(source, "train.py", "python", options) if f.rule_id == "NRN313"]
    assert [(f.span.line, f.snippet) for f in findings] == [(4, "not args.no_fp16")]
    outcome = fix_source(source, "train.py", "python", options, unsafe=True)
    assert outcome.source == source
    assert [reason for f, reason in outcome.manual if f.rule_id == "NRN313"] == [
        "`fp16=` is True unless `args.no_fp16` is set: decide it by hand"]


def test_a_default_after_or_is_the_value_the_call_gets_when_nothing_is_given():
    source = textwrap.dedent("""\
        import torch.distributed as dist

        def setup(args):
            dist.init_process_group(backend=args.backend or "nccl")
            dist.init_process_group(backend="gloo" or args.backend)
        """)
    options = ScanOptions(target="neuron")
    assert [(f.rule_id, f.span.line) for f in scan_source(source, "train.py", "python", options)] == [("NRN401", 4)]
    assert 'backend=args.backend or "neuron"' in fix_source(source, "train.py", "python", options).source


def test_a_negation_anywhere_in_the_value_is_read():
    # Hostile helper: `not X` was read only as the whole argument.
    source = textwrap.dedent("""\
        from transformers import TrainingArguments

        def build(args, a, b):
            fp16 = not args.no_fp16
            TrainingArguments("o", fp16=fp16)
            TrainingArguments("o", fp16=not a if b else False)
            TrainingArguments("o", fp16=args.fp16 or not args.no_fp16)
            TrainingArguments("o", fp16=not True)
        """)
    options = ScanOptions(target="neuron")
    assert [f.span.line for f in scan_source(source, "train.py", "python", options) if f.rule_id == "NRN313"] == [4, 6, 7]
    outcome = fix_source(source, "train.py", "python", options, unsafe=True)
    assert outcome.source == source and len([f for f, _ in outcome.manual if f.rule_id == "NRN313"]) == 3


# Settings chosen further from the call (the fifth blind corpus, tests/corpus-neuron-5, and the
# hostile helper's cases on them).
SPREAD = textwrap.dedent("""\
    from transformers import TrainingArguments
    FP16 = True
    BASE = {"output_dir": "out", "fp16": FP16}
    ARGS = {**BASE, "learning_rate": 2e-5}
    OFF = {**BASE, "fp16": False}
    args = TrainingArguments(**ARGS)
    quiet = TrainingArguments(**OFF)
    """)


@pytest.mark.parametrize("target", ["portable", "neuron"])
def test_a_setting_in_a_dict_passed_as_kwargs_is_reported_where_it_is_written(target):
    options = ScanOptions(target=target)
    found = [f for f in scan_source(SPREAD, "train.py", "python", options) if f.rule_id == "NRN313"]
    # One finding, at the value (`FP16 = True`), for a person; the dict that sets False reports nothing.
    assert [(f.span.line, f.fixable) for f in found] == [(2, False)]
    assert "FP16" in found[0].plan.context["manual_reason"]
    assert fix_source(SPREAD, "train.py", "python", options).source == SPREAD


@pytest.mark.parametrize("path, source", [
    ("dist.py", 'import torch.distributed as dist\ndef init(backend="nccl"):\n    dist.init_process_group(backend=backend)\n'),
    ("tests/test_dist.py", 'from typing import Literal\ndef fake_init(backend: Literal["nccl", "gloo"] = "nccl"):\n    return backend\n'),
    ("dist.py", 'import torch\ncfg = dict(backend="nccl" if torch.cuda.is_available() else "gloo")\n'),
    ("dist.py", 'TABLE = {"gpu": "nccl", "cpu": "gloo"}\n'),
], ids=["parameter default", "test stub with a Literal", "IfExp in a dict", "per-device table"])
def test_a_backend_kept_in_a_default_or_a_dict_is_reported_and_not_rewritten(path, source):
    options = ScanOptions(target="neuron")
    found = [f for f in scan_source(source, path, "python", options) if f.rule_id == "NRN401"]
    assert found and not any(f.fixable for f in found)
    assert '"nccl"' in fix_source(source, path, "python", options).source
