"""`generate parallelcluster`: an AWS ParallelCluster 3.16 Slurm cluster for one Neuron instance type.

What the files follow, and where it comes from:
- ParallelCluster's own validators (aws-parallelcluster 3.16.1, tests/test_deploy_parallelcluster.py):
  queue and compute-resource names start with a lower-case letter and fit 25 characters, the
  cluster name starts with a letter and fits 60; a reservation or capacity block is targeted from
  a compute resource with `InstanceType` (not `Instances`); no placement group with a capacity block
  or a targeted reservation (ParallelCluster warns of insufficient capacity outside the reservation).
- awsome-distributed-training's ParallelCluster templates: `Imds.ImdsSupport: v2.0`, FSx for Lustre
  PERSISTENT_2 at /fsx, instance store as `EphemeralVolume`, `MinCount == MaxCount` for reserved capacity.
- ParallelCluster boots only images it built: a DLAMI given with --ami-id becomes the parent of a
  `pcluster build-image` config (build-image.yaml).
"""

from __future__ import annotations

import re
from typing import Any

from migrator.deploy.launch_template import SpecError
from migrator.deploy.render import render_template

__all__ = ["render_parallelcluster"]

PARALLELCLUSTER_VERSION = "3.16"
# ParallelCluster 3.16.1, pcluster/validators/cluster_validators.py (NameValidator, ClusterNameValidator).
NAME_MAX = 25
CLUSTER_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,59}")
# iac.md §2 (moto's describe_instance_types data): the large trn1/trn2 sizes have local NVMe (7600 GB).
INSTANCE_STORE_FAMILIES = {"trn1", "trn1n", "trn2", "trn2u"}
# The only Neuron apt package versions our sources give: Neuron SDK 2.32 (neuron-facts.md §5.5).
NEURON_SDK = "2.32"
NEURON_PACKAGES = (("aws-neuronx-dkms", "2.30.2.0"), ("aws-neuronx-runtime-lib", "2.34.10.0"),
                   ("aws-neuronx-collectives", "2.34.10.0"), ("aws-neuronx-tools", "2.32.28.0"))
CLOSED_SSH = "127.0.0.1/32"
# The regions ParallelCluster 3.16.1 supports (its pcluster/resources/supported-regions; RegionValidator).
SUPPORTED_REGIONS = frozenset(
    "af-south-1 ap-east-1 ap-northeast-1 ap-northeast-2 ap-south-1 ap-southeast-1 ap-southeast-2 ap-southeast-3 "
    "ap-southeast-5 ap-southeast-7 ca-central-1 cn-north-1 cn-northwest-1 eu-central-1 eu-north-1 eu-south-1 "
    "eu-west-1 eu-west-2 eu-west-3 il-central-1 me-south-1 sa-east-1 us-east-1 us-east-2 us-iso-east-1 "
    "us-iso-west-1 us-isob-east-1 us-gov-east-1 us-gov-west-1 us-west-1 us-west-2".split())
# Types whose DescribeInstanceTypes SupportedUsageClasses include capacity-block (the snapshot moto
# 5.2.5 bundles, which ParallelCluster's CapacityTypeValidator reads): trn1n and inf2 have none.
CAPACITY_BLOCK_TYPES = {"trn1.32xlarge", "trn2.48xlarge", "trn2u.48xlarge"}
PUBLISHED_TYPES_WITHOUT_BLOCKS = {"trn1.2xlarge", "trn1n.32xlarge", "trn2.3xlarge", "inf1.xlarge", "inf1.2xlarge",
                                  "inf1.6xlarge", "inf1.24xlarge"}


def _queue_name(name: str) -> str:
    """The queue name ParallelCluster accepts, from --name (which starts with a letter, neuron-migrator's rule)."""
    queue = name.lower()[:NAME_MAX].rstrip("-")
    if queue == "default":
        raise SpecError("--name", "'default' is a name ParallelCluster forbids for a queue; choose another --name")
    return queue


def _cluster_name(plan: dict[str, Any]) -> str:
    name = plan["cluster_name"]
    if not CLUSTER_NAME_RE.fullmatch(name):
        flag = "--cluster-name" if name != plan["name"] else "--name"
        raise SpecError(flag, f"'{name}' is not a ParallelCluster cluster name (a letter, then up to 59 letters, "
                        "digits or '-')")
    return name


