"""Which nodes are GPU nodes: accelerator resources advertised, or the labels GPU nodes carry.

Accelerator semantics over the GPU-agnostic model: ``gpuplane.k8s`` knows nodes and resource
lists, this module knows which resource names and labels mean "a GPU is (or should be) here".
"""

from __future__ import annotations

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node

# Node labels that say "this node has (or should have) GPUs" even when no GPU
# resource is advertised (e.g. the device plugin is down). Sources:
# reference/nvidia-gpu-stack.md §2 (GFD), §3.3 (GPU Operator), platform.md §2.1
# (Cluster Autoscaler GPU labels), §8 (cloud accelerator labels).
GPU_NODE_LABELS = (
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "feature.node.kubernetes.io/pci-10de.present",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "kubernetes.azure.com/accelerator",
    "accelerator",
    "amd.com/gpu.product-name",
    "amd.com/gpu.family",
    "gpu.intel.com/device.count",
)
# Labels whose value "false" explicitly denies a GPU.
_FALSE_VALUES = frozenset({"false", "False", "0", ""})


def is_gpu_node(node: Node) -> bool:
    """GPU capacity/allocatable, or a GPU label (``nvidia.com/gpu.present=true`` ...)."""
    status = node.status
    for name in status.capacity:
        if is_gpu_resource(name):
            return True
    for name in status.allocatable:
        if is_gpu_resource(name):
            return True
    labels = node.metadata.labels
    if labels:
        for key in GPU_NODE_LABELS:
            value = labels.get(key)
            if value is not None and value not in _FALSE_VALUES:
                return True
    return False


def gpu_nodes(state: ClusterState) -> list[Node]:
    """Nodes that advertise an accelerator resource or carry GPU node labels, in snapshot order.

    Label-only nodes matter: a GPU node whose device plugin is broken shows no GPU in
    allocatable but still has GFD / operator / cloud accelerator labels.
    """
    return [node for node in state.nodes if is_gpu_node(node)]
