"""Line-based source kinds (shell, Dockerfile, requirements, conda, pyproject, setup.cfg, CUDA
sources, YAML configs): regular-expression rules on the decoded text, fixed line by line."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

from migrator.core.findings import Finding
from migrator.core.lines import split_lines
from migrator.core.options import ScanOptions
from migrator.scan.suppress import apply_suppressions
from migrator.sources.codec import decode_text

if TYPE_CHECKING:
    from migrator.fix.outcome import FixOutcome
    from migrator.scan.engine import RuleIndex

__all__ = ["scanner", "fixer", "is_training_config"]

# A YAML file is matched only when its keys make it a training configuration: a Lightning CLI
# config (`trainer:` with its accelerator/precision/strategy), an accelerate config, or Hugging
# Face TrainingArguments / recipe keys. Other YAML (CI, Kubernetes, conda-lock) is left alone. The
# text is never loaded as YAML: no alias expansion, no tags, only lines read with patterns.
_CONFIG_KEYS = (
    (re.compile(r"^trainer:[ \t]*(#.*)?$", re.M), re.compile(r"^[ \t]+(accelerator|precision|strategy|devices|plugins):", re.M)),
    (re.compile(r"^(compute_environment|distributed_type):", re.M), re.compile(r"^(mixed_precision|distributed_type|num_processes|compute_environment):", re.M)),
    (re.compile(r"^(per_device_train_batch_size|per_device_eval_batch_size|micro_batch_size|gradient_accumulation_steps):", re.M),
     re.compile(r"^(fp16|bf16|half_precision_backend|output_dir|base_model|learning_rate):", re.M)),
)


def is_training_config(text: str) -> bool:
    """Whether a YAML file's keys make it a Lightning CLI, accelerate or Hugging Face training config."""
    return any(first.search(text) and second.search(text) for first, second in _CONFIG_KEYS)


def scanner(kind: str):
    def scan(raw: bytes, path: str, options: ScanOptions, index: "RuleIndex", is_test: bool, unused: bool) -> list[Finding]:
        from migrator.scan.engine import scan_text

        text = decode_text(raw)
        if kind == "yaml" and not is_training_config(text):
            return []
        lines = split_lines(text)
        found = scan_text(text, path, kind, index, options.target, is_test=is_test)
        return apply_suppressions(found, lambda cell: lines, path=path, report_unused=unused)

    return scan


def fixer(kind: str):
    def fix(text: str, path: str, options: ScanOptions, index: "RuleIndex", unsafe: bool, is_test: bool,
            only: tuple | None, partial: bool) -> "FixOutcome":
        from migrator.fix.textfix import fix_text_lines
        from migrator.scan.engine import scan_text

        if kind == "yaml" and not is_training_config(text):
            from migrator.fix.outcome import FixOutcome

            return FixOutcome(text)
        def once(current: str) -> "FixOutcome":
            lines = split_lines(current)
            findings = apply_suppressions(scan_text(current, path, kind, index, options.target, is_test=is_test),
                                          lambda cell: lines, path=path)
            if only is not None:
                findings = [f for f in findings if (f.rule_id, f.span.line, f.span.column) == only]
            return fix_text_lines(current, findings, options.target, unsafe=unsafe, file_kind=kind)

        outcome = once(text)
        # Dropping one flag can bring two others together (`--backend --fp16 nccl`): fix again
        # until nothing changes, so a second `fix` run has nothing left to do.
        for _ in range(4):
            if only is not None or outcome.source == text:
                break
            again = once(outcome.source)
            if again.source == outcome.source:
                break
            again.applied[:0] = outcome.applied
            outcome, text = again, outcome.source
        return outcome

    return fix
