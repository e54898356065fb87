"""The hardware catalog: GPU models, MIG geometry, cloud instance types, cold-start figures.

Knowledge is data: the figures live in ``gpu/data/*.yaml`` with their sources and are loaded
once (``yaml.CSafeLoader``) into frozen dataclasses; :func:`catalog` caches the result.
Lookups are dict hits on pre-normalised keys, cheap enough for per-node use in inventory
and the scheduler.

Node-label lookups follow the labels real clusters carry:

- ``nvidia.com/gpu.product`` from GPU Feature Discovery (NVML name, spaces -> ``-``; with
  ``-SHARED`` appended when shared without rename and ``-MIG-<profile>`` / ``-MIG-INVALID``
  under the MIG ``single`` strategy: k8s-device-plugin ``internal/lm/resource.go``,
  ``internal/lm/mig-strategy.go``).
- ``node.kubernetes.io/instance-type`` (and the deprecated ``beta.kubernetes.io/instance-type``).
- Karpenter's ``karpenter.k8s.aws/instance-gpu-name`` + ``instance-gpu-memory`` (MiB).
- ``cloud.google.com/gke-accelerator``; ``k8s.amazonaws.com/accelerator`` (Cluster Autoscaler's
  AWS GPU label, same value style as GKE).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gpuplane.gpu.labels import GPU_PRODUCT as GFD_PRODUCT_LABEL

DATA_DIR = Path(__file__).resolve().parent / "data"

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
KARPENTER_GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
EKS_ACCELERATOR = "k8s.amazonaws.com/accelerator"
AMD_PRODUCT_LABELS = ("amd.com/gpu.product-name", "beta.amd.com/gpu.product-name")
# The labels naming the GPU product itself, most specific first: NVIDIA GFD's, then AMD's.
_PRODUCT_LABELS = (GFD_PRODUCT_LABEL, *AMD_PRODUCT_LABELS)

_GFD_SUFFIX_RE = re.compile(r"(?:-MIG-(?:INVALID|[0-9][0-9a-z.+-]*))?(?:-SHARED)?$")


@dataclass(frozen=True, slots=True)
class MigPlacementProfile:
    """One GPU-instance profile on one model.

    ``placements`` are the valid start memory-slice indexes and ``size`` the number of memory
    slices an instance occupies (``nvidia-smi mig -lgipp`` ``{starts}:size``). ``profile_id`` is
    the GI profile id ``nvidia-smi mig -cgi`` takes, ``None`` where no source published it.
    """

    name: str
    profile_id: int | None
    compute_slices: int
    memory_slices: int
    memory_gb: float
    max_instances: int
    placements: tuple[int, ...]
    size: int
    memory_gib_reported: float | None = None
    multiprocessors: int | None = None

    @property
    def resource_name(self) -> str:
        """``nvidia.com/mig-<profile>`` as the ``mixed`` strategy advertises it."""
        return "nvidia.com/mig-" + self.name.replace("+", ".")


@dataclass(frozen=True, slots=True)
class GpuModel:
    """A GPU board as the catalog knows it."""

    name: str
    memory_gb: float
    mig_capable: bool
    mig_profiles: tuple[MigPlacementProfile, ...]
    gfd_products: tuple[str, ...]
    architecture: str
    source: str
    vendor: str = "nvidia"
    compute_capability: str | None = None
    memory_slices: int = 0
    total_compute_slices: int = 0
    pci_device_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    geometry_source: str = ""
    # Board facts that tell apart models sharing MIG profile names (H100 SXM5 vs PCIe): the whole
    # GPU's SM count, the memory technology and the form factor; None where the data file has none.
    multiprocessors: int | None = None
    memory_type: str | None = None
    form_factor: str | None = None

    def profile(self, name: str) -> MigPlacementProfile | None:
        """The profile called ``name`` on this model (exact upstream spelling)."""
        for p in self.mig_profiles:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True, slots=True)
class InstanceType:
    """A cloud instance type and the GPUs it carries."""

    provider: str
    name: str
    gpu_model: str
    gpu_count: int
    vcpus: int | None
    memory_gib: float | None
    source: str


@dataclass(frozen=True, slots=True)
class ColdStartComponent:
    """One phase of bringing a GPU node to a running pod, with a sourced range."""

    name: str
    unit: str
    low: float | None
    typical: float | None
    high: float | None
    source: str
    note: str = ""


def _norm(text: str) -> str:
    """Lookup key: lower case, alphanumerics only ("A100 80GB" == "a100-80gb")."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


