"""The API resources gpuplane reads from a live cluster (and nothing else).

One table drives the live reader (:mod:`gpuplane.sources.live`), the snapshot
and the read-only ClusterRole in ``deploy/clusterrole.yaml`` (a test checks the
two agree). Secrets are deliberately absent: gpuplane never requests them.

Versions are listed newest first; the reader takes the first one the server
serves according to discovery (``GET /apis``). CRD groups and versions come
from the upstream CRDs in ``shared/corpus/crds`` (GPU Operator, Karpenter,
Volcano, scheduler-plugins, Kueue, Kubeflow training-operator / mpi-operator /
trainer, JobSet, LeaderWorkerSet, KubeRay, KServe) and the Spark operator's
``sparkoperator.k8s.io/v1beta2``. DRA (``resource.k8s.io``) went GA as ``v1`` in
Kubernetes 1.34 (v1beta2 in 1.33, v1beta1 in 1.32).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Namespaces where NVIDIA's GPU Operator / device plugin usually run (Helm chart
# defaults, OpenShift's OperatorHub install, the device plugin's static manifest).
GPU_NAMESPACES = (
    "gpu-operator",
    "gpu-operator-resources",
    "nvidia-gpu-operator",
    "nvidia-device-plugin",
    "nvidia-dra-driver-gpu",
    "kube-system",
)

# DaemonSets of the NVIDIA GPU stack (by name or image): their namespaces hold the GPU ConfigMaps.
_GPU_DAEMONSET = re.compile(
    r"nvidia|gpu-operator|gpu-feature-discovery|device-plugin|mig-manager|dcgm", re.IGNORECASE
)


def is_gpu_daemonset(name: str, images: list[str]) -> bool:
    """Whether a DaemonSet belongs to the GPU stack (device plugin, GFD, MIG manager, DCGM, operator)."""
    return _GPU_DAEMONSET.search(" ".join([name, *images])) is not None


@dataclass(frozen=True, slots=True)
class ResourceType:
    """One listable API resource."""

    group: str  # "" = core
    versions: tuple[str, ...]  # preference order
    plural: str
    kind: str
    namespaced: bool
    builtin: bool = True  # False: a CRD, silently skipped when not installed
    gpu_namespaces_only: bool = False  # ConfigMaps: only in GPU-stack namespaces

    @property
    def display(self) -> str:
        """``pods`` / ``clusterpolicies.nvidia.com``, as kubectl and RBAC name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _core(plural: str, kind: str, namespaced: bool = True, **kw: bool) -> ResourceType:
    return ResourceType("", ("v1",), plural, kind, namespaced, **kw)


def _api(
    group: str, versions: tuple[str, ...], plural: str, kind: str, namespaced: bool = True
) -> ResourceType:
    return ResourceType(group, versions, plural, kind, namespaced, builtin=True)


def _crd(
    group: str, versions: tuple[str, ...], plural: str, kind: str, namespaced: bool = True
) -> ResourceType:
    return ResourceType(group, versions, plural, kind, namespaced, builtin=False)


_DRA = ("v1", "v1beta2", "v1beta1")
_KUEUE = ("v1beta2", "v1beta1")

