"""Run AWS ParallelCluster's own config validators offline, under moto (run with .venv-pcluster's python).

Reads JSON from stdin: {"cases": [{"id", "cluster_name", "config", "build_image"?, "script"?}]}, where
`config` is a rendered cluster.yaml and `build_image` a rendered build-image.yaml (text). Writes JSON
to stdout: {case id: [{"level", "validator", "message"}]}: every failure ParallelCluster reports,
schema errors included ("ConfigSchemaValidator"), at every level (INFO, WARNING, ERROR).

The user's resources named in the configs (subnet, key pair, AMI, FSx file system, KMS key, capacity
reservation, S3 object) are created in moto first and the config's ids are swapped for moto's. What
moto cannot serve is stubbed, each named here:
- DescribeCapacityReservations (moto 5.2.5 does not implement it): ParallelCluster's client cache is
  seeded with an active reservation of the config's type in the subnet's zone;
- the official ParallelCluster AMI (`Image.Os` without `CustomAmi`): moto has no ParallelCluster
  images, so one named like them (aws-parallelcluster-3.16.1-<os>-hvm-<arch>) is registered.
Everything else is ParallelCluster's code against moto's EC2, S3, KMS, FSx and IAM. The test
(tests/test_deploy_parallelcluster.py) decides which failures are moto's gaps.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                   "MOTO_EC2_LOAD_DEFAULT_AMIS": "false", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"})
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-2")

import boto3
import yaml
from moto import mock_aws
from moto.ec2.responses.instances import InstanceResponse

PC_VERSION = "3.16.1"

# moto 5.2.5 rejects a block device mapping without "Ebs" ("The request must contain the parameter
# ebs"); EC2 accepts instance-store mappings ({"DeviceName", "VirtualName": "ephemeralN"}), which
# ParallelCluster's launch-template dry runs send. Let those through; everything else is moto's check.
_moto_bdm_check = InstanceResponse._validate_block_device_mapping


def _bdm_check(device_mapping):
    if "Ebs" not in device_mapping and str(device_mapping.get("VirtualName", "")).startswith("ephemeral"):
        return
    _moto_bdm_check(device_mapping)


InstanceResponse._validate_block_device_mapping = staticmethod(_bdm_check)


def _swap(text: str, old: str, new: str) -> str:
    return text.replace(old, new)


class Fixture:
    """moto resources for one region, created once and reused by every case in that region."""

    def __init__(self, region: str):
        self.region = region
        self.ec2 = boto3.client("ec2", region_name=region)
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsSupport={"Value": True})
        self.ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
        self.az = f"{region}b"
        self.subnet = self.ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20", AvailabilityZone=self.az)["Subnet"]
        self.vpc = vpc
        self.amis: dict[str, str] = {}
        self.keys: set[str] = set()
        self.kms: dict[str, str] = {}
        self.fsx: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.clients: dict[str, Any] = {}

    def client(self, service: str) -> Any:
        if service not in self.clients:  # a boto3 client costs ~0.3 s to build: one per service
            self.clients[service] = boto3.client(service, region_name=self.region)
        return self.clients[service]

    def ami(self, name: str, built: bool = False) -> str:
        """An AMI; `built` tags it as `pcluster build-image` does (the image cluster.yaml's note asks for)."""
        if built:
            name += "-built"
        if name not in self.amis:
            instance = self.ec2.run_instances(ImageId=self._base_ami(), MinCount=1, MaxCount=1,
                                              SubnetId=self.subnet["SubnetId"])["Instances"][0]["InstanceId"]
            tags = [{"ResourceType": "image", "Tags": [{"Key": "parallelcluster:version", "Value": PC_VERSION},
                                                       {"Key": "parallelcluster:build_status", "Value": "available"},
                                                       {"Key": "parallelcluster:os", "Value": "ubuntu2404"}]}]
            self.amis[name] = self.ec2.create_image(InstanceId=instance, Name=name,
                                                    **({"TagSpecifications": tags} if built else {}))["ImageId"]
        return self.amis[name]

    def security_group(self, name: str) -> str:
        """The group --restrict-egress asks the user for: all traffic within itself, egress to the VPC only."""
        if name not in self.groups:
            group = self.ec2.create_security_group(GroupName=name, Description="cluster nodes", VpcId=self.vpc)["GroupId"]
            self.ec2.revoke_security_group_egress(GroupId=group, IpPermissions=[
                {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
            self_rule = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group}]}]
            self.ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=self_rule)
            self.ec2.authorize_security_group_egress(GroupId=group, IpPermissions=self_rule)
            self.ec2.authorize_security_group_egress(GroupId=group, IpPermissions=[
                {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "10.0.0.0/16"}]}])
            self.groups[name] = group
        return self.groups[name]

    def _base_ami(self) -> str:
        # moto's run_instances accepts any well-formed id when AMI validation is off (the default).
        return "ami-0123456789abcdef0"


