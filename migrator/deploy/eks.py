"""`generate eks`: Karpenter node class and pool, their AWS prerequisites, the Neuron / EFA / FSx
add-ons (pinned Helm charts with values files) and an example workload.

Versions the outputs target (each from a source named beside it):
- Karpenter >= 1.4 (`amiSelectorTerms.ssmParameter`), >= 1.6 with a reservation or capacity block
  (`capacityReservationSelectorTerms`, capacity type `reserved`); iac.md "Additions".
- Helm charts in `CHARTS`.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from migrator.deploy.launch_template import BASE_DLAMI_SSM, SpecError, load_cfn_yaml, load_instances
from migrator.deploy.render import render_template

__all__ = ["CHARTS", "DLC", "check_eks", "render_eks"]

# Pinned Helm charts: version and the stored source that names it.
CHARTS: dict[str, dict[str, str]] = {
    "neuron": {"version": "1.1.2",
               "source": "aws-neuron/neuron-helm-charts charts/neuron-helm-chart/Chart.yaml, commit 1a1d41e3"},
    # The chart's README (commit 0472abcb) gives image tag v0.5.8 as its default, and the chart is
    # versioned with its app (Chart.yaml: version v0.5.1, appVersion v0.5.1).
    "efa": {"version": "v0.5.8",
            "source": "aws/eks-charts stable/aws-efa-k8s-device-plugin/README.md, commit 0472abcb"},
    "fsx": {"version": "1.5.0",
            "source": "kubernetes-sigs/aws-fsx-csi-driver charts/aws-fsx-csi-driver/CHANGELOG.md"},
}

# Neuron Deep Learning Containers named in our sources (neuron-facts.md §5.2), by target and workload.
DLC = {
    ("xla", "training"): "public.ecr.aws/neuron/pytorch-training-neuronx:2.9.0-neuronx-py312-sdk2.30.0-ubuntu24.04",
    ("xla", "inference"): "public.ecr.aws/neuron/pytorch-inference-neuronx:2.9.0-neuronx-py312-sdk2.31.1-ubuntu24.04",
    ("neuron", "inference"): "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.29.0.1.2.0-neuronx-py314-sdk2.33.0-ubuntu26.04",
}
DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# Families with local NVMe instance store (iac.md §2, moto's describe_instance_types data).
_INSTANCE_STORE_FAMILIES = {"trn1", "trn1n", "trn2", "trn2u"}
# neuron-monitor's exporter: image tag as in stored public Neuron examples (nodeMetricsImage); port 8000
# as in the chart's monitor template and the examples.
MONITOR_IMAGE = "public.ecr.aws/neuron/neuron-monitor:1.3.0"
MONITOR_PORT = 8000
RDZV_PORT = 29400  # torchrun's default c10d rendezvous port
SERVE_PORT = 8000


def render_eks(plan: dict[str, Any]) -> dict[str, str]:
    """Render the EKS files for `plan` ({file name: text}); notes go to plan["notes"]."""
    inst = plan["instance"]
    if inst["target"] == "inf1":
        raise SpecError("--target", "EKS outputs cover the neuron and xla targets")
    if plan["image"]["kind"] == "id" or plan["image"]["value"] != BASE_DLAMI_SSM:
        raise SpecError("--ami-id" if plan["image"]["kind"] == "id" else "--ami-ssm-parameter",
                        "eks nodes boot the EKS-optimized AL2023 Neuron AMI for --kubernetes-version (the EC2NodeClass's "
                        "ssmParameter); an EC2 image does not apply here")
    # The DLAMI note is for the EC2 kinds; EKS nodes boot the EKS Neuron AMI.
    plan["notes"][:] = [n for n in plan["notes"] if not n.startswith("AMI: Neuron Base DLAMI")]
    image = plan["container_image"] or DLC.get((inst["target"], plan["workload"]))
    if image is None:
        # The node pool, add-ons and install script do not depend on the image: write them, and say
        # why the example workload is missing rather than guess an image.
        plan["notes"].append(f"no workload.yaml: the {inst['target']} {plan['workload']} container's image is not "
                             "published in our sources; add --image IMAGE for an example workload")
    name = plan["name"].lower()
    if not DNS1123.fullmatch(name):
        raise SpecError("--name", f"'{plan['name']}' is not a Kubernetes name (lower-case letters, digits, '-')")
    fsx = plan["fsx"]
    fsx_subnet, fsx_groups = None, None
    if fsx and fsx["kind"] == "new":
        # The CSI driver creates the file system in one subnet with the given groups; both are the user's.
        if not plan["subnet_ids"] or not plan["extra_security_groups"]:
            raise SpecError("--subnet-id and --security-group-id", "a new FSx for Lustre file system on EKS is "
                            "created by the FSx CSI driver in one subnet with your security groups: give both")
        fsx_subnet = plan["subnet_ids"][0]
        fsx_groups = ",".join(plan["extra_security_groups"])
    # Karpenter's getting-started controller policy lets the controller pass only
    # KarpenterNodeRole-<cluster> (iam:PassRole), and IAM role names are per account: the role is
    # named after the cluster, as Karpenter's own guide names it (website getting-started scripts).
    role_name = f"KarpenterNodeRole-{plan['cluster_name']}"
    if len(role_name) > 64:
        raise SpecError("--cluster-name", f"the node role KarpenterNodeRole-<cluster> would be {len(role_name)} characters; "
                        "IAM allows 64, so the cluster name can have at most 46")
    chips = inst["chips"]
    logical_cores = inst.get("logical_neuron_cores", inst["neuron_cores"])
    if plan["workload"] == "training":
        resources = [("aws.amazon.com/neuron", chips)]
        if plan["efa"]:
            resources.append(("vpc.amazonaws.com/efa", inst["efa_interfaces"]))
        partial = False
    else:
        cores = logical_cores // max(chips, 1) or 1
        resources = [("aws.amazon.com/neuroncore", cores)]
        partial = True
    catalog = load_instances()
    types = sorted({*(t for t, i in catalog.items() if i["family"] != "inf1"), inst["type"]})
    efa_types = sorted({*(t for t, i in catalog.items() if i["family"] != "inf1" and i["efa_interfaces"]), inst["type"]})
    # Leave room for the kubelet and daemons; a declared type without host figures gets modest limits.
    cpu_limit = str(max(inst["vcpus"] - 4, 1)) if inst["vcpus"] else "8"
    memory_limit = f"{int(inst['memory_gib'] * 0.9)}Gi" if inst["memory_gib"] else "32Gi"
    context = {**plan, "role_name": role_name, "name": name, "image": image, "resources": resources, "partial": partial, "neuron_types": types, "efa_types": efa_types,
               "cpu_limit": cpu_limit, "memory_limit": memory_limit, "charts": CHARTS,
               "karpenter_min": "1.6" if plan["reservation_id"] else "1.4",
               "instance_store": inst["family"] in _INSTANCE_STORE_FAMILIES,
               "job_name": f"{name}-train", "serve_name": f"{name}-serve", "rdzv_port": RDZV_PORT,
               "serve_port": SERVE_PORT, "procs_per_node": logical_cores,
               "monitor_image": MONITOR_IMAGE, "monitor_port": MONITOR_PORT, "fsx_subnet": fsx_subnet, "fsx_security_groups": fsx_groups}
    files = {
        "karpenter.yaml": render_template("eks/karpenter.yaml.j2", context),
        "karpenter-prerequisites.cfn.yaml": render_template("eks/karpenter-prerequisites.cfn.yaml.j2", context),
        "neuron-helm-values.yaml": render_template("eks/neuron-helm-values.yaml.j2", context),
        "install-neuron-plugins.sh": render_template("eks/install-neuron-plugins.sh.j2", context),
        "neuron-monitor.yaml": render_template("eks/neuron-monitor.yaml.j2", context),
    }
    if plan["efa"]:
        files["efa-device-plugin-values.yaml"] = render_template("eks/efa-device-plugin-values.yaml.j2", context)
    if fsx:
        files["fsx-storage.yaml"] = render_template("eks/fsx-storage.yaml.j2", context)
    if image is not None:
        files["workload.yaml"] = render_template("eks/workload.yaml.j2", context)
    if plan["extra_security_groups"]:
        plan["notes"].append("karpenter.yaml selects the --security-group-id groups, not the node security group of "
                             "karpenter-prerequisites.cfn.yaml: they must allow EFA traffic within the group")
    return files


def _pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["template"]["spec"]


def check_eks(files: dict[str, str], plan: dict[str, Any]) -> None:
    """Checks the validators cannot make (iac.md §6.10). Raises ValueError naming the problem."""
    docs = [d for name in ("karpenter.yaml", "workload.yaml", "fsx-storage.yaml", "neuron-monitor.yaml") if name in files
            for d in yaml.safe_load_all(files[name]) if d]
    for doc in docs:
        if not DNS1123.fullmatch(doc["metadata"]["name"]):
            raise ValueError(f"{doc['kind']}: '{doc['metadata']['name']}' is not a valid Kubernetes name")
    nodeclass, nodepool = (d for d in docs if d["kind"] in ("EC2NodeClass", "NodePool"))
    inst = plan["instance"]
    discovery = {"karpenter.sh/discovery": plan["cluster_name"]}
    for terms in (nodeclass["spec"]["subnetSelectorTerms"], nodeclass["spec"]["securityGroupSelectorTerms"]):
        if any("tags" in t and t["tags"] != discovery for t in terms):
            raise ValueError("EC2NodeClass: discovery tags must name the cluster, not the workload")
    capacity = next(r for r in nodepool["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type")
    if plan["reservation_id"] and (capacity["values"] != ["reserved"] or not nodeclass["spec"].get("capacityReservationSelectorTerms")):
        raise ValueError("a reservation needs capacityReservationSelectorTerms and capacity type reserved")
    workloads = [d for d in docs if d["kind"] in ("Job", "Deployment")]
    for workload in workloads:
        spec = _pod_spec(workload)
        limits = spec["containers"][0]["resources"]["limits"]
        devices = int(limits.get("aws.amazon.com/neuron", 0))
        # Trn1 allocations must be 1, 4, 8 or 16 devices (2D torus; Neuron scheduler docs).
        if inst["family"] in ("trn1", "trn1n") and devices and devices not in (1, 4, 8, 16):
            raise ValueError(f"workload: {devices} Neuron devices cannot be allocated on trn1 (1, 4, 8 or 16)")
        if devices > inst["chips"]:
            raise ValueError(f"workload: {devices} Neuron devices requested, {inst['chips']} per node")
        if not any(t.get("key") == "aws.amazon.com/neuron" for t in spec.get("tolerations", [])):
            raise ValueError("workload: pods must tolerate the node pool's aws.amazon.com/neuron taint")
        if workload["kind"] == "Job":
            annotations = workload["spec"]["template"]["metadata"].get("annotations", {})
            if annotations.get("karpenter.sh/do-not-disrupt") != "true":
                raise ValueError("training pods need karpenter.sh/do-not-disrupt")
    values = yaml.safe_load(files["neuron-helm-values.yaml"])
    if inst["type"] not in values["neuronInstances"] or not {"trn2.48xlarge", "trn2u.48xlarge"} <= set(values["neuronInstances"]):
        raise ValueError("Neuron chart neuronInstances must list the generated type and trn2/trn2u")
    if plan["efa"]:
        efa_values = yaml.safe_load(files["efa-device-plugin-values.yaml"])
        if not any(t.get("key") == "aws.amazon.com/neuron" for t in efa_values.get("tolerations", [])):
            raise ValueError("EFA device plugin: it must tolerate the aws.amazon.com/neuron taint")
        if inst["type"] not in efa_values["supportedInstanceLabels"]["values"]:
            raise ValueError("EFA device plugin: its node affinity must list the generated type")
    commands = files["install-neuron-plugins.sh"].replace("\\\n", " ").splitlines()
    if any("--version " not in c for c in commands if c.startswith("helm upgrade --install")):
        raise ValueError("install-neuron-plugins.sh: every Helm chart must be pinned with --version")
    stack = load_cfn_yaml(files["karpenter-prerequisites.cfn.yaml"])["Resources"]
    sg = stack["NodeSecurityGroup"]["Properties"]
    if {"Key": "karpenter.sh/discovery", "Value": {"Ref": "ClusterName"}} not in sg["Tags"]:
        raise ValueError("prerequisites: the node security group needs the cluster's discovery tag")
    if (stack["EfaSelfIngress"]["Properties"].get("SourceSecurityGroupId") != {"Ref": "NodeSecurityGroup"}
            or stack["EfaSelfEgress"]["Properties"].get("DestinationSecurityGroupId") != {"Ref": "NodeSecurityGroup"}):
        raise ValueError("prerequisites: self-referencing ingress and egress are required for EFA")
    if stack["NodeRole"]["Properties"]["RoleName"] != nodeclass["spec"]["role"]:
        raise ValueError("prerequisites: the node role must be the one the EC2NodeClass names")
