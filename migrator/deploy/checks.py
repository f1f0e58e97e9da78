"""Checks moto and cfn-lint cannot make (iac.md §6): NIC layout, EFA, IMDSv2, root volume."""

from __future__ import annotations

from typing import Any

__all__ = ["check_launch_template_data"]


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
        if len(nics) > 1 and n.get("AssociatePublicIpAddress"):
            problems.append("NetworkInterfaces: no public IP on multi-interface instances")
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