def _stub_official_ami(fixture: Fixture) -> None:
    """ParallelCluster looks its AMI up by name with owner `amazon`, which moto images never have."""
    from pcluster.aws.ec2 import Ec2Client

    def official(self, os, architecture, filters=None):
        return fixture.ami(f"aws-parallelcluster-{PC_VERSION}-{os}-hvm-{architecture}")

    Ec2Client.get_official_image_id = official


def _prepare(fixture: Fixture, text: str, script: str | None) -> str:
    """Create in moto what `text` names and return the config with moto's ids in it."""
    doc = yaml.safe_load(text)
    text = re.sub(r"subnet-[0-9a-f]{8,17}", fixture.subnet["SubnetId"], text)
    key = (doc.get("HeadNode", {}).get("Ssh") or {}).get("KeyName")
    if key and key not in fixture.keys:
        fixture.ec2.create_key_pair(KeyName=key)
        fixture.keys.add(key)
    custom = (doc.get("Image") or {}).get("CustomAmi")
    for ami in set(re.findall(r"ami-[0-9a-f]{8,17}", text)):
        text = _swap(text, ami, fixture.ami(f"user-image-{ami}", built=ami == custom))
    for group in set(re.findall(r"sg-[0-9a-f]{8,17}", text)):
        text = _swap(text, group, fixture.security_group(group))
    for arn in set(re.findall(r"arn:aws:kms:[^\"\s]+", text)):
        if arn not in fixture.kms:
            fixture.kms[arn] = fixture.client("kms").create_key()["KeyMetadata"]["Arn"]
        text = _swap(text, arn, fixture.kms[arn])
    for fs in set(re.findall(r"fs-[0-9a-f]{17}", text)):
        if fs not in fixture.fsx:
            fixture.fsx[fs] = _file_system(fixture, fs)
    for url in set(re.findall(r"s3://[^\"\s]+", text)):
        bucket, _, key_name = url[len("s3://"):].partition("/")
        s3 = fixture.client("s3")
        try:
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": fixture.region})
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        if key_name:
            s3.put_object(Bucket=bucket, Key=key_name, Body=(script or "#!/bin/bash\n").encode())
    return text


