"""Errors found by reading every generated object against upstream (issue 16): each test fails on
the output gpuplane generated before the fix and names the upstream source that decides it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.generate.blueprint import BlueprintError, parse_blueprint
from gpuplane.generate.engine import render_blueprint
from gpuplane.generate.render.autoscaling import ca_release, ca_releases
from gpuplane.generate.render.base import Bundle

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "blueprints"


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())


def _render(name: str, data: dict[str, Any] | None = None) -> Bundle:
    return render_blueprint(parse_blueprint(data if data is not None else _load(name)))


def _objs(bundle: Bundle, kind: str) -> list[dict[str, Any]]:
    return [o for o in bundle.all_objects() if o["kind"] == kind]


def _obj(bundle: Bundle, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in _objs(bundle, kind) if o["metadata"]["name"] == name)


def _notes(bundle: Bundle, stage: str) -> list[str]:
    return bundle.stages[stage].notes


def _release(bundle: Bundle, name: str) -> Any:
    return next(r for r in bundle.releases if r.release == name)


# --- MPIJob gang under Volcano: kubeflow/mpi-operator#608 -----------------------------------------


def test_mpijob_gang_minimum_is_the_workers_when_the_launcher_waits_for_them() -> None:
    # mpi-operator v0.8.0 pkg/controller/mpi_job_controller.go creates the launcher only when
    # countReadyWorkerPods(worker) == len(worker) under WaitForWorkersReady; podgroup.go
    # calculateMinAvailable copies schedulingPolicy.minAvailable into PodGroup minMember. The old
    # output asked for workers + 1 = 3 and never started.
    job = _obj(_render("onprem-dgx-mig"), "MPIJob", "bert-mpi")
    assert job["spec"]["launcherCreationPolicy"] == "WaitForWorkersReady"
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 2, "queue": "nlp"}


def test_mpijob_coscheduling_podgroup_counts_the_workers_only() -> None:
    bundle = _render("onprem-dgx-coscheduling")
    pg = _obj(bundle, "PodGroup", "allreduce-bench")
    assert pg["spec"]["minMember"] == 2
    job = _obj(bundle, "MPIJob", "allreduce-bench")
    assert job["spec"]["launcherCreationPolicy"] == "WaitForWorkersReady"


# --- GKE: the operator's critical pods need a PriorityClass-scoped quota --------------------------


def test_gke_operator_namespace_gets_the_critical_priority_quota() -> None:
    # Kubernetes docs "Resource Quotas" > "Limit Priority Class consumption by default": with the
    # admission plugin's limitedResources (as GKE configures it), pods of these classes are admitted
    # only where a quota matching them exists.
    for name in ("gke-inference", "gke-l4-a100"):
        bundle = _render(name)
        quota = _obj(bundle, "ResourceQuota", "gpu-operator-critical-pods")
        assert quota["metadata"]["namespace"] == "gpu-operator"
        assert quota["spec"]["scopeSelector"] == {
            "matchExpressions": [
                {
                    "operator": "In",
                    "scopeName": "PriorityClass",
                    "values": ["system-node-critical", "system-cluster-critical"],
                }
            ]
        }
        assert quota in bundle.stages["00-namespaces"].objects


def test_no_critical_priority_quota_outside_gke() -> None:
    for name in ("eks-training", "onprem-dgx-mig", "aks-kueue"):
        assert not [
            o for o in _objs(_render(name), "ResourceQuota") if o["metadata"]["namespace"] == "gpu-operator"
        ]


def test_gke_driver_choice_follows_driver_managed_by() -> None:
    # GKE "Run GPUs in Standard node pools": gpu-driver-version=latest installs Google's driver,
    # disabled leaves it to the operator (Ubuntu node image, NVIDIA GPU Operator with Google GKE).
    gke_managed = " ".join(_notes(_render("gke-inference"), "50-autoscaling"))
    assert "gpu-driver-version=latest" in gke_managed and "UBUNTU_CONTAINERD" not in gke_managed
    operator = _render("gke-l4-a100")
    notes = " ".join(_notes(operator, "50-autoscaling"))
    assert "gpu-driver-version=disabled --image-type=UBUNTU_CONTAINERD" in notes
    values = operator.shared["operator_values"]
    assert values["driver"] == {"enabled": True}
    assert "hostPaths" not in values


# --- Volcano reclaim, Kueue queue names and integrations, coscheduling controller ------------------


def test_volcano_reclaimable_queues_come_with_the_reclaim_action() -> None:
    # volcano v1.15.1 pkg/scheduler/actions/reclaim/reclaim.go is the only reader of Queue.reclaimable.
    bundle = _render("onprem-dgx-mig")
    conf = yaml.safe_load(_release(bundle, "volcano").values["custom"]["scheduler_config_override"])
    assert [a.strip() for a in conf["actions"].split(",")] == ["enqueue", "allocate", "backfill", "reclaim"]
    assert any(q["spec"]["reclaimable"] for q in _objs(bundle, "Queue"))


def test_every_kueue_clusterqueue_has_a_workload_that_targets_it() -> None:
    # kueue v0.19.2 docs tasks/run/deployment.md: a Deployment selects its LocalQueue with the
    # kueue.x-k8s.io/queue-name label on its metadata. The old serving Deployment had none.
    for name in ("eks-training", "aks-kueue"):
        bundle = _render(name)
        local = {
            (q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"]
            for q in _objs(bundle, "LocalQueue")
        }
        targeted = set()
        for o in bundle.stages["70-workloads"].objects:
            queue = o["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name")
            if queue:
                targeted.add(local[(o["metadata"]["namespace"], queue)])
        assert targeted == {cq["metadata"]["name"] for cq in _objs(bundle, "ClusterQueue")}


def test_kueue_chart_enables_the_pytorchjob_integration() -> None:
    # kueue v0.19.2 charts/kueue/values.yaml leaves "kubeflow.org/pytorchjob" commented out.
    values = _release(_render("eks-training"), "kueue").values
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    frameworks = config["integrations"]["frameworks"]
    assert "kubeflow.org/pytorchjob" in frameworks
    assert {"jobset.x-k8s.io/jobset", "deployment", "batch/job"} <= set(frameworks)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"


def test_coscheduling_installs_the_podgroup_controller() -> None:
    # scheduler-plugins v0.34.7 pkg/controllers/podgroup_controller.go maintains PodGroup status;
    # the as-a-second-scheduler chart deploys it beside the scheduler.
    bundle = _render("onprem-dgx-coscheduling")
    deploy = _obj(bundle, "Deployment", "scheduler-plugins-controller")
    image = deploy["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.k8s.io/scheduler-plugins/controller:v0.34.7"
    role = _obj(bundle, "ClusterRole", "scheduler-plugins-controller")
    assert any("podgroups/status" in r["resources"] for r in role["rules"])


# --- EKS + Cluster Autoscaler: region, IRSA, accelerator label, matching versions -----------------


def test_eks_cluster_autoscaler_region_irsa_and_gpu_label() -> None:
    bundle = _render("eks-cluster-autoscaler")
    values = _release(bundle, "cluster-autoscaler").values
    assert values["awsRegion"] == "us-west-2"  # the chart's default is us-east-1
    assert values["rbac"]["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/ClusterAutoscaler-research"
    }
    notes = " ".join(_notes(bundle, "50-autoscaling"))
    # cloudprovider/aws/aws_cloud_provider.go GPULabel = "k8s.amazonaws.com/accelerator"
    assert (
        "`k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator=nvidia-h100-80gb`"
        in notes
    )
    assert bundle.plan("h100-train").node_labels()["k8s.amazonaws.com/accelerator"] == "nvidia-h100-80gb"


def test_eks_cluster_autoscaler_needs_region_and_role() -> None:
    data = _load("eks-cluster-autoscaler")
    del data["region"]
    del data["autoscaling"]["iam_role_arn"]
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert [p.split(":")[0] for p in exc.value.problems] == ["region", "autoscaling.iam_role_arn"]


def test_cluster_autoscaler_chart_and_image_share_the_cluster_minor() -> None:
    release = _release(_render("eks-cluster-autoscaler"), "cluster-autoscaler")
    # kubernetes/autoscaler tag cluster-autoscaler-chart-9.51.0: appVersion 1.33.0; newest 1.33 patch 1.33.6
    assert (release.version, release.values["image"]["tag"]) == ("9.51.0", "v1.33.6")
    assert ca_releases()["checked"] == "2026-12-01"
    for minor, (chart, image) in ca_releases()["releases"].items():
        assert image.startswith(f"v{minor}."), (minor, chart, image)
    assert ca_release("1.26") is None


# --- AKS: node-pool autoscaling, or a complete self-managed CA ------------------------------------


def test_aks_uses_node_pool_autoscaling_without_a_ca_deployment() -> None:
    bundle = _render("aks-kueue")
    assert not [r for r in bundle.releases if r.release == "cluster-autoscaler"]
    notes = _notes(bundle, "50-autoscaling")
    assert notes[0] == (
        "`az aks nodepool add --resource-group rg-aks-ml --cluster-name aks-ml --name h100train "
        "--node-vm-size Standard_ND96isr_H100_v5 --enable-cluster-autoscaler --min-count 0 --max-count 4 "
        "--gpu-driver none --node-osdisk-size 1000 --labels gpuplane.io/pool=h100-train "
        "--node-taints nvidia.com/gpu=present:NoSchedule`"
    )


def test_aks_self_managed_cluster_autoscaler_is_complete() -> None:
    data = _load("aks-kueue")
    data["autoscaling"].update(
        aks_mode="self-managed",
        azure_subscription_id="00000000-0000-0000-0000-000000000001",
        azure_tenant_id="00000000-0000-0000-0000-000000000002",
        azure_client_id="00000000-0000-0000-0000-000000000003",
    )
    bundle = _render("", data)
    values = _release(bundle, "cluster-autoscaler").values
    assert {k: values[k] for k in values if k.startswith("azure") or k == "cloudProvider"} == {
        "cloudProvider": "azure",
        "azureResourceGroup": "rg-aks-ml",
        "azureSubscriptionID": "00000000-0000-0000-0000-000000000001",
        "azureTenantID": "00000000-0000-0000-0000-000000000002",
        "azureClientID": "00000000-0000-0000-0000-000000000003",
        "azureUseWorkloadIdentityExtension": True,
        "azureVMType": "vmss",
    }
    tags = next(
        n for n in _notes(bundle, "50-autoscaling") if n.startswith("scale set of node pool `h100-train`")
    )
    # cloudprovider/azure/README.md: '_' instead of '/', min/max tags on the scale set
    assert "`k8s.io_cluster-autoscaler_node-template_label_gpuplane.io_pool=h100-train`" in tags
    assert "`k8s.io_cluster-autoscaler_node-template_taint_nvidia.com_gpu=present:NoSchedule`" in tags
    assert "`min=0`, `max=4`" in tags
    assert "node-template/" not in tags


def test_aks_self_managed_refuses_missing_identity() -> None:
    data = _load("aks-kueue")
    data["autoscaling"]["aks_mode"] = "self-managed"
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert [p.split(":")[0] for p in exc.value.problems] == [
        "autoscaling.azure_subscription_id",
        "autoscaling.azure_tenant_id",
        "autoscaling.azure_client_id",
    ]


# --- Fabric for multi-node training ---------------------------------------------------------------


def _pod_containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                out.extend(node["containers"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(obj)
    return out


def test_p5_training_requests_efa_and_the_device_plugin_is_installed() -> None:
    # [KARP] instance-types.md: p5.48xlarge vpc.amazonaws.com/efa 32. The old output requested none.
    bundle = _render("eks-cluster-autoscaler")
    rank = _pod_containers(_obj(bundle, "PyTorchJob", "llm-pretrain"))[0]
    assert rank["resources"]["limits"]["vpc.amazonaws.com/efa"] == 32
    assert rank["resources"]["requests"]["vpc.amazonaws.com/efa"] == 32
    assert {e["name"]: e["value"] for e in rank["env"]} == {
        "FI_PROVIDER": "efa",
        "FI_EFA_USE_DEVICE_RDMA": "1",
        "NCCL_DEBUG": "WARN",
    }
    plugin = _release(bundle, "aws-efa-k8s-device-plugin")
    assert (plugin.repo, plugin.version) == ("https://aws.github.io/eks-charts", "v0.5.30")
    assert plugin.values["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    # single-node serving pods on g6.12xlarge (1 EFA) get no fabric
    serve = _pod_containers(_obj(bundle, "Deployment", "llama-8b"))[0]
    assert "vpc.amazonaws.com/efa" not in serve["resources"]["limits"]


def test_efa_share_follows_the_pods_gpus() -> None:
    data = _load("eks-cluster-autoscaler")
    data["workloads"]["training"][0]["gpus_per_worker"] = 2
    rank = _pod_containers(_obj(_render("", data), "PyTorchJob", "llm-pretrain"))[0]
    assert rank["resources"]["limits"]["vpc.amazonaws.com/efa"] == 8  # 32 x 2/8


def test_infiniband_renders_the_network_operator_and_rdma_requests() -> None:
    bundle = _render("aks-kueue")  # Standard_ND96isr_H100_v5: InfiniBand from the catalog (fabric auto)
    release = _release(bundle, "network-operator")
    assert (release.version, release.values) == ("26.4.1", {"nfd": {"enabled": False}})
    policy = _obj(bundle, "NicClusterPolicy", "nic-cluster-policy")
    assert policy in bundle.stages["25-network"].objects
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert config["configList"][0]["selectors"] == {"linkTypes": ["infiniband"], "vendors": ["15b3"]}
    rank = _pod_containers(_obj(bundle, "PyTorchJob", "pretrain"))[0]
    assert rank["resources"]["limits"]["rdma/rdma_shared_device_a"] == 1
    assert rank["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert bundle.shared["operator_values"]["driver"]["rdma"] == {"enabled": True}
    # Kueue must not hold the fabric devices as uncovered quota
    kueue = yaml.safe_load(_release(bundle, "kueue").values["managerConfig"]["controllerManagerConfigYaml"])
    assert kueue["resources"] == {"excludeResourcePrefixes": ["rdma/"]}


def test_mig_pools_get_no_fabric_and_the_mpi_launcher_none_either() -> None:
    bundle = _render("onprem-dgx-coscheduling")
    assert bundle.plan("dgx-mig").fabric == "none"
    assert bundle.plan("dgx-train").fabric == "infiniband"
    job = _obj(bundle, "MPIJob", "allreduce-bench")
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert "securityContext" not in launcher
    assert "rdma/rdma_shared_device_a" not in launcher["resources"]["limits"]


def test_roce_adds_multus_ipam_and_a_network_per_tenant() -> None:
    data = _load("onprem-dgx-coscheduling")
    data["network"] = {"fabric": "roce", "roce_interface": "ens1f0np0"}
    bundle = _render("", data)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in bundle.stages["25-network"].objects]
    assert kinds == [
        ("NicClusterPolicy", "nic-cluster-policy"),
        ("IPPool", "roce-pool"),
        ("MacvlanNetwork", "roce-llm"),
        ("MacvlanNetwork", "roce-research"),
    ]
    policy = _obj(bundle, "NicClusterPolicy", "nic-cluster-policy")
    assert sorted(policy["spec"]["secondaryNetwork"]) == ["cniPlugins", "multus"]
    jobset = _obj(bundle, "JobSet", "llm-pretrain")
    template = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert template["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "roce-llm"}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"fabric": "efa"}, "network.fabric: EFA exists on AWS only, not aks"),
        (
            {"fabric": "roce"},
            "network.roce_interface: roce needs the host device of the RoCE port (macvlan master)",
        ),
        ({"fabric": "gpudirect-tcpx"}, "network.fabric: gpudirect-tcpx is not rendered by gpuplane"),
    ],
)
def test_fabric_contradictions_are_refused(change: dict[str, str], problem: str) -> None:
    data = _load("aks-kueue")
    data["network"] = change
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert any(p.startswith(problem) for p in exc.value.problems), exc.value.problems


def test_efa_on_an_instance_type_without_it_is_refused() -> None:
    data = _load("eks-cluster-autoscaler")
    data["gpu_pools"][0]["instance_types"] = ["p5.4xlarge"]  # 1 GPU, 1 EFA interface
    for w in data["workloads"]["training"]:
        w["gpus_per_worker"] = 1
    for t in data["tenants"][:2]:
        t["gpu_quota"] = {"H100-80GB": 2}
    data["network"] = {"fabric": "efa"}
    assert _render("", data).plan("h100-train").fabric_interfaces == 1
    data["gpu_pools"][0]["instance_types"] = ["g6.4xlarge"]  # L4, no EFA
    data["gpu_pools"][0]["gpu"] = "L4"
    for t in data["tenants"][:2]:
        t["gpu_quota"] = {"L4": 2}
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert exc.value.problems == [
        "gpu_pools[0].instance_types: g6.4xlarge carry no fabric, but network.fabric is efa and the pool runs "
        "multi-node training (gpu/data/fabric.yaml)"
    ]


# --- Catalog: every instance type the output names is known -----------------------------------------

INSTANCE_FLAGS = re.compile(r"--(?:machine-type=|node-vm-size )([A-Za-z0-9_.-]+)")


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_every_instance_type_the_output_names_is_in_the_catalog(name: str) -> None:
    from gpuplane.gpu.catalog import catalog

    bundle = _render(name)
    named: set[str] = set()
    for pool in _objs(bundle, "NodePool"):
        for req in pool["spec"]["template"]["spec"]["requirements"]:
            if req["key"] == "node.kubernetes.io/instance-type":
                named.update(req["values"])
    for stage in bundle.stages.values():
        for note in stage.notes:
            named.update(INSTANCE_FLAGS.findall(note))
    named.update(t for plan in bundle.plans for t in plan.pool.instance_types)
    assert all(catalog().instance(t) is not None for t in named), sorted(named)


def test_fabric_rows_name_catalog_instance_types() -> None:
    from gpuplane.gpu.catalog import catalog
    from gpuplane.gpu.fabric import fabrics

    assert [t for t in fabrics() if catalog().instance(t) is None] == []
    assert fabrics()["p5.48xlarge"].interfaces == 32
    assert fabrics()["Standard_ND96isr_H200_v5"].fabric == "infiniband"


def test_azure_h100_nvl_h200_and_a10_families_are_accepted() -> None:
    # The old catalog refused Standard_NC40ads_H100_v5 ("is not in the hardware catalog").
    data = _load("aks-kueue")
    data["gpu_pools"][1].update(gpu="H100-94GB", instance_types=["Standard_NC40ads_H100_v5"])
    data["tenants"][2]["gpu_quota"] = {"H100-94GB": 6}
    assert _render("", data).plan("a100-serve").gpus_per_node == 1
    from gpuplane.gpu.catalog import catalog

    assert (
        catalog().instance("Standard_ND96isr_H200_v5").gpu_count,
        catalog().instance("Standard_NC32ads_A10_v4").gpu_model,
    ) == (8, "A10")


def test_kueue_clusterqueue_covers_each_resource_in_one_group() -> None:
    # kueue v0.19.2 pkg/webhooks/clusterqueue_webhook.go validateResourceGroups: a resource named in two
    # resourceGroups is rejected as Duplicate; a tenant with quota on a whole-GPU pool and a MIG pool
    # used to get cpu and memory in both groups.
    data = _load("onprem-dgx-mig")
    data["scheduler"] = {"name": "kueue"}
    data["workloads"]["training"] = [w for w in data["workloads"]["training"] if w["kind"] != "volcano-job"]
    cq = _obj(_render("", data), "ClusterQueue", "nlp")["spec"]["resourceGroups"]
    covered = ["cpu", "memory", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"]
    assert [g["coveredResources"] for g in cq] == [covered]
    assert [
        (f["name"], [(r["name"], r["nominalQuota"]) for r in f["resources"]]) for f in cq[0]["flavors"]
    ] == [
        ("dgx-train", list(zip(covered, ["444700m", "3996Gi", 16, 0, 0], strict=True))),
        ("dgx-mig", list(zip(covered, ["166700m", "1498Gi", 0, 16, 8], strict=True))),
    ]


# --- Karpenter placement for EFA: aws/karpenter-provider-aws v1.14.1 nodeclasses.md ------------------


def test_karpenter_pool_with_a_placement_group_gets_its_own_nodeclass() -> None:
    # spec.placementGroupSelector: "Each EC2NodeClass maps to exactly one placement group".
    b = _render("eks-training")
    own = _obj(b, "EC2NodeClass", "gpu-h100-train")["spec"]
    assert own["placementGroupSelector"] == {"name": "ml-prod-p5-cluster"}
    assert "placementGroupSelector" not in _obj(b, "EC2NodeClass", "gpu")["spec"]
    refs = {
        o["metadata"]["name"]: o["spec"]["template"]["spec"]["nodeClassRef"]["name"]
        for o in _objs(b, "NodePool")
    }
    assert refs == {"h100-train": "gpu-h100-train", "l40s-serve": "gpu"}
    assert not [n for n in _notes(b, "50-autoscaling") if "placement_group" in n]


def test_karpenter_efa_pool_without_a_placement_group_is_told_to_name_one() -> None:
    data = _load("eks-training")
    del data["gpu_pools"][0]["placement_group"]
    b = _render("", data)
    assert [n for n in _notes(b, "50-autoscaling") if "placement_group" in n] == [
        "pool `h100-train` trains across nodes over EFA: give it `placement_group` (an existing cluster placement "
        "group, `aws ec2 create-placement-group --strategy cluster`) so its EC2NodeClass selects it "
        "(placementGroupSelector) and every node lands on one network segment in one AZ"
    ]
    assert {o["metadata"]["name"] for o in _objs(b, "EC2NodeClass")} == {"gpu-300gi", "gpu-500gi"}


def test_karpenter_reserved_capacity_selects_the_reservations() -> None:
    data = _load("eks-training")
    data["gpu_pools"][0].update(capacity_type="reserved", capacity_reservations=["cr-0123456789abcdef0"])
    b = _render("", data)
    spec = _obj(b, "EC2NodeClass", "gpu-h100-train")["spec"]
    assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    del data["gpu_pools"][0]["capacity_reservations"]
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert exc.value.problems == [
        "gpu_pools[0].capacity_reservations: capacity_type reserved needs the reservation ids (cr-...) the pool's "
        "EC2NodeClass selects; without them Karpenter finds no reserved capacity to launch"
    ]


def test_placement_group_outside_karpenter_is_refused() -> None:
    data = _load("eks-cluster-autoscaler")
    data["gpu_pools"][0]["placement_group"] = "pg-training"
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert exc.value.problems == [
        "gpu_pools[0]: placement_group and capacity_reservations are Karpenter EC2NodeClass selectors (provider "
        "eks, provisioner karpenter); with other node groups set them on the node group"
    ]


# --- SR-IOV for InfiniBand / RoCE: Mellanox/network-operator v26.4.1 -----------------------------


def _sriov_dgx() -> dict[str, Any]:
    data = _load("onprem-dgx-mig")
    data["network"] = {"fabric": "infiniband", "mode": "sriov", "rdma_devices_per_node": 8}
    return data


def test_sriov_mode_runs_the_sriov_device_plugin_and_a_hostdevice_network_per_tenant() -> None:
    b = _render("", _sriov_dgx())
    spec = _obj(b, "NicClusterPolicy", "nic-cluster-policy")["spec"]
    # example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-full.yaml: sriovDevicePlugin with prefix nvidia.com.
    assert "rdmaSharedDevicePlugin" not in spec
    assert spec["sriovDevicePlugin"]["image"] == "sriov-network-device-plugin"
    assert json.loads(spec["sriovDevicePlugin"]["config"]) == {
        "resourceList": [
            {
                "resourceName": "hostdev",
                "resourcePrefix": "nvidia.com",
                "selectors": {"isRdma": True, "linkTypes": ["infiniband"], "vendors": ["15b3"]},
            }
        ]
    }
    assert set(spec["secondaryNetwork"]) == {"multus", "cniPlugins"} and "nvIpam" in spec
    nets = {o["metadata"]["name"]: o["spec"] for o in _objs(b, "HostDeviceNetwork")}
    assert nets == {
        "hostdev-nlp": {
            "networkNamespace": "nlp",
            "resourceName": "hostdev",
            "ipam": '{"type": "nv-ipam", "poolName": "hostdev-pool"}',
        },
        "hostdev-vision": {
            "networkNamespace": "vision",
            "resourceName": "hostdev",
            "ipam": '{"type": "nv-ipam", "poolName": "hostdev-pool"}',
        },
    }
    assert [o["metadata"]["name"] for o in _objs(b, "IPPool")] == ["hostdev-pool"]
    assert not _objs(b, "MacvlanNetwork")


def test_sriov_rank_requests_its_share_of_the_devices_and_one_attachment_each() -> None:
    b = _render("", _sriov_dgx())
    task = _obj(b, "Job", "resnet-ddp")["spec"]["tasks"][0]["template"]
    c = task["spec"]["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/hostdev"] == 8
    assert "rdma/rdma_shared_device_a" not in c["resources"]["limits"]
    assert c["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert task["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == ",".join(["hostdev-vision"] * 8)


def test_sriov_on_azure_takes_the_devices_from_the_instance_type() -> None:
    data = _load("aks-kueue")
    data["network"] = {"mode": "sriov"}
    b = _render("", data)
    limits = [
        c["resources"]["limits"]
        for o in b.all_objects()
        if o["kind"] == "PyTorchJob"
        for r in o["spec"]["pytorchReplicaSpecs"].values()
        for c in r["template"]["spec"]["containers"]
    ]
    # ND96isr H100 v5: 8 InfiniBand ports for 8 GPUs (gpu/data/fabric.yaml [AZ-SIZES]).
    assert {lim["nvidia.com/hostdev"] for lim in limits} == {8}
    config = yaml.safe_load(_release(b, "kueue").values["managerConfig"]["controllerManagerConfigYaml"])
    # nvidia.com/hostdev is not quota; excluded by its full name (a prefix nvidia.com/ would drop the GPUs).
    assert config["resources"] == {"excludeResourcePrefixes": ["nvidia.com/hostdev"]}


@pytest.mark.parametrize(
    ("network", "problem"),
    [
        (
            {"fabric": "infiniband", "mode": "sriov"},
            "network.rdma_devices_per_node: sriov on-prem needs the RDMA devices (PFs/VFs) each node offers, so "
            "every rank can request its share",
        ),
        (
            {"fabric": "none", "mode": "sriov"},
            "network.mode: sriov hands out InfiniBand/RoCE devices; network.fabric is none",
        ),
    ],
)
def test_sriov_contradictions_are_refused(network: dict[str, Any], problem: str) -> None:
    data = _load("onprem-dgx-mig")
    data["network"] = network
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    assert exc.value.problems == [problem]


def test_sriov_roce_needs_no_macvlan_master() -> None:
    data = _load("onprem-dgx-mig")
    data["network"] = {"fabric": "roce", "mode": "sriov", "rdma_devices_per_node": 8}
    b = _render("", data)
    config = json.loads(
        _obj(b, "NicClusterPolicy", "nic-cluster-policy")["spec"]["sriovDevicePlugin"]["config"]
    )
    assert config["resourceList"][0]["selectors"]["linkTypes"] == ["ether"]
    assert not _objs(b, "MacvlanNetwork")


def test_gpudirect_tcpx_refusal_names_every_missing_piece() -> None:
    # GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpx/nccl-test-latest.yaml (pod annotations,
    # tcpx-daemon sidecar and its host mounts), gpudirect-tcpx/nccl-tcpx-installer.yaml (the NCCL plugin).
    data = _load("gke-l4-a100")
    data["network"] = {"fabric": "gpudirect-tcpx"}
    with pytest.raises(BlueprintError) as exc:
        _render("", data)
    (problem,) = [p for p in exc.value.problems if p.startswith("network.fabric")]
    for piece in (
        "--additional-node-network",
        "GKENetworkParamSet + Network (networking.gke.io/v1) per VPC",
        "gpudirect-tcpx/nccl-tcpx-installer.yaml",
        "gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
        "networking.gke.io/interfaces",
        "devices.gke.io/container.tcpx-daemon",
        "tcpx-daemon (tcpgpudmarxd) sidecar",
    ):
        assert piece in problem
