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
