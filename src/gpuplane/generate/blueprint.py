"""The platform blueprint: the one YAML document ``gpuplane generate`` renders.

Pydantic models, because the schema is a user-facing contract: ``gpuplane generate --schema``
prints its JSON Schema for editor completion, and a wrong field is refused with its path.
Field names are snake_case in YAML; every model forbids unknown keys so a typo is an error,
not a silently ignored setting.

Semantic contradictions (a MIG profile the model does not offer, a quota larger than the
pools) are not schema errors: :mod:`gpuplane.generate.checks` finds those, naming the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

# RFC 1123 label: namespaces, pool names, queue names all end up as object names.
DnsLabel = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Quantity = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")]
CpuQuantity = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?m?$")]


class BlueprintError(ValueError):
    """An unusable blueprint: every message names the field (``gpu_pools[0].sharing.replicas``)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class BlueprintReadError(BlueprintError):
    """The file itself is unusable (missing, not UTF-8, not YAML): one problem that already
    names the file (and line), so it is printed as is, not prefixed with the path again."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Taint(_Model):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class Sharing(_Model):
    """How one pool's GPUs are shared (one mode per node: device-plugin README)."""

    mode: Literal["none", "time-slicing", "mps", "mig"] = "none"
    replicas: int | None = Field(default=None, description="time-slicing / MPS replicas per GPU (>= 2)")
    mig_layout: dict[str, int] | None = Field(
        default=None, description="MIG profiles carved on EVERY GPU of the pool, e.g. {'3g.40gb': 2}"
    )
    mig_demand: dict[str, int] | None = Field(
        default=None,
        description="MIG slices each node of the pool must offer (every node is carved the same); solved exactly by the MIG planner (gpuplane advise mig)",
    )
    fail_requests_greater_than_one: bool = Field(
        default=True, description="reject requests > 1 of a shared GPU (NVIDIA's recommendation)"
    )


class GpuPool(_Model):
    """A GPU node pool: one model, one sharing mode, one set of labels and taints."""

    name: DnsLabel
    gpu: str = Field(description="GPU model as the hardware catalog names it, e.g. H100-80GB, L4")
    instance_types: list[str] = Field(
        default_factory=list, description="cloud instance types from the catalog"
    )
    gpus_per_node: int | None = Field(
        default=None, ge=1, description="required when no instance type is given"
    )
    count: int | None = Field(default=None, ge=0, description="fixed node count")
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    zones: list[str] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=lambda: [Taint(key="nvidia.com/gpu")])
    sharing: Sharing = Field(default_factory=Sharing)
    workload: Literal["training", "inference", "mixed"] = "mixed"
    capacity_type: Literal["on-demand", "spot", "reserved"] = "on-demand"
    root_volume_gi: int = Field(default=200, ge=20, description="node disk for images + model artifacts")
    placement_group: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="EKS + Karpenter: name of an existing EC2 placement group (cluster strategy for EFA "
        "training); the pool's EC2NodeClass selects it (placementGroupSelector)",
    )
    capacity_reservations: list[Annotated[str, Field(pattern=r"^cr-[0-9a-z]+$")]] = Field(
        default_factory=list,
        max_length=30,
        description="EKS + Karpenter: on-demand capacity reservation ids (cr-...) the pool's EC2NodeClass "
        "selects (capacityReservationSelectorTerms); required with capacity_type reserved",
    )
    cpus_per_node: int | None = Field(
        default=None,
        ge=1,
        description="host logical CPUs per node; on-prem only (cloud pools take it from the instance type). "
        "Default for 8 x H100-80GB: DGX H100 (224)",
    )
    memory_per_node_gi: int | None = Field(
        default=None,
        ge=1,
        description="host memory per node in GiB; on-prem only. Default for 8 x H100-80GB: DGX H100 (2048)",
    )

    @model_validator(mode="after")
    def _sizes(self) -> GpuPool:
        if self.count is None and self.max is None:
            raise ValueError("give count (fixed size) or min/max (autoscaled)")
        if self.count is not None and (self.min is not None or self.max is not None):
            raise ValueError("count and min/max are exclusive")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is larger than max ({self.max})")
        return self

    @property
    def max_nodes(self) -> int:
        return self.count if self.count is not None else (self.max or 0)

    @property
    def min_nodes(self) -> int:
        return self.count if self.count is not None else (self.min or 0)


