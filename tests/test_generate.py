"""Every deployment kind: parsed, linted (cfn-lint, checkov, python-hcl2), run in moto where
moto can, hostile values kept as data, goldens stable, impossible specs refused."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
import yaml
from moto import mock_aws

from conftest import ROOT
from migrator.deploy.generate import render_kind
from migrator.deploy.launch_template import DeploymentSpec, load_cfn_yaml

CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
BASE = dict(instance_type="trn2.48xlarge", region="us-east-2", name="team", nodes=2, s3_prefix="s3://ml-data/train",
            subnet_ids=("subnet-0123456789abcdef0",))
KINDS = ["launch-template-json", "launch-template-cloudformation", "cloudformation", "terraform", "parallelcluster",
         "eks", "user-data"]
BASE["image"] = "123456789012.dkr.ecr.us-east-2.amazonaws.com/train:1"


def render(kind, **overrides):
    files, _ = render_kind(kind, DeploymentSpec(**{**BASE, **overrides}))
    return files


def hcl_string(value: str) -> str:
    return json.loads(value).replace("$${", "${").replace("%%{", "%{")


# -- goldens --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_golden_outputs(kind, update_goldens):
    """Regenerate with `make goldens` (pytest --update-goldens) and review the git diff."""
    folder = ROOT / "tests" / "golden" / kind
    files = render(kind, tags=(("team", "ml-platform"),))
    if update_goldens:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for name, text in files.items():
            (folder / name).write_text(text)
    expected = {p.name: p.read_text() for p in folder.iterdir()}
    assert files == expected, f"golden mismatch for {kind}: run `make goldens` and review the diff"


# -- CloudFormation stack -------------------------------------------------------------------
def test_full_stack_lints_and_creates_an_auto_scaling_group_in_moto(aws_env):
    import cfnlint.api

    text = render("cloudformation")["stack.cfn.yaml"]
    assert [str(m) for m in cfnlint.api.lint(text, config=cfnlint.api.ManualArgs(regions=["us-east-2"]))] == []
    with mock_aws():
        import datetime

        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.ssm.models import Parameter, ssm_backends

        ec2 = boto3.client("ec2", region_name="us-east-2")
        ami = ec2.register_image(Name="neuron-dlami", RootDeviceName="/dev/sda1")["ImageId"]
        name = "/aws/service/neuron/dlami/base/ubuntu-24.04/latest/image_id"
        ssm_backends[DEFAULT_ACCOUNT_ID]["us-east-2"]._parameters[name] = [Parameter(
            account_id=DEFAULT_ACCOUNT_ID, name=name, value=ami, parameter_type="String", description=None,
            allowed_pattern=None, keyid=None, last_modified_date=datetime.datetime.now(), version=1, data_type="text")]
        vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
        cfn = boto3.client("cloudformation", region_name="us-east-2")
        cfn.create_stack(StackName="nodes", TemplateBody=text, Capabilities=["CAPABILITY_IAM"], Parameters=[
            {"ParameterKey": "VpcId", "ParameterValue": vpc}, {"ParameterKey": "SubnetId", "ParameterValue": subnet}])
        assert cfn.describe_stacks(StackName="nodes")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        (group,) = boto3.client("autoscaling", region_name="us-east-2").describe_auto_scaling_groups()["AutoScalingGroups"]
        assert group["DesiredCapacity"] == group["MinSize"] == group["MaxSize"] == 2
        role = boto3.client("iam", region_name="us-east-2").list_roles()["Roles"][0]["RoleName"]
        inline = boto3.client("iam").list_role_policies(RoleName=role)["PolicyNames"]
        assert inline == ["read-data-and-compile-cache"]


def test_stack_policy_reads_only_the_named_prefix():
    doc = load_cfn_yaml(render("cloudformation")["stack.cfn.yaml"])
    statements = doc["Resources"]["NodeRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    assert {s["Action"] for s in statements} == {"s3:ListBucket", "s3:GetObject"}
    assert {s["Resource"] for s in statements} == {"arn:aws:s3:::ml-data", "arn:aws:s3:::ml-data/train/*"}


def test_capacity_block_in_every_launch_template_form():
    spec = dict(capacity="capacity-block", capacity_reservation_id="cr-0123456789abcdef0")
    lt = json.loads(render("launch-template-json", **spec)["launch-template.json"])["LaunchTemplateData"]
    assert lt["InstanceMarketOptions"] == {"MarketType": "capacity-block"}
    assert lt["CapacityReservationSpecification"]["CapacityReservationTarget"]["CapacityReservationId"] == "cr-0123456789abcdef0"
    assert 'market_type = "capacity-block"' in render("terraform", **spec)["main.tf"]
    pc = yaml.safe_load(render("parallelcluster", **spec)["cluster.yaml"])
    queue = pc["Scheduling"]["SlurmQueues"][0]
    assert queue["CapacityType"] == "CAPACITY_BLOCK"
    assert queue["ComputeResources"][0]["MinCount"] == queue["ComputeResources"][0]["MaxCount"] == 2


# -- Terraform ------------------------------------------------------------------------------
def test_terraform_parses_and_has_the_stack():
    import hcl2

    doc = hcl2.loads(render("terraform")["main.tf"])
    resources = {list(r)[0].strip('"'): r for r in doc["resource"]}
    assert {"aws_launch_template", "aws_placement_group", "aws_security_group", "aws_vpc_security_group_ingress_rule",
            "aws_iam_role", "aws_iam_instance_profile", "aws_autoscaling_group"} <= set(resources)
    lt = list(resources["aws_launch_template"].values())[0]
    lt = lt[list(lt)[0]] if isinstance(lt, dict) and len(lt) == 1 and "network_interfaces" not in lt else lt
    text = render("terraform")["main.tf"]
    assert text.count("network_interfaces {") == 16
    assert text.count('interface_type              = "efa"') == 1 and text.count('interface_type              = "efa-only"') == 15
    # EC2 resolves the AMI at launch (no data source whose value changes every plan).
    assert 'image_id      = "resolve:ssm:/aws/service/neuron/dlami/base/ubuntu-24.04/latest/image_id"' in text
    assert "aws_ssm_parameter" not in text


# -- ParallelCluster and user data ----------------------------------------------------------
def test_parallelcluster_config_and_its_setup_script():
    files = render("parallelcluster")
    pc = yaml.safe_load(files["cluster.yaml"])
    queue = pc["Scheduling"]["SlurmQueues"][0]
    assert queue["ComputeResources"][0]["Efa"]["Enabled"] is True and queue["Networking"]["PlacementGroup"]["Enabled"]
    assert queue["ComputeSettings"]["LocalStorage"]["RootVolume"] == {"Size": 512, "Encrypted": True}
    assert queue["CustomActions"]["OnNodeConfigured"]["Script"] == "s3://ml-data/train/neuron-setup.sh"
    assert pc["Imds"]["ImdsSupport"] == "v2.0" and pc["SharedStorage"][0]["StorageType"] == "Efs"
    assert "aws-neuronx-dkms" in files["neuron-setup.sh"]


@pytest.mark.parametrize("plain", [False, True])
def test_user_data_is_valid_bash_and_installs_only_on_a_plain_ami(plain):
    text = render("user-data", plain_ami=plain)["user-data.sh"]
    subprocess.run(["bash", "-n"], input=text, text=True, check=True)
    assert ('"aws-neuronx-dkms=' in text) == plain
    assert "FI_PROVIDER=efa" in text and "neuron-monitor" in text and "logical_nc_config" in text
    if plain:
        assert "signed-by=/usr/share/keyrings/neuron-archive-keyring.gpg" in text and "gpg --verify" in text
    assert len(text.encode()) < 16384


# -- checkov ---------------------------------------------------------------------------------
# Each skipped check has a reason; everything else must pass.
CHECKOV_SKIPS: dict[str, str] = {}


@pytest.mark.parametrize("kind, framework, name", [("cloudformation", "cloudformation", "stack.cfn.yaml"),
                                                   ("launch-template-cloudformation", "cloudformation", "launch-template.cfn.yaml"),
                                                   ("terraform", "terraform", "main.tf")])
def test_checkov_finds_no_failed_checks(tmp_path, kind, framework, name):
    assert CHECKOV.exists(), "checkov is installed by `make test` into .venv-checkov (it pins an old boto3)"
    (tmp_path / name).write_text(render(kind)[name])
    proc = subprocess.run([str(CHECKOV), "-d", str(tmp_path), "--framework", framework, "-o", "json", "--quiet",
                           "--compact"], capture_output=True, text=True)
    report = json.loads(proc.stdout)
    reports = report if isinstance(report, list) else [report]
    failed = [(c["check_id"], c["resource"]) for r in reports for c in r.get("results", {}).get("failed_checks", [])
              if c["check_id"] not in CHECKOV_SKIPS]
    assert failed == []


# -- hostile values --------------------------------------------------------------------------
NASTY = 'x"}, "y": "${AWS::Region} %{ if true }$(rm -rf /) `id` &anchor *alias ! # - z: {{ q }}'


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_tag_values_stay_data(kind):
    files = render(kind, tags=(("team", NASTY),))
    if kind == "launch-template-json":
        doc = json.loads(files["launch-template.json"])
        assert {"Key": "team", "Value": NASTY} in doc["TagSpecifications"][0]["Tags"]
        assert set(doc) == {"LaunchTemplateName", "ClientToken", "VersionDescription", "LaunchTemplateData", "TagSpecifications"}
    elif kind in ("launch-template-cloudformation", "cloudformation"):
        doc = load_cfn_yaml(next(iter(files.values())))
        tags = doc["Resources"]["EfaSecurityGroup"]["Properties"]["Tags"]
        assert {"Key": "team", "Value": NASTY} in tags
        assert set(doc) == {"AWSTemplateFormatVersion", "Description", "Parameters", "Resources", "Outputs"}
    elif kind == "terraform":
        import hcl2

        doc = hcl2.loads(files["main.tf"])
        tags = doc["locals"][0]["tags"]
        assert hcl_string(tags['"team"']) == NASTY
    elif kind == "parallelcluster":
        doc = yaml.safe_load(files["cluster.yaml"])
        assert {"Key": "team", "Value": NASTY} in doc["Tags"]
        assert set(doc) == {"Region", "Image", "Imds", "HeadNode", "Scheduling", "SharedStorage", "Tags"}
    elif kind == "eks":
        (nodeclass, _) = yaml.safe_load_all(files["karpenter.yaml"])
        assert nodeclass["spec"]["tags"]["team"] == NASTY
        assert set(nodeclass["spec"]) >= {"role", "amiSelectorTerms", "tags"} and len(nodeclass["spec"]["tags"]) == 2
    else:
        assert NASTY not in files["user-data.sh"]  # tags are not part of the script


# -- specs ---------------------------------------------------------------------------------
def test_spec_file_with_every_field_and_flag_override(cli, tmp_path):
    spec = ROOT / "samples" / "deploy-spec.yaml"
    documented = yaml.safe_load(spec.read_text())
    from migrator.deploy.spec import FIELDS

    commented = spec.read_text()
    assert all(f"# {name}:" in commented or f"{name}:" in commented for name in FIELDS)
    assert set(documented) <= set(FIELDS)
    out = tmp_path / "out"
    cli("generate", "cloudformation", "--spec", spec, "--nodes", "3", "--output", out, check=0)
    doc = load_cfn_yaml((out / "stack.cfn.yaml").read_text())
    assert doc["Resources"]["NodeGroup"]["Properties"]["DesiredCapacity"] == "3"


def test_trn3_can_be_declared_in_a_spec(cli, tmp_path):
    spec = tmp_path / "trn3.yaml"
    spec.write_text("instance_type: trn3.48xlarge\nregion: us-east-2\ncustom_instance:\n  name: trn3.48xlarge\n"
                    "  chips: 16\n  network_cards: 8\n  targets: [neuron]\n")
    cli("generate", "launch-template", "--spec", spec, "--output", tmp_path / "out", check=0)
    data = json.loads((tmp_path / "out" / "launch-template.json").read_text())["LaunchTemplateData"]
    assert len(data["NetworkInterfaces"]) == 8 and data["InstanceType"] == "trn3.48xlarge"
    proc = cli("generate", "launch-template", "--instance-type", "trn3.48xlarge", "--region", "us-east-2",
               "--output", tmp_path / "out2")
    assert proc.returncode == 2 and "custom_instance" in proc.stderr


@pytest.mark.parametrize("args, field", [
    (["cloudformation", "--instance-type", "trn1.2xlarge", "--nodes", "20", "--efa"], "--efa"),
    (["cloudformation", "--instance-type", "trn1.2xlarge", "--nodes", "20"], "--nodes"),
    # New-user helper: this said trn1.32xlarge "has none" (EFA); the flag at fault is --no-efa.
    (["cloudformation", "--instance-type", "trn1.32xlarge", "--nodes", "2", "--no-efa"], "--no-efa turns off"),
    (["terraform", "--instance-type", "trn2.48xlarge", "--capacity", "capacity-block"], "--capacity-reservation-id"),
    (["parallelcluster", "--instance-type", "trn1.32xlarge", "--target", "neuron", "--subnet-id", "subnet-0123456789abcdef0"], "--target"),
    (["parallelcluster", "--instance-type", "trn1.32xlarge"], "--subnet-id"),
    (["cloudformation", "--instance-type", "inf2.xlarge", "--efa"], "--efa"),
    (["cloudformation", "--instance-type", "trn2.48xlarge", "--workload", "serving"], "--workload"),
    (["helm", "--instance-type", "trn2.48xlarge"], "KIND"),
    (["cloudformation", "--instance-type", "trn2.48xlarge", "--fsx-storage-gib", "1000"], "--fsx-storage-gib"),
    (["terraform", "--instance-type", "trn2.48xlarge", "--fsx-file-system-id", "fs-0123456789abcdef0"], "--fsx-mount-name"),
    (["cloudformation", "--instance-type", "trn2.48xlarge", "--fsx-storage-gib", "2400",
      "--fsx-file-system-id", "fs-0123456789abcdef0", "--fsx-mount-name", "abcdefgh"], "--fsx-storage-gib"),
    (["terraform", "--instance-type", "trn2.48xlarge", "--restrict-egress"], "--vpc-cidr"),
    (["cloudformation", "--instance-type", "trn2.48xlarge", "--vpc-cidr", "10.0.0.1/16"], "--vpc-cidr"),
    (["eks", "--instance-type", "trn2.48xlarge", "--kms-key-arn", "arn:aws:kms:us-west-2:123456789012:alias/ml"], "--kms-key-arn"),
    (["eks", "--instance-type", "trn2.48xlarge", "--cluster-name", "bad name"], "--cluster-name"),
])
def test_impossible_specs_exit_2_naming_the_field_and_write_nothing(cli, tmp_path, args, field):
    proc = cli("generate", *args, "--region", "us-east-2", "--output", tmp_path / "out")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert field in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_spec_file_names_the_field(cli, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("instance_type: trn2.48xlarge\nregion: us-east-2\nnode: 4\n")
    proc = cli("generate", "terraform", "--spec", spec, "--output", tmp_path / "out")
    assert proc.returncode == 2 and "field 'node'" in proc.stderr and "nodes" in proc.stderr
    spec.write_text("instance_type: trn2.48xlarge\nregion: us-east-2\nnodes: four\n")
    proc = cli("generate", "terraform", "--spec", spec, "--output", tmp_path / "out")
    assert proc.returncode == 2 and "field 'nodes'" in proc.stderr


# EKS: tests/test_deploy_eks.py (CRD schemas with CEL, core schemas, checkov, cfn-lint, shellcheck).


@pytest.mark.parametrize("body, field", [
    ("instance_type: trn2.48xlarge\nregion: us-east-2\ncustom_instance: {name: trn2.48xlarge, chips: 1, network_cards: 1}\n",
     "custom_instance.name"),
    ("instance_type: trn3.48xlarge\nregion: us-east-2\ncustom_instance: {name: trn3.48xlarge, chips: 16, network_cards: 8, "
     "efa_interfaces: 16}\n", "custom_instance.efa_interfaces"),
    ("instance_type: trn2.48xlarge\ninstance_type: trn1.32xlarge\nregion: us-east-2\n", "given twice"),
])
def test_spec_file_traps(cli, tmp_path, body, field):
    spec = tmp_path / "s.yaml"
    spec.write_text(body)
    proc = cli("generate", "launch-template", "--spec", spec, "--output", tmp_path / "out")
    assert proc.returncode == 2 and field in proc.stderr and not (tmp_path / "out").exists()


def test_output_folder_reuse_says_what_it_replaced_and_format_is_launch_template_only(cli, tmp_path):
    out = tmp_path / "out"
    args = ["generate", "launch-template", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--output", out]
    assert "wrote" in cli(*args, check=0).stdout
    assert "replaced" in cli(*args, check=0).stdout
    proc = cli("generate", "user-data", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--format",
               "cloudformation", "--output", tmp_path / "ud")
    assert proc.returncode == 2 and "--format" in proc.stderr
    (tmp_path / "afile").write_text("x")
    proc = cli("generate", "user-data", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--output",
               tmp_path / "afile" / "sub")
    assert proc.returncode == 2 and "is a file, not a folder" in proc.stderr