RESOURCES: tuple[ResourceType, ...] = (
    # core
    _core("nodes", "Node", namespaced=False),
    _core("namespaces", "Namespace", namespaced=False),
    _core("pods", "Pod"),
    _core("resourcequotas", "ResourceQuota"),
    _core("limitranges", "LimitRange"),
    _core("persistentvolumes", "PersistentVolume", namespaced=False),
    _core("persistentvolumeclaims", "PersistentVolumeClaim"),
    _core("services", "Service"),
    _core("configmaps", "ConfigMap", gpu_namespaces_only=True),
    # built-in groups
    _api("scheduling.k8s.io", ("v1",), "priorityclasses", "PriorityClass", namespaced=False),
    _api("storage.k8s.io", ("v1",), "storageclasses", "StorageClass", namespaced=False),
    _api("storage.k8s.io", ("v1",), "csidrivers", "CSIDriver", namespaced=False),
    _api("apps", ("v1",), "daemonsets", "DaemonSet"),
    _api("apps", ("v1",), "deployments", "Deployment"),
    _api("apps", ("v1",), "statefulsets", "StatefulSet"),
    _api("apps", ("v1",), "replicasets", "ReplicaSet"),
    _api("batch", ("v1",), "jobs", "Job"),
    _api("batch", ("v1",), "cronjobs", "CronJob"),
    _api("node.k8s.io", ("v1",), "runtimeclasses", "RuntimeClass", namespaced=False),
    # DRA: optional (absent before 1.32 or with the API group disabled)
    _crd("resource.k8s.io", _DRA, "deviceclasses", "DeviceClass", namespaced=False),
    _crd("resource.k8s.io", _DRA, "resourceclaims", "ResourceClaim"),
    _crd("resource.k8s.io", _DRA, "resourceclaimtemplates", "ResourceClaimTemplate"),
    _crd("resource.k8s.io", _DRA, "resourceslices", "ResourceSlice", namespaced=False),
    # NVIDIA GPU Operator
    _crd("nvidia.com", ("v1",), "clusterpolicies", "ClusterPolicy", namespaced=False),
    _crd("nvidia.com", ("v1alpha1",), "nvidiadrivers", "NVIDIADriver", namespaced=False),
    # Karpenter
    _crd("karpenter.sh", ("v1", "v1beta1"), "nodepools", "NodePool", namespaced=False),
    _crd("karpenter.sh", ("v1", "v1beta1"), "nodeclaims", "NodeClaim", namespaced=False),
    _crd("karpenter.k8s.aws", ("v1", "v1beta1"), "ec2nodeclasses", "EC2NodeClass", namespaced=False),
    # Volcano
    _crd("batch.volcano.sh", ("v1alpha1",), "jobs", "Job"),
    _crd("scheduling.volcano.sh", ("v1beta1",), "podgroups", "PodGroup"),
    _crd("scheduling.volcano.sh", ("v1beta1",), "queues", "Queue", namespaced=False),
    # scheduler-plugins (coscheduling, capacity scheduling)
    _crd("scheduling.x-k8s.io", ("v1alpha1",), "podgroups", "PodGroup"),
    _crd("scheduling.x-k8s.io", ("v1alpha1",), "elasticquotas", "ElasticQuota"),
    # Kueue
    _crd("kueue.x-k8s.io", _KUEUE, "clusterqueues", "ClusterQueue", namespaced=False),
    _crd("kueue.x-k8s.io", _KUEUE, "localqueues", "LocalQueue"),
    _crd("kueue.x-k8s.io", _KUEUE, "resourceflavors", "ResourceFlavor", namespaced=False),
    _crd("kueue.x-k8s.io", _KUEUE, "workloads", "Workload"),
    _crd("kueue.x-k8s.io", _KUEUE, "cohorts", "Cohort", namespaced=False),
    _crd("kueue.x-k8s.io", _KUEUE, "topologies", "Topology", namespaced=False),
    # Kubeflow
    _crd("kubeflow.org", ("v1",), "pytorchjobs", "PyTorchJob"),
    _crd("kubeflow.org", ("v1",), "tfjobs", "TFJob"),
    _crd("kubeflow.org", ("v2beta1", "v1"), "mpijobs", "MPIJob"),
    _crd("trainer.kubeflow.org", ("v1alpha1",), "trainjobs", "TrainJob"),
    _crd("trainer.kubeflow.org", ("v1alpha1",), "trainingruntimes", "TrainingRuntime"),
    _crd(
        "trainer.kubeflow.org",
        ("v1alpha1",),
        "clustertrainingruntimes",
        "ClusterTrainingRuntime",
        namespaced=False,
    ),
    # JobSet, LeaderWorkerSet
    _crd("jobset.x-k8s.io", ("v1alpha2",), "jobsets", "JobSet"),
    _crd("leaderworkerset.x-k8s.io", ("v1",), "leaderworkersets", "LeaderWorkerSet"),
    # KubeRay
    _crd("ray.io", ("v1", "v1alpha1"), "rayjobs", "RayJob"),
    _crd("ray.io", ("v1", "v1alpha1"), "rayclusters", "RayCluster"),
    _crd("ray.io", ("v1", "v1alpha1"), "rayservices", "RayService"),
    # KServe
    _crd("serving.kserve.io", ("v1beta1",), "inferenceservices", "InferenceService"),
    _crd("serving.kserve.io", ("v1alpha1",), "servingruntimes", "ServingRuntime"),
    # Spark operator
    _crd("sparkoperator.k8s.io", ("v1beta2",), "sparkapplications", "SparkApplication"),
)
