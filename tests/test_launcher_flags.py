"""Launcher flags where teams keep them: bash arrays, a Dockerfile's exec form, Python argument lists.

Found by the second blind corpus (tests/corpus-neuron-2): Megatron-LM's `--distributed-backend`,
`ENTRYPOINT ["torchrun", ..., "--fp16", "--dist-backend=nccl"]` and accelerate flags kept as a
list of items were not reported. The rule examples show the findings and fixes; these tests hold
what a user would notice beyond them.
"""

import json
import re

import pytest

from migrator.api import fix_source, scan_source
from migrator.core.options import ScanOptions

MEGATRON = """\
DIST_ARGS=(
    --tensor-model-parallel-size 2
    --distributed-backend nccl
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${DIST_ARGS[@]}"
"""

DOCKERFILE = """\
FROM python:3.11-slim
ENTRYPOINT ["torchrun", "--nproc_per_node=8", "train.py", "--fp16", "--dist-backend", "nccl", "--mixed_precision=fp16", "--out", "o"]
"""


@pytest.mark.parametrize("target", ["portable", "neuron", "xla"])
def test_megatron_distributed_backend_is_reported_and_left_for_a_person(target):
    # Dropped, Megatron-LM's own default (nccl) applies; it accepts only nccl or gloo, so "neuron"
    # would fail its argument parser: no rewrite on any target.
    options = ScanOptions(target=target)
    assert [f.rule_id for f in scan_source(MEGATRON, "pretrain.sh", "shell", options)] == ["NRN406"]
    outcome = fix_source(MEGATRON, "pretrain.sh", "shell", options, unsafe=True)
    assert outcome.source == MEGATRON
    assert [f.rule_id for f, _ in outcome.manual] == ["NRN406"]


@pytest.mark.parametrize("target", ["portable", "neuron"])
def test_dockerfile_exec_form_stays_a_json_array_after_fix(target):
    options = ScanOptions(target=target)
    # One finding per rule and line; the fix rewrites every occurrence on the line.
    found = sorted(f.rule_id for f in scan_source(DOCKERFILE, "Dockerfile", "dockerfile", options))
    assert found == ["NRN311", "NRN406"]
    fixed = fix_source(DOCKERFILE, "Dockerfile", "dockerfile", options, unsafe=True).source
    command = json.loads(re.search(r"ENTRYPOINT (\[.*\])", fixed).group(1))
    if target == "portable":
        assert command == ["torchrun", "--nproc_per_node=8", "train.py", "--out", "o"]
    else:
        assert command == ["torchrun", "--nproc_per_node=8", "train.py", "--bf16", "--dist-backend", "neuron",
                           "--mixed_precision=bf16", "--out", "o"]


def test_a_flag_and_its_value_as_list_items_are_read_together():
    source = 'FLAGS = ["--mixed_precision", "fp16", "--precision", "bf16-mixed"]\nOTHER = ["--fp16_note", "fp16"]\n'
    found = scan_source(source, "launch.py")
    assert [(f.rule_id, f.span.line, f.span.column) for f in found] == [("NRN311", 1, 10)]
    assert "--mixed_precision fp16" in found[0].message
    # Python strings are never rewritten by a text fix: reported for a person.
    assert fix_source(source, "launch.py", unsafe=True).source == source
