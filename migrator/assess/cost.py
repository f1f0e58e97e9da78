"""Today's GPU spend against a Neuron plan (assess, part 4).

Inputs are data with provenance: a fleet file (`migrator/schemas/fleet.schema.json`), a
prices file (`migrator/schemas/prices.schema.json`: every row names its source, date and
reliability) or the AWS Price List API, and the stated assumptions (`data/assumptions.yaml`,
overridable by the fleet file). A price that is unknown stops the cost section with a message
(`PriceUnknown`); it is never guessed.

Formulas (all memory in GiB = 2**30 bytes, money in USD, time in hours per month):

- bytes per parameter `b`: float32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.
- inference memory = P x b + KV, with KV = 2 (K and V) x layers x kv_heads x head_dim x
  context_tokens x batch x b; without layers/kv_heads/head_dim the KV cache is not counted and
  the report says so.
- training memory = P x (b weights + b gradients + optimizer_bytes_per_parameter) x
  (1 + activation_allowance); with bf16 and Adam that is the ZeRO paper's 16 bytes per
  parameter (https://arxiv.org/abs/1910.02054, section 3.1) plus the allowance.
- without a parameter count, a workload is sized to the accelerator memory of one GPU instance
  it runs on today (what it demonstrably fits in).
- one replica needs g = ceil(memory / (GPU instance memory x usable_memory_fraction)) GPU
  instances, or n = ceil(memory / (Neuron instance memory x usable_memory_fraction)) Neuron
  instances; the fleet's `count` GPU instances hold r = max(1, count // g) replicas, and the
  Neuron plan runs r x n instances of the type with the least total accelerator memory that
  fits (ties: fewer instances). More than one instance per replica needs EFA (training only).
- GPU monthly = count x hours x GPU USD/hour; Neuron monthly = r x n x (hours / ratio) x
  Neuron USD/hour, where `throughput_ratio` is Neuron throughput over GPU throughput for the
  same work; savings = GPU - Neuron; break-even ratio = r x n x hours x Neuron USD/hour / GPU
  monthly (the ratio at which the two cost the same).
- effort cost = person-days x day_rate; payback months = effort cost / monthly savings.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jsonschema
import yaml

from migrator.core.fsutil import Unreadable, read_limited
from migrator.core.resources import package_file
from migrator.core.yamldata import DuplicateKey, load_strict

__all__ = ["FleetError", "PriceUnknown", "Prices", "load_assumptions", "load_fleet", "load_prices", "aws_prices",
           "gpu_types", "memory_need", "plan_workload", "cost_section", "BYTES_PER_PARAMETER"]

BYTES_PER_PARAMETER = {"float32": 4.0, "fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "float16": 2.0, "bfloat16": 2.0,
                       "fp8": 1.0, "int8": 1.0, "int4": 0.5}
GIB = 2 ** 30
MAX_INPUT_BYTES = 4 * 1024 * 1024  # a prices file of 10,000 rows is about 1.6 MiB


class FleetError(ValueError):
    """A fleet, prices or assumptions file that cannot be used; the message names the file and field."""


class PriceUnknown(LookupError):
    """No price for an instance type, region and purchase option (the cost section stops)."""

    def __init__(self, instance_type: str, region: str, option: str, where: str) -> None:
        self.instance_type, self.region, self.option = instance_type, region, option
        super().__init__(
            f"no {option} price for {instance_type} in {region} in {where}: add a row with its source to a "
            f"prices file (--prices FILE), query AWS (--prices aws), or set the workload's "
            f"neuron_instance_types to types you have prices for; the cost section is not computed without it")


def _schema(name: str) -> dict[str, Any]:
    return json.loads(package_file(f"schemas/{name}").read_text(encoding="utf-8"))


def _field(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _read_yaml(path: Path) -> Any:
    """The YAML data of a fleet or prices file, refused (FleetError) when it is not plain data:
    no aliases (an alias bomb expands to gigabytes), no NaN or infinity, no control characters
    in strings."""
    try:
        text = read_limited(path, MAX_INPUT_BYTES).decode("utf-8")
    except Unreadable as exc:
        raise FleetError(f"{path}: cannot read: {str(exc).replace(' (max-file-size)', '')}") from None
    except OSError as exc:
        raise FleetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise FleetError(f"{path}: not UTF-8 text") from None
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise FleetError(f"{path}: line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are "
                                 f"not allowed here; write the values out")
        data = load_strict(text)
    except DuplicateKey as exc:
        raise FleetError(f"{path}: field '{exc.key}': given twice (lines {exc.lines[0]} and {exc.lines[1]})") from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:  # ValueError: an integer of 4,300+ digits
        raise FleetError(f"{path}: not valid YAML: {exc}") from None
    _plain(data, path, "")
    return data


def _plain(value: Any, path: Path, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise FleetError(f"{path}: field '{where or '(top level)'}': {value} is not a number")
    if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise FleetError(f"{path}: field '{where or '(top level)'}': control characters (newlines included) "
                         f"are not allowed")
    if isinstance(value, dict):
        for k, v in value.items():
            _plain(v, path, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _plain(v, path, f"{where}[{i}]")


def _validate(data: Any, schema: str, path: Path | str) -> None:
    validator = jsonschema.Draft202012Validator(_schema(schema))
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        e = errors[0]
        raise FleetError(f"{path}: field '{_field(e)}': {e.message}")


@lru_cache(maxsize=1)
def _default_assumptions() -> dict[str, Any]:
    return load_strict(package_file("assess/data/assumptions.yaml").read_text(encoding="utf-8"))


def load_assumptions(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shipped assumptions with a fleet file's `assumptions:` laid over them (effort buckets
    are merged one by one)."""
    base = json.loads(json.dumps(_default_assumptions()))
    overrides = overrides or {}
    if "throughput_ratio" in overrides and "throughput_ratio_source" not in overrides:
        base["throughput_ratio_source"] = "given in the fleet file (its assumptions: mapping)"
    for key, value in overrides.items():
        if key == "effort":
            for bucket, entry in value.items():
                base["effort"][bucket] = {**base["effort"][bucket], **entry}
        else:
            base[key] = value
    return base


