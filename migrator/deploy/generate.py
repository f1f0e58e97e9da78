"""`generate <kind>`: one validated spec, rendered into the files of one deployment kind.

Every kind renders in memory, parses what it rendered, runs our checks (the ones moto and the
linters cannot make, iac.md §6) and only then writes, all files or none.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from migrator.deploy.checks import check_launch_template_data
from migrator.deploy.eks import check_eks, render_eks
from migrator.deploy.launch_template import (
    FORMATS, DeploymentSpec, GenerateResult, SpecError, _write_all, load_cfn_yaml, plan_launch_template,
)
from migrator.deploy.parallelcluster import render_parallelcluster
from migrator.deploy.render import render_template

__all__ = ["KINDS", "generate", "generate_launch_template", "render_kind"]


def _lt_json(plan: dict[str, Any]) -> dict[str, str]:
    return {"launch-template.json": render_template("ec2/launch-template.json.j2", plan),
            "prerequisites.json": render_template("ec2/prerequisites.json.j2", plan)}


def _lt_cfn(plan: dict[str, Any]) -> dict[str, str]:
    return {"launch-template.cfn.yaml": render_template("cloudformation/launch-template.yaml.j2", plan)}


def _stack(plan: dict[str, Any]) -> dict[str, str]:
    return {"stack.cfn.yaml": render_template("cloudformation/launch-template.yaml.j2", {**plan, "full_stack": True})}


def _terraform(plan: dict[str, Any]) -> dict[str, str]:
    return {"main.tf": render_template("terraform/main.tf.j2", plan)}


def _parallelcluster(plan: dict[str, Any]) -> dict[str, str]:
    return render_parallelcluster(plan)


def _user_data(plan: dict[str, Any]) -> dict[str, str]:
    return {"user-data.sh": plan["user_data"]}


def _check_lt(data: dict[str, Any], plan: dict[str, Any]) -> None:
    problems = check_launch_template_data(data, plan["instance"], efa=plan["efa"])
    if plan["capacity"] == "capacity-block":
        if (data.get("InstanceMarketOptions") or {}).get("MarketType") != "capacity-block":
            problems.append("InstanceMarketOptions: a capacity block needs MarketType capacity-block")
    if plan["reservation_id"]:
        target = ((data.get("CapacityReservationSpecification") or {}).get("CapacityReservationTarget") or {})
        if target.get("CapacityReservationId") != plan["reservation_id"]:
            problems.append("CapacityReservationSpecification: the reservation id is missing")
    user_data = data.get("UserData")
    if isinstance(user_data, str):
        try:
            raw = base64.b64decode(user_data, validate=True)
        except ValueError:
            problems.append("UserData: not base64")
        else:
            if len(raw) > 16384:
                problems.append("UserData: over the 16 KB limit")
    if problems:
        raise ValueError("generated launch template failed checks: " + "; ".join(problems))


def _check(kind: str, files: dict[str, str], plan: dict[str, Any]) -> None:
    """Parse what was rendered and run our checks. Raises ValueError on a problem."""
    if kind == "launch-template-json":
        _check_lt(json.loads(files["launch-template.json"])["LaunchTemplateData"], plan)
        json.loads(files["prerequisites.json"])
    elif kind in ("launch-template-cloudformation", "cloudformation"):
        doc = load_cfn_yaml(next(iter(files.values())))
        _check_lt(doc["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"], plan)
        ingress, egress = doc["Resources"]["EfaSelfIngress"]["Properties"], doc["Resources"]["EfaSelfEgress"]["Properties"]
        if ingress.get("SourceSecurityGroupId") != {"Ref": "EfaSecurityGroup"} or egress.get("DestinationSecurityGroupId") != {"Ref": "EfaSecurityGroup"}:
            raise ValueError("EFA security group: self-referencing ingress and egress are required")
        if plan["placement_group"] and doc["Resources"]["PlacementGroup"]["Properties"].get("Strategy") != "cluster":
            raise ValueError("PlacementGroup: strategy must be cluster")
    elif kind == "terraform":
        text = files["main.tf"]
        if plan["efa"] and text.count('interface_type        = "efa"') != plan["instance"]["network_cards"]:
            raise ValueError("terraform: one EFA interface per network card is required")
        if 'http_tokens                 = "required"' not in text or "encrypted             = true" not in text:
            raise ValueError("terraform: IMDSv2 and an encrypted root volume are required")
    elif kind == "parallelcluster":
        doc = yaml.safe_load(files["cluster.yaml"])
        queue = doc["Scheduling"]["SlurmQueues"][0]
        resource = queue["ComputeResources"][0]
        if plan["capacity"] == "capacity-block" and resource["MinCount"] != resource["MaxCount"]:
            raise ValueError("parallelcluster: a capacity block needs MinCount == MaxCount")
        if resource["Efa"]["Enabled"] and not plan["instance"]["efa_interfaces"]:
            raise ValueError("parallelcluster: EFA enabled on a type without EFA")
        if "0.0.0.0/0" in str(doc["HeadNode"]["Ssh"].get("AllowedIps", "0.0.0.0/0")):
            raise ValueError("parallelcluster: SSH must not be open to the internet")
        if plan["capacity"] == "capacity-block" and queue["Networking"].get("PlacementGroup", {}).get("Enabled"):
            raise ValueError("parallelcluster: no placement group with a capacity block")
    elif kind == "eks":
        check_eks(files, plan)
    elif kind == "user-data":
        if len(files["user-data.sh"].encode()) > 16384:
            raise ValueError("user data is over EC2's 16 KB limit")


Renderer = Callable[[dict[str, Any]], dict[str, str]]
KINDS: dict[str, tuple[Renderer, str]] = {
    "launch-template-json": (_lt_json, "EC2 launch template as boto3 / aws-cli JSON, plus the prerequisite calls"),
    "launch-template-cloudformation": (_lt_cfn, "EC2 launch template with its placement group, EFA security group and IAM"),
    "cloudformation": (_stack, "full CloudFormation stack: the above plus an Auto Scaling group of --nodes"),
    "terraform": (_terraform, "the same stack as Terraform HCL (AMI through aws_ssm_parameter)"),
    "parallelcluster": (_parallelcluster, "ParallelCluster 3.16 config with a Slurm queue for the type"),
    "eks": (render_eks, ("EKS: Karpenter node class and pool with their prerequisites stack, pinned Neuron / EFA / "
                         "FSx add-ons, an example distributed workload")),
    "user-data": (_user_data, "the instance user data script (configuration on a DLAMI, full install on a plain AMI)"),
}


def render_kind(kind: str, spec: DeploymentSpec) -> tuple[dict[str, str], list[str]]:
    """Render `kind` for `spec` in memory: ({file name: text}, notes). Raises SpecError/ValueError."""
    if kind not in KINDS:
        raise SpecError("KIND", f"'{kind}' is not one of {', '.join(KINDS)}")
    plan = plan_launch_template(spec)
    files = KINDS[kind][0](plan)
    _check(kind, files, plan)
    return files, plan["notes"]


def generate(kind: str, spec: DeploymentSpec, output: Path) -> GenerateResult:
    """Render, check and write one kind into `output`; nothing is written on error.

    Raises:
        SpecError: an impossible or malformed spec (names the field).
        ValueError: a rendered file failed our checks.
    """
    files, notes = render_kind(kind, spec)
    replaced = [Path(output) / name for name in files if (Path(output) / name).exists()]
    return GenerateResult(_write_all(output, files), notes, replaced)


def generate_launch_template(spec: DeploymentSpec, output: Path, fmt: str = "json") -> GenerateResult:
    """Render, check and write a launch template (`json` or `cloudformation`) into `output`.

    Raises:
        SpecError: an impossible spec (nothing is written).
        ValueError: a rendered file failed our checks (nothing is written).
    """
    if fmt not in FORMATS:
        raise SpecError("--format", f"'{fmt}' is not one of {', '.join(FORMATS)}")
    return generate(f"launch-template-{fmt}", spec, output)
