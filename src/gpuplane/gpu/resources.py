"""What an extended-resource name means on a GPU cluster.

Kubernetes treats extended resources as opaque, case-sensitive names: a pod asking for
``nvidia.com/GPU`` waits forever because no device plugin advertises it. This module knows
the names real device plugins advertise and classifies any name in O(1) on the hot path
(lint and the scheduler call it for every container).

Upstream facts used here:

- NVIDIA k8s-device-plugin: ``nvidia.com/gpu``; MIG ``mixed`` strategy registers
  ``nvidia.com/mig-<profile>`` with ``+`` replaced by ``.`` and only for profiles whose
  compute-instance size equals the GPU-instance size (``internal/rm/rm.go``
  ``AddDefaultResourcesToConfig``); shared replicas renamed with the ``.shared`` suffix
  (``api/config/v1/consts.go`` ``DefaultSharedResourceNameSuffix``).
- MIG profile names ``[<C>c.]<G>g.<M>gb`` with attributes ``+me``, ``+me.all``, ``+gfx``,
  ``-me`` (mig-parted ``pkg/types/mig_profile.go``; MIG user guide "Supported MIG Profiles").
- AMD ROCm device plugin: ``amd.com/gpu``; Intel GPU plugin: ``gpu.intel.com/i915``,
  ``gpu.intel.com/xe`` and their ``_monitoring`` variants, plus NFD-derived
  ``gpu.intel.com/millicores`` / ``memory.max`` / ``tiles``.
- HAMi: ``nvidia.com/gpumem``, ``nvidia.com/gpumem-percentage``, ``nvidia.com/gpucores``
  beside ``nvidia.com/gpu``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.records import FrozenRecord, set_field

NVIDIA_GPU = "nvidia.com/gpu"
SHARED_SUFFIX = ".shared"
MIG_PREFIX = "nvidia.com/mig-"

KNOWN_GPU_RESOURCES: frozenset[str] = frozenset(
    {
        NVIDIA_GPU,
        NVIDIA_GPU + SHARED_SUFFIX,
        "nvidia.com/gpumem",
        "nvidia.com/gpumem-percentage",
        "nvidia.com/gpucores",
        "amd.com/gpu",
        "gpu.intel.com/i915",
        "gpu.intel.com/xe",
        "gpu.intel.com/i915_monitoring",
        "gpu.intel.com/xe_monitoring",
        "gpu.intel.com/millicores",
        "gpu.intel.com/memory.max",
        "gpu.intel.com/tiles",
    }
)
"""Exact names real device plugins expose. MIG (``nvidia.com/mig-*``) and ``*.shared``
names are patterns: use :func:`classify`."""

OTHER_ACCELERATORS: frozenset[str] = frozenset(
    {
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "aws.amazon.com/neurondevice",
        "google.com/tpu",
        "habana.ai/gaudi",
    }
)

_MIG_ATTRIBUTES = ("+me.all", "+me", "+gfx", "-me")
_PROFILE_RE = LazyPattern(
    r"^(?:(?P<c>[1-9][0-9]*)c\.)?(?P<g>[1-9][0-9]*)g\.(?P<m>[1-9][0-9]*)gb(?P<attrs>(?:[+-][a-z]+(?:\.[a-z]+)*)*)$"
)
_ATTR_TOKEN_RE = LazyPattern(r"[+-][a-z]+(?:\.[a-z]+)*")
# In resource names ``+`` becomes ``.``: ".me.all" must be tried before ".me".
_RESOURCE_ATTR_TOKENS = ((".me.all", "+me.all"), (".me", "+me"), (".gfx", "+gfx"), ("-me", "-me"))


class MigProfileName(FrozenRecord):
    """A parsed MIG profile name such as ``3g.40gb``, ``1g.10gb+me`` or ``1c.3g.20gb``.

    ``compute_slices`` is the GPU-instance size G; ``ci_slices`` is C in the
    compute-instance form (``None`` when absent); ``attributes`` keeps the upstream
    spelling (``+me``, ``+me.all``, ``+gfx``, ``-me``).
    """

    __slots__ = ("attributes", "ci_slices", "compute_slices", "memory_gb")
    compute_slices: int
    memory_gb: int
    attributes: tuple[str, ...]
    ci_slices: int | None

    def __init__(
        self,
        compute_slices: int,
        memory_gb: int,
        attributes: tuple[str, ...] = (),
        ci_slices: int | None = None,
    ) -> None:
        set_field(self, "compute_slices", compute_slices)
        set_field(self, "memory_gb", memory_gb)
        set_field(self, "attributes", attributes)
        set_field(self, "ci_slices", ci_slices)

    @property
    def gi_name(self) -> str:
        """The GPU-instance profile name (no compute-instance prefix)."""
        return f"{self.compute_slices}g.{self.memory_gb}gb{''.join(self.attributes)}"

    @property
    def name(self) -> str:
        """The profile as mig-parted and ``nvidia-smi`` spell it."""
        prefix = f"{self.ci_slices}c." if self.ci_slices is not None else ""
        return prefix + self.gi_name

    @property
    def media_extensions(self) -> tuple[str, ...]:
        """Attributes without their sign character: ``("me",)``, ``("me.all",)``, ``("gfx",)``."""
        return tuple(a[1:] for a in self.attributes)

    @property
    def resource_name(self) -> str:
        """The ``mixed``-strategy resource name: ``nvidia.com/mig-1g.10gb.me``."""
        return MIG_PREFIX + self.gi_name.replace("+", ".")


class GpuResource(FrozenRecord):
    """What a resource name means.

    ``kind``: ``gpu`` (whole device), ``mig``, ``shared`` (time-sliced/MPS replicas renamed
    ``*.shared``), ``gpumem``, ``gpucores``, ``monitoring`` (access to all GPUs for monitoring
    agents, not a device count), ``other-accelerator`` or ``unknown`` (a vendor's name that no
    plugin advertises).
    """

    __slots__ = ("kind", "mig_profile", "name", "vendor")
    name: str
    vendor: str
    kind: str
    mig_profile: str | None

    def __init__(self, name: str, vendor: str, kind: str, mig_profile: str | None = None) -> None:
        set_field(self, "name", name)
        set_field(self, "vendor", vendor)
        set_field(self, "kind", kind)
        set_field(self, "mig_profile", mig_profile)


@lru_cache(maxsize=256)
def parse_mig_profile(profile: str) -> MigProfileName | None:
    """Parse ``3g.40gb``, ``1g.10gb+me``, ``1g.24gb-me``, ``1c.3g.20gb``; ``None`` if malformed."""
    m = _PROFILE_RE.match(profile)
    if m is None:
        return None
    attrs = tuple(_ATTR_TOKEN_RE.findall(m.group("attrs")))
    if any(a not in _MIG_ATTRIBUTES for a in attrs) or len(set(attrs)) != len(attrs):
        return None
    c = m.group("c")
    g = int(m.group("g"))
    ci = int(c) if c is not None else None
    if ci is not None and ci > g:
        return None
    return MigProfileName(compute_slices=g, memory_gb=int(m.group("m")), attributes=attrs, ci_slices=ci)


def _profile_from_resource_suffix(suffix: str) -> MigProfileName | None:
    """``1g.10gb.me`` (the part after ``nvidia.com/mig-``) back to ``1g.10gb+me``."""
    m = re.match(r"^([1-9][0-9]*c\.)?[1-9][0-9]*g\.[1-9][0-9]*gb", suffix)
    if m is None:
        return None
    head, rest = m.group(0), suffix[m.end() :]
    attrs: list[str] = []
    while rest:
        for token, attr in _RESOURCE_ATTR_TOKENS:
            if rest.startswith(token):
                attrs.append(attr)
                rest = rest[len(token) :]
                break
        else:
            return None
    return parse_mig_profile(head + "".join(attrs))


@lru_cache(maxsize=4096)
def classify(name: str) -> GpuResource | None:
    """Classify a resource name; ``None`` for non-accelerator resources (cpu, memory, ...)."""
    prefix, sep, short = name.partition("/")
    if not sep:
        return None
    if prefix == "nvidia.com":
        return _classify_nvidia(name, short)
    if prefix == "amd.com":
        return GpuResource(name, "amd", "gpu" if short == "gpu" else "unknown")
    if prefix == "gpu.intel.com":
        kind = {
            "i915": "gpu",
            "xe": "gpu",
            "i915_monitoring": "monitoring",
            "xe_monitoring": "monitoring",
            "millicores": "gpucores",
            "memory.max": "gpumem",
            "tiles": "other-accelerator",
        }.get(short, "unknown")
        return GpuResource(name, "intel", kind)
    if name in OTHER_ACCELERATORS:
        return GpuResource(name, "", "other-accelerator")
    return None


def _classify_nvidia(name: str, short: str) -> GpuResource:
    if short == "gpu":
        return GpuResource(name, "nvidia", "gpu")
    if short == "gpu" + SHARED_SUFFIX:
        return GpuResource(name, "nvidia", "shared")
    if short in ("gpumem", "gpumem-percentage"):
        return GpuResource(name, "hami", "gpumem")
    if short == "gpucores":
        return GpuResource(name, "hami", "gpucores")
    if short.startswith("mig-"):
        body = short[4:]
        shared = body.endswith(SHARED_SUFFIX)
        if shared:
            body = body[: -len(SHARED_SUFFIX)]
        prof = _profile_from_resource_suffix(body)
        if prof is not None and prof.ci_slices is None:
            return GpuResource(name, "nvidia", "shared" if shared else "mig", prof.gi_name)
    return GpuResource(name, "nvidia", "unknown")


_DEVICE_KINDS = frozenset({"gpu", "mig", "shared"})


def is_gpu_resource(name: str) -> bool:
    """True when the name counts accelerator devices (GPU, MIG, shared replica).

    HAMi memory/core shares, Intel monitoring access and non-GPU accelerators are not
    device counts of a GPU, so they return False.
    """
    r = classify(name)
    return r is not None and r.kind in _DEVICE_KINDS


_SUSPICIOUS = {
    "gpu": NVIDIA_GPU,
    "gpus": NVIDIA_GPU,
    "nvidia-gpu": NVIDIA_GPU,
    "nvidia/gpu": NVIDIA_GPU,
    "nvidia/gpus": NVIDIA_GPU,
    "nvidia.gpu": NVIDIA_GPU,
    "nvidia.com.gpu": NVIDIA_GPU,
    "nvidia.com/gpus": NVIDIA_GPU,
    "nvidia.com/nvidia-gpu": NVIDIA_GPU,
    "nvidia.com/gpu-count": NVIDIA_GPU,
    "nvidia.com/cuda": NVIDIA_GPU,
    "alpha.kubernetes.io/nvidia-gpu": NVIDIA_GPU,
    "nvidia.com/gpu.share": NVIDIA_GPU + SHARED_SUFFIX,
    "nvidia.com/gpu-shared": NVIDIA_GPU + SHARED_SUFFIX,
    "nvidia.com/gpu_shared": NVIDIA_GPU + SHARED_SUFFIX,
    "nvidia.com/shared-gpu": NVIDIA_GPU + SHARED_SUFFIX,
    "nvidia.com/gpu-memory": "nvidia.com/gpumem",
    "nvidia.com/gpu-mem": "nvidia.com/gpumem",
    "nvidia.com/gpu-cores": "nvidia.com/gpucores",
    "amd.com/gpus": "amd.com/gpu",
    "amd/gpu": "amd.com/gpu",
    "amd-gpu": "amd.com/gpu",
    "amd.com/amd-gpu": "amd.com/gpu",
    "intel.com/gpu": "gpu.intel.com/i915",
    "intel/gpu": "gpu.intel.com/i915",
    "gpu.intel.com/gpu": "gpu.intel.com/i915",
    "gpu.intel.com/i915s": "gpu.intel.com/i915",
}


def _is_valid_name(name: str) -> bool:
    r = classify(name)
    return r is not None and r.kind != "unknown"


def suspicious_gpu_name(name: str) -> str | None:
    """For lint: a GPU-looking name no device plugin exposes -> the likely intended name.

    Returns ``None`` for names plugins really expose and for names that do not look like a
    GPU request at all (``cpu``, ``example.com/foo``, KubeVirt passthrough names such as
    ``nvidia.com/GA102GL_A10``).
    """
    if _is_valid_name(name):
        return None
    low = name.strip().lower()
    if low != name and _is_valid_name(low):
        return low
    if low in _SUSPICIOUS:
        return _SUSPICIOUS[low]
    if low.startswith("nvidia.com/"):
        short = low[len("nvidia.com/") :]
        body = short[4:] if short.startswith("mig-") else short[3:] if short.startswith("mig") else short
        if body.endswith(SHARED_SUFFIX):
            body, tail = body[: -len(SHARED_SUFFIX)], SHARED_SUFFIX
        else:
            tail = ""
        prof = parse_mig_profile(body) or _profile_from_resource_suffix(body)
        if prof is not None:
            # Compute-instance forms are never advertised; the GPU instance is.
            gi = MigProfileName(prof.compute_slices, prof.memory_gb, prof.attributes)
            return gi.resource_name + tail
    return None


# Every accelerator (and accelerator-fabric) resource name a real device plugin advertises, beside
# the MIG patterns: the names a typo is measured against. EFA: aws-efa-k8s-device-plugin
# (``vpc.amazonaws.com/efa``).
KNOWN_ACCELERATOR_NAMES: frozenset[str] = KNOWN_GPU_RESOURCES | OTHER_ACCELERATORS | {"vpc.amazonaws.com/efa"}


def _within_one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance <= 1 (one insertion, deletion, substitution or swap)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if la < lb else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


@lru_cache(maxsize=4096)
def resource_name_typo(name: str) -> str | None:
    """The known accelerator resource ``name`` is a misspelling of, or None.

    A misspelling is a name no device plugin advertises that differs from a known one
    (:data:`KNOWN_ACCELERATOR_NAMES`) only in case, by one edit (``nvidia.com/gpus``,
    ``amd.com/gpus``, ``nvidia.com.gpu``, ``nvidia.com/gpu-shared``), or by a vendor prefix without
    its domain (``nvidia/gpu``). Real names are never typos: the known ones, every name
    :func:`classify` recognises (MIG slices, ``*.shared`` replicas, HAMi shares), and MIG-looking
    names (``nvidia.com/mig-*``, which the MIG rules judge against the profile grammar).
    """
    if name in KNOWN_ACCELERATOR_NAMES or _is_valid_name(name):
        return None
    low = name.strip().lower()
    if low.startswith(("nvidia.com/mig", "nvidia/mig")):
        return None
    domain, sep, short = low.partition("/")
    for known in sorted(KNOWN_ACCELERATOR_NAMES):
        if _within_one_edit(low, known):
            return known
        known_domain, _, known_short = known.partition("/")
        if sep and short == known_short and domain == known_domain.split(".", 1)[0]:
            return known
    return None
