"""DCGM series -> GPU devices -> the pods that hold them -> workloads, node pools and prices.

A device series carries the ``pod`` / ``namespace`` labels only while the kubelet's pod-resources
API lists the GPU as assigned to a running container (dcgm-exporter
``internal/pkg/transformation/kubernetes.go``: ``toDeviceToPod``): so a labelled point means
*allocated*, and an unlabelled one a free GPU. The cluster state adds what metrics do not say:
the owner chain (Pod -> ReplicaSet -> Deployment, Job -> CronJob, StatefulSet -> Notebook ...),
the node pool, the GPU model and instance type, and the sharing mode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplane.k8s.manifest import object_ref
from gpuplane.k8s.wellknown import TRAINING_KINDS as TRAINING_CONTROLLER_KINDS
from gpuplane.usage.metrics import (
    HOST_LABELS,
    NODE_EXPORTER_NODE_LABELS,
    SeriesSet,
    device_key,
    first_label,
    workload_pod,
)

if TYPE_CHECKING:
    from gpuplane.gpu.catalog import GpuModel
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.k8s.objects import Pod

# Kinds whose pods do batch work (the data-starved check applies to them): plain batch Jobs,
# Argo Workflows and the training controllers' kinds that lint and diagnose use too.
TRAINING_KINDS = {"Job", "CronJob", "Workflow"} | TRAINING_CONTROLLER_KINDS
INFERENCE_KINDS = {"Deployment", "InferenceService", "LeaderWorkerSet", "RayService", "ServingRuntime"}
# Job names a CronJob creates: "<cronjob>-<scheduled time in minutes>" (kubernetes
# pkg/controller/cronjob/utils.go getJobName).
_CRONJOB_JOB = re.compile(r"^(?P<cron>.+)-\d+$")


@dataclass(frozen=True, slots=True)
class Owner:
    """The workload a pod belongs to: the top of its controller chain."""

    api_version: str
    kind: str
    namespace: str
    name: str

    def ref(self) -> dict[str, Any]:
        return object_ref(self.api_version, self.kind, self.namespace, self.name)

    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(slots=True)
class Device:
    """One GPU or MIG device as held by one pod (or free, ``pod`` empty), on the grid."""

    node: str
    gpu: str
    gi_id: str
    namespace: str
    pod: str
    container: str
    profile: str  # MIG profile (GPU_I_PROFILE), "" for a whole GPU
    model_name: str  # the exporter's modelName
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    share: float = 1.0  # GPU-equivalents: 1 whole GPU, a MIG slice's memory share, 1/replicas if shared
    shared_replicas: int = 1  # time-slicing / MPS replicas per GPU on its node

    @property
    def allocated(self) -> bool:
        return bool(self.pod)


@dataclass(slots=True)
class NodeInfo:
    name: str
    pool: str
    model: GpuModel | None
    instance_type: str | None
    provider: str | None
    sharing_replicas: int
    sharing_strategy: str | None
    mig: bool = False  # the node carries MIG devices (its capacity is a slice layout)


@dataclass(slots=True)
class WorkloadDevices:
    owner: Owner
    category: str  # notebook | training | inference | other
    devices: list[Device]
    pods: list[str]
    in_cluster: bool  # the pods were found in the cluster state


def _provider(provider_id: str) -> str | None:
    for prefix, name in (("aws://", "aws"), ("gce://", "gcp"), ("azure://", "azure")):
        if provider_id.startswith(prefix):
            return name
    return None


def node_infos(state: ClusterState | None) -> dict[str, NodeInfo]:
    """Pool, model, instance type, provider and sharing per GPU node (from the inventory)."""
    if state is None:
        return {}
    from gpuplane.diagnose.inventory import node_inventory  # deferred for start-up time
    from gpuplane.gpu.nodes import gpu_nodes

    out: dict[str, NodeInfo] = {}
    for node in gpu_nodes(state):
        inv = node_inventory(state, node)
        from gpuplane.gpu.catalog import catalog  # deferred for start-up time

        model = catalog().model(inv.model) if inv.model else None
        out[inv.name] = NodeInfo(
            inv.name,
            inv.pool,
            model,
            inv.instance_type,
            _provider(node.spec.provider_id),
            inv.sharing.replicas if inv.sharing else 1,
            inv.sharing.strategy if inv.sharing else None,
            inv.mig is not None,
        )
    return out


def _model_from_label(name: str) -> GpuModel | None:
    """The exporter's ``modelName`` (NVML's name, "NVIDIA A100-SXM4-40GB") -> catalog model."""
    if not name:
        return None
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    return catalog().model(name.replace(" ", "-")) or catalog().model(name.removeprefix("NVIDIA ").strip())


def build_devices(
    series: SeriesSet, pods: dict[tuple[str, str], Pod], nodes: dict[str, NodeInfo]
) -> list[Device]:
    """One :class:`Device` per (node, GPU, GPU instance, pod), every signal joined on it."""
    by_key: dict[tuple[str, str, str, str], Device] = {}
    for kind, items in series.series.items():
        if kind == "iowait":
            continue
        for s in items:
            labels = s.labels
            key = device_key(labels)
            dev = by_key.get(key)
            if dev is None:
                ns, pod_name, container = workload_pod(labels)
                pod = pods.get((ns, pod_name)) if pod_name else None
                node = (pod.spec.node_name if pod is not None else "") or first_label(labels, HOST_LABELS)
                dev = Device(
                    node,
                    key[1],
                    key[2],
                    ns,
                    pod_name,
                    container,
                    labels.get("GPU_I_PROFILE", ""),
                    labels.get("modelName") or labels.get("model_name", ""),
                )
                by_key[key] = dev
            dev.signals[kind] = s.values
    for dev in by_key.values():
        info = nodes.get(dev.node)
        model = (info.model if info else None) or _model_from_label(dev.model_name)
        if dev.profile and model is not None and model.memory_slices:
            prof = model.profile(dev.profile)
            if prof is not None:
                dev.share = prof.size / model.memory_slices
        elif info is not None and info.sharing_replicas > 1:
            dev.shared_replicas = info.sharing_replicas
            dev.share = 1.0 / info.sharing_replicas
    return sorted(by_key.values(), key=lambda d: (d.node, d.gpu, d.gi_id, d.namespace, d.pod))


def _object_index(state: ClusterState) -> dict[tuple[str, str, str], Any]:
    index: dict[tuple[str, str, str], Any] = {}
    for obj in state.objects:
        index[(obj.kind, obj.namespace or "", obj.name)] = obj
    return index


def _controller_ref(refs: Any) -> Any:
    if not refs:
        return None
    return next((r for r in refs if (r.get("controller") if isinstance(r, dict) else r.controller)), refs[0])


def owner_of(pod: Pod, objects: dict[tuple[str, str, str], Any]) -> Owner:
    """Climb the controller chain through the objects the snapshot holds; where a link is missing,
    the naming rules of the controllers that made it: a ReplicaSet named
    ``<deployment>-<pod-template-hash>`` (pkg/controller/deployment/sync.go) and a Job named
    ``<cronjob>-<minutes>`` with that CronJob present."""
    ns = pod.metadata.namespace or "default"
    ref = _controller_ref(pod.metadata.owner_references)
    if ref is None:
        return Owner("v1", "Pod", ns, pod.metadata.name)
    owner = Owner(ref.api_version, ref.kind, ns, ref.name)
    for _ in range(6):
        obj = objects.get((owner.kind, ns, owner.name))
        if obj is not None:
            meta = obj.data.get("metadata")
            refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
            up = _controller_ref(refs) if isinstance(refs, list) else None
            if isinstance(up, dict) and up.get("kind") and up.get("name"):
                owner = Owner(str(up.get("apiVersion", "")), str(up["kind"]), ns, str(up["name"]))
                continue
        if owner.kind == "ReplicaSet":
            template_hash = pod.metadata.labels.get("pod-template-hash", "")
            if template_hash and owner.name.endswith("-" + template_hash):
                owner = Owner("apps/v1", "Deployment", ns, owner.name[: -len(template_hash) - 1])
                continue
        if owner.kind == "Job" and owner.api_version.startswith("batch/"):
            m = _CRONJOB_JOB.match(owner.name)
            if m and ("CronJob", ns, m["cron"]) in objects:
                owner = Owner("batch/v1", "CronJob", ns, m["cron"])
                continue
        break
    return owner


def category_of(owner: Owner, pod: Pod | None) -> str:
    """notebook (Kubeflow Notebook: its controller labels pods ``notebook-name``,
    components/notebook-controller/controllers/notebook_controller.go generateStatefulSet;
    JupyterHub's KubeSpawner labels single-user servers ``component=singleuser-server``),
    training, inference or other."""
    labels = pod.metadata.labels if pod is not None else {}
    if (
        owner.kind == "Notebook"
        or "notebook-name" in labels
        or labels.get("component") == "singleuser-server"
    ):
        return "notebook"
    if owner.kind in TRAINING_KINDS or (owner.kind == "Job" and "volcano" in owner.api_version):
        return "training"
    if owner.kind in INFERENCE_KINDS or owner.kind == "StatefulSet":
        return "inference"
    return "other"


def group_workloads(devices: list[Device], state: ClusterState | None) -> list[WorkloadDevices]:
    """Allocated devices grouped by workload (free devices stay out)."""
    pods: dict[tuple[str, str], Pod] = {}
    objects: dict[tuple[str, str, str], Any] = {}
    if state is not None:
        pods = {(p.metadata.namespace or "default", p.metadata.name): p for p in state.pods}
        objects = _object_index(state)
    groups: dict[Owner, WorkloadDevices] = {}
    for dev in devices:
        if not dev.allocated:
            continue
        pod = pods.get((dev.namespace, dev.pod))
        owner = owner_of(pod, objects) if pod is not None else Owner("v1", "Pod", dev.namespace, dev.pod)
        group = groups.get(owner)
        if group is None:
            group = groups[owner] = WorkloadDevices(owner, category_of(owner, pod), [], [], pod is not None)
        group.devices.append(dev)
        if dev.pod not in group.pods:
            group.pods.append(dev.pod)
    return list(groups.values())


def pods_index(state: ClusterState | None) -> dict[tuple[str, str], Pod]:
    if state is None:
        return {}
    return {(p.metadata.namespace or "default", p.metadata.name): p for p in state.pods}


def iowait_by_node(series: SeriesSet) -> dict[str, np.ndarray]:
    """node_exporter's iowait share per node, keyed by node name: kube-prometheus-stack
    relabels ``instance`` to the node name (from ``__meta_kubernetes_pod_node_name``); a ``node``
    or ``nodename`` label is read first, and a ``:port`` suffix is dropped."""
    out: dict[str, np.ndarray] = {}
    for s in series.series.get("iowait", []):
        name = first_label(s.labels, NODE_EXPORTER_NODE_LABELS)
        host = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
        out[host] = s.values
    return out
