"""GPU inventory: what every GPU node has, advertises, hands out and has left.

Read by ``gpuplane inventory`` and by ``diagnose`` (its ``inventory`` key).
Numbers per GPU resource, per node:

- ``capacity`` / ``allocatable``: from the node status. The kubelet's device
  manager reports every registered device in capacity and only the healthy ones
  in allocatable (kubernetes/kubernetes ``pkg/kubelet/cm/devicemanager/manager.go``
  ``GetCapacity``), so ``allocatable < capacity`` means unhealthy devices;
- ``allocated``: the summed effective requests of the pods holding resources
  on the node (:meth:`gpuplane.k8s.cluster.ClusterState.requested`);
- ``free``: ``allocatable - allocated``, never below 0 (pods may still hold
  devices the plugin withdrew: that is flagged ``overcommitted``).

Pool and model totals add up *schedulable units*: whole GPUs, MIG devices and
time-sliced replicas as the device plugin advertises them, because those are
what pods request; ``gpus`` counts physical boards, and ``resources`` breaks
the units down by resource name so a time-sliced L4 (1 board, 4 replicas) or a
MIG A100 (1 board, up to 7 devices) reads correctly.

Label facts (GPU Feature Discovery, GPU Operator, MIG manager):
reference/nvidia-gpu-stack.md §1.2 (MIG strategies and resource names), §2
(GFD labels: ``nvidia.com/gpu.count``, ``.replicas``, ``.sharing-strategy``,
``-SHARED`` product suffix, ``nvidia.com/mig-<profile>.count``,
``<model>-MIG-INVALID``), §3.3 (``nvidia.com/mig.config``,
``nvidia.com/mig.config.state``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.gpu.catalog import GpuModel, catalog
from gpuplane.gpu.labels import GPU_COUNT as GFD_COUNT
from gpuplane.gpu.labels import GPU_PRODUCT as GFD_PRODUCT
from gpuplane.gpu.labels import MIG_CONFIG, MIG_CONFIG_STATE, MIG_STRATEGY, SHARED_PRODUCT_SUFFIX
from gpuplane.gpu.nodes import gpu_nodes
from gpuplane.gpu.requests import pod_uses_gpus
from gpuplane.gpu.resources import classify, is_gpu_resource
from gpuplane.gpu.sharing import Replication, UnitCount, replication
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node

# Node-pool labels, most specific first (Karpenter, EKS managed node groups, GKE, AKS).
POOL_LABELS = (
    "karpenter.sh/nodepool",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
)
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")

GFD_MEMORY = "nvidia.com/gpu.memory"
MIG_LABEL_PREFIX = "nvidia.com/mig-"
MIG_INVALID = "-MIG-INVALID"
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
DEPLOY_DEVICE_PLUGIN = "nvidia.com/gpu.deploy.device-plugin"

UNKNOWN_MODEL = "unknown"
NO_POOL = "(none)"

# Flag ids (stable: scripts may match on them) -> what they mean.
FLAG_NOT_READY = "not-ready"
FLAG_CORDONED = "cordoned"
FLAG_NOT_ADVERTISING = "not-advertising-gpus"
FLAG_UNHEALTHY = "unhealthy-gpus"
FLAG_OVERCOMMITTED = "overcommitted"
FLAG_MIG_FAILED = "mig-config-failed"
FLAG_MIG_PENDING = "mig-reconfiguring"
FLAG_MIG_INVALID = "mig-invalid"


@dataclass(slots=True)
class ResourceUse:
    """One GPU resource on one node (or summed over a pool or model).

    ``free`` is kept as its own sum: an overcommitted node (allocated above
    allocatable) has 0 free, and must not eat into the free devices of the
    other nodes of its pool.
    """

    capacity: int = 0
    allocatable: int = 0
    allocated: int = 0
    free: int = 0

    @classmethod
    def on_node(cls, capacity: int, allocatable: int, allocated: int) -> ResourceUse:
        return cls(capacity, allocatable, allocated, max(allocatable - allocated, 0))

    def add(self, other: ResourceUse) -> None:
        self.capacity += other.capacity
        self.allocatable += other.allocatable
        self.allocated += other.allocated
        self.free += other.free

    def to_json(self) -> dict[str, int]:
        return {
            "capacity": self.capacity,
            "allocatable": self.allocatable,
            "allocated": self.allocated,
            "free": self.free,
        }


@dataclass(slots=True)
class Flag:
    """Something wrong or notable about a node's GPUs."""

    flag: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"flag": self.flag, "message": self.message}