@lru_cache(maxsize=1)
def gpu_types() -> dict[str, Any]:
    """GPU instance types: {type: {gpu, gpus, gpu_memory_gib, vcpus}} plus `source`/`confidence`."""
    return load_strict(package_file("assess/data/gpu_instances.yaml").read_text(encoding="utf-8"))


def load_fleet(path: Path, neuron_types: dict[str, dict]) -> dict[str, Any]:
    """Read and check a fleet file.

    Raises:
        FleetError: unreadable, not valid against the schema, an unknown GPU or Neuron instance
            type, duplicate workload names, or a non-positive memory figure; names the field.
    """
    data = _read_yaml(path)
    _validate(data, "fleet.schema.json", path)
    gpus = gpu_types()["types"]
    for bucket, entry in data.get("assumptions", {}).get("effort", {}).items():
        if "hours" in entry and entry["hours"][0] > entry["hours"][1]:
            raise FleetError(f"{path}: field 'assumptions.effort.{bucket}.hours': low {entry['hours'][0]} is "
                             f"above high {entry['hours'][1]}")
    seen: set[str] = set()
    for i, w in enumerate(data.get("workloads", [])):
        where = f"workloads[{i}]"
        if w["name"] in seen:
            raise FleetError(f"{path}: field '{where}.name': workload name '{w['name']}' is given twice")
        seen.add(w["name"])
        if w["instance_type"] not in gpus:
            raise FleetError(f"{path}: field '{where}.instance_type': '{w['instance_type']}' is not a GPU instance "
                             f"type this tool knows (one of {', '.join(sorted(gpus))})")
        for j, t in enumerate(w.get("neuron_instance_types", [])):
            if t not in neuron_types:
                raise FleetError(f"{path}: field '{where}.neuron_instance_types[{j}]': '{t}' is not a Neuron instance "
                                 f"type this tool knows (one of {', '.join(sorted(neuron_types))})")
        kv = [k for k in ("layers", "kv_heads", "head_dim") if k in w]
        if kv and len(kv) != 3:
            missing = sorted({"layers", "kv_heads", "head_dim"} - set(kv))
            raise FleetError(f"{path}: field '{where}.{missing[0]}': layers, kv_heads and head_dim go together "
                             f"(the KV cache needs all three)")
    return data


@dataclass(frozen=True)
class Prices:
    """Price rows by (instance type, region, purchase option); `where` names their origin."""

    rows: dict[tuple[str, str, str], dict[str, Any]]
    where: str

    def get(self, instance_type: str, region: str, option: str) -> dict[str, Any]:
        """The row, or raise PriceUnknown."""
        row = self.rows.get((instance_type, region, option))
        if row is None:
            raise PriceUnknown(instance_type, region, option, self.where)
        return row


_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")


