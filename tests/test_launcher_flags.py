"""Launcher flags where teams keep them: bash arrays, a Dockerfile's exec form, Python argument lists.

Found by the second blind corpus (tests/corpus-neuron-2): Megatron-LM's `--distributed-backend`,
`ENTRYPOINT ["torchrun", ..., "--fp16", "--dist-backend=nccl"]` and accelerate flags kept as a
list of items were not reported. The rule examples show the findings and fixes; these tests hold
what a user would notice beyond them.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from migrator.api import fix_source, scan_source
from migrator.core.findings import Edit
from migrator.core.options import ScanOptions
from migrator.fix.edits import apply_edits

ROOT = Path(__file__).resolve().parents[1]

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


@pytest.mark.parametrize("target", ["portable", "neuron"])
def test_json_edits_of_two_rules_on_one_dockerfile_line_are_each_that_rules_fix(tmp_path, target):
    # A text finding stands for every match of its rule on the line; the edits used to be cut from
    # the whole file's rewrite by column, so NRN406's edit carried NRN311's change.
    text = 'FROM ubuntu\nCMD ["python", "x.py", "--fp16", "--backend", "nccl", "--trainer.precision=16-mixed"]\n'
    (tmp_path / "Dockerfile").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "migrator", "scan", "Dockerfile", "--format", "json", "--target", target],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    report = json.loads(proc.stdout)
    findings = {f["rule_id"]: f for f in (report["findings"] if isinstance(report, dict) else report)}
    assert set(findings) == {"NRN311", "NRN406"} and all(f["fixable"] for f in findings.values())
    edits = {rule: [Edit(e["location"]["row"], e["location"]["column"], e["end_location"]["row"],
                         e["end_location"]["column"], e["content"]) for e in f["fix"]["edits"]]
             for rule, f in findings.items()}
    options = ScanOptions(target=target)
    for rule, own in edits.items():
        alone = fix_source(text, "Dockerfile", "dockerfile", options, unsafe=True,
                           only=next((f.rule_id, f.span.line, f.span.column)
                                     for f in scan_source(text, "Dockerfile", "dockerfile", options) if f.rule_id == rule))
        assert apply_edits(text, own) == alone.source
    # Together (no overlap) they make what `fix` writes.
    assert apply_edits(text, edits["NRN311"] + edits["NRN406"]) == fix_source(text, "Dockerfile", "dockerfile", options,
                                                                               unsafe=True).source


@pytest.mark.parametrize("target", ["portable", "neuron", "xla"])
@pytest.mark.parametrize("kind,name,text", [
    ("shell", "run.sh", 'ARGS=(--backend --fp16 nccl)\ntorchrun x.py "${ARGS[@]}"\n'),
    ("dockerfile", "Dockerfile", 'FROM ubuntu\nCMD ["python", "x.py", "--backend", "--fp16", "nccl"]\n'),
])
def test_a_second_fix_finds_nothing_left_when_dropping_a_flag_joins_two_others(kind, name, text, target):
    # Dropping `--fp16` brings `--backend` and `nccl` together: the first run fixes that too
    # (hostile-input helper: the second run used to change the file again).
    options = ScanOptions(target=target)
    once = fix_source(text, name, kind, options, unsafe=True).source
    assert fix_source(once, name, kind, options, unsafe=True).source == once
    if kind == "shell":
        assert subprocess.run(["bash", "-n"], input=once, text=True).returncode == 0
    else:
        json.loads(re.search(r"CMD (\[.*\])", once).group(1))


def test_lightning_backend_variable_is_reported_and_does_not_hold_back_the_files_fix():
    # NRN410 (Lightning ignores the variable since 1.8) is for a person; setting a variable runs
    # anywhere, so the rest of the file is still rewritten.
    source = (
        "import os\n"
        "import torch.distributed as dist\n"
        "os.environ[\"PL_TORCH_DISTRIBUTED_BACKEND\"] = \"nccl\"\n"
        "dist.init_process_group(backend=\"nccl\")\n"
    )
    findings = scan_source(source, "train.py", "python", ScanOptions())
    assert sorted(f.rule_id for f in findings) == ["NRN401", "NRN410"]
    outcome = fix_source(source, "train.py", "python", ScanOptions())
    assert 'init_process_group(backend="nccl")' not in outcome.source
    assert [f.rule_id for f, _ in outcome.manual] == ["NRN410"]


@pytest.mark.parametrize("kind, name", [("shell", "train.sh"), ("dockerfile", "Dockerfile")])
def test_a_flag_split_from_its_value_by_a_continued_line_is_reported_for_a_person(kind, name):
    text = ("RUN " if kind == "dockerfile" else "") + "torchrun train.py \\\n    --mixed_precision \\\n    fp16 \\\n    --dist-backend \\\n    nccl\n"
    if kind == "dockerfile":
        text = "FROM python:3.11-slim\n" + text
    first = 3 if kind == "dockerfile" else 2
    findings = scan_source(text, name, kind, ScanOptions(target="neuron"))
    assert sorted((f.rule_id, f.span.line, f.span.end_line) for f in findings) == [
        ("NRN311", first, first + 1), ("NRN406", first + 2, first + 3)]
    outcome = fix_source(text, name, kind, ScanOptions(target="neuron"), unsafe=True)
    assert outcome.source == text
    assert all("continued line" in reason for _, reason in outcome.manual)


@pytest.mark.parametrize("text, expected", [
    # A whole flag at the start of an unindented continued line, and one split from its value.
    ("accelerate launch \\\n--mixed_precision fp16 \\\ntrain.py\n", [("NRN311", 2, 2)]),
    # A flag at the start of an unindented continued line.
    ("torchrun \\\n--dist-backend \\\nnccl \\\n--mixed_precision \\\nfp16 train.py\n", [("NRN406", 2, 3), ("NRN311", 4, 5)]),
    # The same rule wholly on the following line does not hide the split one.
    ("torchrun train.py --dist-backend \\\n    nccl --backend nccl\n", [("NRN406", 1, 2), ("NRN406", 2, 2)]),
    # The shell removes backslash and line end: `--dist-backend=\` + `nccl` is `--dist-backend=nccl` ...
    ("torchrun t.py --dist-backend=\\\nnccl\n", [("NRN406", 1, 2)]),
    # ... and `--dist-backend\` + `nccl` is one word, `--dist-backendnccl`.
    ("torchrun t.py --dist-backend\\\nnccl\n", []),
    # A backslash inside a comment continues nothing.
    ("torchrun t.py # --dist-backend \\\n nccl\n", []),
    # A single-node launch split over lines is not a multi-node one (NRN409) ...
    ("torchrun \\\n  --nnodes \\\n  1 t.py\ntorchrun --master_addr \\\n  127.0.0.1 t.py\n", []),
    # ... and a multi-node one is.
    ("torchrun --nnodes \\\n  2 t.py\n", [("NRN409", 1, 2)]),
])
def test_continued_lines_are_read_as_the_shell_joins_them(text, expected):
    findings = scan_source(text, "train.sh", "shell", ScanOptions(target="neuron"))
    assert [(f.rule_id, f.span.line, f.span.end_line) for f in findings] == expected


def test_a_cuda_index_is_not_moved_to_the_cpu_index_under_a_cuda_only_package():
    # New user: `pip install xformers --index-url .../whl/cu121` was rewritten to the CPU index,
    # which does not carry xformers; torch alone still moves.
    text = ("FROM python:3.11-slim\n"
            "RUN pip install xformers==0.0.26.post1 --index-url https://download.pytorch.org/whl/cu121\n"
            "RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu121\n")
    options = ScanOptions(target="neuron")
    found = {f.span.line: f for f in scan_source(text, "Dockerfile", "dockerfile", options) if f.rule_id == "NRN802"}
    fixed = fix_source(text, "Dockerfile", "dockerfile", options, unsafe=True).source
    assert "xformers==0.0.26.post1 --index-url https://download.pytorch.org/whl/cu121" in fixed
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in fixed
    assert sorted(found) == [2, 3] and not found[2].fixable and found[3].fixable
