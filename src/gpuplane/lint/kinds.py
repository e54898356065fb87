"""AI kind groups over PodSets: "GPU workload", "training job", "inference server".

kube-linter keeps kind matchers (DeploymentLike, JobLike) in one registry so
checks do not re-derive them; these are the AI-specific groups on top, computed
from the expanded PodSet (its source object, pod template and GPU requests).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpuplane.gpu import requests as _requests
from gpuplane.k8s.quantity import QuantityError, parse_quantity
from gpuplane.k8s.wellknown import TRAINING_KINDS

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet

BATCH_KINDS = frozenset({"Job", "CronJob"})
SERVING_KINDS = frozenset(
    {
        "InferenceService",
        "ServingRuntime",
        "ClusterServingRuntime",
        "RayService",
        "InferenceGraph",
        "LLMInferenceService",
    }
)
LONG_RUNNING_KINDS = frozenset({"Deployment", "StatefulSet", "LeaderWorkerSet", "ReplicaSet"})

# Operators' custom resources, by (API group, kind): their names alone are too common ("Model",
# "Service", "Workspace") to match without the group. Dynamo graphs are left out of the serving
# group on purpose: their operator adds probes by component type, which is not modelled.
SERVING_CRDS = frozenset(
    {
        ("kubeai.org", "Model"),
        ("orchestration.aibrix.ai", "StormService"),
        ("orchestration.aibrix.ai", "RayClusterFleet"),
        ("workloads.x-k8s.io", "RoleBasedGroup"),
        ("kaito.sh", "Workspace"),
        ("kaito.sh", "InferenceSet"),
        ("apps.nvidia.com", "NIMService"),
        ("serving.knative.dev", "Service"),
    }
)
TRAINING_CRDS = frozenset(
    {
        ("sagemaker.amazonaws.com", "HyperPodPyTorchJob"),
        ("elastic.iml.github.io", "ElasticJob"),
        ("elastic.pytorch.org", "ElasticJob"),
        ("trainer.kubeflow.org", "TrainingRuntime"),
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
    }
)

# Image name fragments of inference servers (lower-case substrings of the image reference).
SERVING_IMAGE_HINTS = (
    "vllm",
    "text-generation-inference",
    "tgi",
    "tritonserver",
    "triton",
    "tensorrt-llm",
    "trtllm",
    "sglang",
    "lmdeploy",
    "ollama",
    "llama.cpp",
    "llama-cpp",
    "nvcr.io/nim",
    "/nim/",
    "torchserve",
    "tensorflow/serving",
    "text-embeddings-inference",
    "kserve",
    "seldon",
    "mlserver",
    "ray-serve",
    "infinity",
    "aphrodite",
    "lorax",
)

# DRA device classes of the GPU drivers (NVIDIA, Intel, AMD DRA drivers).
GPU_DEVICE_CLASS_HINTS = ("gpu.nvidia.com", "mig.nvidia.com", "gpu.intel.com", "gpu.amd.com", "gpu")

# The device-counting semantics are gpu.requests': these names keep the rules' spelling.
ACCELERATOR_KINDS = _requests.ACCELERATOR_KINDS
is_accelerator_resource = _requests.is_accelerator_resource
quantity_count = _requests.whole_count


def quantity_value(value: Any) -> Fraction | None:
    """Exact value of a Kubernetes quantity (``"500m"`` -> 1/2), None where the API refuses it.

    One parser for the whole project: :func:`gpuplane.k8s.quantity.parse_quantity`
    (``resource.ParseQuantity``); rules only need "no value" instead of its error.
    """
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def _pod_spec(ps: PodSet) -> dict[str, Any]:
    template = ps.template if isinstance(ps.template, dict) else {}
    spec = template.get("spec")
    return spec if isinstance(spec, dict) else {}


def container_gpu_requests(container: dict[str, Any]) -> dict[str, int]:
    """Accelerator requests of one container (:func:`gpuplane.gpu.requests.container_device_requests`)."""
    return _requests.container_device_requests(container)


def names_accelerator(container: dict[str, Any]) -> bool:
    """The container asks for an accelerator at all: some accelerator resource in ``limits``
    or ``requests`` with a value other than zero, even one the API server would refuse
    (``nvidia.com/gpu: 0.5``).

    :func:`container_gpu_requests` only counts valid whole numbers; rules that ask "did the
    author mean to use a GPU here?" need this wider test, or an invalid quantity (already its
    own finding, gpu-fractional-quantity) makes the container look GPU-less.
    """
    res = container.get("resources")
    if not isinstance(res, dict):
        return False
    for kind in ("limits", "requests"):
        block = res.get(kind)
        if not isinstance(block, dict):
            continue
        for name, value in block.items():
            if isinstance(name, str) and is_accelerator_resource(name) and quantity_value(value) != 0:
                return True
    return False


def _section_requests(ps: PodSet, section: str) -> list[dict[str, int]]:
    items = _pod_spec(ps).get(section)
    if not isinstance(items, list):
        return []
    return [container_gpu_requests(c) for c in items if isinstance(c, dict)]


def gpu_requests(ps: PodSet) -> dict[str, int]:
    """Accelerator requests of one pod of ``ps``, summed over its app containers."""
    total: dict[str, int] = {}
    for req in _section_requests(ps, "containers"):
        for name, count in req.items():
            total[name] = total.get(name, 0) + count
    return total


def init_gpu_requests(ps: PodSet) -> dict[str, int]:
    """Largest accelerator request of any single init container (init containers run one at a time)."""
    top: dict[str, int] = {}
    for req in _section_requests(ps, "initContainers"):
        for name, count in req.items():
            if count > top.get(name, 0):
                top[name] = count
    return top


def effective_gpu_requests(ps: PodSet) -> dict[str, int]:
    """What the scheduler reserves per pod (:func:`gpuplane.gpu.requests.spec_device_requests`:
    ``PodRequests``'s formula, sidecars included)."""
    return _requests.spec_device_requests(_pod_spec(ps))


def claim_object_is_gpu(data: dict[str, Any]) -> bool:
    """A ResourceClaim/ResourceClaimTemplate whose device requests name a GPU device class."""
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return False
    if data.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec.get("spec"), dict) else {}
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return False
    for req in requests:
        if not isinstance(req, dict):
            continue
        classes = [req.get("deviceClassName")]
        exactly = req.get("exactly")
        if isinstance(exactly, dict):
            classes.append(exactly.get("deviceClassName"))
        for alt in req.get("firstAvailable") or ():
            if isinstance(alt, dict):
                classes.append(alt.get("deviceClassName"))
        if any(isinstance(c, str) and any(h in c for h in GPU_DEVICE_CLASS_HINTS) for c in classes):
            return True
    return False


