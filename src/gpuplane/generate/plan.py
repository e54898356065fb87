"""What each GPU pool becomes: model, GPUs per node, exposed resources, config names, labels.

Computed once from the blueprint and the hardware catalog, then read by every renderer, so
the device-plugin config, the node labels, the quotas and the Kueue flavors all agree on
the same names and numbers.

Resource names follow the device plugin (reference nvidia-gpu-stack.md §1.2): full and
time-sliced/MPS GPUs stay ``nvidia.com/gpu`` (``renameByDefault: false``), MIG devices under
the ``mixed`` strategy are ``nvidia.com/mig-<profile>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.generate.blueprint import Blueprint, GpuPool
from gpuplane.gpu.catalog import GpuModel, catalog
from gpuplane.gpu.labels import MIG_CONFIG as MIG_CONFIG_LABEL

NVIDIA_GPU = "nvidia.com/gpu"
POOL_LABEL = "gpuplane.io/pool"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
EKS_GPU_LABEL = "k8s.amazonaws.com/accelerator"


@dataclass(slots=True)
class PoolPlan:
    """The derived facts about one pool."""

    pool: GpuPool
    index: int
    model: GpuModel
    gpus_per_node: int
    # Per-GPU MIG layouts: one dict per physical GPU index (all equal for a uniform layout).
    mig_layouts: list[dict[str, int]] = field(default_factory=list)
    device_plugin_config: str | None = None
    mig_config: str | None = None
    # Labels the provider's tooling needs on the pool's nodes (e.g. the EKS GPU label CA reads).
    provider_labels: dict[str, str] = field(default_factory=dict)
    # Fabric of the pool's multi-node training: efa / infiniband / roce / none (see fabric_of).
    fabric: str = "none"
    fabric_interfaces: int = 0
    fabric_device_rdma: bool = False

    @property
    def name(self) -> str:
        return self.pool.name

    @property
    def replicas(self) -> int:
        s = self.pool.sharing
        return s.replicas or 1 if s.mode in ("time-slicing", "mps") else 1

    def resources_per_node(self) -> dict[str, int]:
        """What one node advertises in ``allocatable`` (device-plugin arithmetic, §1.2)."""
        if self.pool.sharing.mode == "mig":
            out: dict[str, int] = {}
            for layout in self.mig_layouts:
                for profile, n in layout.items():
                    key = "nvidia.com/mig-" + profile.replace("+", ".")
                    out[key] = out.get(key, 0) + n
            return out
        return {NVIDIA_GPU: self.gpus_per_node * self.replicas}

    def resources_max(self) -> dict[str, int]:
        """Pool-wide capacity at its largest size."""
        return {k: v * self.pool.max_nodes for k, v in self.resources_per_node().items()}

    def node_labels(self) -> dict[str, str]:
        """Labels every node of the pool must carry (selectors, sharing and MIG config keys)."""
        labels = {**self.provider_labels, **self.pool.labels}
        labels[POOL_LABEL] = self.name
        if self.device_plugin_config:
            labels[DEVICE_PLUGIN_CONFIG_LABEL] = self.device_plugin_config
        if self.mig_config:
            labels[MIG_CONFIG_LABEL] = self.mig_config
        return dict(sorted(labels.items()))

    def tolerations(self) -> list[dict[str, str]]:
        out = []
        for t in self.pool.taints:
            tol = {"key": t.key, "effect": t.effect}
            if t.value is None:
                tol["operator"] = "Exists"
            else:
                tol["operator"] = "Equal"
                tol["value"] = t.value
            out.append(tol)
        return out


def gpus_per_node(pool: GpuPool) -> int | None:
    """From the instance types (all must agree) or the explicit field."""
    if pool.gpus_per_node is not None:
        return pool.gpus_per_node
    cat = catalog()
    counts = {inst.gpu_count for t in pool.instance_types if (inst := cat.instance(t)) is not None}
    return counts.pop() if len(counts) == 1 else None


def multi_node_pools(bp: Blueprint) -> set[str]:
    """Unshared pools that run a training template with more than one worker (ranks on several nodes).

    Shared pools (MIG, time-slicing, MPS) are left out: they host slices of a GPU for single-GPU
    work (MIG has no GPU-to-GPU P2P: NVIDIA MIG User Guide, "Application Considerations"), not
    ranks of a multi-node NCCL job, so the fabric is installed for the whole-GPU pools only.
    """
    unshared = {p.name for p in bp.gpu_pools if p.sharing.mode == "none"}
    return {w.pool for w in bp.workloads.training if w.workers > 1 and w.pool in unshared}


def catalog_fabric(pool: GpuPool) -> tuple[str, int, bool]:
    """(fabric, interfaces per node, device RDMA) every instance type of the pool carries, else none."""
    from gpuplane.gpu.fabric import instance_fabric  # deferred for start-up time

    found = {instance_fabric(t) for t in pool.instance_types}
    if len(found) != 1 or None in found:
        return "none", 0, False
    f = found.pop()
    assert f is not None
    return f.fabric, f.interfaces, f.device_rdma


def fabric_of(bp: Blueprint, pool: GpuPool) -> tuple[str, int, bool]:
    """The fabric the pool's multi-node training uses: the blueprint's choice, else the catalog's.

    ``auto`` takes the instance types' fabric (gpu/data/fabric.yaml); on-prem has no instance types
    and stays ``none`` unless the blueprint names the fabric. GPUDirect-TCPX is not rendered (the
    per-pod receive-datapath sidecar and NCCL plugin installer are outside this generator): ``auto``
    leaves it off and the decision table says so.
    """
    if pool.name not in multi_node_pools(bp) or bp.network.fabric == "none":
        return "none", 0, False
    fabric, n, rdma = catalog_fabric(pool)
    if bp.network.fabric == "auto":
        return (fabric, n, rdma) if fabric in ("efa", "infiniband") else ("none", 0, False)
    if bp.network.fabric in ("infiniband", "roce") and fabric == "none":
        return bp.network.fabric, 0, True
    return bp.network.fabric, n, rdma


def build_plans(bp: Blueprint, mig_layouts: dict[str, list[dict[str, int]]]) -> list[PoolPlan]:
    """Plans for a blueprint that passed :func:`gpuplane.generate.checks.check_blueprint`."""
    cat = catalog()
    plans = []
    for i, pool in enumerate(bp.gpu_pools):
        model = cat.model(pool.gpu)
        assert model is not None  # guaranteed by check_blueprint
        per_node = gpus_per_node(pool) or 1
        plan = PoolPlan(pool=pool, index=i, model=model, gpus_per_node=per_node)
        mode = pool.sharing.mode
        if mode in ("time-slicing", "mps"):
            plan.device_plugin_config = f"{pool.name}-{mode}-{pool.sharing.replicas}"
        if mode == "mig":
            plan.mig_layouts = mig_layouts[pool.name]
            plan.mig_config = f"{pool.name}-mig"
        plan.fabric, plan.fabric_interfaces, plan.fabric_device_rdma = fabric_of(bp, pool)
        if bp.provider == "eks" and bp.autoscaling.provisioner == "cluster-autoscaler":
            # CA's AWS provider reads GPU nodes by this label (kubernetes/autoscaler
            # cluster-autoscaler/cloudprovider/aws/aws_cloud_provider.go GPULabel): a node that carries it
            # but has no allocatable GPU yet is treated as still starting, not as a failed scale-up.
            plan.provider_labels[EKS_GPU_LABEL] = "nvidia-" + model.name.lower()
        plans.append(plan)
    return plans
