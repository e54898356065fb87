"""Node labels of the NVIDIA GPU stack (GPU Feature Discovery, GPU Operator, mig-manager), once.

Sources: NVIDIA/k8s-device-plugin ``internal/lm`` (GFD labels ``nvidia.com/gpu.*``, the MIG
strategy label), NVIDIA/mig-parted ``deployments/gpu-operator`` (``nvidia.com/mig.config`` and its
``.state``), NVIDIA/gpu-operator ``controllers/state_manager.go`` (``nvidia.com/gpu.deploy.*``).
"""

from __future__ import annotations

GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
GPU_PRESENT = "nvidia.com/gpu.present"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
DEPLOY_OPERANDS = "nvidia.com/gpu.deploy.operands"

# GPU Feature Discovery appends this to ``nvidia.com/gpu.product`` on a node whose GPUs are
# shared (time-slicing or MPS replicas) while the device plugin keeps the resource name
# (``renameByDefault: false``, the default): k8s-device-plugin ``internal/lm/resource.go``.
SHARED_PRODUCT_SUFFIX = "-SHARED"

# GFD labels every resource it advertises as ``<resource>.<suffix>`` (``nvidia.com/gpu.replicas``,
# ``nvidia.com/mig-1g.5gb.sharing-strategy``): ``baseLabeler`` in k8s-device-plugin
# ``internal/lm/resource.go``. ``replicas`` is the replicas per device (1 unshared, 0 when sharing
# is not configured); ``sharing-strategy`` is ``none``, ``time-slicing`` or ``mps`` (``none``
# unless replicas > 1); ``product`` carries the ``-SHARED`` suffix above.
REPLICAS_SUFFIX = ".replicas"
SHARING_STRATEGY_SUFFIX = ".sharing-strategy"
PRODUCT_SUFFIX = ".product"
SHARING_STRATEGIES = ("time-slicing", "mps")  # api/config/v1/sharing.go SharingStrategy*


def product_model(value: str) -> str:
    """The GPU model a ``gpu.product`` value names, without the sharing suffix (``NVIDIA-L4``
    for ``NVIDIA-L4-SHARED``): what the GPU is, for grouping nodes by model."""
    return value.removesuffix(SHARED_PRODUCT_SUFFIX)


def product_selector_values(products: set[str] | list[str], model: str) -> list[str]:
    """The ``gpu.product`` values nodes of ``model`` actually carry (sorted): a selector must
    name these exactly, so advice that suggests a product selector uses them (a time-sliced L4
    node matches ``NVIDIA-L4-SHARED``, never ``NVIDIA-L4``)."""
    return sorted(p for p in products if product_model(p) == model)
