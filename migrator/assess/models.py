"""Which Neuron library lists a model, per instance family (assess, part 3).

The lists are data: `data/model_support.yaml` (each with its source and date, schema
`migrator/schemas/model-support.schema.json`). A name that maps to no model type is
*unknown*; a model type that no list names is *not listed*, which is not the same as "does not
run": TorchNeuron publishes no architecture list at all.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import jsonschema

from migrator.assess.inventory import Inventory
from migrator.core.resources import package_file
from migrator.core.yamldata import load_strict

__all__ = ["support_lists", "model_type_of", "models_section", "LOOKED_FOR"]

MAX_MODELS = 300  # a tree that names thousands of models (generated code) keeps a readable report

LOOKED_FOR = ('from_pretrained("org/name") with a literal hub id, model classes imported from transformers '
              '(LlamaForCausalLM), model_type in config.json files, TorchTitan model names ([model] name, '
              '--model.name); other ways of naming a model (timm.create_model, a name read from a config '
              'at run time) are not recognised')


@lru_cache(maxsize=1)
def support_lists() -> dict[str, Any]:
    """The validated contents of data/model_support.yaml."""
    data = load_strict(package_file("assess/data/model_support.yaml").read_text(encoding="utf-8"))
    schema = json.loads(package_file("schemas/model-support.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    return data


def _known_types() -> set[str]:
    data = support_lists()
    known = {t for entry in data["lists"] for t in entry["model_types"]}
    known |= {a["model_type"] for a in data.get("aliases", [])}
    return known


def _snake(name: str) -> str:
    """Hugging Face's class-to-model-type spelling: `Qwen3Moe` -> `qwen3_moe`, `Qwen2VL` -> `qwen2_vl`."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def model_type_of(name: str, how: str) -> str | None:
    """The Hugging Face `model_type` a model name stands for, or None when it is unknown.

    `how` is where the name came from (`inventory.ModelUse.how`): `config.json` names the type
    itself; `torchtitan` names go through the list's table; hub ids and class names through the
    aliases, first match wins.
    """
    data = support_lists()
    if how == "config.json":
        return name.lower()
    if how == "torchtitan":
        return data.get("torchtitan_names", {}).get(name.lower())
    subject = name.rsplit("/", 1)[-1]
    for alias in data.get("aliases", []):
        if re.search(alias["pattern"], subject):
            return alias["model_type"]
    if how == "class":
        m = re.match(r"^([A-Z][A-Za-z0-9]*?)(For[A-Z]\w*|LMHeadModel|Model)$", name)
        if m and _snake(m.group(1)) in _known_types():
            return _snake(m.group(1))
    return None


def models_section(inv: Inventory, families: tuple[str, ...]) -> dict[str, Any]:
    """The report's `models` part: each model named in the tree, its type and, per family, the
    lists that name it (empty list = not listed; `support` None = the model type is unknown)."""
    data = support_lists()
    found = []
    for (name, how), use in sorted(inv.models.items())[:MAX_MODELS]:
        mtype = model_type_of(name, how)
        support = None
        if mtype is not None:
            support = {fam: [_entry(e) for e in data["lists"] if fam in e["families"] and mtype in e["model_types"]]
                       for fam in families}
        found.append({"name": name, "how": how, "model_type": mtype,
                      "where": [{"path": p, "line": line} for p, line in use.where[:20]],
                      "support": support})
    lists = [{"library": e["library"], "use": e["use"], "families": e["families"], "source": e["source"],
              "date": e["date"], "status": e.get("status", "")} for e in data["lists"]]
    return {"found": found, "families": list(families), "lists": lists, "looked_for": LOOKED_FOR,
            "not_shown": max(0, len(inv.models) - MAX_MODELS)}


def _entry(e: dict[str, Any]) -> dict[str, Any]:
    return {"library": e["library"], "use": e["use"], "source": e["source"], "date": e["date"],
            "status": e.get("status", "")}
