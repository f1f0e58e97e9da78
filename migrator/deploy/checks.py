"""Checks moto and cfn-lint cannot make (iac.md §6): NIC layout, EFA, IMDSv2, root volume; and
botocore's own parameter validation of the JSON requests we write."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

__all__ = ["check_launch_template_data", "validate_aws_requests"]

# Typed stand-ins for the ${Name} placeholders the user (or an earlier step) fills in, so that
# botocore checks the shape of every request: a placeholder for a timestamp must still be one.
_EXAMPLES = {
    "VpcId": "vpc-0123456789abcdef0", "SubnetId": "subnet-0123456789abcdef0", "AccountId": "123456789012",
    "EfaSecurityGroupId": "sg-0123456789abcdef0",
    "CapacityReservationResourceGroupArn": "arn:aws:resource-groups:us-east-2:123456789012:group/example",
    "CapacityBlockStartTime": "2030-01-01T00:00:00Z", "CapacityBlockScaleInTime": "2030-01-02T00:00:00Z",
}


@cache
def _operations(service: str) -> tuple[Any, dict[str, str]]:
    import botocore.session
    from botocore import xform_name

    model = botocore.session.get_session().get_service_model(service)
    return model, {xform_name(name): name for name in model.operation_names}


def validate_aws_requests(steps: list[dict[str, Any]]) -> list[str]:
    """Problems botocore's ParamValidator finds in boto3 calls ({service, operation, params}).

    This is the validation boto3 runs before it sends a request (names, types, required members,
    lengths, timestamps; enum values are not checked by botocore). `${Name}` placeholders are
    replaced with typed examples first; an unknown one is a problem.
    """
    from botocore.validate import ParamValidator

    problems: list[str] = []
    for index, step in enumerate(steps):
        text = json.dumps(step["params"])
        unknown = sorted(set(re.findall(r"\$\{(\w+)\}", text)) - set(_EXAMPLES))
        if unknown:
            problems.append(f"step {index} ({step['operation']}): unknown placeholders {unknown}")
        for key, value in _EXAMPLES.items():
            text = text.replace(f"${{{key}}}", value)
        model, names = _operations(step["service"])
        if step["operation"] not in names:
            problems.append(f"step {index}: {step['service']} has no operation {step['operation']}")
            continue
        shape = model.operation_model(names[step["operation"]]).input_shape
        report = ParamValidator().validate(json.loads(text), shape)
        if report.has_errors():
            problems.append(f"step {index} ({step['service']}.{step['operation']}): "
                            + report.generate_report().replace("\n", "; "))
    return problems


def check_launch_template_data(data: dict[str, Any], instance: dict[str, Any], *, efa: bool) -> list[str]:
    """Return problems with one `LaunchTemplateData` (boto3 or CloudFormation shape).

    Args:
        data: the LaunchTemplateData mapping.
        instance: the catalog entry of the instance type (`network_cards`, `efa_interfaces`).
        efa: whether EFA was asked for.
    """
    problems: list[str] = []
    nics = data.get("NetworkInterfaces") or []
    efa_nics = [n for n in nics if n.get("InterfaceType") in ("efa", "efa-only")]
    if instance["efa_interfaces"] == 0 and efa_nics:
        problems.append(f"NetworkInterfaces: {instance['type']} has no EFA, found {len(efa_nics)} EFA interfaces")
    if efa:
        if len(nics) != instance["network_cards"]:
            problems.append(f"NetworkInterfaces: {instance['type']} needs one interface per network card ({instance['network_cards']}), found {len(nics)}")
        cards = [n.get("NetworkCardIndex") for n in nics]
        if sorted(c for c in cards if c is not None) != list(range(len(nics))):
            problems.append(f"NetworkInterfaces: NetworkCardIndex must be 0..{len(nics) - 1} once each, found {cards}")
        if len(efa_nics) != len(nics):
            problems.append("NetworkInterfaces: every interface must be EFA on an EFA launch template")
    pairs = [(n.get("NetworkCardIndex", 0), n.get("DeviceIndex")) for n in nics]
    if len(set(pairs)) != len(pairs):
        problems.append(f"NetworkInterfaces: duplicate (NetworkCardIndex, DeviceIndex) pairs {pairs}")
    primaries = [n for n in nics if n.get("DeviceIndex") == 0 and n.get("NetworkCardIndex", 0) == 0]
    if nics and len(primaries) != 1:
        problems.append("NetworkInterfaces: exactly one interface must be card 0 / device 0")
    for n in nics:
        if n.get("InterfaceType") not in (None, "interface", "efa", "efa-only"):
            problems.append(f"NetworkInterfaces: unknown InterfaceType {n.get('InterfaceType')!r}")
        if not n.get("Groups"):
            problems.append(f"NetworkInterfaces[{n.get('NetworkCardIndex')}]: no security groups")
        # Nodes stay private (SSM, no SSH): say so on every interface rather than inherit the
        # subnet's auto-assign setting (terraform-aws-eks sets it on each EFA interface too).
        if n.get("AssociatePublicIpAddress") is not False:
            problems.append(f"NetworkInterfaces[{n.get('NetworkCardIndex')}]: AssociatePublicIpAddress must be false")
    # An efa-only interface has no IP address, so the primary (card 0, device 0) cannot be one.
    if any(n.get("InterfaceType") == "efa-only" and n.get("DeviceIndex") == 0 and n.get("NetworkCardIndex", 0) == 0
           for n in nics):
        problems.append("NetworkInterfaces: the primary interface (card 0, device 0) cannot be efa-only")
    if nics and data.get("SecurityGroupIds"):
        problems.append("SecurityGroupIds: set the groups on the interfaces only")
    if (data.get("MetadataOptions") or {}).get("HttpTokens") != "required":
        problems.append("MetadataOptions.HttpTokens: IMDSv2 must be required")
    roots = [b for b in data.get("BlockDeviceMappings") or [] if b.get("DeviceName") == "/dev/sda1"]
    if not roots:
        problems.append("BlockDeviceMappings: no root volume on the AMI's root device /dev/sda1")
    for b in roots:
        ebs = b.get("Ebs") or {}
        if ebs.get("VolumeType") != "gp3" or ebs.get("Encrypted") is not True:
            problems.append("BlockDeviceMappings: root volume must be encrypted gp3")
        if instance["type"].startswith("trn") and int(ebs.get("VolumeSize", 0)) < 512:
            problems.append("BlockDeviceMappings: root volume must be at least 512 GiB on Trn")
    if not data.get("IamInstanceProfile"):
        problems.append("IamInstanceProfile: missing")
    return problems
