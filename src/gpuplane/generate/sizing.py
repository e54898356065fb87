"""How much CPU, memory and GPU memory one workload pod may ask for on its pool's nodes.

A GPU pod that requests more CPU or memory than its node offers is never scheduled, and an
autoscaler cannot help (every new node has the same shape). So gpuplane sizes pod requests
from the node shape instead of a fixed default:

    allocatable = host - kube/system reserve - hard eviction - DaemonSet headroom
    per-pod     = allocatable x (GPU units the pod takes / GPU units the node offers)

GPU units are whole GPUs, time-slicing/MPS replicas (``replicas`` per GPU) or MIG devices
(every device of the node's layout counts one). Requests are floored to 100 millicores and
whole MiB so the pods of a full node always add up to at most its allocatable.

Reserve rule (documented so users can check it against their nodes):

- kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% above;
  kube-reserved memory: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of
  the next 112, 2% above 128 GiB. GKE's documented node-allocatable formula ("Plan GKE node
  sizes", memory and CPU reservations); the EKS AL2023 AMI reserves the same CPU and less
  memory (nodeadm kube-reserved), so this is an upper bound on both.
- hard eviction ``memory.available<100Mi`` (kubelet default; reference platform.md §4.5).
- 1 CPU and 2 GiB for node DaemonSets: GPU Operator operands (device plugin, GFD, DCGM
  exporter, validator), CNI, kube-proxy, CSI node plugins. A gpuplane rule, not upstream.

Host shapes: cloud pools take vCPU and memory from the hardware catalog
(``gpu/data/instances.yaml``); on-prem pools give ``cpus_per_node`` / ``memory_per_node_gi``,
or default to the NVIDIA DGX H100 (2 x Xeon Platinum 8480C = 112 cores / 224 threads, 2 TB
memory: NVIDIA DGX H100/H200 User Guide, "Hardware Overview") for 8 x H100-80GB nodes.

vLLM GPU memory: ``--gpu-memory-utilization`` is "a per-instance limit ... if you have two
vLLM instances running on the same GPU, you can set the GPU memory utilization to 0.5 for
each instance" (vLLM engine arguments, ``CacheConfig.gpu_memory_utilization``); default 0.9.
Time-slicing gives no memory isolation (reference nvidia-gpu-stack.md §1.4), so a shared GPU
gives each replica ``0.9 / replicas``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gpuplane.generate.blueprint import GpuPool
from gpuplane.gpu.catalog import GpuModel, catalog

MIB_PER_GIB = 1024
DAEMONSET_CPU_M = 1000
DAEMONSET_MEMORY_MI = 2048
EVICTION_MEMORY_MI = 100
DGX_H100 = (224, 2048)  # logical CPUs, GiB: NVIDIA DGX H100/H200 User Guide, Hardware Overview
DGX_GPU = "H100-80GB"
VLLM_DEFAULT_UTILIZATION = Fraction(9, 10)  # vLLM CacheConfig.gpu_memory_utilization default
WEIGHTS_SHARE = Fraction(4, 5)  # weights may take at most 80% of the budget: the rest is KV cache
MIN_CPU_M = 1000  # smallest GPU pod gpuplane renders (a gpuplane rule)
MIN_MEMORY_MI = 4 * MIB_PER_GIB
# Node disk: image GC starts at 85% imagefs use and CUDA/vLLM images take 10-20 GB (platform.md §4.5).
IMAGEFS_USABLE = 0.85
IMAGE_LAYERS_GI = 30

# Weights of the models the examples and docs use, in GB (bf16 = 2 bytes per parameter). Parameter
# counts from each model's Hugging Face model card / safetensors metadata.
MODEL_SIZES_GB: dict[str, float] = {
    "meta-llama/Llama-3.1-8B-Instruct": 16.1,  # 8.03B params
    "meta-llama/Llama-3.1-70B-Instruct": 141.1,  # 70.6B params
    "mistralai/Mistral-7B-Instruct-v0.3": 14.5,  # 7.25B params
    "Qwen/Qwen2.5-0.5B-Instruct": 1.0,  # 0.49B params
    "Qwen/Qwen2.5-7B-Instruct": 15.2,  # 7.62B params
}

# Organisations whose models are gated on Hugging Face (accept the licence, then use a token).
GATED_PREFIXES = ("meta-llama/", "mistralai/", "google/gemma")


@dataclass(frozen=True, slots=True)
class NodeShape:
    """Host resources of one node of a pool and where the figures come from."""

    cpu_m: int
    memory_mi: int
    source: str


@dataclass(frozen=True, slots=True)
class PodShare:
    """What one pod of a workload may request."""

    cpu_m: int
    memory_mi: int

    @property
    def cpu(self) -> str:
        return format_cpu(self.cpu_m)

    @property
    def memory(self) -> str:
        return format_memory(self.memory_mi)


def format_cpu(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_memory(mib: int) -> str:
    return f"{mib // MIB_PER_GIB}Gi" if mib % MIB_PER_GIB == 0 else f"{mib}Mi"


def node_shape(pool: GpuPool, gpus_per_node: int) -> tuple[NodeShape | None, str]:
    """The pool's host shape, or ``None`` and the blueprint field that must supply it."""
    cat = catalog()
    if pool.instance_types:
        shapes = []
        for name in pool.instance_types:
            it = cat.instance(name)
            if it is None or it.vcpus is None or it.memory_gib is None:
                return None, f"instance type {name} has no host vCPU/memory in the catalog"
            shapes.append((it.vcpus, it.memory_gib, name))
        # Several types in one pool: size for the smallest, so pods fit whichever is launched.
        vcpus, mem, name = min(shapes)
        return NodeShape(vcpus * 1000, int(mem * MIB_PER_GIB), f"catalog {name}"), ""
    cpus, mem_gi = pool.cpus_per_node, pool.memory_per_node_gi
    if cpus is None or mem_gi is None:
        model = cat.model(pool.gpu)
        if model is not None and model.name == DGX_GPU and gpus_per_node == 8:
            cpus = cpus or DGX_H100[0]
            mem_gi = mem_gi or DGX_H100[1]
            return NodeShape(cpus * 1000, mem_gi * MIB_PER_GIB, "DGX H100 defaults"), ""
        missing = "cpus_per_node" if cpus is None else "memory_per_node_gi"
        return None, missing
    return NodeShape(cpus * 1000, mem_gi * MIB_PER_GIB, "blueprint"), ""