@dataclass(slots=True)
class MigLayout:
    """How a node's GPUs are partitioned (GFD / MIG manager labels + advertised resources)."""

    strategy: str | None  # "single" | "mixed" | None (label absent)
    config: str | None  # nvidia.com/mig.config: the mig-parted entry asked for
    config_state: str | None  # nvidia.com/mig.config.state: pending|rebooting|success|failed
    devices: dict[str, int]  # profile -> devices on the node

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "config": self.config,
            "config_state": self.config_state,
            "devices": dict(self.devices),
        }


@dataclass(slots=True)
class Sharing:
    """Time-slicing or MPS replicas advertised by the device plugin."""

    strategy: str  # "time-slicing" | "mps"
    replicas: int  # replicas per device (1 when unknown)
    resources: list[str]  # the shared resource names
    renamed: bool  # advertised as <name>.shared (renameByDefault: true)
    config: str | None  # nvidia.com/device-plugin.config: the config entry in use

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "replicas": self.replicas,
            "resources": list(self.resources),
            "renamed": self.renamed,
            "config": self.config,
        }


@dataclass(slots=True)
class NodeInventory:
    name: str
    pool: str
    instance_type: str | None
    zone: str | None
    model: str | None  # catalog name ("A100-40GB"), None when unknown
    product: str | None  # raw GFD product label
    gpu_memory_gb: float | None
    gpus: int  # physical boards
    resources: dict[str, ResourceUse]
    mig: MigLayout | None
    sharing: Sharing | None
    ready: bool | None
    cordoned: bool
    gpu_pods: int
    flags: list[Flag] = field(default_factory=list)

    @property
    def model_key(self) -> str:
        return self.model or self.product or UNKNOWN_MODEL

    def units(self) -> ResourceUse:
        """All device resources summed (whole GPUs + MIG devices + replicas)."""
        total = ResourceUse()
        for use in self.resources.values():
            total.add(use)
        return total

    def to_json(self) -> dict[str, Any]:
        units = self.units()
        return {
            "name": self.name,
            "pool": self.pool,
            "instance_type": self.instance_type,
            "zone": self.zone,
            "model": self.model,
            "product": self.product,
            "gpu_memory_gb": self.gpu_memory_gb,
            "gpus": self.gpus,
            "allocatable": units.allocatable,
            "allocated": units.allocated,
            "free": units.free,
            "resources": {name: use.to_json() for name, use in sorted(self.resources.items())},
            "mig": self.mig.to_json() if self.mig else None,
            "sharing": self.sharing.to_json() if self.sharing else None,
            "ready": self.ready,
            "cordoned": self.cordoned,
            "gpu_pods": self.gpu_pods,
            "flags": [flag.to_json() for flag in self.flags],
        }


@dataclass(slots=True)
class GroupTotals:
    """Totals over a set of nodes (one pool or one model)."""

    key: str
    nodes: int = 0
    gpus: int = 0
    units: ResourceUse = field(default_factory=ResourceUse)
    resources: dict[str, ResourceUse] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    problem_nodes: int = 0

    def add(self, node: NodeInventory) -> None:
        self.nodes += 1
        self.gpus += node.gpus
        self.models.add(node.model_key)
        if node.flags:
            self.problem_nodes += 1
        for name, use in node.resources.items():
            self.units.add(use)
            self.resources.setdefault(name, ResourceUse()).add(use)

    def to_json(self, key_name: str) -> dict[str, Any]:
        document: dict[str, Any] = {key_name: self.key}
        if key_name == "pool":
            document["models"] = sorted(self.models)
        document.update(
            {
                "nodes": self.nodes,
                "gpus": self.gpus,
                "allocatable": self.units.allocatable,
                "allocated": self.units.allocated,
                "free": self.units.free,
                "problem_nodes": self.problem_nodes,
                "resources": {name: use.to_json() for name, use in sorted(self.resources.items())},
            }
        )
        return document


def _mig_units(node: NodeInventory, resource: str) -> bool:
    """True when ``resource``'s units on ``node`` are MIG devices: ``nvidia.com/mig-*``, or
    ``nvidia.com/gpu`` under the MIG ``single`` strategy (every MIG device advertised as a GPU)."""
    info = classify(resource)
    if info is not None and info.kind == "mig":
        return True
    return resource == "nvidia.com/gpu" and node.mig is not None and node.mig.strategy == "single"