@dataclass(slots=True)
class Catalog:
    """Models, instance types and cold-start figures, with pre-built lookup indexes."""

    models: dict[str, GpuModel]
    instance_types: dict[str, InstanceType]
    cold_start: dict[str, ColdStartComponent]
    _by_key: dict[str, str] = field(default_factory=dict)
    _by_product: dict[str, str] = field(default_factory=dict)
    _by_karpenter: dict[tuple[str, int | None], str] = field(default_factory=dict)
    _by_cloud_accel: dict[str, str] = field(default_factory=dict)
    _by_pci: dict[str, str] = field(default_factory=dict)

    def model(self, name_or_product: str) -> GpuModel | None:
        """Canonical name, alias (``a100``, ``A100 80GB``, ``h100``) or GFD product value."""
        if not name_or_product:
            return None
        direct = self.models.get(name_or_product)
        if direct is not None:
            return direct
        name = self._by_product.get(name_or_product) or self._by_product.get(
            _strip_gfd_suffix(name_or_product)
        )
        if name is None:
            name = self._by_key.get(_norm(name_or_product))
        return self.models.get(name) if name else None

    def model_for_pci_id(self, device_id: str) -> GpuModel | None:
        """Model for a mig-parted ``device-filter`` id such as ``0x20B010DE``."""
        name = self._by_pci.get(device_id.upper().replace("0X", "0x"))
        return self.models.get(name) if name else None

    def model_for_node_labels(self, labels: dict[str, str]) -> GpuModel | None:
        """Best model guess from a node's labels, most specific source first."""
        for key in _PRODUCT_LABELS:
            value = labels.get(key)
            if value:
                found = self.model(value)
                if found is not None:
                    return found
        for key in INSTANCE_TYPE_LABELS:
            value = labels.get(key)
            if value:
                it = self.instance_types.get(value)
                if it is not None:
                    return self.models.get(it.gpu_model)
        gpu_name = labels.get(KARPENTER_GPU_NAME)
        if gpu_name:
            found = self._karpenter_model(gpu_name, labels.get(KARPENTER_GPU_MEMORY))
            if found is not None:
                return found
        for key in (GKE_ACCELERATOR, EKS_ACCELERATOR):
            value = labels.get(key)
            if value:
                name = self._by_cloud_accel.get(value.lower())
                if name:
                    return self.models[name]
        return None

    def gke_accelerators(self, model: str) -> list[str]:
        """``cloud.google.com/gke-accelerator`` values meaning ``model`` (sorted; [] when none)."""
        return sorted(value for value, name in self._by_cloud_accel.items() if name == model)

    def _karpenter_model(self, gpu_name: str, memory: str | None) -> GpuModel | None:
        gpu_name = gpu_name.lower()
        mib: int | None = None
        if memory:
            try:
                mib = int(memory)
            except ValueError:
                mib = None
        if mib is not None:
            name = self._by_karpenter.get((gpu_name, mib))
            if name:
                return self.models[name]
        name = self._by_karpenter.get((gpu_name, None))
        return self.models[name] if name else None

    def instance(self, name: str) -> InstanceType | None:
        """Instance type by its exact cloud name (``p4d.24xlarge``, ``Standard_ND96asr_v4``)."""
        return self.instance_types.get(name)

    def mig_profile(self, model: str, profile: str) -> MigPlacementProfile | None:
        """Profile ``profile`` on ``model`` (model given by any name :meth:`model` accepts)."""
        m = self.model(model)
        return m.profile(profile) if m is not None else None


def _strip_gfd_suffix(product: str) -> str:
    return _GFD_SUFFIX_RE.sub("", product, count=1)


def _load_yaml(data_dir: Path, name: str) -> Any:
    with (data_dir / name).open("rb") as fh:
        return yaml.load(fh, Loader=yaml.CSafeLoader)