def load_prices(path: Path) -> Prices:
    """Read a prices file: every row carries instance type, region, purchase option, USD/hour,
    source, date and reliability.

    Raises:
        FleetError: a row without provenance, a bad date, a date in the future, or a row given twice.
    """
    data = _read_yaml(path)
    if isinstance(data, dict) and isinstance(data.get("prices"), list):
        for row in data["prices"]:  # YAML reads an unquoted 2026-06-01 as a date
            if isinstance(row, dict) and isinstance(row.get("date"), _dt.date):
                row["date"] = row["date"].isoformat()
    _validate(data, "prices.schema.json", path)
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    today = _dt.date.today().isoformat()
    for i, row in enumerate(data["prices"]):
        where = f"prices[{i}]"
        date = str(row["date"])
        if not _DATE.match(date) or (len(date) == 10 and not _real_date(date)):
            raise FleetError(f"{path}: field '{where}.date': '{date}' is not a date (YYYY-MM or YYYY-MM-DD)")
        if date > today:
            raise FleetError(f"{path}: field '{where}.date': {date} is in the future")
        key = (row["instance_type"], row["region"], row["purchase_option"])
        if key in rows:
            raise FleetError(f"{path}: field '{where}': a second price for {key[0]}, {key[1]}, {key[2]}")
        rows[key] = {**row, "date": date}
    return Prices(rows, str(path))


def _real_date(text: str) -> bool:
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def aws_prices(instance_types: set[str], region: str, client: Any = None) -> Prices:
    """On-demand Linux prices from the AWS Price List API (`pricing get_products`), queried now.

    `client` is a boto3 `pricing` client (tests pass one wrapped in botocore's Stubber); the
    default is one in us-east-1, where the Price List API answers. Types it has no price for
    are left out, so the lookup reports them as unknown.

    Raises:
        FleetError: the API call failed (no credentials, no network, access denied).
    """
    import boto3
    import botocore.exceptions

    if client is None:
        client = boto3.client("pricing", region_name="us-east-1")
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    today = _dt.date.today().isoformat()
    for t in sorted(instance_types):
        filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in (
            ("instanceType", t), ("regionCode", region), ("operatingSystem", "Linux"), ("tenancy", "Shared"),
            ("preInstalledSw", "NA"), ("capacitystatus", "Used"))]
        try:
            answer = client.get_products(ServiceCode="AmazonEC2", Filters=filters, MaxResults=10)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise FleetError(f"--prices aws: the AWS Price List API call failed for {t}: {exc}") from None
        usd = _on_demand_usd(answer.get("PriceList", []))
        if usd is not None:
            rows[(t, region, "on-demand")] = {
                "instance_type": t, "region": region, "purchase_option": "on-demand", "usd_per_hour": usd,
                "source": "AWS Price List API (pricing GetProducts, AmazonEC2, Linux, shared tenancy)",
                "date": today, "reliability": "primary"}
    return Prices(rows, "the AWS Price List API")


def _on_demand_usd(price_list: list[Any]) -> float | None:
    for item in price_list:
        try:
            product = json.loads(item) if isinstance(item, str) else item
            for term in product["terms"]["OnDemand"].values():
                for dim in term["priceDimensions"].values():
                    usd = float(dim["pricePerUnit"]["USD"])
                    if usd > 0:
                        return usd
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return None


def memory_need(w: dict[str, Any], a: dict[str, Any]) -> tuple[float | None, str, list[str]]:
    """(GiB one replica needs or None when it cannot be sized, the formula with its numbers, notes)."""
    notes: list[str] = []
    if "parameters_billion" not in w:
        return None, "no parameter count: sized to the memory of one GPU instance it runs on today", notes
    p = w["parameters_billion"] * 1e9
    precision = w.get("precision", a["precision"])
    b = BYTES_PER_PARAMETER[precision]
    if w["kind"] == "inference":
        weights = p * b
        if all(k in w for k in ("layers", "kv_heads", "head_dim")):
            ctx, batch = w.get("context_tokens", a["context_tokens"]), w.get("batch", a["batch"])
            kv = 2 * w["layers"] * w["kv_heads"] * w["head_dim"] * ctx * batch * b
            formula = (f"{w['parameters_billion']:g}e9 params x {b:g} B ({precision}) + KV cache 2 x {w['layers']} layers "
                       f"x {w['kv_heads']} KV heads x {w['head_dim']} head dim x {ctx} tokens x batch {batch} x {b:g} B")
        else:
            kv = 0.0
            formula = f"{w['parameters_billion']:g}e9 params x {b:g} B ({precision}); KV cache not counted"
            notes.append(f"{w['name']}: KV cache not counted (give layers, kv_heads and head_dim)")
        return (weights + kv) / GIB, formula, notes
    opt = a["optimizer_bytes_per_parameter"]
    act = a["activation_allowance"]
    total = p * (b + b + opt) * (1 + act)
    formula = (f"{w['parameters_billion']:g}e9 params x ({b:g} B weights + {b:g} B gradients + {opt:g} B optimizer "
               f"states) x (1 + {act:g} activation allowance)")
    return total / GIB, formula, notes


