"""The expert-review findings: generated workloads fit their nodes, vLLM fits its GPU share,
the controllers for every CRD are installed, ranks are wired, storage is reused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.generate import sizing
from gpuplane.generate.blueprint import BlueprintError, parse_blueprint
from gpuplane.generate.engine import render_blueprint
from gpuplane.generate.output import write_bundle
from gpuplane.generate.render.base import Bundle
from gpuplane.k8s.quantity import parse_quantity

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "blueprints"


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())


def _render(name: str, data: dict[str, Any] | None = None) -> Bundle:
    return render_blueprint(parse_blueprint(data if data is not None else _load(name)))


def _refused(data: dict[str, Any]) -> list[str]:
    with pytest.raises(BlueprintError) as exc:
        render_blueprint(parse_blueprint(data))
    return exc.value.problems


def _obj(bundle: Bundle, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    for o in bundle.all_objects():
        md = o["metadata"]
        if o["kind"] == kind and md["name"] == name and md.get("namespace") == namespace:
            return o
    raise AssertionError(f"no {kind} {namespace}/{name}")


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "containers" in node and isinstance(node["containers"], list):
                out.extend(node["containers"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(obj)
    return out


# --- A1: requests fit the nodes -----------------------------------------------------------------


def test_allocatable_rule_for_g2_standard_8() -> None:
    # 8 vCPU / 32 GiB: CPU reserve 60 + 10 + 2 x 5 + 4 x 2.5 = 90m (+1 CPU DaemonSets); memory
    # 1 + 0.8 + 0.8 + 0.96 GiB (= 3646Mi, rounded up) + 100Mi eviction + 2Gi DaemonSets.
    shape = sizing.NodeShape(8000, 32 * 1024, "test")
    assert sizing.allocatable(shape) == (6910, 32768 - 3646 - 100 - 2048)
    assert sizing.pod_share(shape, 1, 1) == sizing.PodShare(6900, 26 * 1024)
    assert sizing.pod_share(shape, 1, 4) == sizing.PodShare(1700, 6 * 1024)


@pytest.mark.parametrize(
    ("name", "kind", "obj", "ns", "node_cpu", "node_mem_gi"),
    [
        ("gke-inference", "Deployment", "mistral-7b", "chat", 8, 32),
        ("gke-inference", "Deployment", "qwen-0-5b", "chat", 8 / 4, 32 / 4),
        ("eks-training", "PyTorchJob", "llm-pretrain", "prod-training", 192, 2048),
        ("eks-training", "Deployment", "llama-8b", "serving", 48 / 4, 384 / 4),
        ("onprem-dgx-mig", "Job", "resnet-ddp", "vision", 224, 2048),
    ],
)
def test_requests_fit_the_nodes_share(
    name: str, kind: str, obj: str, ns: str, node_cpu: float, node_mem_gi: float
) -> None:
    bundle = _render(name)
    for c in _containers(_obj(bundle, kind, obj, ns)):
        req = c["resources"]["requests"]
        assert req == {k: v for k, v in c["resources"]["limits"].items() if not k.startswith("nvidia.com/")}
        assert float(parse_quantity(req["cpu"])) <= node_cpu
        assert float(parse_quantity(req["memory"])) <= node_mem_gi * 1024**3


def test_training_pods_are_sized_to_the_node() -> None:
    c = _containers(_obj(_render("eks-training"), "PyTorchJob", "llm-pretrain", "prod-training"))[0]
    # plus the node's 32 EFA interfaces (p5.48xlarge, gpu/data/fabric.yaml) for the 8-GPU rank
    assert c["resources"]["requests"] == {
        "cpu": "190400m",
        "memory": "1998Gi",
        "ephemeral-storage": "50Gi",
        "vpc.amazonaws.com/efa": 32,
    }
    c = _containers(_obj(_render("onprem-dgx-mig"), "Job", "resnet-ddp", "vision"))[0]
    assert c["resources"]["requests"] == {
        "cpu": "222300m",
        "memory": "1998Gi",
        "ephemeral-storage": "50Gi",
        "rdma/rdma_shared_device_a": 1,
    }


def test_explicit_request_larger_than_share_is_refused() -> None:
    data = _load("gke-inference")
    data["workloads"]["inference"][0]["memory"] = "64Gi"
    assert _refused(data) == [
        "workloads.inference[0].memory: 64Gi does not fit: a pod's share of a g2-standard-8 (8 CPUs, 32 GiB, "
        "1 GPU units) is 6900m CPU / 26Gi after the system reserve"
    ]


def test_onprem_pool_without_host_figures_is_refused() -> None:
    data = _load("onprem-dgx-mig")
    data["gpu_pools"][0]["gpu"] = "A100-80GB"
    data["tenants"][0]["gpu_quota"] = {"A100-80GB": 16}
    problems = _refused(data)
    assert problems[0] == (
        "gpu_pools[0].cpus_per_node: on-prem pools give host cpus_per_node and memory_per_node_gi (only 8 x "
        "H100-80GB nodes default to the DGX H100's 224 CPUs / 2048 GiB); pods are sized from them"
    )
    data["gpu_pools"][0].update(cpus_per_node=128, memory_per_node_gi=1024)
    assert not any(p.startswith("gpu_pools[0]") for p in _refused(data) if "cpus_per_node" in p)


def test_shm_larger_than_half_the_memory_is_refused() -> None:
    data = _load("onprem-dgx-mig")
    data["workloads"]["training"][2]["shm_size"] = "40Gi"
    assert _refused(data) == [
        "workloads.training[2].shm_size: 40Gi of /dev/shm counts against the pod's memory limit (62Gi); keep it "
        "at most half of it (platform.md §4.6)"
    ]


def test_node_disk_must_hold_every_pods_ephemeral_storage() -> None:
    data = _load("gke-inference")
    data["gpu_pools"][1]["root_volume_gi"] = 200
    assert _refused(data) == [
        "storage.model_artifacts_gi: 4 pods per l4-shared node x 50Gi ephemeral-storage = 200Gi; gpu_pools "
        "root_volume_gi 200 leaves 140Gi (85% image-GC threshold, 30Gi of images): raise root_volume_gi or lower it"
    ]


# --- A2: vLLM on shared GPUs -------------------------------------------------------------------------


def test_7b_model_on_time_sliced_l4_is_refused() -> None:
    data = _load("gke-inference")
    data["workloads"]["inference"][0]["pool"] = "l4-shared"
    assert _refused(data) == [
        "workloads.inference[0].model: mistralai/Mistral-7B-Instruct-v0.3 needs 14.5 GB of weights; a 4-way "
        "time-slicing share of L4 gives vLLM 5.3 GB (--gpu-memory-utilization 0.22 x 24 GB x 1), and weights may "
        "take at most 80% of it (the rest is KV cache); use whole GPUs, fewer replicas or a smaller model"
    ]


def test_unknown_model_on_shared_gpus_needs_its_size() -> None:
    data = _load("gke-inference")
    data["workloads"]["inference"][1]["model"] = "example/tiny-model"
    assert _refused(data) == [
        "workloads.inference[1].model_size_gb: required to serve example/tiny-model on time-slicing GPUs (vLLM "
        "pre-allocates its GPU memory and shared replicas get no memory isolation)"
    ]
    data["workloads"]["inference"][1]["model_size_gb"] = 2.0
    _render("gke-inference", data)


def test_gpu_memory_utilization_is_the_share() -> None:
    bundle = _render("gke-inference")
    shared = _containers(_obj(bundle, "Deployment", "qwen-0-5b", "chat"))[0]["args"]
    whole = _containers(_obj(bundle, "Deployment", "mistral-7b", "chat"))[0]["args"]
    assert shared[shared.index("--gpu-memory-utilization") + 1] == "0.22"
    assert whole[whole.index("--gpu-memory-utilization") + 1] == "0.9"
    assert sizing.gpu_memory_utilization(3) == sizing.Fraction(3, 10)


# --- A3: controllers for the CRDs used ---------------------------------------------------------------


def test_controllers_installed_for_the_kinds_used(tmp_path: Path) -> None:
    write_bundle(_render("eks-training"), tmp_path / "eks")
    kust = yaml.safe_load((tmp_path / "eks" / "10-operators" / "kustomization.yaml").read_text())
    assert kust["resources"] == [
        "github.com/kubeflow/trainer.git/manifests/overlays/standalone?ref=v1.9.4",
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
    ]
    readme = (tmp_path / "eks" / "README.md").read_text()
    assert (
        '`kubectl apply --server-side -k "github.com/kubeflow/trainer.git/manifests/overlays/standalone?ref=v1.9.4"`'
        in readme
    )
    write_bundle(_render("onprem-dgx-mig"), tmp_path / "dgx")
    kust = yaml.safe_load((tmp_path / "dgx" / "10-operators" / "kustomization.yaml").read_text())
    assert kust["resources"] == [
        "https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.0/deploy/v2beta1/mpi-operator.yaml"
    ]
    assert kust["patches"] == [
        {
            "target": {"kind": "Deployment", "name": "mpi-operator", "namespace": "mpi-operator"},
            "patch": "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --gang-scheduling=volcano\n",
        }
    ]


def test_pytorchjob_and_mpijob_together_are_refused() -> None:
    data = _load("eks-training")
    data["workloads"]["training"][1]["kind"] = "mpijob"
    assert _refused(data)[0].startswith(
        "workloads.training: pytorchjob needs Kubeflow training-operator v1.9"
    )


# --- A4: launch commands -----------------------------------------------------------------------------


def test_launch_commands_wire_rank_and_rendezvous() -> None:
    eks, dgx = _render("eks-training"), _render("onprem-dgx-mig")
    tail = ["--nnodes=2", "--nproc-per-node=8"]
    pt = _obj(eks, "PyTorchJob", "llm-pretrain", "prod-training")
    assert pt["spec"]["nprocPerNode"] == "8"
    assert _containers(pt)[0]["command"] == [
        "torchrun",
        *tail,
        "--node-rank=$(PET_NODE_RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
        "train.py",
    ]
    assert _containers(_obj(eks, "JobSet", "sweep", "research"))[0]["command"] == [
        "torchrun",
        *tail,
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--master-addr=sweep-workers-0-0.sweep",
        "--master-port=29500",
        "train.py",
    ]
    assert _containers(_obj(dgx, "Job", "resnet-ddp", "vision"))[0]["command"] == [
        "torchrun",
        *tail,
        "--node-rank=$(RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
        "train.py",
    ]
    job = _obj(dgx, "Job", "notebook-finetune", "students")
    assert job["spec"]["template"]["spec"]["subdomain"] == "notebook-finetune"
    assert _containers(job)[0]["command"] == [
        "torchrun",
        "--nnodes=2",
        "--nproc-per-node=1",
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--master-addr=notebook-finetune-0.notebook-finetune",
        "--master-port=29500",
        "train.py",
    ]
    mpi = _obj(dgx, "MPIJob", "bert-mpi", "nlp")["spec"]["mpiReplicaSpecs"]
    launcher = mpi["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert launcher[:4] == ["mpirun", "-np", "16", "--allow-run-as-root"]
    assert launcher[-2:] == ["python", "train.py"]
    assert mpi["Worker"]["template"]["spec"]["containers"][0]["command"] == ["/usr/sbin/sshd", "-De"]


def test_command_override_is_kept() -> None:
    data = _load("eks-training")
    data["workloads"]["training"][0]["command"] = ["bash", "-c", "python run.py"]
    pt = _obj(_render("eks-training", data), "PyTorchJob", "llm-pretrain", "prod-training")
    assert _containers(pt)[0]["command"] == ["bash", "-c", "python run.py"]


# --- B4: storage reuse ---------------------------------------------------------------------------------


def test_checkpoints_and_cache_are_folders_of_the_named_volume() -> None:
    bundle = _render("eks-training")
    claims = sorted(
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in bundle.all_objects()
        if o["kind"] == "PersistentVolumeClaim"
    )
    assert claims == [
        ("prod-training", "datasets"),
        ("prod-training", "fsx-scratch"),
        ("research", "datasets"),
        ("research", "fsx-scratch"),
        ("serving", "datasets"),
        ("serving", "fsx-scratch"),
    ]
    pv = _obj(bundle, "PersistentVolume", "fsx-scratch-serving")
    assert pv["spec"]["csi"]["volumeHandle"] == "fs-0fedcba9876543210"
    serving = _containers(_obj(bundle, "Deployment", "llama-8b", "serving"))[0]["volumeMounts"]
    assert {"name": "fsx-scratch", "mountPath": "/models", "subPath": "model-cache"} in serving
    assert not any(m["mountPath"] == "/checkpoints" for m in serving)
    trainer = _containers(_obj(bundle, "PyTorchJob", "llm-pretrain", "prod-training"))[0]["volumeMounts"]
    assert {"name": "fsx-scratch", "mountPath": "/checkpoints", "subPath": "checkpoints"} in trainer


def test_readonly_efs_dataset_binds_the_existing_file_system() -> None:
    pv = _obj(_render("eks-training"), "PersistentVolume", "datasets-research")
    assert pv["spec"]["csi"] == {
        "driver": "efs.csi.aws.com",
        "volumeHandle": "fs-0123456789abcdef0",
        "readOnly": True,
    }
    assert pv["spec"]["claimRef"] == {"namespace": "research", "name": "datasets"}


def test_readonly_dataset_on_dynamic_backend_is_refused() -> None:
    data = _load("gke-inference")
    data["storage"]["shared_datasets"][0]["access_mode"] = "ReadOnlyMany"
    assert _refused(data)[-1].startswith(
        "storage.shared_datasets[0].access_mode: a ReadOnlyMany claim on a dynamically provisioned filestore volume "
        "starts empty"
    )


# --- B5, B6, polish ------------------------------------------------------------------------------------


def test_toolkit_disabled_only_with_eks_preinstalled_driver() -> None:
    assert _render("eks-training").shared["operator_values"]["toolkit"] == {"enabled": False}
    assert _render("onprem-dgx-mig").shared["operator_values"]["toolkit"] == {"enabled": True}


def test_gated_models_read_an_optional_hf_token(tmp_path: Path) -> None:
    bundle = _render("gke-inference")
    env = _containers(_obj(bundle, "Deployment", "mistral-7b", "chat"))[0]["env"]
    assert {
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token", "optional": True}},
    } in env
    assert all(
        e["name"] != "HF_TOKEN"
        for e in _containers(_obj(bundle, "Deployment", "qwen-0-5b", "chat"))[0]["env"]
    )
    write_bundle(bundle, tmp_path)
    readme = (tmp_path / "README.md").read_text()
    assert "`kubectl -n chat create secret generic hf-token --from-literal=token=hf_...`" in readme
    assert 'name: {matches: "^vllm:(.*)$", as: "vllm_${1}"}' in readme


def test_one_ec2nodeclass_per_root_volume_size() -> None:
    data = yaml.safe_load((EXAMPLES / "eks-training.yaml").read_text())
    del data["gpu_pools"][0]["placement_group"]  # a pool with one has a class of its own
    bundle = render_blueprint(parse_blueprint(data))
    classes = {
        o["metadata"]["name"]: o["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"]
        for o in bundle.all_objects()
        if o["kind"] == "EC2NodeClass"
    }
    assert classes == {"gpu-300gi": "300Gi", "gpu-500gi": "500Gi"}
    ref = _obj(bundle, "NodePool", "l40s-serve")["spec"]["template"]["spec"]["nodeClassRef"]["name"]
    assert ref == "gpu-300gi"


def test_karpenter_irsa_role_is_required_and_annotated() -> None:
    rel = next(r for r in _render("eks-training").releases if r.release == "karpenter")
    assert rel.values["serviceAccount"] == {
        "annotations": {
            "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/KarpenterControllerRole-ml-prod"
        }
    }
    data = _load("eks-training")
    del data["autoscaling"]["iam_role_arn"]
    assert _refused(data)[0].startswith(
        "autoscaling.iam_role_arn: the Karpenter controller needs an IAM role"
    )


def test_volcano_config_goes_through_chart_values() -> None:
    bundle = _render("onprem-dgx-mig")
    assert not any(
        o["kind"] == "ConfigMap" and o["metadata"]["name"] == "volcano-scheduler-configmap"
        for o in bundle.all_objects()
    )
    rel = next(r for r in bundle.releases if r.release == "volcano")
    conf = yaml.safe_load(rel.values["custom"]["scheduler_config_override"])
    assert conf["actions"] == "enqueue, allocate, backfill, reclaim"


def test_output_has_no_yaml_anchors(tmp_path: Path) -> None:
    write_bundle(_render("eks-training"), tmp_path)
    assert not any("&id0" in p.read_text() for p in tmp_path.rglob("*.yaml"))
