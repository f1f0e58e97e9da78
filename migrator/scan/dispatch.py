"""The CUDA arm of a per-vendor dispatch (issue 11, Precision).

    if torch.xpu.is_available():            # another accelerator's arm
        torch.xpu.empty_cache()
    elif torch.cuda.is_available():         # the CUDA arm
        torch.cuda.empty_cache()

A chain of `if`/`elif` tests that names CUDA and another accelerator (rules/vocabulary.yaml
`other_accelerators`: XPU, MPS, NPU, ...) already dispatches per device: its CUDA arm runs on CUDA
GPUs only and is right there, and what a Neuron host needs is an arm of its own, not a change
to the CUDA one. So the CUDA-only queries and calls of that arm (its test included) are not
blockers. An arm that chooses a device (`device = torch.device("cuda")`) is read whole, as any
code: without a Neuron arm a Neuron host falls through to the `else`, often the CPU, and the fix
opens its guard to every accelerator together with the device and the calls
(`Context.settle_vendor_arms`).

Only arms whose test holds on CUDA alone count: `torch.cuda.is_available()`,
`is_torch_cuda_available()`, a flag named like `pt_cuda_available`/`is_cuda`,
`x.device.type == "cuda"`, `device.startswith("cuda:")`, `"cuda" in device`, or an `and` holding
one of them. The `else` of a chain is not a CUDA arm: a Neuron host runs it. Tests are read as
written; nothing is imported or evaluated.

A table keyed by device type is the same dispatch written as data (diffusers' testing_utils):

    BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache, "cpu": None}

Its `"cuda"` entry is the CUDA arm when another accelerator has an entry too.
"""

from __future__ import annotations

import re

import libcst as cst

from migrator.scan.resolve import dotted_name
from migrator.scan.values import string_value
from migrator.scan.words import OTHER_ACCELERATORS

__all__ = ["cuda_arms", "cuda_entries", "vendor_tested"]

_PRESENCE = re.compile(r"^is_(?:torch_)?([a-z]+)_available$")
# Words of a flag's name that make it a presence test (`pt_cuda_available`, `HAS_XPU`, `x.is_cuda`).
_FLAG_WORDS = frozenset({"available", "has", "is", "use", "test", "on"})
_FILLER = frozenset({"", "pt", "torch", "device", "with"})
_VENDORS = OTHER_ACCELERATORS | {"cuda"}


def vendor_tested(test: cst.BaseExpression) -> str | None:
    """The device type whose presence `test` requires (`"cuda"`, `"xpu"`, ...), else None."""
    if isinstance(test, cst.BooleanOperation):
        if not isinstance(test.operator, cst.And):
            return None
        found = {vendor_tested(test.left), vendor_tested(test.right)} - {None}
        return found.pop() if len(found) == 1 else None
    if isinstance(test, cst.Call):
        name = dotted_name(test.func) or ""
        parts = name.split(".")
        if parts[-1] == "is_available" and len(parts) >= 2 and parts[-2] in _VENDORS:
            return parts[-2]  # torch.xpu.is_available(), torch.backends.mps.is_available()
        if parts[-1] == "startswith" and len(test.args) == 1:  # device.startswith("cuda:")
            return _vendor_string(test.args[0].value)
        found = _PRESENCE.match(parts[-1])
        return found.group(1) if found and found.group(1) in _VENDORS else None
    if isinstance(test, (cst.Name, cst.Attribute)):
        last = test.value if isinstance(test, cst.Name) else test.attr.value
        words = last.lower().split("_")
        vendors = [w for w in words if w in _VENDORS]
        # Every other word says presence (`use_cuda_graphs` is another switch).
        if len(vendors) == 1 and _FLAG_WORDS.intersection(words) and set(words) <= _FLAG_WORDS | _FILLER | {vendors[0]}:
            return vendors[0]
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        if isinstance(operator, cst.Equal):  # device.type == "cuda", "cuda:0" == device
            return _vendor_string(test.left) or _vendor_string(test.comparisons[0].comparator)
        if isinstance(operator, cst.In):  # "cuda" in str(device)
            return _vendor_string(test.left)
    return None


def _vendor_string(node: cst.BaseExpression) -> str | None:
    """The device type a string literal names (`"cuda"`, `"xpu:0"`), else None."""
    value = string_value(node)
    if value is None:
        return None
    kind = value.split(":", 1)[0]
    return kind if kind in _VENDORS else None


def cuda_arms(node: cst.If) -> tuple[list[cst.If], list[cst.If]]:
    """(the chain's `if`/`elif` nodes, those that are CUDA arms of a per-vendor dispatch) for the
    chain that starts at `node`; the second list is empty unless the chain also tests another
    accelerator."""
    chain: list[cst.If] = []
    current: cst.If | cst.Else | None = node
    while isinstance(current, cst.If):
        chain.append(current)
        current = current.orelse
    vendors = [vendor_tested(branch.test) for branch in chain]
    if "cuda" not in vendors or not OTHER_ACCELERATORS.intersection(vendors):
        return chain, []
    return chain, [branch for branch, vendor in zip(chain, vendors) if vendor == "cuda"]


def cuda_entries(node: cst.Dict) -> list[cst.BaseExpression]:
    """The values of the `"cuda"` keys of a dict literal keyed by device type (every key a string
    naming CUDA, the CPU, `default` or another accelerator) that has another accelerator's key
    too; else an empty list."""
    keys: list[str] = []
    for element in node.elements:
        value = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if value is None or value not in _VENDORS | {"cpu", "default"}:
            return []
        keys.append(value)
    if "cuda" not in keys or not OTHER_ACCELERATORS.intersection(keys):
        return []
    return [e.value for e, key in zip(node.elements, keys) if key == "cuda"]  # type: ignore[union-attr]

