"""Which Neuron software path applies to the code, per instance family (assess, part 2).

The paths are data (`data/migration_paths.yaml`, each with its source). The code decides which
uses are shown: training, inference, LLM serving, Hugging Face libraries (`inventory.Inventory.uses`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from migrator.assess.inventory import Inventory
from migrator.core.resources import package_file
from migrator.core.yamldata import load_strict

__all__ = ["FAMILIES_BY_TARGET", "migration_paths", "paths_section"]

# The families each target reaches (rules/targets.yaml: neuron = TorchNeuron on Trn2/Trn3,
# xla = legacy torch-neuronx 2.9 on Trn1/Inf2, inf1 = torch-neuron).
FAMILIES_BY_TARGET = {"portable": ("trn1", "trn2", "trn3", "inf2"), "neuron": ("trn2", "trn3"),
                      "xla": ("trn1", "inf2"), "inf1": ("inf1",)}
_USE_NAMES = {"training": "training code", "inference": "inference code", "llm-serving": "LLM serving or generation",
              "hf": "Hugging Face libraries"}


@lru_cache(maxsize=1)
def migration_paths() -> dict[str, Any]:
    return load_strict(package_file("assess/data/migration_paths.yaml").read_text(encoding="utf-8"))


def paths_section(inv: Inventory, families: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per (family, use) that applies: the path, its status, why it is shown, its source.

    With no training or inference code recognised, both are shown and `why` says so.
    """
    uses = set(inv.uses)
    guessed = not uses & {"training", "inference"}
    if guessed:
        uses |= {"training", "inference"}
    rows = []
    for entry in migration_paths()["paths"]:
        if entry["family"] not in families:
            continue
        for use in (u for u in entry["applies"] if u in uses):
            if guessed and use in ("training", "inference"):
                why = "no training or inference code recognised: shown for both"
            else:
                files = sorted(inv.evidence.get(use, ()))
                why = f"{_USE_NAMES[use]} found in {len(files)} file{'s' if len(files) != 1 else ''}"
                if files:
                    why += f" (e.g. {files[0]})"
            rows.append({"family": entry["family"], "use": use, "path": entry["path"], "status": entry["status"],
                         "why": why, "source": entry["source"]})
    return rows
