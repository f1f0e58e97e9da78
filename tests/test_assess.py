"""`assess`: each formula with numbers worked by hand, price provenance, unknown prices and
models, empty trees and bad fleet files (exit 2, the field named, nothing written)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import boto3
import jsonschema
import pytest
import yaml
from botocore.stub import ANY, Stubber

from migrator import api
from migrator.assess.cost import (FleetError, PriceUnknown, load_assumptions, load_fleet, load_prices, memory_need,
                                  plan_workload)
from migrator.assess.models import model_type_of
from migrator.core.catalogue import load_catalogue
from migrator.deploy.launch_template import load_instances

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "migrator" / "schemas" / "assess.v1.schema.json").read_text())
NEURON = load_instances()
A = load_assumptions()


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={"NRN_CACHE_DIR": str((cwd or ROOT) / ".nrn-cache"), "PATH": "/usr/bin:/bin"})


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _fleet(tmp_path: Path, workloads: list[dict], **top) -> Path:
    return _write(tmp_path / "fleet.yaml", yaml.safe_dump({"version": 1, **top, "workloads": workloads}))


def _prices(tmp_path: Path, rows: list[dict]) -> Path:
    return _write(tmp_path / "prices.yaml", yaml.safe_dump({"version": 1, "prices": rows}))


def _row(t: str, usd: float, **kw) -> dict:
    return {"instance_type": t, "region": "us-east-1", "purchase_option": "on-demand", "usd_per_hour": usd,
            "source": "https://example.com/price-page", "date": "2026-06", "reliability": "secondary", **kw}


TRAIN = {"name": "ft", "kind": "training", "instance_type": "p4d.24xlarge", "count": 4, "hours_per_month": 720,
         "parameters_billion": 8, "neuron_instance_types": ["trn1.32xlarge"]}


# -- formulas, worked by hand ------------------------------------------------------------------

def test_training_memory_is_16_bytes_per_parameter_plus_the_activation_allowance():
    # 8e9 x (2 + 2 + 12) B x 1.3 = 166.4e9 B = 154.97 GiB
    gib, formula, _ = memory_need(TRAIN, A)
    assert gib == pytest.approx(166.4e9 / 2**30)
    assert "12 B optimizer" in formula and "0.3 activation" in formula


def test_inference_memory_is_weights_plus_the_kv_cache():
    w = {"name": "s", "kind": "inference", "instance_type": "g5.xlarge", "count": 1, "hours_per_month": 100,
         "parameters_billion": 8, "layers": 32, "kv_heads": 8, "head_dim": 128, "context_tokens": 8192, "batch": 16}
    # weights 8e9 x 2 B = 16e9 B; KV 2 x 32 x 8 x 128 x 8192 x 16 x 2 B = 17,179,869,184 B = 16 GiB
    gib, _, notes = memory_need(w, A)
    assert gib == pytest.approx((16e9 + 17_179_869_184) / 2**30)
    assert not notes
    w_no_kv = {k: v for k, v in w.items() if k not in ("layers", "kv_heads", "head_dim")}
    gib, formula, notes = memory_need(w_no_kv, A)
    assert gib == pytest.approx(16e9 / 2**30) and "KV cache not counted" in formula and notes


def test_the_plan_takes_the_least_accelerator_memory_that_fits_and_spans_instances_only_over_efa():
    # 154.97 GiB: trn1.2xlarge (32 GiB, no EFA) cannot span; trn2.3xlarge (96 GiB x 0.9, one EFA
    # interface) needs 2 = 192 GiB, less than one trn1.32xlarge (512 GiB).
    w = {k: v for k, v in TRAIN.items() if k != "neuron_instance_types"}
    plan = plan_workload(w, A, NEURON, "portable")
    assert plan["neuron"] == {"instance_type": "trn2.3xlarge", "per_replica": 2, "instances": 8,
                              "accelerator_memory_gib": 96}
    assert plan["gpu_per_replica"] == 1 and plan["replicas"] == 4  # 320 GiB x 0.9 >= 155 GiB
    inference = {**w, "kind": "inference", "parameters_billion": 70}  # 140e9 B = 130.4 GiB, one instance only
    assert plan_workload(inference, A, NEURON, "portable")["neuron"]["instance_type"] == "inf2.24xlarge"
    assert plan_workload(inference, A, NEURON, "neuron")["neuron"]["instance_type"] == "trn2.48xlarge"


def test_a_workload_without_a_parameter_count_is_sized_to_one_gpu_instance():
    w = {k: v for k, v in TRAIN.items() if k != "parameters_billion"}
    plan = plan_workload(w, A, NEURON, "portable")
    assert plan["memory_need_gib"] == pytest.approx(320 * 0.9, abs=0.1)
    assert plan["replicas"] == 4 and "no parameter count" in plan["memory_formula"]


def test_cost_savings_break_even_and_payback_worked_by_hand(tmp_path):
    tree = _write(tmp_path / "src" / "train.py", "import torch\nx = torch.zeros(1).cuda()\n").parent
    fleet = _fleet(tmp_path, [TRAIN], assumptions={"day_rate": 1000})
    prices = _prices(tmp_path, [_row("p4d.24xlarge", 32.77), _row("trn1.32xlarge", 21.50)])
    out = api.assess([str(tree)], api.ScanOptions(), fleet_file=fleet, prices=prices)
    jsonschema.validate(out, SCHEMA)
    w = out["cost"]["workloads"][0]
    assert w["gpu"]["monthly"] == pytest.approx(4 * 720 * 32.77)        # 94,377.60
    assert w["neuron"]["monthly"] == pytest.approx(4 * 720 * 21.50)     # 61,920.00
    assert w["savings_monthly"] == pytest.approx(32_457.60)
    assert w["break_even_ratio"] == pytest.approx(61_920 / 94_377.6, abs=1e-3)  # 0.656
    days = out["effort"]["person_days"]
    assert out["cost"]["effort_cost"] == pytest.approx([days[0] * 1000, days[1] * 1000])
    assert out["cost"]["payback_months"] == pytest.approx([days[0] * 1000 / 32_457.6, days[1] * 1000 / 32_457.6],
                                                          abs=0.01)
    assert not out["cost"]["below_threshold"]  # no inference workload
    assert "pays back in" in out["cost"]["verdict"]


def test_training_savings_are_not_hidden_by_a_small_inference_spend(tmp_path):
    tree = _write(tmp_path / "src" / "a.py", "import torch\n").parent
    small = {"name": "s", "kind": "inference", "instance_type": "p4d.24xlarge", "count": 1, "hours_per_month": 100,
             "parameters_billion": 1, "neuron_instance_types": ["trn1.32xlarge"]}
    prices = _prices(tmp_path, [_row("p4d.24xlarge", 32.77), _row("trn1.32xlarge", 21.50)])
    cost = api.assess([str(tree)], fleet_file=_fleet(tmp_path, [TRAIN, small]), prices=prices)["cost"]
    assert cost["below_threshold"]  # 3,277 USD of inference a month
    assert cost["verdict"].startswith("Saves USD") and "Inference alone spends USD 3,277" in cost["verdict"]


def test_throughput_ratio_scales_neuron_hours_and_inference_below_the_threshold_says_so(tmp_path):
    tree = _write(tmp_path / "src" / "serve.py", "import torch\n").parent
    serve = {"name": "s", "kind": "inference", "instance_type": "p4d.24xlarge", "count": 1, "hours_per_month": 200,
             "parameters_billion": 8, "throughput_ratio": 0.5, "neuron_instance_types": ["trn1.32xlarge"]}
    fleet = _fleet(tmp_path, [serve])
    prices = _prices(tmp_path, [_row("p4d.24xlarge", 32.77), _row("trn1.32xlarge", 21.50)])
    cost = api.assess([str(tree)], fleet_file=fleet, prices=prices)["cost"]
    w = cost["workloads"][0]
    assert w["neuron"]["hours"] == 400  # half the throughput: twice the hours
    assert w["neuron"]["monthly"] == pytest.approx(400 * 21.50)
    assert w["gpu"]["monthly"] == pytest.approx(200 * 32.77)  # 6,554 < 10,000
    assert cost["below_threshold"] and "likely costs more in engineering effort than it saves" in cost["verdict"]


# -- prices: provenance, unknown, AWS -------------------------------------------------------------

@pytest.mark.parametrize("change, field", [
    ({"source": None}, "prices[0]"),
    ({"reliability": "unsourced"}, "prices[0].reliability"),
    ({"date": "June 2026"}, "prices[0].date"),
    ({"date": "2999-01"}, "prices[0].date"),
    ({"usd_per_hour": 0}, "prices[0].usd_per_hour"),
])
def test_a_price_row_without_provenance_is_refused_naming_the_field(tmp_path, change, field):
    row = {k: v for k, v in {**_row("p4d.24xlarge", 32.77), **change}.items() if v is not None}
    with pytest.raises(FleetError, match=re.escape(f"field '{field}'")):
        load_prices(_prices(tmp_path, [row]))


def test_a_price_given_twice_is_refused(tmp_path):
    with pytest.raises(FleetError, match=r"prices\[1\].*second price"):
        load_prices(_prices(tmp_path, [_row("p4d.24xlarge", 32.77), _row("p4d.24xlarge", 30.0)]))


def test_the_shipped_example_prices_all_carry_a_named_source():
    prices = load_prices(ROOT / "samples" / "prices.yaml")
    assert prices.rows and all(r["source"] and r["reliability"] in ("primary", "secondary") for r in prices.rows.values())


def test_an_unknown_price_stops_the_cost_part_with_a_message_and_keeps_the_rest(tmp_path):
    tree = _write(tmp_path / "src" / "a.py", "import torch\nx = torch.zeros(1).cuda()\n").parent
    fleet = _fleet(tmp_path, [{**TRAIN, "neuron_instance_types": ["trn2.48xlarge"]}])
    prices = _prices(tmp_path, [_row("p4d.24xlarge", 32.77)])
    out = api.assess([str(tree)], fleet_file=fleet, prices=prices)
    assert out["cost"] is None
    assert "no on-demand price for trn2.48xlarge in us-east-1" in out["cost_error"]
    assert out["readiness"]["findings"] == 1
    with pytest.raises(PriceUnknown):
        load_prices(prices).get("trn2.48xlarge", "us-east-1", "on-demand")


def test_prices_from_the_aws_price_list_api(tmp_path):
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)

    def product(usd: str) -> str:
        return json.dumps({"terms": {"OnDemand": {"T": {"priceDimensions": {"D": {"pricePerUnit": {"USD": usd}}}}}}})

    # sorted order of the types the plan needs: p4d.24xlarge, trn1.32xlarge
    for usd, t in (("32.7700000000", "p4d.24xlarge"), ("21.5000000000", "trn1.32xlarge")):
        filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in (
            ("instanceType", t), ("regionCode", "us-east-1"), ("operatingSystem", "Linux"), ("tenancy", "Shared"),
            ("preInstalledSw", "NA"), ("capacitystatus", "Used"))]
        stub.add_response("get_products", {"PriceList": [product(usd)], "FormatVersion": "aws_v1"},
                          {"ServiceCode": "AmazonEC2", "Filters": filters, "MaxResults": 10})
    tree = _write(tmp_path / "src" / "a.py", "import torch\n").parent
    with stub:
        cost = api.assess([str(tree)], fleet_file=_fleet(tmp_path, [TRAIN]), prices="aws", pricing_client=client)["cost"]
    stub.assert_no_pending_responses()
    w = cost["workloads"][0]
    assert w["gpu"]["usd_per_hour"] == 32.77 and w["neuron"]["usd_per_hour"] == 21.5
    assert "AWS Price List API" in w["neuron"]["price_source"] and "(primary)" in w["neuron"]["price_source"]


def test_a_failing_price_list_call_is_a_clear_error(tmp_path):
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    stub.add_client_error("get_products", "AccessDeniedException", "not allowed")
    tree = _write(tmp_path / "src" / "a.py", "import torch\n").parent
    with stub, pytest.raises(FleetError, match="Price List API call failed.*AccessDenied"):
        api.assess([str(tree)], fleet_file=_fleet(tmp_path, [TRAIN]), prices="aws", pricing_client=client)


# -- bad fleet files: exit 2, the field named, nothing written ------------------------------------

@pytest.mark.parametrize("text, field", [
    ("workloads:\n  - {name: a, kind: training, instance_type: p9.huge, count: 1, hours_per_month: 10}\n",
     "workloads[0].instance_type"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 0, hours_per_month: 10}\n",
     "workloads[0].count"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 800}\n",
     "workloads[0].hours_per_month"),
    ("workloads:\n  - {name: a, kind: serving, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10}\n",
     "workloads[0].kind"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10, gpus: 3}\n",
     "workloads[0]"),
    ("workloads:\n  - {name: a, kind: inference, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10, layers: 3}\n",
     "workloads[0].head_dim"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10,"
     " neuron_instance_types: [trn9.huge]}\n", "workloads[0].neuron_instance_types[0]"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10}\n"
     "  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10}\n", "workloads[1].name"),
    ("assumptions: {usable_memory_fraction: 1.5}\n", "assumptions.usable_memory_fraction"),
    ("region: us-east-1\nregion: us-west-2\n", "region"),
    ("workloads: [\n", "not valid YAML"),
])
def test_a_bad_fleet_file_exits_2_naming_the_field_and_writes_nothing(tmp_path, text, field):
    tree = _write(tmp_path / "src" / "a.py", "import torch\n").parent
    fleet = _write(tmp_path / "fleet.yaml", text)
    out = tmp_path / "report.html"
    r = _cli("assess", str(tree), "--fleet", str(fleet), "--prices", str(ROOT / "samples" / "prices.yaml"),
             "--format", "html", "--output", str(out), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert field in r.stderr and str(fleet) in r.stderr
    assert not out.exists()


def test_bad_flags_exit_2(tmp_path):
    assert _cli("assess", ".", "--format", "pdf", cwd=tmp_path).returncode == 2
    assert _cli("assess", ".", "--family", "p5", cwd=tmp_path).returncode == 2
    r = _cli("assess", ".", "--prices", "aws", cwd=tmp_path)
    assert r.returncode == 2 and "--fleet" in r.stderr
    assert _cli("assess", "no-such-dir", cwd=tmp_path).returncode == 2


# -- readiness, effort, models -------------------------------------------------------------------

def test_every_built_in_rule_states_its_effort_and_kernels_are_blockers():
    catalogue = load_catalogue()
    for rule in catalogue.rules:
        assert "effort" in rule.raw, f"{rule.id} has no effort bucket"
    assert all(catalogue.by_id(r).blocker for r in ("NRN601", "NRN602", "NRN603", "NRN605"))


def test_readiness_counts_what_fix_rewrites_and_what_is_left(tmp_path):
    tree = tmp_path / "src"
    _write(tree / "train.py", """\
        import torch
        model = torch.nn.Linear(4, 4).cuda()
        x = torch.randn(2, 4).cuda()
        n = torch.cuda.get_device_properties(0)
        """)
    _write(tree / "ext" / "setup.py", """\
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension("k", ["k.cu"])
        """)
    out = api.assess([str(tree)])
    r = out["readiness"]
    fixed = sum(len(f.outcome.applied) for f in api.fix_paths([str(tree)], partial=True))
    assert r["auto_fixed"] == fixed >= 2  # the two .cuda() calls, as `fix --partial` rewrites them
    assert r["manual"] == r["findings"] - r["auto_fixed"] - r["unsafe_fixed"] >= 2
    assert r["blockers"] >= 1 and any(b["rule_id"] == "NRN601" for b in r["blocker_list"])
    e = out["effort"]
    assert e["counts"]["none"] == r["auto_fixed"] + (r["unsafe_fixed"] if r["unsafe_fixes"] else 0)
    assert e["counts"]["high"] >= 1
    assert e["dominant_files"][0]["path"].endswith("ext/setup.py")  # the CUDA extension is the port
    lo, hi = e["hours"]
    assert e["person_days"] == pytest.approx([lo / 8, hi / 8], abs=0.01)


def test_an_empty_tree_gives_an_empty_readiness_and_exit_0(tmp_path):
    (tmp_path / "empty").mkdir()
    r = _cli("assess", str(tmp_path / "empty"), "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    jsonschema.validate(out, SCHEMA)
    assert out["readiness"]["files"] == 0 and out["readiness"]["findings"] == 0
    assert out["effort"]["hours"] == [0, 0] and out["models"]["found"] == []
    assert any("no files" in n for n in out["notes"])


def test_models_found_in_code_configs_and_torchtitan_files(tmp_path):
    tree = tmp_path / "repo"
    _write(tree / "serve.py", """\
        from transformers import AutoModelForCausalLM, MllamaForConditionalGeneration
        m = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
        t = AutoTokenizer.from_pretrained(pretrained_model_name_or_path="acme/in-house-model-v7")
        local = AutoModelForCausalLM.from_pretrained("./checkpoints/run1")
        """)
    _write(tree / "models" / "__init__.py", "from .transformers import FluxTransformer2DModel\n")  # a local package
    _write(tree / "ckpt" / "config.json", json.dumps({"model_type": "falcon", "hidden_size": 4}))
    _write(tree / "train_configs" / "llama3_8b.toml", '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nsteps = 10\n')
    _write(tree / "broken" / "config.json", "{not json")
    out = api.assess([str(tree)], families=("trn2", "inf2"))
    found = {m["name"]: m for m in out["models"]["found"]}
    assert "./checkpoints/run1" not in found  # a local path is not a model name
    assert "FluxTransformer2DModel" not in found  # imported from the tree's own `transformers` module
    llama = found["meta-llama/Llama-3.1-8B-Instruct"]
    assert llama["model_type"] == "llama" and llama["where"][0]["line"] == 2
    assert llama["support"]["trn2"], "a Neuron library lists llama on Trn2"
    assert found["MllamaForConditionalGeneration"]["model_type"] == "mllama"
    unknown = found["acme/in-house-model-v7"]
    assert unknown["model_type"] is None and unknown["support"] is None  # unknown, not "unsupported"
    falcon = found["falcon"]
    assert falcon["model_type"] == "falcon" and falcon["support"] == {"trn2": [], "inf2": []}  # not listed
    assert found["llama3"]["model_type"] == "llama" and found["llama3"]["how"] == "torchtitan"
    assert any("broken/config.json" in n for n in out["notes"])
    assert {p["use"] for p in out["migration_paths"]} >= {"training", "hf"}


@pytest.mark.parametrize("name, how, expected", [
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "from_pretrained", "mllama"),
    ("Qwen/Qwen3-30B-A3B", "from_pretrained", "qwen3_moe"),
    ("Qwen/Qwen3-8B", "from_pretrained", "qwen3"),
    ("distilbert-base-uncased", "from_pretrained", "distilbert"),
    ("roberta-base", "from_pretrained", "roberta"),
    ("Qwen3MoeForCausalLM", "class", "qwen3_moe"),
    ("acme/thing", "from_pretrained", None),
])
def test_model_names_map_to_model_types(name, how, expected):
    assert model_type_of(name, how) == expected


def test_hostile_files_are_noted_not_fatal(tmp_path):
    tree = tmp_path / "repo"
    _write(tree / "deep.py", "x = " + "(" * 300 + ")" * 300 + "\n")
    _write(tree / "config.json", "[" * 100000)
    (tree / "big").mkdir()
    (tree / "big" / "config.json").write_bytes(b" " * (2 * 1024 * 1024))
    _write(tree / "ok.py", 'from transformers import LlamaForCausalLM\n')
    out = api.assess([str(tree)])
    assert [m["model_type"] for m in out["models"]["found"]] == ["llama"]
    assert len(out["notes"]) >= 3  # the deep file, the unparsable and the oversized config.json


def test_the_json_report_is_valid_against_its_schema_on_the_samples():
    out = api.assess([str(ROOT / "samples")], fleet_file=ROOT / "samples" / "fleet.yaml",
                     prices=ROOT / "samples" / "prices.yaml")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(out, SCHEMA)
    assert out["cost"] is not None, out["cost_error"]
    assert out["readiness"]["findings"] > 0 and out["migration_paths"] and out["models"]["found"]


def test_a_cuda_only_library_used_in_many_files_is_one_port(tmp_path):
    tree = tmp_path / "src"
    for name in ("a.py", "b.py", "c.py"):
        _write(tree / name, "import deepspeed.utils\n")
    _write(tree / "d.py", "import flash_attn\n")
    e = api.assess([str(tree)])["effort"]
    # deepspeed: one high port, two low; flash_attn: its own high port
    assert e["counts"]["high"] == 2 and e["counts"]["low"] == 2


def test_a_cuda_only_library_imported_with_a_fallback_is_not_a_blocker(tmp_path):
    tree = tmp_path / "src"
    _write(tree / "norm.py", """\
        try:
            from apex.normalization import fused_layer_norm
        except ImportError:
            fused_layer_norm = None
        """)
    _write(tree / "opt.py", """\
        from accelerate.utils import is_deepspeed_available
        if is_deepspeed_available():
            import deepspeed
        """)
    _write(tree / "hard.py", "import flash_attn\n")
    r = api.assess([str(tree)])
    assert [b["path"].rsplit("/", 1)[-1] for b in r["readiness"]["blocker_list"]] == ["hard.py"]
    assert r["effort"]["counts"]["high"] == 1 and r["effort"]["counts"]["low"] >= 2


def test_paths_are_relative_to_the_folder_given_and_each_use_gets_its_path(tmp_path):
    tree = tmp_path / "repo"
    _write(tree / "pkg" / "train.py", """\
        import torch
        model = torch.nn.Linear(2, 2).cuda()
        loss = model(torch.zeros(1, 2)).sum()
        loss.backward()
        with torch.no_grad():
            model(torch.zeros(1, 2))
        """)
    out = api.assess([str(tree)], api.ScanOptions(target="neuron"))
    assert out["relative_to"] == tree.as_posix()
    assert [f["path"] for f in out["readiness"]["files_detail"]] == ["pkg/train.py"]
    assert {(p["family"], p["use"]) for p in out["migration_paths"]} >= {
        ("trn2", "training"), ("trn2", "inference"), ("trn3", "training"), ("trn3", "inference")}
    assert all(p["family"] in ("trn2", "trn3") for p in out["migration_paths"])


def test_a_throughput_ratio_set_in_the_fleet_is_not_called_an_assumption(tmp_path):
    tree = _write(tmp_path / "src" / "a.py", "import torch\n").parent
    prices = _prices(tmp_path, [_row("p4d.24xlarge", 32.77), _row("trn1.32xlarge", 21.50)])
    fleet = _fleet(tmp_path, [TRAIN], assumptions={"throughput_ratio": 0.8})
    w = api.assess([str(tree)], fleet_file=fleet, prices=prices)["cost"]["workloads"][0]
    assert w["throughput_ratio"] == 0.8 and w["throughput_ratio_source"].startswith("given in the fleet file")


@pytest.mark.parametrize("text, expected", [
    ("version: 1\nworkloads:\n  - &a [x, x, x]\n  - &b [*a, *a, *a]\n", "aliases"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: .nan}\n",
     "workloads[0].hours_per_month"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10,"
     " parameters_billion: .nan}\n", "workloads[0].parameters_billion"),
    ("workloads:\n  - {name: a, kind: training, instance_type: p4d.24xlarge, count: 1" + "0" * 5000
     + ", hours_per_month: 10}\n", "not valid YAML"),
    ('workloads:\n  - {name: "a\\n", kind: training, instance_type: p4d.24xlarge, count: 1, hours_per_month: 10}\n',
     "workloads[0].name"),
    ("assumptions: {effort: {low: {hours: [5, 1]}}}\n", "assumptions.effort.low.hours"),
])
def test_fleet_files_that_are_not_plain_data_are_refused(tmp_path, text, expected):
    with pytest.raises(FleetError, match=re.escape(expected)):
        load_fleet(_write(tmp_path / "fleet.yaml", text), NEURON)


def test_an_impossible_price_date_is_refused(tmp_path):
    with pytest.raises(FleetError, match=r"prices\[0\]\.date"):
        load_prices(_prices(tmp_path, [_row("p4d.24xlarge", 32.77, date="2026-02-31")]))


def test_a_python_file_with_a_bogus_coding_cookie_is_a_note_not_the_end(tmp_path):
    tree = tmp_path / "src"
    _write(tree / "a.py", "# -*- coding: bogus -*-\nimport torch\n")
    (tree / "b.py").write_bytes(b"\xff\xfe\x00import torch\n")
    _write(tree / "c.py", "from transformers import LlamaForCausalLM\n")
    r = _cli("assess", str(tree), "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [m["model_type"] for m in out["models"]["found"]] == ["llama"]
    assert any("a.py" in n for n in out["notes"])
