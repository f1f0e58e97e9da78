"""EC2 launch templates for trn/inf instances (boto3 JSON and CloudFormation).

Facts used here (see ../shared/reference/neuron-facts.md §3.6, §4, §5.1, §5.4 and iac.md §3):
- Neuron DLAMI SSM parameters: /aws/service/neuron/dlami/<framework|base>/<os>/latest/image_id
  https://awsdocs-neuron.readthedocs-hosted.com/en/latest/deploy/environments/dlami.html
- One EFA interface per network card: card 0 at DeviceIndex 0, others at DeviceIndex 1
  https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/frameworks/torch/torch-neuronx/setup-trn1-multi-node-execution.html
- EFA security group: all traffic from and to itself
  https://docs.aws.amazon.com/pcs/latest/userguide/working-with_networking_efa_create-sg.html
- Root EBS volume of at least 512 GB on Trn1/Trn2/Trn3 (setup note-setup-general)
"""

from __future__ import annotations

import base64
import errno
import os
import re
import secrets
import shutil
import stat
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from migrator.core.fsutil import write_temp
from migrator.core.yamldata import load_strict
from migrator.deploy.render import render_template

__all__ = ["LaunchSpec", "SpecError", "GenerateResult", "load_instances", "load_sources",
           "source_links", "plan_launch_template"]

# Ubuntu 24.04 Neuron DLAMIs; the TorchNeuron (2.33) DLAMI's SSM path is not published in our
# sources, and XLA torch-neuronx left the DLAMIs in 2.32, so both targets start from the Base
# DLAMI (driver, runtime, tools, EFA) and the notes say how to pin another image.
BASE_DLAMI_SSM = "/aws/service/neuron/dlami/base/ubuntu-24.04/latest/image_id"
ROOT_DEVICE = "/dev/sda1"  # Ubuntu DLAMIs
MIN_ROOT_GIB = 512
FORMATS = ("json", "cloudformation")
# One pattern that every use of the name accepts (launch template, IAM role and profile, security and
# placement group, ParallelCluster queue, Kubernetes names once lower-cased, the CloudWatch log
# group in user data): always used with fullmatch (re.match with `$` accepts a trailing newline).
NAME_RE = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]{0,39}[A-Za-z0-9])?")
SSM_PARAMETER_RE = re.compile(r"/[A-Za-z0-9_./-]{1,2047}")