class Driver(_Model):
    managed_by: Literal["operator", "preinstalled"] = "operator"
    version: str | None = Field(default=None, description="driver container tag when the operator manages it")


class Network(_Model):
    """The fabric multi-node training uses between nodes (NCCL falls back to TCP sockets without one)."""

    fabric: Literal["auto", "efa", "infiniband", "roce", "gpudirect-tcpx", "none"] = Field(
        default="auto",
        description="auto: from the instance types (EFA on AWS, InfiniBand on Azure ND-series; on-prem: none, "
        "give it); applied to the pools that run multi-node training",
    )
    roce_interface: str | None = Field(
        default=None,
        pattern=r"^[a-zA-Z0-9._-]{1,15}$",
        description="roce: the host network device of the RoCE port (macvlan master of the pods' RDMA network)",
    )
    mode: Literal["shared", "sriov"] = Field(
        default="shared",
        description="infiniband/roce: shared = the RDMA shared device plugin (every rank sees the node's HCAs); "
        "sriov = the SR-IOV network device plugin hands each rank its own RDMA devices (PFs or VFs the "
        "firmware exposes) through a HostDeviceNetwork per tenant",
    )
    rdma_devices_per_node: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="sriov: RDMA devices (PFs/VFs) per node the device plugin offers; taken from the instance "
        "type on Azure, required on-prem (DGX H100: 8 compute ConnectX-7 ports)",
    )


class Scheduler(_Model):
    name: Literal["default", "volcano", "coscheduling", "kueue"] = "default"


class Tenant(_Model):
    """A team: one namespace, a GPU quota, a priority tier and a share of the queue."""

    name: DnsLabel = Field(description="namespace name")
    tier: Literal["production", "research", "batch"] = "research"
    gpu_quota: dict[str, int] = Field(
        default_factory=dict,
        description="GPU model -> GPUs (time-sliced pools: shared replicas), or MIG profile -> instances",
    )
    cpu: Quantity | None = None
    memory: Quantity | None = None
    queue_share: int = Field(default=1, ge=1, le=65535, description="Volcano queue weight / Kueue fair share")
    flavors: list[str] | None = Field(default=None, description="Kueue: pools (flavors) this tenant may use")
    cohort: DnsLabel | None = Field(default=None, description="Kueue cohort for borrowing")


class Autoscaling(_Model):
    provisioner: Literal["none", "cluster-autoscaler", "karpenter"] = "none"
    gpu_limit: int | None = Field(
        default=None, ge=0, description="cluster-wide cap on GPUs the autoscaler adds"
    )
    consolidation: Literal["protect-training", "when-empty", "when-underutilized"] = "protect-training"
    consolidate_after: str = Field(default="30m", pattern=r"^([0-9]+(s|m|h))+$|^Never$")
    scale_down_gpu_utilization: float = Field(default=0.5, gt=0, le=1)
    ami_alias: str = Field(
        default="al2023@v20250715", description="Karpenter EC2NodeClass amiSelectorTerms alias"
    )
    node_role: str | None = Field(default=None, description="Karpenter EC2NodeClass IAM role")
    iam_role_arn: str | None = Field(
        default=None,
        pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$",
        description="EKS: IAM role of the Karpenter or Cluster Autoscaler controller (IRSA), annotated on "
        "the chart's service account",
    )
    aks_mode: Literal["node-pool", "self-managed"] = Field(
        default="node-pool",
        description="AKS: the cluster autoscaler built into AKS node pools (supported path), or a self-managed "
        "cluster-autoscaler Deployment over the node pools' scale sets",
    )
    azure_resource_group: str | None = Field(
        default=None, description="AKS: resource group of the cluster (node-pool commands, self-managed CA)"
    )
    azure_subscription_id: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        description="AKS self-managed CA: subscription of the node resource group",
    )
    azure_tenant_id: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        description="AKS self-managed CA: Microsoft Entra tenant of the workload identity",
    )
    azure_client_id: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        description="AKS self-managed CA: client ID of the user-assigned managed identity it runs as "
        "(workload identity federated with the chart's service account)",
    )