@dataclass(slots=True)
class Inventory:
    source: str
    kubernetes_version: str | None
    total_nodes: int
    nodes: list[NodeInventory]
    pools: list[GroupTotals]
    models: list[GroupTotals]

    @property
    def problem_nodes(self) -> list[NodeInventory]:
        return [node for node in self.nodes if node.flags]

    def free_units(self) -> tuple[int, int, UnitCount]:
        """Free units told apart: whole GPUs, MIG devices, and the shared replicas (time-slicing,
        MPS) that a plain sum would count as GPUs."""
        gpus = mig = 0
        shared = UnitCount()
        for node in self.nodes:
            replicated = set(node.sharing.resources) if node.sharing else set()
            for name, use in node.resources.items():
                if node.sharing is not None and name in replicated:
                    sharing = node.sharing
                    shared.add(
                        node.name,
                        use.free,
                        Replication(name, sharing.strategy, sharing.replicas, sharing.renamed),
                    )
                elif _mig_units(node, name):
                    mig += use.free
                else:
                    gpus += use.free
        return gpus, mig, shared

    def free_text(self) -> str:
        """``46 free: 9 whole GPUs, 31 MIG devices, +6 time-sliced replicas on 3 shared nodes``."""
        gpus, mig, shared = self.free_units()
        parts = [f"{gpus} whole GPU{'' if gpus == 1 else 's'}"]
        if mig:
            parts.append(f"{mig} MIG device{'' if mig == 1 else 's'}")
        if shared.replicas:
            parts.append(shared.replica_text())
        return f"{gpus + mig + shared.total} free: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The ``inventory`` document of spec/cli.md (``nodes`` and ``models`` plus extras)."""
        totals = ResourceUse()
        for node in self.nodes:
            totals.add(node.units())
        free_gpus, free_mig, free_shared = self.free_units()
        return {
            "source": self.source,
            "kubernetes_version": self.kubernetes_version,
            "summary": {
                "nodes": self.total_nodes,
                "gpu_nodes": len(self.nodes),
                "gpus": sum(node.gpus for node in self.nodes),
                "allocatable": totals.allocatable,
                "allocated": totals.allocated,
                "free": totals.free,
                "free_gpus": free_gpus,
                "free_mig_devices": free_mig,
                "free_shared_replicas": free_shared.total,
                "shared_nodes": sum(1 for node in self.nodes if node.sharing is not None),
                "problem_nodes": len(self.problem_nodes),
            },
            "nodes": [node.to_json() for node in self.nodes],
            "pools": [pool.to_json("pool") for pool in self.pools],
            "models": [model.to_json("model") for model in self.models],
        }


# -- building ----------------------------------------------------------------------------------


def build_inventory(state: ClusterState) -> Inventory:
    """Inventory of every GPU node of ``state`` (see :meth:`ClusterState.gpu_nodes`)."""
    nodes = [node_inventory(state, node) for node in gpu_nodes(state)]
    nodes.sort(key=lambda n: (n.pool, n.name))
    pools: dict[str, GroupTotals] = {}
    models: dict[str, GroupTotals] = {}
    for node in nodes:
        pools.setdefault(node.pool, GroupTotals(node.pool)).add(node)
        models.setdefault(node.model_key, GroupTotals(node.model_key)).add(node)
    ordered_models = sorted(models.values(), key=lambda m: (m.key == UNKNOWN_MODEL, m.key))
    return Inventory(
        source=state.source,
        kubernetes_version=state.kubernetes_version(),
        total_nodes=len(state.nodes),
        nodes=nodes,
        pools=sorted(pools.values(), key=lambda p: p.key),
        models=ordered_models,
    )