def _build_profiles(geometry: dict[str, Any], mig: dict[str, list[Any]]) -> tuple[MigPlacementProfile, ...]:
    classes = geometry["classes"]
    out = []
    for cls, (name, gib, sms) in mig.items():
        shape = classes[cls]
        gb = float(name.split("g.", 1)[1].split("gb", 1)[0])
        out.append(
            MigPlacementProfile(
                name=name,
                profile_id=shape["profile_id"],
                compute_slices=shape["compute"],
                memory_slices=shape["memory"],
                memory_gb=gb,
                max_instances=shape["max"],
                placements=tuple(shape["placements"]),
                size=shape["size"],
                memory_gib_reported=float(gib) if gib is not None else None,
                multiprocessors=sms,
            )
        )
    return tuple(out)


def load_catalog(data_dir: Path = DATA_DIR) -> Catalog:
    """Read the three data files and build the indexes (use :func:`catalog` for the cached one)."""
    models_doc = _load_yaml(data_dir, "models.yaml")
    inst_doc = _load_yaml(data_dir, "instances.yaml")
    cold_doc = _load_yaml(data_dir, "cold_start.yaml")
    geometries = models_doc["geometries"]
    cat = Catalog(models={}, instance_types={}, cold_start={})
    for name, raw in models_doc["models"].items():
        geo_name = raw.get("mig_geometry")
        geo = geometries[geo_name] if geo_name else None
        profiles = _build_profiles(geo, raw["mig"]) if geo else ()
        model = GpuModel(
            name=name,
            memory_gb=float(raw["memory_gb"]),
            mig_capable=bool(profiles),
            mig_profiles=profiles,
            gfd_products=tuple(raw.get("gfd_products") or ()),
            architecture=raw["architecture"],
            source=raw["source"],
            vendor=raw.get("vendor", "nvidia"),
            compute_capability=raw.get("compute_capability"),
            memory_slices=geo["memory_slices"] if geo else 0,
            total_compute_slices=geo["compute_slices"] if geo else 0,
            pci_device_ids=tuple(raw.get("pci_device_ids") or ()),
            aliases=tuple(raw.get("aliases") or ()),
            geometry_source=geo["source"] if geo else "",
            multiprocessors=raw.get("multiprocessors"),
            memory_type=raw.get("memory_type"),
            form_factor=raw.get("form_factor"),
        )
        cat.models[name] = model
        cat._by_key.setdefault(_norm(name), name)
        for alias in model.aliases:
            cat._by_key.setdefault(_norm(alias), name)
        for product in (*model.gfd_products, *(raw.get("amd_products") or ())):
            cat._by_product[product] = name
            cat._by_key.setdefault(_norm(product), name)
        for pci in model.pci_device_ids:
            cat._by_pci[pci] = name
        for accel in raw.get("gke_accelerator") or ():
            cat._by_cloud_accel[accel] = name
        for entry in raw.get("karpenter") or ():
            gpu_name = entry["gpu_name"]
            cat._by_karpenter[(gpu_name, entry["memory_mib"])] = name
            # A name alone is enough only while one model carries it (v100/a100 need memory).
            key = (gpu_name, None)
            cat._by_karpenter[key] = (
                "" if key in cat._by_karpenter and cat._by_karpenter[key] != name else name
            )
    for group_name, group in inst_doc.items():
        provider = group.get("provider", group_name)
        for row in group["rows"]:
            iname, model_name, count, vcpus, mem = row
            cat.instance_types[iname] = InstanceType(
                provider=provider,
                name=iname,
                gpu_model=model_name,
                gpu_count=int(count),
                vcpus=vcpus,
                memory_gib=float(mem) if mem is not None else None,
                source=group["source"],
            )
    for cname, raw in cold_doc["components"].items():
        cat.cold_start[cname] = ColdStartComponent(
            name=cname,
            unit=raw["unit"],
            low=raw["low"],
            typical=raw["typical"],
            high=raw["high"],
            source=raw["source"],
            note=raw.get("note", ""),
        )
    return cat


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The catalog, loaded once per process."""
    return load_catalog()