def render_parallelcluster(plan: dict[str, Any]) -> dict[str, str]:
    """cluster.yaml, plus neuron-setup.sh (OnNodeConfigured) or build-image.yaml (with --ami-id).

    Raises SpecError naming the flag at fault; appends to plan["notes"].
    """
    missing = []
    if not plan["subnet_id"]:
        missing.append(("--subnet-id", "a ParallelCluster config needs the subnet of its head node and queue"))
    if plan["image"]["kind"] != "id" and not plan["s3"]:
        missing.append(("--s3-prefix", ("without --ami-id the cluster installs Neuron with an OnNodeConfigured "
                                         "script, which ParallelCluster reads from S3: give --s3-prefix")))
    if plan["restrict_egress"] and not plan["extra_security_groups"]:
        missing.append(("--security-group-id", ("ParallelCluster's own security groups allow all egress; with "
                                                "--restrict-egress give the groups to use instead (egress to the "
                                                "VPC only, all traffic between the cluster's nodes)")))
    if missing:
        raise SpecError(" and ".join(f for f, _ in missing), "; ".join(m for _, m in missing))
    inst = plan["instance"]
    notes = plan["notes"]
    if plan["region"] not in SUPPORTED_REGIONS:
        raise SpecError("--region", f"ParallelCluster {PARALLELCLUSTER_VERSION} does not support {plan['region']} "
                        "(its supported-regions list)")
    if plan["capacity"] == "capacity-block" and inst["type"] not in CAPACITY_BLOCK_TYPES:
        if inst["type"] in PUBLISHED_TYPES_WITHOUT_BLOCKS or inst["family"] == "inf2":
            raise SpecError("--capacity", f"EC2 offers no capacity blocks for {inst['type']} (its usage classes: "
                            "on-demand, spot); use --capacity reservation or on-demand")
        notes.append(f"{inst['type']}: our sources do not say whether EC2 offers capacity blocks for it; "
                     "ParallelCluster checks it (CapacityTypeValidator) at pcluster create-cluster.")
    # The DLAMI notes of the other kinds do not apply: ParallelCluster boots its own Ubuntu 24.04 AMI.
    notes[:] = [n for n in notes if not n.startswith("AMI: Neuron Base DLAMI")]
    pc: dict[str, Any] = {
        "cluster_name": _cluster_name(plan),
        "queue_name": _queue_name(plan["name"]),
        "compute_resource_name": inst["type"].replace(".", "-")[:NAME_MAX].rstrip("-"),
        # A capacity block or a targeted reservation lives outside any placement group we would create.
        "placement_group": plan["efa"] and not plan["reservation_id"],
        "ephemeral": inst["family"] in INSTANCE_STORE_FAMILIES,
        "ssh_allowed_ips": plan["vpc_cidr"] or CLOSED_SSH,
        "replace_security_groups": plan["restrict_egress"],
        "setup_script_url": None,
        "image_id": f"{plan['name']}-neuron"[:60],
    }
    files = {}
    if plan["image"]["kind"] == "id":
        files["build-image.yaml"] = render_template("parallelcluster/build-image.yaml.j2", {**plan, "pc": pc})
        if not plan["extra_security_groups"]:
            notes.append("build-image.yaml builds in the default VPC; to build in your subnet add Build.SubnetId "
                         "with Build.SecurityGroupIds (or pass --security-group-id).")
        notes.append(f"--ami-id: ParallelCluster boots only images it built. If {plan['image']['value']} is a DLAMI, "
                     f"build one from it first (pcluster build-image --image-id {pc['image_id']} "
                     "--image-configuration build-image.yaml) and put the built image's id "
                     "(pcluster describe-image ... ec2AmiInfo.amiId) in cluster.yaml's Image.CustomAmi.")
    else:
        prefix = f"{plan['s3']['prefix']}/" if plan["s3"]["prefix"] else ""
        pc["setup_script_url"] = f"s3://{plan['s3']['bucket']}/{prefix}neuron-setup.sh"
        files["neuron-setup.sh"] = render_template("parallelcluster/neuron-setup.sh.j2", {
            "efa": plan["efa"], "target": inst["target"], "family": inst["family"], "instance_type": inst["type"],
            "log_group": f"/neuron-migrator/{plan['name']}/neuron-monitor",
            "neuron": {"sdk": NEURON_SDK, "packages": NEURON_PACKAGES,
                       "why": "Newer versions (Neuron 2.33, TorchNeuron) are not in our sources: check the "
                              "Neuron release notes before changing them."}})
        notes.append(f"Upload neuron-setup.sh to {pc['setup_script_url']} before pcluster create-cluster; it pins "
                     f"the Neuron SDK {NEURON_SDK} apt packages (the newest versions our sources give).")
    if not plan["vpc_cidr"]:
        notes.append(f"SSH to the head node is closed (AllowedIps {CLOSED_SSH}): connect with SSM Session Manager "
                     "(pcluster ssh needs SSH), or give --vpc-cidr to allow SSH from inside the VPC.")
    else:
        notes.append(f"SSH to the head node only from {plan['vpc_cidr']}; SSM Session Manager works from anywhere.")
    if plan["reservation_id"] and plan["efa"]:
        notes.append("No placement group: ParallelCluster warns that one outside the reservation can fail for "
                     "lack of capacity. If the reservation was made in a cluster placement group, add "
                     "Networking.PlacementGroup.Name to the queue.")
    if plan["kms_key_arn"]:
        notes.append("KMS: the key encrypts the EFS and FSx file systems and the image's root volume; "
                     "ParallelCluster's root volumes take no key, so they use the account's default EBS key "
                     "(aws ec2 modify-ebs-default-kms-key-id).")
    if plan["restrict_egress"]:
        notes.append("--restrict-egress: the given security groups replace ParallelCluster's own (which allow "
                     "all egress); they must allow all traffic between the cluster's nodes (EFA, Slurm) and "
                     "reach the AWS services through VPC endpoints (ParallelCluster's guide to clusters without "
                     "internet access lists them)."
                     + ("" if plan["image"]["kind"] == "id" else " neuron-setup.sh downloads from the Neuron apt "
                        "repository on the internet: without that egress, build an image (--ami-id) instead."))
    if inst["type"].startswith("trn2u"):
        notes.append("trn2u.48xlarge: UltraServer capacity blocks are targeted through a capacity reservation "
                     "resource group (CapacityReservationTarget.CapacityReservationResourceGroupArn); this "
                     "config names the reservation id.")
    files["cluster.yaml"] = render_template("parallelcluster/cluster.yaml.j2", {**plan, "pc": pc})
    return files