def _file_system(fixture: Fixture, fs_id: str) -> str:
    """An FSx for Lustre file system under the config's id: moto names its own fs- + 8 hex digits, and
    ParallelCluster's schema wants the 17 digits real ids have, so moto's record is re-keyed."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.fsx.models import fsx_backends

    created = fixture.client("fsx").create_file_system(
        FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[fixture.subnet["SubnetId"]],
        LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125})
    systems = fsx_backends[DEFAULT_ACCOUNT_ID][fixture.region].file_systems
    record = systems.pop(created["FileSystem"]["FileSystemId"])
    record.file_system_id = fs_id
    systems[fs_id] = record
    # moto's file systems have no network interfaces; a real one has an ENI in its subnet whose group
    # lets Lustre (TCP 988, 1018-1023) in from the VPC, which ParallelCluster checks.
    group = fixture.ec2.create_security_group(GroupName=f"{fs_id}-lustre", Description="lustre",
                                              VpcId=fixture.vpc)["GroupId"]
    fixture.ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": low, "ToPort": high, "IpRanges": [{"CidrIp": "10.0.0.0/16"}]}
        for low, high in ((988, 988), (1018, 1023))])
    eni = fixture.ec2.create_network_interface(SubnetId=fixture.subnet["SubnetId"], Groups=[group])
    as_dict = record.to_dict
    record.to_dict = lambda: {**as_dict(), "VpcId": fixture.vpc,
                              "NetworkInterfaceIds": [eni["NetworkInterface"]["NetworkInterfaceId"]]}
    return fs_id


def _seed_reservations(text: str, fixture: Fixture) -> None:
    from pcluster.aws.aws_api import AWSApi
    from pcluster.aws.aws_resources import CapacityReservationInfo

    doc = yaml.safe_load(text)
    for queue in doc.get("Scheduling", {}).get("SlurmQueues", []):
        for resource in queue.get("ComputeResources", []):
            target = resource.get("CapacityReservationTarget") or queue.get("CapacityReservationTarget") or {}
            cr = target.get("CapacityReservationId")
            if not cr:
                continue
            instance_type = resource.get("InstanceType") or resource["Instances"][0]["InstanceType"]
            block = queue.get("CapacityType") == "CAPACITY_BLOCK"
            AWSApi.instance().ec2.capacity_reservations_cache[cr] = CapacityReservationInfo({
                "CapacityReservationId": cr, "OwnerId": "123456789012", "InstanceType": instance_type,
                "InstancePlatform": "Linux/UNIX", "AvailabilityZone": fixture.az, "Tenancy": "default",
                "TotalInstanceCount": resource.get("MaxCount", 1), "AvailableInstanceCount": resource.get("MaxCount", 1),
                "State": "active", "InstanceMatchCriteria": "targeted",
                "ReservationType": "capacity-block" if block else "default",
                "CapacityReservationArn": f"arn:aws:ec2:{fixture.region}:123456789012:capacity-reservation/{cr}",
            })


def _failures(results: Any) -> list[dict[str, str]]:
    return [{"level": f.level.name, "validator": f.validator_type or "", "message": f.message} for f in results]


def _reset(region: str) -> None:
    from pcluster import utils
    from pcluster.aws.aws_api import AWSApi
    from pcluster.aws.common import Cache

    # ParallelCluster fetches its supported regions from S3 over plain HTTPS, which moto does not
    # intercept; use the list the package ships (what it falls back to offline), so no run goes online.
    if not hasattr(utils.retrieve_supported_regions, "cache"):
        path = Path(utils.__file__).parent / "resources" / "supported-regions"
        utils.retrieve_supported_regions.cache = path.read_text(encoding="utf-8").split("\n")

    if os.environ.get("AWS_DEFAULT_REGION") != region or AWSApi._instance is None:
        os.environ["AWS_DEFAULT_REGION"] = region
        AWSApi._instance = None  # ParallelCluster's singleton keeps the clients of the first region
    Cache.clear_all()


def validate_cluster(case: dict[str, Any], fixtures: dict[str, Fixture]) -> list[dict[str, str]]:
    from marshmallow import ValidationError
    from pcluster.schemas.cluster_schema import ClusterSchema

    region = yaml.safe_load(case["config"])["Region"]
    _reset(region)
    fixture = fixtures.setdefault(region, Fixture(region))
    _stub_official_ami(fixture)
    text = _prepare(fixture, case["config"], case.get("script"))
    _seed_reservations(text, fixture)
    try:
        config = ClusterSchema(cluster_name=case["cluster_name"]).load(yaml.safe_load(text))
    except ValidationError as exc:
        messages = exc.messages if isinstance(exc.messages, dict) else {"": exc.messages}
        return [{"level": "ERROR", "validator": "ConfigSchemaValidator", "message": json.dumps(messages, sort_keys=True)}]
    try:
        return _failures(config.validate())
    except Exception as exc:  # noqa: BLE001 - a validator that crashed is a failure to report, not a pass
        return [{"level": "ERROR", "validator": "crash", "message": f"{type(exc).__name__}: {exc}"}]


def validate_build_image(case: dict[str, Any], fixtures: dict[str, Fixture]) -> list[dict[str, str]]:
    from marshmallow import ValidationError
    from pcluster.schemas.imagebuilder_schema import ImageBuilderSchema

    doc = yaml.safe_load(case["build_image"])
    region = doc.get("Region") or yaml.safe_load(case["config"])["Region"]
    _reset(region)
    fixture = fixtures.setdefault(region, Fixture(region))
    text = _prepare(fixture, case["build_image"], None)
    try:
        config = ImageBuilderSchema().load(yaml.safe_load(text))
    except ValidationError as exc:
        return [{"level": "ERROR", "validator": "ImageBuilderSchema", "message": json.dumps(exc.messages, sort_keys=True)}]
    try:
        return _failures(config.validate())
    except Exception as exc:  # noqa: BLE001 - as above
        return [{"level": "ERROR", "validator": "crash", "message": f"{type(exc).__name__}: {exc}"}]


def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    report: dict[str, Any] = {}
    with mock_aws():
        fixtures: dict[str, Fixture] = {}
        for case in cases:
            report[case["id"]] = validate_cluster(case, fixtures)
            if case.get("build_image"):
                report[case["id"] + "/build-image"] = validate_build_image(case, fixtures)
    json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
