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

NVIDIA_GPU = "nvidia.com/gpu"
POOL_LABEL = "gpuplane.io/pool"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
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
        if bp.provider == "eks" and bp.autoscaling.provisioner == "cluster-autoscaler":
            # CA's AWS provider reads GPU nodes by this label (kubernetes/autoscaler
            # cluster-autoscaler/cloudprovider/aws/aws_cloud_provider.go GPULabel): a node that carries it
            # but has no allocatable GPU yet is treated as still starting, not as a failed scale-up.
            plan.provider_labels[EKS_GPU_LABEL] = "nvidia-" + model.name.lower()
        plans.append(plan)
    return plans