def _first_label(labels: dict[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = labels.get(key)
        if value:
            return value
    return None


def _int_label(labels: dict[str, str], key: str) -> int | None:
    value = labels.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def node_inventory(state: ClusterState, node: Node) -> NodeInventory:
    """Everything inventory knows about one GPU node."""
    name = node.metadata.name
    labels = node.metadata.labels
    instance_type = _first_label(labels, INSTANCE_TYPE_LABELS)
    pool = _first_label(labels, POOL_LABELS) or instance_type or NO_POOL
    product = labels.get(GFD_PRODUCT) or None
    model = catalog().model_for_node_labels(labels)
    memory_mib = _int_label(labels, GFD_MEMORY)
    gpu_memory_gb: float | None = model.memory_gb if model else None
    if gpu_memory_gb is None and memory_mib:
        gpu_memory_gb = round(memory_mib / 1024, 1)

    resources = _gpu_resources(state, name)
    mig = _mig_layout(labels, resources)
    sharing = _sharing(labels, resources)
    gpus = _physical_gpus(labels, instance_type, resources, mig, sharing, model)
    ready = state.node_ready(name)
    cordoned = node.spec.unschedulable
    gpu_pods = 0
    for pod in state.pods_by_node.get(name, ()):
        if pod_uses_gpus(pod):
            gpu_pods += 1

    inv = NodeInventory(
        name=name,
        pool=pool,
        instance_type=instance_type,
        zone=_first_label(labels, ZONE_LABELS),
        model=model.name if model else None,
        product=product,
        gpu_memory_gb=gpu_memory_gb,
        gpus=gpus,
        resources=resources,
        mig=mig,
        sharing=sharing,
        ready=ready,
        cordoned=cordoned,
        gpu_pods=gpu_pods,
    )
    inv.flags = _flags(inv, labels)
    return inv


def _gpu_resources(state: ClusterState, node: str) -> dict[str, ResourceUse]:
    """GPU device resources advertised on the node or held by its pods (all-zero ones dropped)."""
    capacity = state.capacity(node)
    allocatable = state.allocatable(node)
    names = {n for n in capacity if is_gpu_resource(n)} | {n for n in allocatable if is_gpu_resource(n)}
    requested: dict[str, int] | None = None
    if state.pods_by_node.get(node):
        requested = state.requested(node)
        names |= {n for n in requested if is_gpu_resource(n)}
    found: dict[str, ResourceUse] = {}
    for name in names:
        use = ResourceUse.on_node(
            capacity.get(name, 0), allocatable.get(name, 0), requested.get(name, 0) if requested else 0
        )
        if use.capacity or use.allocatable or use.allocated:
            found[name] = use
    return found


def _mig_layout(labels: dict[str, str], resources: dict[str, ResourceUse]) -> MigLayout | None:
    strategy = labels.get(MIG_STRATEGY) or None
    config = labels.get(MIG_CONFIG) or None
    state = labels.get(MIG_CONFIG_STATE) or None
    devices: dict[str, int] = {}
    # Mixed strategy: one resource per profile (the advertised count is authoritative).
    for name, use in resources.items():
        info = classify(name)
        if info is not None and info.kind == "mig" and info.mig_profile and use.capacity:
            devices[info.mig_profile] = devices.get(info.mig_profile, 0) + use.capacity
    if not devices:
        # GFD per-profile count labels (mixed) ...
        for key, value in labels.items():
            if key.startswith(MIG_LABEL_PREFIX) and key.endswith(".count"):
                profile = key[len(MIG_LABEL_PREFIX) : -len(".count")]
                try:
                    count = int(value)
                except ValueError:
                    continue
                if count:
                    devices[profile] = count
    product = labels.get(GFD_PRODUCT, "")
    if not devices and strategy == "single" and "-MIG-" in product and MIG_INVALID not in product:
        # ... or, under single, every MIG device is an nvidia.com/gpu of one profile.
        profile = product.split("-MIG-", 1)[1]
        if profile.endswith(SHARED_PRODUCT_SUFFIX):
            profile = profile[: -len(SHARED_PRODUCT_SUFFIX)]
        count = _int_label(labels, GFD_COUNT) or resources.get("nvidia.com/gpu", ResourceUse()).capacity
        if count:
            devices[profile] = count
    in_use = bool(devices) or strategy is not None or (config is not None and config != "all-disabled")
    if not in_use:
        return None
    return MigLayout(strategy, config, state, dict(sorted(devices.items())))


def _sharing(labels: dict[str, str], resources: dict[str, ResourceUse]) -> Sharing | None:
    """The node's sharing layout: which advertised resources are replicas (``gpu.sharing``), or
    the GFD labels' word alone when the node advertises nothing (the plugin is not registered)."""
    found = [rep for name in sorted(resources) if (rep := replication(labels, name)) is not None]
    if not found:
        labelled = replication(labels, "nvidia.com/gpu")
        if labelled is None:
            return None
        return Sharing(
            labelled.strategy, labelled.replicas or 1, [], False, labels.get(DEVICE_PLUGIN_CONFIG) or None
        )
    whole_gpu = replication(labels, "nvidia.com/gpu")
    strategy = (whole_gpu or found[0]).strategy
    replicas = max(rep.replicas or 1 for rep in (*found, *([whole_gpu] if whole_gpu else ())))
    return Sharing(
        strategy,
        replicas,
        [rep.resource for rep in found],
        any(rep.renamed for rep in found),
        labels.get(DEVICE_PLUGIN_CONFIG) or None,
    )


def _physical_gpus(
    labels: dict[str, str],
    instance_type: str | None,
    resources: dict[str, ResourceUse],
    mig: MigLayout | None,
    sharing: Sharing | None,
    model: GpuModel | None = None,
) -> int:
    """Physical boards: GFD count, else the instance type's, else advertised devices / replicas.

    Under MIG ``single``, ``nvidia.com/gpu.count`` and ``nvidia.com/gpu`` count MIG devices, not
    boards (reference/nvidia-gpu-stack.md §2: ``56`` = 8 GPUs x 7 MIG). The instance type's
    count wins; else the boards are the devices divided by the profile's maximum instances per
    GPU (catalog), which is exact for the ``all-<profile>`` mig-parted configs and a lower bound
    for a custom config that leaves part of each GPU unused.
    """
    single_mig = mig is not None and mig.strategy == "single"
    count = None if single_mig else _int_label(labels, GFD_COUNT)
    if count is not None:
        return count
    instance = catalog().instance(instance_type) if instance_type else None
    if instance is not None:
        return instance.gpu_count
    if single_mig and mig is not None and model is not None and len(mig.devices) == 1:
        ((profile_name, devices),) = mig.devices.items()
        profile = model.profile(profile_name)
        if profile is not None and profile.max_instances > 0:
            return -(-devices // profile.max_instances)
    whole = 0
    replicas = sharing.replicas if sharing else 1
    for name, use in resources.items():
        info = classify(name)
        if info is None:
            continue
        if info.kind == "gpu":
            whole += use.capacity // replicas if name == "nvidia.com/gpu" and sharing else use.capacity
        elif info.kind == "shared":
            whole += use.capacity // max(replicas, 1)
    return whole


def _flags(node: NodeInventory, labels: dict[str, str]) -> list[Flag]:
    flags: list[Flag] = []
    if node.ready is False:
        flags.append(
            Flag(FLAG_NOT_READY, "node is NotReady: new pods avoid it (node.kubernetes.io/not-ready taint)")
        )
    if node.cordoned:
        flags.append(Flag(FLAG_CORDONED, "node is cordoned (spec.unschedulable): no new pods land on it"))
    advertised = sum(use.capacity for use in node.resources.values())
    if advertised == 0:
        detail = ""
        if labels.get(DEPLOY_DEVICE_PLUGIN) == "false":
            detail = f" ({DEPLOY_DEVICE_PLUGIN}=false: the operator does not deploy the plugin here)"
        elif labels.get(DEPLOY_DEVICE_PLUGIN) == "paused-for-mig-change":
            detail = " (device plugin paused for a MIG change)"
        gpus = f"{node.gpus} GPU(s)" if node.gpus else "GPUs"
        flags.append(
            Flag(
                FLAG_NOT_ADVERTISING,
                f"labelled with {gpus} but advertises no GPU resource: the device plugin is not "
                f"registered{detail}",
            )
        )
    for name, use in sorted(node.resources.items()):
        if use.allocatable < use.capacity:
            flags.append(
                Flag(
                    FLAG_UNHEALTHY,
                    f"{use.capacity - use.allocatable} of {use.capacity} {name} unhealthy "
                    f"(allocatable {use.allocatable} < capacity {use.capacity})",
                )
            )
        if use.allocated > use.allocatable:
            flags.append(
                Flag(
                    FLAG_OVERCOMMITTED,
                    f"pods hold {use.allocated} {name} but only {use.allocatable} are allocatable",
                )
            )
    product = labels.get(GFD_PRODUCT, "")
    if MIG_INVALID in product:
        flags.append(
            Flag(
                FLAG_MIG_INVALID,
                f"GFD reports product {product}: MIG strategy single needs every GPU "
                "MIG-enabled with one profile",
            )
        )
    if node.mig is not None:
        if node.mig.config_state == "failed":
            flags.append(
                Flag(
                    FLAG_MIG_FAILED,
                    f"MIG manager failed to apply config {node.mig.config!r} ({MIG_CONFIG_STATE}=failed)",
                )
            )
        elif node.mig.config_state in ("pending", "rebooting"):
            flags.append(
                Flag(
                    FLAG_MIG_PENDING,
                    f"MIG reconfiguration to {node.mig.config!r} in progress "
                    f"({MIG_CONFIG_STATE}={node.mig.config_state})",
                )
            )
    return flags