class Volume(_Model):
    """A shared file system: datasets (RWX) or a high-performance scratch/checkpoint tier."""

    name: DnsLabel
    backend: Literal[
        "nfs", "efs", "filestore", "azurefile", "fsx-lustre", "managed-lustre", "azure-lustre", "gpfs"
    ]
    size: Quantity
    access_mode: Literal["ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce", "ReadWriteOncePod"] = (
        "ReadWriteMany"
    )
    namespaces: list[str] = Field(default_factory=list, description="tenants that get a claim (default: all)")
    parameters: dict[str, str] = Field(default_factory=dict, description="StorageClass parameters")


class CheckpointClaims(_Model):
    """Checkpoints live in a ``checkpoints/`` folder of a named volume's claim (no claim of their own)."""

    volume: str = Field(description="name of a high_performance or shared_datasets volume")
    size: Quantity | None = Field(default=None, description="expected footprint; must fit the volume's size")


class ModelCache(_Model):
    """Model weights live in a ``model-cache/`` folder of a named volume's claim."""

    volume: str
    size: Quantity | None = Field(default=None, description="expected footprint; must fit the volume's size")


class Storage(_Model):
    shared_datasets: list[Volume] = Field(default_factory=list)
    high_performance: list[Volume] = Field(default_factory=list)
    checkpoints: CheckpointClaims | None = None
    model_cache: ModelCache | None = None
    model_artifacts_gi: int = Field(
        default=50, ge=1, description="ephemeral-storage for model artifacts per pod"
    )


DEFAULT_TRAINING_IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
# The Ray release KubeRay v1.7.0's samples run (ray-operator/config/samples: rayproject/ray:2.52.0); the
# `-gpu` tag aliases that release's CUDA build (Ray docker/README "Platform tag").
RAY_VERSION = "2.52.0"
DEFAULT_RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}-gpu"


class TrainingTemplate(_Model):
    name: DnsLabel
    tenant: str
    kind: Literal["pytorchjob", "indexed-job", "mpijob", "volcano-job", "jobset", "trainjob", "rayjob"] = (
        Field(
            description="controller: trainjob is Kubeflow Trainer v2 (TrainJob + its TrainingRuntime), rayjob is "
            "KubeRay (head + one GPU worker per worker, the script submitted as the Ray job's entrypoint)"
        )
    )
    pool: str
    workers: int = Field(
        default=2, ge=1, description="pods with GPUs (rayjob: Ray worker pods; the head is extra)"
    )
    gpus_per_worker: int = Field(default=1, ge=1)
    image: str | None = Field(
        default=None,
        description=f"container image; default {DEFAULT_TRAINING_IMAGE} ({DEFAULT_RAY_IMAGE} for rayjob)",
    )
    script: list[str] = Field(
        default_factory=lambda: ["train.py"],
        description="program and arguments each rank runs; gpuplane wraps it in the launcher the kind needs "
        "(torchrun with node rank and rendezvous, or mpirun)",
    )
    command: list[str] | None = Field(
        default=None,
        description="full command override: replaces the generated launcher (you own rank wiring)",
    )
    shm_size: Quantity = "16Gi"
    cpu: CpuQuantity | None = Field(
        default=None, description="CPU per pod (default: the pod's GPU share of the node)"
    )
    memory: Quantity | None = Field(
        default=None, description="memory per pod (default: its GPU share of the node)"
    )

    @property
    def container_image(self) -> str:
        """The image every rank runs: the blueprint's, else the kind's default."""
        if self.image is not None:
            return self.image
        return DEFAULT_RAY_IMAGE if self.kind == "rayjob" else DEFAULT_TRAINING_IMAGE