def _tiered(total: float, tiers: tuple[tuple[float, float], ...], rest: float) -> float:
    out, left = 0.0, total
    for size, rate in tiers:
        take = min(left, size)
        out += take * rate
        left -= take
        if left <= 0:
            return out
    return out + left * rest


def allocatable(shape: NodeShape) -> tuple[int, int]:
    """Node allocatable after the reserve rule in the module docstring (millicores, MiB)."""
    cores = shape.cpu_m / 1000
    cpu_reserved = _tiered(cores, ((1, 0.06), (1, 0.01), (2, 0.005)), 0.0025) * 1000
    gib = shape.memory_mi / MIB_PER_GIB
    mem_reserved = _tiered(gib, ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06)), 0.02) * MIB_PER_GIB
    cpu = shape.cpu_m - int(-(-cpu_reserved // 1)) - DAEMONSET_CPU_M
    mem = shape.memory_mi - int(-(-mem_reserved // 1)) - EVICTION_MEMORY_MI - DAEMONSET_MEMORY_MI
    return max(cpu, 0), max(mem, 0)


def pod_share(shape: NodeShape, units: int, node_units: int) -> PodShare:
    """A pod's part of the node's allocatable for ``units`` of the node's ``node_units``."""
    cpu, mem = allocatable(shape)
    cpu_m = (cpu * units // node_units) // 100 * 100
    mem_mi = mem * units // node_units
    if mem_mi >= 4 * MIB_PER_GIB:
        mem_mi = mem_mi // MIB_PER_GIB * MIB_PER_GIB  # whole GiB reads better and stays below the share
    return PodShare(cpu_m, mem_mi)


def model_size_gb(model: str, given: float | None) -> float | None:
    """Weights in GB: the blueprint's figure, else the table, else unknown."""
    return given if given is not None else MODEL_SIZES_GB.get(model)


def device_memory_gb(model: GpuModel, mig_profile: str | None) -> float:
    """Memory of one device a serving pod gets: a whole GPU or one MIG slice."""
    if mig_profile is not None:
        prof = model.profile(mig_profile)
        if prof is not None:
            return prof.memory_gb
    return model.memory_gb


def gpu_memory_utilization(replicas: int) -> Fraction:
    """vLLM's fraction per instance: the default on a whole GPU, an equal split when shared."""
    if replicas <= 1:
        return VLLM_DEFAULT_UTILIZATION
    # Two decimals, rounded down: the replicas' fractions must add up to at most the default.
    return Fraction(int(VLLM_DEFAULT_UTILIZATION / replicas * 100), 100)


def weights_fit(size_gb: float, device_gb: float, utilization: Fraction, devices: int) -> tuple[bool, float]:
    """Whether weights leave at least 20% of vLLM's budget for the KV cache; returns the budget."""
    budget = device_gb * float(utilization) * devices
    return size_gb <= budget * float(WEIGHTS_SHARE), budget


def is_gated(model: str) -> bool:
    return model.startswith(GATED_PREFIXES)


def node_units(pool: GpuPool, gpus_per_node: int, mig_layouts: list[dict[str, int]] | None) -> int:
    """GPU units one node advertises: GPUs, shared replicas, or MIG devices."""
    mode = pool.sharing.mode
    if mode == "mig":
        return sum(sum(layout.values()) for layout in (mig_layouts or [])) or gpus_per_node
    if mode in ("time-slicing", "mps"):
        return gpus_per_node * (pool.sharing.replicas or 1)
    return gpus_per_node