class SpecError(ValueError):
    """An impossible or malformed deployment spec. `field` names the offending option."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def _is_control(char: str) -> bool:
    """True for characters that must never reach a rendered file or a message.

    Cc: C0/C1 controls (newline, escape, DEL); Cf: invisible format characters (bidi overrides);
    Zl/Zp: U+2028/U+2029, line breaks to YAML and JavaScript; Cs: lone surrogates.
    """
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def _show(value: Any, limit: int = 60) -> str:
    """`value` quoted for a message, control characters escaped (a message must not inject lines)."""
    text = str(value)
    text = text if len(text) <= limit else text[:limit] + "..."
    if any(_is_control(c) for c in text):
        text = text.encode("unicode_escape").decode("ascii")
    return f"'{text}'"


@lru_cache(maxsize=1)
def load_instances() -> dict[str, dict[str, Any]]:
    """The instance catalog (`instances.yaml`): type -> facts (GiB, vCPUs, counts).

    Each type has a `source` and `confidence` for its facts; `facts` overrides them for
    single facts (see `fact_source`).
    """
    return load_strict((Path(__file__).with_name("instances.yaml")).read_text(encoding="utf-8"))


def load_sources() -> dict[str, dict[str, Any]]:
    """The sources the catalog cites (`sources.yaml`): name -> title and url (one link, or one
    per instance family)."""
    return yaml.safe_load((Path(__file__).with_name("sources.yaml")).read_text(encoding="utf-8"))


def source_links(instance_type: str) -> dict[str, str]:
    """Name -> link of every source cited for `instance_type` (its own and its facts'), in
    the order cited."""
    entry = load_instances()[instance_type]
    sources = load_sources()
    cited = [entry["source"], *(own["source"] for own in (entry.get("facts") or {}).values())]
    links: dict[str, str] = {}
    for text in cited:
        for part in str(text).split(";"):
            name = part.strip().split(" ", 1)[0]
            if name in sources and name not in links:
                url = sources[name]["url"]
                links[name] = url[entry["family"]] if isinstance(url, dict) else url
    return links


def fact_source(instance_type: str, fact: str) -> tuple[str, str]:
    """(source, confidence) of one fact of one catalog type."""
    entry = load_instances()[instance_type]
    own = (entry.get("facts") or {}).get(fact)
    return (own["source"], own["confidence"]) if own else (entry["source"], entry["confidence"])


WORKLOADS = ("training", "inference")
CAPACITY = ("on-demand", "reservation", "capacity-block")


@dataclass(frozen=True)
class DeploymentSpec:
    """Inputs of `generate <kind>`, from flags or a YAML spec file (same field names, `-` for `_`).

    Attributes:
        instance_type: e.g. `trn2.48xlarge` (see `neuron-migrator instances`), or the name of a
            `custom_instance` (Trn3 type names are unpublished).
        region: AWS region, e.g. `us-east-2`.
        name: prefix of resource names and the Name tag: 1-41 letters, digits or `-`, starting
            with a letter and ending with a letter or digit.
        workload: `training` (EFA, placement group, all network cards) or `inference`.
        nodes: number of instances (1-1000); multi-node training needs EFA.
        target: `neuron`, `xla` or `inf1`; None picks the hardware's default.
        efa: True/False to force, None = EFA on every network card when the type has it.
        subnet_ids: subnets (the first one is used for cluster placement); empty = a parameter.
        security_group_ids: extra security groups; the EFA group is always created.
        key_name: optional EC2 key pair (SSH stays closed; use SSM Session Manager).
        capacity: `on-demand`, `reservation` (an On-Demand Capacity Reservation) or
            `capacity-block` (an EC2 Capacity Block for ML); both need capacity_reservation_id.
        capacity_reservation_id: `cr-` followed by 17 hex digits.
        root_volume_gib: root gp3 volume size in GiB (>= 512 on Trn).
        ami_ssm_parameter / ami_id: override the image; plain_ami: the image is not a Neuron
            DLAMI, so user data installs the Neuron driver, runtime and tools.
        s3_prefix: `s3://bucket/prefix` the nodes may read (data, compile cache).
        kubernetes_version: EKS version for `generate eks` (e.g. `1.34`).
        image: container image of the example EKS workload (default: the Neuron DLC for the
            target and workload, where our sources name one).
        tags: extra (key, value) tags.
        custom_instance: a declared instance type (for Trn3): name, chips, network_cards,
            neuron_cores, efa_interfaces, targets.
        cluster_name: eks only: the EKS cluster's name (Karpenter discovery tag, access entry);
            None = `name`.
        fsx_storage_gib: create an FSx for Lustre (PERSISTENT_2) file system of this many GiB
            (1200, 2400 or a multiple of 2400) shared by the nodes at /fsx.
        fsx_file_system_id / fsx_mount_name: mount an existing FSx for Lustre file system
            (`fs-` and 17 hex digits; its 8-character mount name) at /fsx instead.
        kms_key_arn: customer managed KMS key (key or alias ARN) for EBS volumes and FSx;
            None = the AWS managed keys.
        vpc_cidr: the VPC's IPv4 CIDR; needed by restrict_egress.
        restrict_egress: security group egress only to vpc_cidr (VPC endpoints serve SSM, ECR,
            S3, CloudWatch) and the EFA group itself, instead of anywhere.
    """

    instance_type: str
    region: str
    name: str = "neuron"
    workload: str = "training"
    nodes: int = 1
    target: str | None = None
    efa: bool | None = None
    subnet_ids: tuple[str, ...] = ()
    security_group_ids: tuple[str, ...] = ()
    key_name: str | None = None
    capacity: str = "on-demand"
    capacity_reservation_id: str | None = None
    root_volume_gib: int = MIN_ROOT_GIB
    ami_ssm_parameter: str | None = None
    ami_id: str | None = None
    plain_ami: bool = False
    s3_prefix: str | None = None
    kubernetes_version: str = "1.34"
    image: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    custom_instance: tuple[tuple[str, Any], ...] = ()
    cluster_name: str | None = None
    fsx_storage_gib: int | None = None
    fsx_file_system_id: str | None = None
    fsx_mount_name: str | None = None
    kms_key_arn: str | None = None
    vpc_cidr: str | None = None
    restrict_egress: bool = False


LaunchSpec = DeploymentSpec  # the name used before `generate` grew more kinds


@dataclass
class GenerateResult:
    """Where the files went, which of them replaced older files, and notes (unknown facts, pins)."""

    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    replaced: list[Path] = field(default_factory=list)


def _custom_instance(spec: DeploymentSpec) -> dict[str, Any] | None:
    """A user-declared instance type (Trn3 names are not published), checked field by field."""
    if not spec.custom_instance:
        return None
    data = dict(spec.custom_instance)
    allowed = {"name", "chips", "network_cards", "neuron_cores", "efa_interfaces", "targets", "accelerator_memory_gib"}
    for key in data:
        if key not in allowed:
            raise SpecError(f"custom_instance.{key}", f"unknown field; allowed: {', '.join(sorted(allowed))}")
    for key in ("name", "chips", "network_cards"):
        if key not in data:
            raise SpecError(f"custom_instance.{key}", "is required to declare an instance type")
    if not re.fullmatch(r"[a-z][a-z0-9-]*\d*[a-z]*\.[0-9a-z]+", str(data["name"])):
        raise SpecError("custom_instance.name", f"{_show(data['name'])} is not an instance type name such as trn3.48xlarge")
    for key in ("chips", "network_cards", "neuron_cores", "efa_interfaces", "accelerator_memory_gib"):
        if key in data and (not isinstance(data[key], int) or isinstance(data[key], bool) or not 0 <= data[key] <= 4096):
            raise SpecError(f"custom_instance.{key}", "must be a whole number between 0 and 4096")
    if data["network_cards"] < 1:
        raise SpecError("custom_instance.network_cards", "must be at least 1")
    if data.get("efa_interfaces", data["network_cards"]) > data["network_cards"]:
        raise SpecError("custom_instance.efa_interfaces", "cannot exceed network_cards (one EFA interface per card)")
    if data["name"] in load_instances():
        raise SpecError("custom_instance.name", f"'{data['name']}' is a published type with catalog facts; "
                        "custom_instance declares unpublished types (such as Trn3) only")
    targets = data.get("targets", ["neuron"])
    if not isinstance(targets, list) or not set(targets) <= {"neuron", "xla", "inf1"} or not targets:
        raise SpecError("custom_instance.targets", "must be a list of neuron, xla, inf1")
    return {
        "family": str(data["name"]).split(".")[0], "chip": "declared", "chips": data["chips"],
        "neuron_cores": data.get("neuron_cores", 0), "accelerator_memory_gib": data.get("accelerator_memory_gib", 0),
        "vcpus": 0, "memory_gib": 0, "network_cards": data["network_cards"],
        "efa_interfaces": data.get("efa_interfaces", data["network_cards"]), "targets": targets,
        "source": "declared by the user in the spec", "confidence": "declared",
    }


def _validate(spec: DeploymentSpec) -> dict[str, Any]:
    instances = dict(load_instances())
    custom = _custom_instance(spec)
    if custom is not None:
        if spec.instance_type != dict(spec.custom_instance)["name"]:
            raise SpecError("--instance-type", f"{_show(spec.instance_type)} differs from custom_instance.name")
        instances[spec.instance_type] = custom
    if spec.instance_type not in instances:
        raise SpecError("--instance-type", f"unknown instance type {_show(spec.instance_type)}; known: {', '.join(instances)}"
                        " (declare an unpublished type with custom_instance in a spec file)")
    inst = instances[spec.instance_type]
    if spec.workload not in WORKLOADS:
        raise SpecError("--workload", f"{_show(spec.workload)} is not one of {', '.join(WORKLOADS)}")
    if not isinstance(spec.nodes, int) or isinstance(spec.nodes, bool) or not 1 <= spec.nodes <= 1000:
        raise SpecError("--nodes", f"{_show(spec.nodes)} must be a whole number from 1 to 1000")
    if spec.capacity not in CAPACITY:
        raise SpecError("--capacity", f"{_show(spec.capacity)} is not one of {', '.join(CAPACITY)}")
    if spec.capacity != "on-demand" and not spec.capacity_reservation_id:
        raise SpecError("--capacity-reservation-id", f"capacity {_show(spec.capacity)} needs the reservation id (cr-...)")
    if spec.capacity_reservation_id and not re.fullmatch(r"cr-[0-9a-f]{17}", spec.capacity_reservation_id):
        raise SpecError("--capacity-reservation-id", f"{_show(spec.capacity_reservation_id)} is not a reservation id (cr- and 17 hex digits)")
    if spec.capacity_reservation_id and spec.capacity == "on-demand":
        raise SpecError("--capacity", "a reservation id was given: use --capacity reservation or capacity-block")
    if spec.key_name is not None and not re.fullmatch(r"[\x20-\x7e]{1,255}", spec.key_name):
        raise SpecError("--key-name", "must be 1-255 printable ASCII characters")
    if spec.s3_prefix is not None and not re.fullmatch(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[A-Za-z0-9!_.*'()/-]*)?", spec.s3_prefix):
        raise SpecError("--s3-prefix", f"{_show(spec.s3_prefix)} is not an s3://bucket/prefix URL (a bucket name of "
                        "3-63 lower-case letters, digits, '.' or '-'; a prefix of letters, digits and / - _ . ! * ' ( ))")
    if spec.image is not None and not re.fullmatch(r"[a-z0-9][a-z0-9._/:@-]{0,254}", spec.image):
        raise SpecError("--image", f"{_show(spec.image)} is not a container image reference")
    if not re.fullmatch(r"1\.\d{2}", spec.kubernetes_version):
        raise SpecError("--kubernetes-version", f"{_show(spec.kubernetes_version)} is not a Kubernetes version such as 1.34")
    if not re.fullmatch(r"[a-z]{2}(-gov)?-[a-z]+-\d", spec.region):
        raise SpecError("--region", f"{_show(spec.region)} is not an AWS region name such as us-east-2")
    if not isinstance(spec.name, str) or not NAME_RE.fullmatch(spec.name):
        raise SpecError("--name", f"{_show(spec.name)} must be 1-41 letters, digits or '-', starting with a letter "
                        "and ending with a letter or digit (no spaces, newlines or other characters)")
    target = spec.target or inst["targets"][0]
    if target not in inst["targets"]:
        why = " (TorchNeuron runs on Trn2/Trn3 only)" if target == "neuron" else ""
        raise SpecError("--target", f"{_show(target)} does not run on {spec.instance_type}{why}; allowed: {', '.join(inst['targets'])}")
    if spec.efa and inst["efa_interfaces"] == 0:
        raise SpecError("--efa", f"{spec.instance_type} has no EFA interfaces; drop --efa")
    if spec.workload == "training" and spec.nodes > 1 and inst["efa_interfaces"] == 0:
        raise SpecError("--nodes", f"multi-node training needs EFA and {spec.instance_type} has none; "
                        "use one node or an EFA type")
    if spec.workload == "training" and spec.nodes > 1 and spec.efa is False:
        raise SpecError("--efa", f"multi-node training needs EFA, which --no-efa turns off ({spec.instance_type} has "
                        f"{inst['efa_interfaces']} EFA interfaces); drop --no-efa or use one node")
    if spec.root_volume_gib < MIN_ROOT_GIB and spec.instance_type.startswith("trn"):
        raise SpecError("--root-volume-gib", f"Neuron asks for a root volume of at least {MIN_ROOT_GIB} GB on Trn instances")
    if not 8 <= spec.root_volume_gib <= 16384:
        raise SpecError("--root-volume-gib", "must be between 8 and 16384 GiB")
    for sid in spec.subnet_ids:
        if not re.fullmatch(r"subnet-[0-9a-f]{8,17}", sid):
            raise SpecError("--subnet-id", f"{_show(sid)} is not a subnet id (subnet-xxxxxxxx)")
    for gid in spec.security_group_ids:
        if not re.fullmatch(r"sg-[0-9a-f]{8,17}", gid):
            raise SpecError("--security-group-id", f"{_show(gid)} is not a security group id (sg-xxxxxxxx)")
    if spec.ami_id and not re.fullmatch(r"ami-[0-9a-f]{8,17}", spec.ami_id):
        raise SpecError("--ami-id", f"{_show(spec.ami_id)} is not an AMI id (ami-xxxxxxxx)")
    if spec.ami_ssm_parameter and not SSM_PARAMETER_RE.fullmatch(spec.ami_ssm_parameter):
        raise SpecError("--ami-ssm-parameter", f"{_show(spec.ami_ssm_parameter)} must be an SSM parameter path "
                        "starting with '/' (letters, digits, '/', '_', '.', '-')")
    if target == "inf1" and not spec.ami_id:
        raise SpecError("--ami-id", "Inf1 needs a DLAMI from Neuron SDK <= 2.26.1 (no SSM alias exists); pass its id")
    _validate_storage_and_network(spec)
    seen: set[str] = set()
    for key, value in spec.tags:
        if any(_is_control(c) for c in key + value):
            raise SpecError("--tag", f"{_show(key, 40)} contains control characters (newlines, tabs, escapes)")
        if not key or len(key) > 128 or key.lower().startswith("aws:") or key in ("Name", "neuron-migrator:target"):
            raise SpecError("--tag", f"key {_show(key, 40)} is not allowed (1-128 characters, not 'aws:', not Name: use --name)")
        if len(value) > 256:
            raise SpecError("--tag", f"value of {_show(key, 40)} is longer than 256 characters")
        if key in seen:
            raise SpecError("--tag", f"key {_show(key, 40)} is given twice")
        seen.add(key)
    return {**inst, "type": spec.instance_type, "target": target}


KMS_ARN_RE = re.compile(r"arn:aws(?:-[a-z]+)*:kms:[a-z]{2}(?:-gov)?-[a-z]+-\d:\d{12}:(?:key/[0-9a-f-]{36}|key/mrk-[0-9a-f]{32}|alias/[A-Za-z0-9/_-]{1,250})")


def _validate_storage_and_network(spec: DeploymentSpec) -> None:
    """FSx, KMS, VPC and cluster-name fields (SpecError naming the flag at fault)."""
    import ipaddress

    if spec.cluster_name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}", spec.cluster_name):
        raise SpecError("--cluster-name", f"{_show(spec.cluster_name)} is not an EKS cluster name "
                        "(1-100 letters, digits, '-' or '_', starting with a letter or digit)")
    if spec.fsx_storage_gib is not None:
        size = spec.fsx_storage_gib
        if (not isinstance(size, int) or isinstance(size, bool) or not (size in (1200, 2400) or (size % 2400 == 0 and 0 < size <= 2_400_000))):
            raise SpecError("--fsx-storage-gib", f"{_show(size)} is not an FSx for Lustre PERSISTENT_2 size "
                            "(1200, 2400 or a multiple of 2400 GiB)")
        if spec.fsx_file_system_id:
            raise SpecError("--fsx-storage-gib", "give either --fsx-storage-gib (a new file system) or "
                            "--fsx-file-system-id (an existing one), not both")
    if spec.fsx_file_system_id is not None and not re.fullmatch(r"fs-[0-9a-f]{17}", spec.fsx_file_system_id):
        raise SpecError("--fsx-file-system-id", f"{_show(spec.fsx_file_system_id)} is not a file system id (fs- and 17 hex digits)")
    if spec.fsx_mount_name is not None and not re.fullmatch(r"[a-z0-9]{8}", spec.fsx_mount_name):
        raise SpecError("--fsx-mount-name", f"{_show(spec.fsx_mount_name)} is not an FSx for Lustre mount name (8 lower-case letters or digits)")
    if bool(spec.fsx_file_system_id) != bool(spec.fsx_mount_name):
        missing = "--fsx-mount-name" if spec.fsx_file_system_id else "--fsx-file-system-id"
        raise SpecError(missing, "an existing FSx for Lustre file system needs both its id and its mount name "
                        "(aws fsx describe-file-systems: LustreConfiguration.MountName)")
    if spec.kms_key_arn is not None and not KMS_ARN_RE.fullmatch(spec.kms_key_arn):
        raise SpecError("--kms-key-arn", f"{_show(spec.kms_key_arn)} is not a KMS key or alias ARN "
                        "(arn:aws:kms:REGION:ACCOUNT:key/ID or .../alias/NAME)")
    if spec.kms_key_arn is not None and spec.kms_key_arn.split(":")[3] != spec.region:
        raise SpecError("--kms-key-arn", f"the key is in {spec.kms_key_arn.split(':')[3]}, the nodes in {spec.region}")
    if spec.vpc_cidr is not None:
        try:
            network = ipaddress.IPv4Network(spec.vpc_cidr, strict=True)
        except ValueError:
            raise SpecError("--vpc-cidr", f"{_show(spec.vpc_cidr)} is not an IPv4 CIDR such as 10.0.0.0/16") from None
        if not 16 <= network.prefixlen <= 28:
            raise SpecError("--vpc-cidr", "a VPC's CIDR is /16 to /28")
    if spec.restrict_egress and spec.vpc_cidr is None:
        raise SpecError("--vpc-cidr", "--restrict-egress limits egress to the VPC: give its CIDR with --vpc-cidr")


def plan_launch_template(spec: DeploymentSpec) -> dict[str, Any]:
    """Resolve everything the templates need. Raises SpecError naming the field at fault."""
    inst = _validate(spec)
    efa = inst["efa_interfaces"] > 0 if spec.efa is None else spec.efa
    cards = inst["network_cards"] if efa else 1
    subnet = spec.subnet_ids[0] if spec.subnet_ids else None
    # terraform-aws-eks's EFA layout: card 0 carries the `efa` interface with the instance's IP
    # (device 0); every other card an `efa-only` interface (device 1), which needs no IP address.
    # moto's DescribeInstanceTypes data lists efa-only for every card of the catalog's EFA types
    # (iac.md §2; tests/test_deploy_ec2.py checks it); a declared type (Trn3) keeps `efa`, as its
    # per-card interface types are unpublished.
    efa_only = efa and inst["confidence"] != "declared"
    nics = [
        {"card": i, "device": 0 if i == 0 else 1, "efa": efa,
         "type": ("efa" if i == 0 or not efa_only else "efa-only") if efa else "interface"}
        for i in range(cards)
    ]
    notes = []
    if spec.ami_id:
        image = {"kind": "id", "value": spec.ami_id}
    else:
        image = {"kind": "ssm", "value": spec.ami_ssm_parameter or BASE_DLAMI_SSM}
        if not spec.ami_ssm_parameter:
            notes.append(
                "AMI: Neuron Base DLAMI (Ubuntu 24.04) via SSM "
                f"{BASE_DLAMI_SSM}. The TorchNeuron DLAMI's SSM path is not published in our sources; "
                "discover it with `aws ssm get-parameters-by-path --path /aws/service/neuron --recursive` "
                "and pass --ami-ssm-parameter."
            )
    if inst["target"] == "xla":
        notes.append(
            "Target xla: PyTorch/XLA training is unsupported from Neuron 2.30 and XLA torch-neuronx left the "
            "DLAMIs in 2.32; the last wheel is torch-neuronx==2.9.0.2.15.32035 with neuronx-cc==2.27.5334.0. "
            "Pin an older DLAMI with --ami-id (aws ec2 describe-images --owners amazon --filters "
            "'Name=name,Values=Deep Learning AMI Neuron*' 'Name=description,Values=*Neuron SDK 2.31*')."
        )
    weaker = [f"{fact} ({own['confidence']}: {own['source']})" for fact, own in (inst.get("facts") or {}).items()
              if fact in ("network_cards", "efa_interfaces")]
    if inst["confidence"] != "verified" or weaker:
        notes.append(f"{inst['type']}: catalog facts are {inst['confidence']} ({inst['source']})"
                     + (f"; network facts: {', '.join(weaker)}" if weaker else "") + ".")
    tags = [("Name", spec.name), *spec.tags, ("neuron-migrator:target", inst["target"])]
    if spec.plain_ami:
        notes.append("plain AMI: user data installs the Neuron driver, runtime, collectives, tools and EFA at boot.")
    s3 = None
    if spec.s3_prefix:
        bucket, _, prefix = spec.s3_prefix[len("s3://"):].partition("/")
        s3 = {"bucket": bucket, "prefix": prefix.strip("/")}
    fsx = _fsx_plan(spec)
    user_data = render_user_data({
        "efa": efa, "target": inst["target"], "family": inst["family"], "plain_ami": spec.plain_ami,
        "name": spec.name, "region": spec.region, "fsx": fsx,
        "instance_store": SCRATCH_DIR if inst["family"] in INSTANCE_STORE_FAMILIES else None,
    })
    return {
        "full_stack": False,
        "workload": spec.workload,
        "nodes": spec.nodes,
        "capacity": spec.capacity,
        "reservation_id": spec.capacity_reservation_id,
        "key_name": spec.key_name,
        "s3": s3,
        "kubernetes_version": spec.kubernetes_version,
        "container_image": spec.image,
        "subnet_ids": list(spec.subnet_ids),
        "name": spec.name,
        "region": spec.region,
        "instance": inst,
        "efa": efa,
        "nics": nics,
        "subnet_id": subnet,
        "extra_security_groups": list(spec.security_group_ids),
        "image": image,
        "root": {"device": ROOT_DEVICE, "size": spec.root_volume_gib},
        # A capacity block's instances are already placed together (EC2 UltraClusters, API
        # CapacityBlock), and ParallelCluster warns on a placement group with one: none then.
        # No new placement group for reserved capacity: a block places its instances itself, and an
        # On-Demand Capacity Reservation can only be used in the placement group it was created in
        # (ParallelCluster warns likewise); launching into a new group would miss the reservation.
        "placement_group": f"{spec.name}-cluster" if efa and spec.capacity == "on-demand" else None,
        # Trn2 UltraServer capacity blocks are targeted through a Capacity Reservation resource
        # group (EC2 user guide, "Create a resource group for UltraServer Capacity Blocks").
        "reservation_group": spec.capacity == "capacity-block" and inst["family"] == "trn2u",
        "security_group_name": f"{spec.name}-efa" if efa else f"{spec.name}-nodes",
        "role_name": f"{spec.name}-node-role",
        "profile_name": f"{spec.name}-node-profile",
        "tags": tags,
        "user_data": user_data,
        "user_data_b64": base64.b64encode(user_data.encode()).decode(),
        "notes": notes,
        "cluster_name": spec.cluster_name or spec.name,
        "fsx": fsx,
        "kms_key_arn": spec.kms_key_arn,
        "vpc_cidr": spec.vpc_cidr,
        "restrict_egress": spec.restrict_egress,
    }


# Families with local NVMe instance store on their large sizes (moto's DescribeInstanceTypes data,
# iac.md §2; inf2 has none). User data finds the devices at boot, so a size without them is a no-op.
INSTANCE_STORE_FAMILIES = ("trn1", "trn1n", "trn2", "trn2u")
SCRATCH_DIR = "/scratch"  # ParallelCluster's default EphemeralVolume.MountDir
# Stand-ins for the attributes of a file system the stack itself creates; the CloudFormation and
# Terraform templates replace them with references (GetAtt DNSName / dns_name, mount name).
FSX_DNS_MARKER = "@@FSX_DNS_NAME@@"
FSX_MOUNT_MARKER = "@@FSX_MOUNT_NAME@@"


def render_user_data(context: dict[str, Any]) -> str:
    """The EC2 user data script (templates/ec2/user-data.sh.j2) for `context`.

    `context` needs efa, target, family, plain_ami, name; region, fsx and instance_store are
    optional (None = leave that part out). Raises ValueError above EC2's 16 KB limit.
    """
    fsx = context.get("fsx")
    if fsx and fsx["kind"] == "new":
        fsx = {**fsx, "dns_name": FSX_DNS_MARKER, "mount_name": FSX_MOUNT_MARKER}
    text = render_template("ec2/user-data.sh.j2", {"region": None, "instance_store": None, **context, "fsx": fsx})
    if len(text.encode()) > 16384:
        raise ValueError("user data is over EC2's 16 KB limit")
    return text


def _fsx_plan(spec: DeploymentSpec) -> dict[str, Any] | None:
    """None, or the shared file system: `new` (size_gib) or `existing` (id, mount_name, dns_name)."""
    if spec.fsx_storage_gib:
        return {"kind": "new", "size_gib": spec.fsx_storage_gib, "mount_dir": "/fsx"}
    if spec.fsx_file_system_id:
        suffix = ".amazonaws.com.cn" if spec.region.startswith("cn-") else ".amazonaws.com"
        return {"kind": "existing", "id": spec.fsx_file_system_id, "mount_name": spec.fsx_mount_name,
                "dns_name": f"{spec.fsx_file_system_id}.fsx.{spec.region}{suffix}", "mount_dir": "/fsx"}
    return None


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader that reads CloudFormation short tags (!Ref, !GetAtt, ...) as {"Ref": ...}."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_cfn_yaml(text: str) -> dict[str, Any]:
    """Parse a CloudFormation YAML template (short-form intrinsic functions allowed)."""
    return yaml.load(text, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


def _path(path: Path) -> str:
    return _show(path, limit=1000)


def _check_targets(output: Path, names: list[str]) -> None:
    """Refuse, before anything is written, a write that could not complete or would leave `output`.

    Raises:
        SpecError: a part of `output` is a file; the nearest existing folder is not writable; a
            target exists as a folder, a symbolic link or anything but a regular file.
    """
    for folder in (output, *output.parents):
        if folder.exists() and not folder.is_dir():
            raise SpecError("--output", f"{_path(folder)} is a file, not a folder; nothing was written")
        if os.path.islink(folder) and not folder.exists():
            raise SpecError("--output", f"{_path(folder)} is a broken symbolic link; nothing was written")
    existing = next(f for f in (output, *output.parents, Path(".")) if f.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise SpecError("--output", f"cannot write into {_path(existing)}: permission denied; nothing was written")
    for name in names:
        if name in ("", ".", "..") or Path(name).name != name:
            raise ValueError(f"rendered file name {name!r} is not a plain file name")
        target = output / name
        try:
            info = target.lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SpecError("--output", f"cannot check {_path(target)}: {exc.strerror}; nothing was written") from None
        if stat.S_ISLNK(info.st_mode):
            raise SpecError("--output", f"{_path(target)} is a symbolic link (to {_path(os.readlink(target))}); "
                            "remove it or choose another --output; nothing was written")
        if stat.S_ISDIR(info.st_mode):
            raise SpecError("--output", f"{_path(target)} is a folder; remove it or choose another --output; "
                            "nothing was written")
        if not stat.S_ISREG(info.st_mode):
            raise SpecError("--output", f"{_path(target)} is not a regular file; nothing was written")


def _make_folders(output: Path) -> list[Path]:
    """Create `output` and its missing parents; return the folders created, outermost first."""
    missing = [f for f in (output, *output.parents) if not f.exists()]
    created = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        created.append(folder)
    return created


def _write_temp(output: Path, name: str, text: str) -> Path:
    """Write `text` to a new hidden file beside its target (same folder: the rename is atomic)."""
    return write_temp((output / name).parent, text.encode("utf-8"))


def _keep_copy(target: Path) -> Path:
    """A second name for the file about to be replaced, so a failed write can put it back."""
    backup = target.with_name(f".{target.name}.{secrets.token_hex(6)}.nrn-old")
    try:
        os.link(target, backup)
    except OSError:
        shutil.copy2(target, backup)
    return backup


def _write_all(output: Path, rendered: dict[str, str]) -> list[Path]:
    """Write every file or none.

    First every target is checked (`_check_targets`); then each file is written to a temporary
    file in `output` and, once all are written, renamed into place. A file being replaced keeps a
    second name until the end, so that if a rename fails midway the files already placed are
    taken back (older versions restored), the temporary files removed and the folders this call
    created removed again.

    Raises:
        SpecError: naming `--output` and the path at fault; nothing was written.
    """
    output = Path(output)
    _check_targets(output, list(rendered))
    created: list[Path] = []
    temps: dict[str, Path] = {}
    placed: list[tuple[Path, Path | None]] = []
    current = output
    try:
        created = _make_folders(output)
        for name, text in rendered.items():
            current = output / name
            temps[name] = _write_temp(output, name, text)
        for name in rendered:
            current = target = output / name
            info = os.lstat(target) if os.path.lexists(target) else None
            if info is not None and not stat.S_ISREG(info.st_mode):  # changed since the check
                raise OSError(errno.EEXIST, "it is no longer a regular file")
            backup = _keep_copy(target) if info is not None else None
            try:
                os.replace(temps[name], target)
            except OSError:
                if backup is not None:
                    backup.unlink(missing_ok=True)
                raise
            del temps[name]
            placed.append((target, backup))
    except OSError as exc:
        for target, backup in reversed(placed):
            try:
                if backup is not None:
                    os.replace(backup, target)
                else:
                    target.unlink()
            except OSError:
                pass
        for temp in temps.values():
            temp.unlink(missing_ok=True)
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass
        reason = exc.strerror or str(exc)
        raise SpecError("--output", f"cannot write {_path(current)}: {reason}; nothing was written") from None
    for _, backup in placed:
        if backup is not None:
            backup.unlink(missing_ok=True)
    return [output / name for name in rendered]