class InferenceTemplate(_Model):
    name: DnsLabel
    tenant: str
    pool: str
    model: str = Field(description="model id served by vLLM, e.g. meta-llama/Llama-3.1-8B-Instruct")
    gpus: int = Field(default=1, ge=1, description="GPUs per pod (vLLM --tensor-parallel-size)")
    nodes: int = Field(
        default=1,
        ge=1,
        le=64,
        description="pods per replica: > 1 renders a LeaderWorkerSet, one group of this size per replica, vLLM "
        "over a Ray cluster with --pipeline-parallel-size nodes",
    )
    min_replicas: int = Field(default=2, ge=1)
    max_replicas: int = Field(default=6, ge=1)
    image: str = "vllm/vllm-openai:v0.8.5"
    scale_metric: Literal["queue", "gpu"] = "queue"
    target: str = Field(default="5", description="target average per pod (waiting requests, or GPU util %)")
    startup_budget_s: int = Field(default=900, ge=60, description="startupProbe window for weight loading")
    model_size_gb: float | None = Field(
        default=None,
        gt=0,
        description="weights in GB (bf16: 2 x parameters in billions); known for the models gpuplane lists",
    )
    cpu: CpuQuantity | None = Field(
        default=None, description="CPU per pod (default: the pod's GPU share of the node)"
    )
    memory: Quantity | None = Field(
        default=None, description="memory per pod (default: its GPU share of the node)"
    )


class Workloads(_Model):
    training: list[TrainingTemplate] = Field(default_factory=list)
    inference: list[InferenceTemplate] = Field(default_factory=list)


class Blueprint(_Model):
    """A GPU platform: provider, pools, driver, scheduler, tenants, autoscaling, storage, workloads."""

    name: DnsLabel
    provider: Literal["eks", "gke", "aks", "on-prem"]
    kubernetes_version: str = Field(pattern=r"^1\.[0-9]+$", description="target minor, e.g. 1.33")
    cluster_name: str | None = None
    region: str | None = None
    gpu_pools: list[GpuPool] = Field(min_length=1)
    driver: Driver = Field(default_factory=Driver)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    network: Network = Field(default_factory=Network)
    tenants: list[Tenant] = Field(default_factory=list)
    autoscaling: Autoscaling = Field(default_factory=Autoscaling)
    storage: Storage = Field(default_factory=Storage)
    workloads: Workloads = Field(default_factory=Workloads)

    def pool(self, name: str) -> GpuPool | None:
        return next((p for p in self.gpu_pools if p.name == name), None)

    def tenant(self, name: str) -> Tenant | None:
        return next((t for t in self.tenants if t.name == name), None)


def json_schema() -> dict[str, Any]:
    """The blueprint JSON Schema (draft 2020-12) for editors and CI."""
    schema = Blueprint.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpuplane platform blueprint"
    return schema


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _format_errors(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors():
        # Drop pydantic's union/validator tags from the path: users know their field names only.
        loc = tuple(
            p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-")))
        )
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        problems.append(f"{_loc(loc)}: {msg}")
    return problems


# Sizes, counts and prices in a blueprint are far below this; past it, the sizing arithmetic
# (float GiB, share of a node) overflows (a 401-digit root_volume_gi did, found by bench/fuzz.py).
MAX_NUMBER = 10**15


def _huge_number(value: Any, path: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The path of the first number beyond :data:`MAX_NUMBER` in ``value``, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return path if not abs(value) <= MAX_NUMBER else None  # NaN and inf are too large too
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found = _huge_number(child, (*path, key))
        if found is not None:
            return found
    return None


def parse_blueprint(data: Any) -> Blueprint:
    """Validate a decoded document; raise :class:`BlueprintError` naming each bad field."""
    if not isinstance(data, dict):
        raise BlueprintError(["(top level): a blueprint is a mapping"])
    if data and not set(data) & set(Blueprint.model_fields):
        # Not a blueprint at all (an .env file, credentials JSON, any YAML a path names, also over
        # MCP): its keys are not quoted back as "unknown field" (issue 11 item 7).
        raise BlueprintError(
            [f"(top level): not a blueprint: none of its {len(data)} top-level keys is a blueprint field"]
        )
    huge = _huge_number(data, ())
    if huge is not None:
        raise BlueprintError([f"{_loc(huge)}: number too large (at most {MAX_NUMBER:,})"])
    try:
        return Blueprint.model_validate(data)
    except ValidationError as exc:
        raise BlueprintError(_format_errors(exc)) from None


def load_blueprint(path: str | Path) -> Blueprint:
    """Read and validate a blueprint file."""
    from gpuplane.sources.side_input import SideInputError, read_document  # for start-up time

    try:
        data = read_document(str(path))
    except SideInputError as exc:
        raise BlueprintReadError([str(exc)]) from None
    return parse_blueprint(data)
