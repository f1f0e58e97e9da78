"""`generate <kind>`: one validated spec, rendered into the files of one deployment kind.

Every kind renders in memory, parses what it rendered, runs our checks (the ones moto and the
linters cannot make, iac.md §6) and only then writes, all files or none.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from migrator.deploy.checks import check_launch_template_data, validate_aws_requests
from migrator.deploy.eks import check_eks, render_eks
from migrator.deploy.launch_template import (
    FORMATS, FSX_DNS_MARKER, FSX_MOUNT_MARKER, DeploymentSpec, GenerateResult, SpecError, _write_all, load_cfn_yaml,
    plan_launch_template,
)
from migrator.deploy.parallelcluster import render_parallelcluster
from migrator.deploy.render import _to_hcl, render_template

__all__ = ["KINDS", "generate", "generate_launch_template", "render_kind"]


def _partition(region: str) -> str:
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def _lt_json(plan: dict[str, Any]) -> dict[str, str]:
    if plan["fsx"] and plan["fsx"]["kind"] == "new":
        raise SpecError("--fsx-storage-gib", "a launch template alone cannot create a file system: use the "
                        "cloudformation or terraform kind, or create it first and pass --fsx-file-system-id "
                        "and --fsx-mount-name")
    # Every name this bundle creates ends in a digest of the deployment: a second deployment (another
    # type, capacity, option) gets its own role, group and template instead of "already exists",
    # while re-running the same file stays idempotent (ClientToken).
    digest = hashlib.sha256(json.dumps({k: v for k, v in plan.items() if k != "notes"}, sort_keys=True,
                                       default=str).encode()).hexdigest()
    suffix = digest[:8]
    names = {
        "run_suffix": suffix,
        "client_token": f"neuron-migrator-{digest[:32]}",
        "launch_template_name": f"{plan['name']}-{plan['instance']['type'].replace('.', '-')}-{suffix}",
        "role_name": f"{plan['role_name']}-{suffix}",
        "profile_name": f"{plan['profile_name']}-{suffix}",
        "security_group_name": f"{plan['security_group_name']}-{suffix}",
        "placement_group": f"{plan['placement_group']}-{suffix}" if plan["placement_group"] else None,
        "partition": _partition(plan["region"]),
    }
    _block_note(plan, "prerequisites.json `after` creates the group and its actions once you fill in "
                "${CapacityBlockStartTime} and ${CapacityBlockScaleInTime}")
    context = {**plan, **names}
    return {"launch-template.json": render_template("ec2/launch-template.json.j2", context),
            "prerequisites.json": render_template("ec2/prerequisites.json.j2", context)}


def _split_user_data(text: str) -> list[tuple[str, str]]:
    """The user data as ("text", chunk) and ("dns"/"mount", "") parts around the FSx stand-ins."""
    parts: list[tuple[str, str]] = []
    for piece in re.split(f"({re.escape(FSX_DNS_MARKER)}|{re.escape(FSX_MOUNT_MARKER)})", text):
        if piece == FSX_DNS_MARKER:
            parts.append(("dns", ""))
        elif piece == FSX_MOUNT_MARKER:
            parts.append(("mount", ""))
        elif piece:
            parts.append(("text", piece))
    return parts


def _cfn_context(plan: dict[str, Any]) -> dict[str, Any]:
    refs = {"dns": {"Fn::GetAtt": ["FileSystem", "DNSName"]}, "mount": {"Fn::GetAtt": ["FileSystem", "LustreMountName"]}}
    return {**plan, "user_data_cfn": [value if kind == "text" else refs[kind] for kind, value in _split_user_data(plan["user_data"])]}


def _lt_cfn(plan: dict[str, Any]) -> dict[str, str]:
    return {"launch-template.cfn.yaml": render_template("cloudformation/launch-template.yaml.j2", _cfn_context(plan))}


def _block_note(plan: dict[str, Any], how: str) -> None:
    if plan["capacity"] == "capacity-block":
        plan["notes"].append("capacity block: the Auto Scaling group starts at 0 (it could not stabilize before the block "
                             f"is active) and scheduled actions scale it out at the start and in before the end: {how}.")


def _stack(plan: dict[str, Any]) -> dict[str, str]:
    _block_note(plan, "give the stack parameters CapacityBlockStartTime and CapacityBlockScaleInTime (UTC, the "
                "scale-in at least 40 minutes before the block's EndDate)")
    return {"stack.cfn.yaml": render_template("cloudformation/launch-template.yaml.j2", {**_cfn_context(plan), "full_stack": True})}


def _terraform(plan: dict[str, Any]) -> dict[str, str]:
    _block_note(plan, "set the variables capacity_block_start and capacity_block_end (UTC, from aws ec2 "
                "describe-capacity-reservations); the scale-in runs 40 minutes before the end")
    refs = {"dns": "aws_fsx_lustre_file_system.shared.dns_name", "mount": "aws_fsx_lustre_file_system.shared.mount_name"}
    parts = [_to_hcl(value) if kind == "text" else refs[kind] for kind, value in _split_user_data(plan["user_data"])]
    # IAM name prefixes are limited to 38 characters; Terraform appends a unique suffix.
    context = {**plan, "user_data_tf": parts, "tf_role_prefix": f"{plan['role_name']}-"[:38],
               "tf_profile_prefix": f"{plan['profile_name']}-"[:38]}
    return {"main.tf": render_template("terraform/main.tf.j2", context)}


def _parallelcluster(plan: dict[str, Any]) -> dict[str, str]:
    return render_parallelcluster(plan)


def _user_data(plan: dict[str, Any]) -> dict[str, str]:
    if plan["fsx"] and plan["fsx"]["kind"] == "new":
        raise SpecError("--fsx-storage-gib", "the user data alone cannot name a file system that does not exist yet: "
                        "use the cloudformation or terraform kind, or pass --fsx-file-system-id and --fsx-mount-name")
    return {"user-data.sh": plan["user_data"]}


def _check_lt(data: dict[str, Any], plan: dict[str, Any]) -> None:
    problems = check_launch_template_data(data, plan["instance"], efa=plan["efa"])
    if plan["capacity"] == "capacity-block":
        if (data.get("InstanceMarketOptions") or {}).get("MarketType") != "capacity-block":
            problems.append("InstanceMarketOptions: a capacity block needs MarketType capacity-block")
    target = ((data.get("CapacityReservationSpecification") or {}).get("CapacityReservationTarget") or {})
    if plan["reservation_group"]:
        if not target.get("CapacityReservationResourceGroupArn") or "CapacityReservationId" in target:
            problems.append("CapacityReservationSpecification: an UltraServer capacity block is targeted through "
                            "its resource group (CapacityReservationResourceGroupArn) only")
    elif plan["reservation_id"] and target.get("CapacityReservationId") != plan["reservation_id"]:
        problems.append("CapacityReservationSpecification: the reservation id is missing")
    if plan["capacity"] != "on-demand" and data.get("Placement", {}).get("GroupName"):
        problems.append("Placement: no new placement group with reserved capacity (a block places its instances; "
                        "a reservation is used only in the group it was created in)")
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
        request = json.loads(files["launch-template.json"])
        _check_lt(request["LaunchTemplateData"], plan)
        bundle = json.loads(files["prerequisites.json"])
        steps = [*bundle["steps"], {"service": "ec2", "operation": "create_launch_template", "params": request},
                 *bundle.get("after", [])]
        problems = validate_aws_requests(steps)
        if problems:
            raise ValueError("generated requests fail botocore's parameter validation: " + "; ".join(problems))
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
        efa_nics = re.findall(r'^ +interface_type += "(efa|efa-only)"$', text, re.MULTILINE)
        if plan["efa"] and (len(efa_nics) != plan["instance"]["network_cards"] or efa_nics[:1] != ["efa"]):
            raise ValueError("terraform: one EFA interface per network card is required, `efa` on card 0")
        if len(re.findall(r"^ +associate_public_ip_address += false$", text, re.MULTILINE)) != len(plan["nics"]):
            raise ValueError("terraform: every network interface needs associate_public_ip_address = false")
        if not re.search(r'^ +http_tokens += "required"$', text, re.MULTILINE) or not re.search(r"^ +encrypted += true$", text, re.MULTILINE):
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
    "terraform": (_terraform, "the same stack as Terraform HCL (AMI through resolve:ssm, hashicorp/aws ~> 6.25)"),
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
    if kind == "eks" and spec.cluster_name is None:
        # New-user helper: the default silently tied the node pool to a cluster named after --name.
        plan["notes"].append(f"no --cluster-name: the files assume the EKS cluster is named '{plan['cluster_name']}' "
                             f"(--name): Karpenter finds subnets and security groups tagged karpenter.sh/discovery="
                             f"{plan['cluster_name']} and the access entry names that cluster; pass --cluster-name "
                             "for another")
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
