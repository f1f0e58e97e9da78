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
from migrator.deploy.launch_template import (
    FORMATS, FSX_DNS_MARKER, FSX_MOUNT_MARKER, DeploymentSpec, GenerateResult, SpecError, _write_all, load_cfn_yaml,
    plan_launch_template,
)
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
    # Both are the user's own resources (nothing to default to): name every missing one at once.
    missing = []
    if not plan["subnet_id"]:
        missing.append(("--subnet-id", "a ParallelCluster config needs the subnet of its head node and queue"))
    if plan["image"]["kind"] != "id" and not plan["s3"]:
        missing.append(("--s3-prefix", "without --ami-id (a Neuron-ready image) the cluster installs Neuron with an "
                        "OnNodeConfigured script, which ParallelCluster reads from S3: give --s3-prefix"))
    if missing:
        raise SpecError(" and ".join(f for f, _ in missing), "; ".join(m for _, m in missing))
    files = {}
    context = {**plan, "queue_name": re.sub(r"[^a-z0-9-]", "-", plan["name"].lower())[:30] or "neuron"}
    if plan["image"]["kind"] != "id":
        prefix = f"{plan['s3']['prefix']}/" if plan["s3"]["prefix"] else ""
        context["setup_script_url"] = f"s3://{plan['s3']['bucket']}/{prefix}neuron-setup.sh"
        files["neuron-setup.sh"] = render_template("ec2/user-data.sh.j2", {
            "efa": plan["efa"], "target": plan["instance"]["target"], "family": plan["instance"]["family"],
            "plain_ami": True, "name": plan["name"]})
    files["cluster.yaml"] = render_template("parallelcluster/cluster.yaml.j2", context)
    return files


# Neuron Deep Learning Containers named in our sources (neuron-facts.md §5.2), by target and workload.
_DLC = {
    ("xla", "training"): "public.ecr.aws/neuron/pytorch-training-neuronx:2.9.0-neuronx-py312-sdk2.30.0-ubuntu24.04",
    ("xla", "inference"): "public.ecr.aws/neuron/pytorch-inference-neuronx:2.9.0-neuronx-py312-sdk2.31.1-ubuntu24.04",
    ("neuron", "inference"): "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.29.0.1.2.0-neuronx-py314-sdk2.33.0-ubuntu26.04",
}
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _eks(plan: dict[str, Any]) -> dict[str, str]:
    from migrator.deploy.launch_template import load_instances

    inst = plan["instance"]
    if plan["instance"]["target"] == "inf1":
        raise SpecError("--target", "EKS outputs cover the neuron and xla targets")
    image = plan["container_image"] or _DLC.get((inst["target"], plan["workload"]))
    if image is None:
        # The node pool, device plugins and install script do not depend on the image: write
        # them, and say why the example workload is missing rather than guess an image.
        plan["notes"].append(f"no workload.yaml: the {inst['target']} {plan['workload']} container's image is not "
                             "published in our sources; add --image IMAGE for an example workload")
    name = plan["name"].lower()
    if not _DNS1123.fullmatch(name):
        raise SpecError("--name", f"'{plan['name']}' is not a Kubernetes name (lower-case letters, digits, '-')")
    chips = inst["chips"]
    if plan["workload"] == "training":
        resources = [("aws.amazon.com/neuron", chips)]
        if plan["efa"]:
            resources.append(("vpc.amazonaws.com/efa", inst["efa_interfaces"]))
        partial = False
    else:
        cores = inst.get("logical_neuron_cores", inst["neuron_cores"]) // max(chips, 1) or 1
        resources = [("aws.amazon.com/neuroncore", cores)]
        partial = True
    types = sorted({*(t for t, i in load_instances().items() if i["family"] != "inf1"), inst["type"]})
    # Leave room for the kubelet and daemons; a declared type without host figures gets modest limits.
    cpu_limit = str(max(inst["vcpus"] - 4, 1)) if inst["vcpus"] else "8"
    memory_limit = f"{int(inst['memory_gib'] * 0.9)}Gi" if inst["memory_gib"] else "32Gi"
    context = {**plan, "name": name, "image": image, "resources": resources, "partial": partial, "neuron_types": types,
               "cpu_limit": cpu_limit, "memory_limit": memory_limit}
    files = {
        "karpenter.yaml": render_template("eks/karpenter.yaml.j2", context),
        "device-plugin-affinity.yaml": render_template("eks/device-plugin-affinity.yaml.j2", context),
        "install-neuron-plugins.sh": render_template("eks/install-neuron-plugins.sh.j2", context),
    }
    if image is not None:
        files["workload.yaml"] = render_template("eks/workload.yaml.j2", context)
    return files


def _check_eks(files: dict[str, str], plan: dict[str, Any]) -> None:
    docs = [d for name in ("karpenter.yaml", "workload.yaml") if name in files for d in yaml.safe_load_all(files[name]) if d]
    for doc in docs:
        if not _DNS1123.fullmatch(doc["metadata"]["name"]):
            raise ValueError(f"{doc['kind']}: '{doc['metadata']['name']}' is not a valid Kubernetes name")
    workload = docs[-1] if "workload.yaml" in files else None  # after the Namespace
    limits = workload["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] if workload else {}
    devices = int(limits.get("aws.amazon.com/neuron", 0))
    # Trn1 allocations must be 1, 4, 8 or 16 devices (2D torus; Neuron scheduler docs).
    if plan["instance"]["family"] in ("trn1", "trn1n") and devices and devices not in (1, 4, 8, 16):
        raise ValueError(f"workload: {devices} Neuron devices cannot be allocated on trn1 (1, 4, 8 or 16)")
    if devices > plan["instance"]["chips"]:
        raise ValueError(f"workload: {devices} Neuron devices requested, {plan['instance']['chips']} per node")
    affinity = yaml.safe_load(files["device-plugin-affinity.yaml"])
    values = affinity["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
    if plan["instance"]["type"] not in values or not {"trn2.48xlarge", "trn2u.48xlarge"} <= set(values):
        raise ValueError("device plugin affinity must list the generated type and trn2/trn2u")


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
    if plan["capacity"] == "capacity-block" and data.get("Placement", {}).get("GroupName"):
        problems.append("Placement: no placement group with a capacity block (its instances are placed together)")
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
    elif kind == "eks":
        _check_eks(files, plan)
    elif kind == "user-data":
        if len(files["user-data.sh"].encode()) > 16384:
            raise ValueError("user data is over EC2's 16 KB limit")


Renderer = Callable[[dict[str, Any]], dict[str, str]]
KINDS: dict[str, tuple[Renderer, str]] = {
    "launch-template-json": (_lt_json, "EC2 launch template as boto3 / aws-cli JSON, plus the prerequisite calls"),
    "launch-template-cloudformation": (_lt_cfn, "EC2 launch template with its placement group, EFA security group and IAM"),
    "cloudformation": (_stack, "full CloudFormation stack: the above plus an Auto Scaling group of --nodes"),
    "terraform": (_terraform, "the same stack as Terraform HCL (AMI through resolve:ssm, hashicorp/aws ~> 6.25)"),
    "parallelcluster": (_parallelcluster, "ParallelCluster 3 config with a Slurm queue for the type"),
    "eks": (_eks, "EKS: Karpenter EC2NodeClass and NodePool, Neuron and EFA device plugins, an example workload"),
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