def _neuron_candidates(w: dict[str, Any], neuron_types: dict[str, dict], target: str) -> list[str]:
    allowed = w.get("neuron_instance_types")
    out = []
    for name, info in neuron_types.items():
        if allowed is not None and name not in allowed:
            continue
        if info.get("family") == "inf1":
            continue  # legacy torch-neuron: archived, not a migration target
        if w["kind"] == "training" and not str(info.get("chip", "")).startswith("Trainium"):
            continue
        if target != "portable" and target not in info.get("targets", []):
            continue
        out.append(name)
    return sorted(out)


def plan_workload(w: dict[str, Any], a: dict[str, Any], neuron_types: dict[str, dict], target: str) -> dict[str, Any]:
    """Size one workload on GPUs and on Neuron (no prices yet): instance counts and memory."""
    gpu = gpu_types()["types"][w["instance_type"]]
    gpu_mem = gpu["gpus"] * gpu["gpu_memory_gib"]
    usable = a["usable_memory_fraction"]
    need, formula, notes = memory_need(w, a)
    if need is None:
        need = gpu_mem * usable
    g = math.ceil(need / (gpu_mem * usable) - 1e-9)
    replicas = max(1, w["count"] // g)
    if w["count"] < g:
        notes.append(f"{w['name']}: {w['count']} x {w['instance_type']} hold less than the estimated "
                     f"{need:,.1f} GiB; the plan sizes one full replica")
    best: tuple[float, int, str] | None = None
    for name in _neuron_candidates(w, neuron_types, target):
        mem = neuron_types[name]["accelerator_memory_gib"]
        n = math.ceil(need / (mem * usable) - 1e-9)
        if n > 1 and (w["kind"] != "training" or not neuron_types[name].get("efa_interfaces")):
            continue  # a replica spread over instances needs EFA, and this plan does so for training only
        key = (n * mem, n, name)
        if best is None or key < best:
            best = key
    plan = {"memory_need_gib": round(need, 1), "memory_formula": formula, "gpu_per_replica": g,
            "replicas": replicas, "gpu_accelerator_memory_gib": round(gpu_mem, 1), "notes": notes}
    if best is None:
        plan["neuron"] = None
        notes.append(f"{w['name']}: no Neuron instance type fits {need:,.1f} GiB under the target and the "
                     f"workload's neuron_instance_types")
    else:
        total_mem, n, name = best
        plan["neuron"] = {"instance_type": name, "per_replica": n, "instances": replicas * n,
                          "accelerator_memory_gib": neuron_types[name]["accelerator_memory_gib"]}
    return plan


def _price_note(row: dict[str, Any]) -> str:
    return f"{row['source']}, {row['date']} ({row['reliability']})"


def cost_section(fleet: dict[str, Any], a: dict[str, Any], prices: Prices | Callable[[set[str], str], Prices],
                 neuron_types: dict[str, dict], target: str, person_days: tuple[float, float]) -> dict[str, Any]:
    """The report's `cost` part. `prices` is a Prices or a function (types, region) -> Prices
    (the AWS query, made once the plan knows which types it needs).

    Raises:
        PriceUnknown: a price the plan needs is not known.
    """
    region = fleet.get("region", a["region"])
    option_default = fleet.get("purchase_option", a["purchase_option"])
    plans = [(w, plan_workload(w, a, neuron_types, target)) for w in fleet.get("workloads", [])]
    if callable(prices):
        needed = {w["instance_type"] for w, _ in plans} | {p["neuron"]["instance_type"] for _, p in plans if p["neuron"]}
        prices = prices(needed, region)
    workloads, notes = [], []
    totals = {"gpu_monthly": 0.0, "neuron_monthly": 0.0, "savings_monthly": 0.0, "inference_gpu_monthly": 0.0}
    for w, plan in plans:
        w_region = w.get("region", region)
        option = w.get("purchase_option", option_default)
        hours = w["hours_per_month"]
        gpu_row = prices.get(w["instance_type"], w_region, option)
        gpu_monthly = w["count"] * hours * gpu_row["usd_per_hour"]
        ratio = w.get("throughput_ratio", a["throughput_ratio"])
        ratio_source = w.get("throughput_ratio_source",
                             a["throughput_ratio_source"] if "throughput_ratio" not in w else "set for this workload in the fleet file")
        notes.extend(plan["notes"])
        entry = {"name": w["name"], "kind": w["kind"], "model": w.get("model"),
                 "parameters_billion": w.get("parameters_billion"), "memory_need_gib": plan["memory_need_gib"],
                 "memory_formula": plan["memory_formula"], "region": w_region, "purchase_option": option,
                 "gpu": {"instance_type": w["instance_type"], "count": w["count"], "hours": hours,
                         "usd_per_hour": gpu_row["usd_per_hour"], "monthly": round(gpu_monthly, 2),
                         "accelerator_memory_gib": plan["gpu_accelerator_memory_gib"],
                         "price_source": _price_note(gpu_row)},
                 "throughput_ratio": ratio, "throughput_ratio_source": ratio_source, "neuron": None,
                 "savings_monthly": None, "savings_percent": None, "break_even_ratio": None}
        totals["gpu_monthly"] += gpu_monthly
        if w["kind"] == "inference":
            totals["inference_gpu_monthly"] += gpu_monthly
        if plan["neuron"] is not None:
            n = plan["neuron"]
            row = prices.get(n["instance_type"], w_region, option)
            n_hours = hours / ratio
            monthly = n["instances"] * n_hours * row["usd_per_hour"]
            entry["neuron"] = {"instance_type": n["instance_type"], "instances": n["instances"],
                               "hours": round(n_hours, 2), "usd_per_hour": row["usd_per_hour"],
                               "monthly": round(monthly, 2), "accelerator_memory_gib": n["accelerator_memory_gib"],
                               "price_source": _price_note(row)}
            entry["savings_monthly"] = round(gpu_monthly - monthly, 2)
            entry["savings_percent"] = round(100 * (gpu_monthly - monthly) / gpu_monthly, 1) if gpu_monthly else None
            entry["break_even_ratio"] = (round(n["instances"] * hours * row["usd_per_hour"] / gpu_monthly, 3)
                                         if gpu_monthly else None)
            totals["neuron_monthly"] += monthly
            totals["savings_monthly"] += gpu_monthly - monthly
        else:
            # No plan for it: it stays on GPUs, so it costs the same on both sides.
            totals["neuron_monthly"] += gpu_monthly
        workloads.append(entry)
    totals = {k: round(v, 2) for k, v in totals.items()}
    day_rate = a["day_rate"]
    effort_cost = [round(person_days[0] * day_rate, 2), round(person_days[1] * day_rate, 2)]
    savings = totals["savings_monthly"]
    payback = [round(effort_cost[0] / savings, 2), round(effort_cost[1] / savings, 2)] if savings > 0 else None
    has_inference = any(w["kind"] == "inference" for w in fleet.get("workloads", []))
    below = has_inference and totals["inference_gpu_monthly"] < a["threshold"]
    if not workloads:
        verdict = "The fleet file lists no workloads: nothing to compare."
    elif payback is None:
        verdict = ("No savings at the stated throughput ratios: the Neuron plan costs as much or more. "
                   "See each workload's break-even ratio.")
    else:
        verdict = (f"Saves USD {savings:,.0f} per month ({100 * savings / totals['gpu_monthly']:.0f}%); the effort "
                   f"(USD {effort_cost[0]:,.0f}\u2013{effort_cost[1]:,.0f}) pays back in "
                   f"{payback[0]:.2f}\u2013{payback[1]:.2f} months.")
    if below:
        verdict += (f" Inference alone spends USD {totals['inference_gpu_monthly']:,.0f} per month, below the USD "
                    f"{a['threshold']:,.0f} threshold: moving the inference workloads likely costs more in "
                    f"engineering effort than it saves.")
    return {"currency": "USD", "period": "month", "region": region, "assumptions": _stated(a),
            "workloads": workloads, "totals": totals, "effort_cost": effort_cost, "payback_months": payback,
            "below_threshold": below, "verdict": verdict, "notes": notes,
            "gpu_data_source": f"{gpu_types()['source']} ({gpu_types()['confidence']})"}


def _stated(a: dict[str, Any]) -> dict[str, Any]:
    keys = ("usable_memory_fraction", "activation_allowance", "optimizer_bytes_per_parameter", "precision",
            "context_tokens", "batch", "throughput_ratio", "throughput_ratio_source", "day_rate", "hours_per_day",
            "threshold", "region", "purchase_option")
    return {k: a[k] for k in keys}