def has_gpu_claim(ps: PodSet, gpu_claim_names: set[str] | frozenset[str] = frozenset()) -> bool:
    """Pod asks for a DRA claim known (from the input) or named to be a GPU."""
    claims = _pod_spec(ps).get("resourceClaims")
    if not isinstance(claims, list):
        return False
    for claim in claims:
        if not isinstance(claim, dict):
            continue
        ref = claim.get("resourceClaimTemplateName") or claim.get("resourceClaimName") or ""
        source = claim.get("source")
        if isinstance(source, dict):  # v1alpha/v1beta1 shape
            ref = source.get("resourceClaimTemplateName") or source.get("resourceClaimName") or ref
        if ref in gpu_claim_names or "gpu" in str(ref).lower() or "gpu" in str(claim.get("name", "")).lower():
            return True
    return False


def is_gpu_podset(ps: PodSet) -> bool:
    """The pod set asks for any accelerator: a positive effective request (app, init or sidecar
    containers, :func:`effective_gpu_requests`) or a GPU DRA claim."""
    return bool(effective_gpu_requests(ps) or has_gpu_claim(ps))


def _images(ps: PodSet) -> list[str]:
    spec = _pod_spec(ps)
    out: list[str] = []
    for section in ("containers", "initContainers"):
        for c in spec.get(section) or ():
            if isinstance(c, dict) and isinstance(c.get("image"), str):
                out.append(c["image"].lower())
    return out


def _has_container_port(ps: PodSet) -> bool:
    return any(isinstance(c, dict) and c.get("ports") for c in _pod_spec(ps).get("containers") or ())


def is_training(ps: PodSet) -> bool:
    """Training/batch GPU pods: training-operator kinds, Trainer, JobSet, RayJob,
    Volcano Jobs, and GPU Jobs/CronJobs (and LWS groups that are not serving)."""
    kind = ps.source.kind
    if kind in TRAINING_KINDS or (ps.source.group, kind) in TRAINING_CRDS:
        return True
    if kind == "Job" and ps.source.group == "batch.volcano.sh":
        return True
    if kind in BATCH_KINDS or kind == "LeaderWorkerSet":
        return is_gpu_podset(ps) and not is_inference(ps)
    return False


def is_inference(ps: PodSet) -> bool:
    """Inference servers: KServe / RayService kinds, or a long-running GPU workload
    (Deployment, StatefulSet, LeaderWorkerSet) running a known serving image or exposing a port."""
    kind = ps.source.kind
    if kind in SERVING_KINDS or (ps.source.group, kind) in SERVING_CRDS:
        return True
    if kind in LONG_RUNNING_KINDS and is_gpu_podset(ps):
        images = _images(ps)
        if any(h in image for image in images for h in SERVING_IMAGE_HINTS):
            return True
        return _has_container_port(ps)
    return False


def is_daemon(ps: PodSet) -> bool:
    """A node agent: a DaemonSet, or a pod owned by one."""
    data = ps.source.data  # read directly: every rule asks, for every pod set
    if data.get("kind") == "DaemonSet":
        return True
    meta = data.get("metadata")
    owners = meta.get("ownerReferences") if type(meta) is dict else None
    if isinstance(owners, list):
        for o in owners:  # a plain loop: about seven rules ask for each of a snapshot's pods
            if isinstance(o, dict) and o.get("kind") == "DaemonSet":
                return True
    return False
