"""``advise sharing``: none / time-slicing / MPS / MIG / DRA for a workload mix.

The rules follow the documented behaviour of each mechanism (reference/nvidia-gpu-stack.md):

- **MIG** (§4): hardware partitions with their own memory, SM slices and fault domain: the
  only in-GPU option that isolates tenants. Only MIG-capable models, fixed slice sizes (the
  catalog's profiles), layout planned exactly by :mod:`gpuplane.advise.mig_planner`.
- **MPS** (§5.1): the MPS control daemon enforces an equal share (1/replicas) of memory and
  compute per replica; clients share one fault domain (no fault isolation); full GPUs only
  (not on MIG devices); experimental in the device plugin since v0.15.0; requests > 1 are
  rejected.
- **Time-slicing** (§1.1, §1.4): no memory or fault isolation; processes share time equally,
  so latency-sensitive work suffers from context switches and noisy neighbours; works on
  every NVIDIA GPU and on MIG devices (``mixed`` strategy).
- **DRA** (§5.2): GA in Kubernetes v1.34 (``resource.k8s.io/v1``, kubernetes.io blog
  2025-09-01 "Kubernetes v1.34: DRA has graduated to GA"); with the NVIDIA DRA driver a
  claim chooses full GPUs, MIG devices, or MPS / time-slicing per claim (``GpuConfig``),
  while the device plugin applies one sharing config to every GPU of a node (§1.1).
- **none**: a workload that needs a GPU's memory or most of its compute gains nothing
  from sharing.

Thresholds that are judgement, not upstream fact, are named constants below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuplane.gpu.catalog import GpuModel, MigPlacementProfile

MODES = ("none", "time-slicing", "mps", "mig", "dra")
ISOLATION = ("none", "team", "tenant")
LATENCY = ("batch", "interactive", "realtime")
HIGH_UTIL_PCT = 60.0
"""Above this typical utilisation a workload keeps a whole GPU (judgement: sharing would
mostly add contention)."""
MAX_REPLICAS = 16
MAX_COUNT = 100_000  # workload instances, as advise mig's demand cap (mig_planner.MAX_DEMAND)
"""Upper bound on replicas per GPU the advice proposes (judgement: beyond this, per-process
overheads and context memory dominate)."""
DRA_GA = (1, 34)
DEVICE_PLUGIN_NAMESPACE = "gpu-operator"


class SharingInputError(ValueError):
    """Unusable workload description: one line for the user, exit 2."""


@dataclass(frozen=True, slots=True)
class Workload:
    """What the advice needs to know about one workload (per replica)."""

    name: str
    mem_gb: float
    util_pct: float
    isolation: str = "none"
    latency: str = "batch"
    count: int = 1


def _number(key: str, value: Any, name: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise SharingInputError(f"workload {name!r}: {key} must be a number, got {value!r}") from None
    if out < 0 or math.isnan(out):
        raise SharingInputError(f"workload {name!r}: {key} must be >= 0")
    return out


def workload_from_mapping(raw: dict[str, Any], index: int = 0) -> Workload:
    """Build a :class:`Workload` from ``{name, mem, util, isolation, latency, count}``."""
    if not isinstance(raw, dict):
        raise SharingInputError(f"workload #{index + 1} must be a mapping")
    allowed = {"name", "mem", "util", "isolation", "latency", "count"}
    unknown = sorted(set(raw) - allowed)
    name = str(raw.get("name") or f"workload-{index + 1}")
    if unknown:
        raise SharingInputError(
            f"workload {name!r}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})"
        )
    for key in ("mem", "util"):
        if key not in raw:
            raise SharingInputError(
                f"workload {name!r}: {key}= is required (mem in GB of GPU memory, util in % of one GPU)"
            )
    isolation = str(raw.get("isolation", "none"))
    latency = str(raw.get("latency", "batch"))
    if isolation not in ISOLATION:
        raise SharingInputError(f"workload {name!r}: isolation must be one of {', '.join(ISOLATION)}")
    if latency not in LATENCY:
        raise SharingInputError(f"workload {name!r}: latency must be one of {', '.join(LATENCY)}")
    count = _number("count", raw.get("count", 1), name)
    if count < 1 or count != int(count):
        raise SharingInputError(f"workload {name!r}: count must be a whole number >= 1")
    if count > MAX_COUNT:  # a count of 2**63 ran out of memory in the MIG plan (bench/fuzz.py)
        raise SharingInputError(
            f"workload {name!r}: count must be at most {MAX_COUNT:,} (the planner's limit)"
        )
    util = _number("util", raw["util"], name)
    if util > 100:
        raise SharingInputError(f"workload {name!r}: util is a percentage of one GPU (0-100)")
    return Workload(name, _number("mem", raw["mem"], name), util, isolation, latency, int(count))


def parse_workload(text: str, index: int = 0) -> Workload:
    """``name=notebooks,mem=10,util=15,isolation=tenant,latency=interactive,count=20``."""
    raw: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise SharingInputError(f"--workload {text!r}: expected KEY=VALUE pairs separated by commas")
        raw[key.strip()] = value.strip()
    return workload_from_mapping(raw, index)


def load_workloads(path: str) -> list[Workload]:
    """A YAML file: a list of workload mappings, or ``{workloads: [...]}``."""
    from gpuplane.sources.side_input import SideInputError, read_document  # for start-up time

    try:
        doc = read_document(path)
    except SideInputError as exc:
        raise SharingInputError(str(exc)) from None
    prefix: tuple[str, ...] = ()
    if isinstance(doc, dict):
        doc, prefix = doc.get("workloads"), ("workloads",)
    if not isinstance(doc, list) or not doc:
        raise SharingInputError(f"{path!r}: expected a list of workloads (or a 'workloads:' list)")
    from gpuplane.sources.typed import TypedInputError, validate  # for start-up time

    model = _workload_model()
    for i, raw in enumerate(doc):
        if isinstance(raw, dict):
            try:
                validate(model, raw, path, (*prefix, i))
            except TypedInputError as exc:
                raise SharingInputError(str(exc)) from None
    return [workload_from_mapping(raw, i) for i, raw in enumerate(doc)]


def _workload_model() -> Any:
    """The numbers of a ``--from`` workload: finite (no ``.inf``) and within a float (no
    401-digit integer); strings of digits stay accepted as the ``--workload`` form gives them."""
    from typing import Annotated  # for start-up time

    from pydantic import BaseModel, ConfigDict, Field  # for start-up time

    finite = Annotated[float, Field(allow_inf_nan=False)]

    class WorkloadNumbers(BaseModel):
        model_config = ConfigDict(extra="allow")
        mem: finite | None = None
        util: finite | None = None
        count: int | None = None

    return WorkloadNumbers


@dataclass(slots=True)
class WorkloadAdvice:
    workload: Workload
    mode: str
    gpus: int
    reasons: list[str]
    alternatives: list[str] = field(default_factory=list)
    replicas: int = 1
    profile: str | None = None
    # smaller MIG slices the utilisation threshold ruled out: {profile, per_gpu, gpus}
    mig_alternatives: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.workload.name,
            "mode": self.mode,
            "gpus": self.gpus,
            "reasons": list(self.reasons),
            "alternatives": list(self.alternatives),
        }
        if self.mode in ("time-slicing", "mps"):
            doc["replicas_per_gpu"] = self.replicas
        if self.profile:
            doc["mig_profile"] = self.profile
        if self.mig_alternatives:
            doc["mig_alternatives"] = [dict(a) for a in self.mig_alternatives]
        return doc


def _plain_profiles(model: GpuModel) -> list[MigPlacementProfile]:
    """Profiles without media / graphics attributes, smallest first (what a tenant slice needs)."""
    plain = [p for p in model.mig_profiles if "+" not in p.name and "-" not in p.name]
    return sorted(plain, key=lambda p: (p.compute_slices, p.size, p.memory_gb))


def smallest_mig_profile(model: GpuModel, mem_gb: float, util_pct: float) -> MigPlacementProfile | None:
    """Smallest plain profile with at least ``mem_gb`` memory and ``util_pct`` of the SMs, short
    of the whole GPU (a whole-GPU "slice" isolates nothing a plain GPU would not)."""
    if not model.mig_capable:
        return None
    for p in _plain_profiles(model):
        if p.size >= model.memory_slices and p.compute_slices >= model.total_compute_slices:
            return None
        if p.memory_gb >= mem_gb and p.compute_slices / model.total_compute_slices * 100 >= util_pct:
            return p
    return None


def util_excluded_profiles(model: GpuModel, w: Workload, chosen: MigPlacementProfile) -> list[dict[str, Any]]:
    """Plain profiles with enough memory but fewer SM slices than ``chosen``: what the
    utilisation threshold ruled out. Utilisation is a typical figure, so a smaller slice may
    do; shown as an alternative with its slices per GPU and the GPUs the workload would take
    (one profile per GPU: ``max_instances`` of it fit, reference/nvidia-gpu-stack.md §4)."""
    out = []
    for p in _plain_profiles(model):
        if p.compute_slices >= chosen.compute_slices or p.memory_gb < w.mem_gb:
            continue
        out.append(
            {
                "profile": p.name,
                "per_gpu": p.max_instances,
                "gpus": math.ceil(w.count / p.max_instances),
                "sm_pct": round(p.compute_slices / model.total_compute_slices * 100, 1),
            }
        )
    return out


def _with_mig_alternatives(
    a: WorkloadAdvice, model: GpuModel, profile: MigPlacementProfile
) -> WorkloadAdvice:
    """Note the smaller slices the utilisation threshold excluded (reason + JSON field)."""
    alts = util_excluded_profiles(model, a.workload, profile)
    if alts:
        a.mig_alternatives = alts
        slices = alts[0]["sm_pct"]
        shown = " or ".join(
            f"{x['profile']} x{x['per_gpu']}/GPU ({x['gpus']} GPU{'s' if x['gpus'] != 1 else ''})"
            for x in alts
        )
        a.reasons.append(
            f"alternative if {slices:g}% of the SMs is enough for a typical {a.workload.util_pct:g}%: {shown}, "
            f"instead of {profile.name} x{profile.max_instances}/GPU"
        )
    return a


def _replicas(model: GpuModel, w: Workload) -> int:
    by_mem = math.floor(model.memory_gb / w.mem_gb) if w.mem_gb else MAX_REPLICAS
    by_util = math.floor(100 / w.util_pct) if w.util_pct else MAX_REPLICAS
    return max(1, min(by_mem, by_util, MAX_REPLICAS))


def advise_workload(w: Workload, model: GpuModel, dra_ok: bool) -> WorkloadAdvice:
    """The mode for one workload, with the reasons in the words of the mechanisms' docs."""
    alternatives: list[str] = []
    if w.mem_gb > model.memory_gb:
        per = math.ceil(w.mem_gb / model.memory_gb)
        return WorkloadAdvice(
            w,
            "none",
            per * w.count,
            [
                f"needs {w.mem_gb:g} GB of GPU memory, more than one {model.name} has ({model.memory_gb:g} GB): "
                f"whole GPUs ({per} per replica), no sharing",
            ],
        )
    if w.util_pct >= HIGH_UTIL_PCT:
        return WorkloadAdvice(
            w,
            "none",
            w.count,
            [
                f"typical utilisation {w.util_pct:g}% of a GPU: sharing would mostly add contention; give it whole GPUs",
            ],
        )
    profile = smallest_mig_profile(model, w.mem_gb, w.util_pct)
    replicas = _replicas(model, w)
    if dra_ok:
        alternatives.append("dra")
    if w.isolation == "tenant":
        if profile is not None:
            return _with_mig_alternatives(
                WorkloadAdvice(
                    w,
                    "mig",
                    0,
                    [
                        "isolation between tenants: only MIG gives each one its own memory, SM slices and fault domain; "
                        "time-slicing shares memory and faults, MPS shares the fault domain",
                        f"smallest {model.name} slice with >= {w.mem_gb:g} GB and >= {w.util_pct:g}% of the SMs: {profile.name}",
                    ],
                    [*alternatives, "none"],
                    profile=profile.name,
                ),
                model,
                profile,
            )
        why = (
            f"{model.name} does not support MIG"
            if not model.mig_capable
            else f"no {model.name} MIG slice short of the whole GPU has {w.mem_gb:g} GB and {w.util_pct:g}% of the SMs"
        )
        return WorkloadAdvice(
            w,
            "none",
            w.count,
            [
                f"isolation between tenants and {why}: time-slicing and MPS give no fault isolation, so each tenant "
                "gets whole GPUs",
            ],
            alternatives
            + (["mig on a MIG-capable model (A100, H100, H200, B200)"] if not model.mig_capable else []),
        )
    if replicas < 2 and profile is None:
        return WorkloadAdvice(
            w,
            "none",
            w.count,
            [
                f"one replica needs most of a {model.name} ({w.mem_gb:g} GB, {w.util_pct:g}%): nothing left to share",
            ],
        )
    if w.isolation == "team" or w.latency == "realtime":
        need = "memory and compute limits between jobs" if w.isolation == "team" else "predictable latency"
        if profile is not None:
            return _with_mig_alternatives(
                WorkloadAdvice(
                    w,
                    "mig",
                    0,
                    [
                        f"{need}: MIG slices have dedicated SMs, memory and bandwidth, so neighbours cannot interfere",
                        f"smallest {model.name} slice with >= {w.mem_gb:g} GB and >= {w.util_pct:g}% of the SMs: {profile.name}",
                    ],
                    alternatives + (["mps"] if replicas >= 2 else []),
                    profile=profile.name,
                ),
                model,
                profile,
            )
        return WorkloadAdvice(
            w,
            "mps",
            math.ceil(w.count / replicas),
            [
                f"{need} without MIG: MPS runs clients concurrently (no time-slice context switches) and the MPS "
                f"control daemon enforces 1/{replicas} of memory and compute per replica",
                "MPS shares one fault domain: a crashing client can take down the others on that GPU",
            ],
            [*alternatives, "time-slicing"],
            replicas=replicas,
        )
    reasons = [
        f"{w.latency} work at {w.util_pct:g}% utilisation and {w.mem_gb:g} GB: time-slicing packs {replicas} replicas "
        f"per {model.name} with no extra daemon and works on every NVIDIA GPU",
        "time-slicing has no memory isolation: replicas must keep within "
        f"{_gb_floor(model.memory_gb / replicas)} GB each or risk out-of-memory errors for all of them",
    ]
    if w.latency == "interactive":
        reasons.append(
            "time slices are shared equally: interactive latency grows with the number of busy replicas"
        )
    return WorkloadAdvice(
        w,
        "time-slicing",
        math.ceil(w.count / replicas),
        reasons,
        alternatives + ["mps"] + (["mig"] if profile else []),
        replicas=replicas,
    )


def _version_ok(k8s_version: str | None) -> bool | None:
    if not k8s_version:
        return None
    parts = k8s_version.lstrip("v").split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise SharingInputError(
            f"--kubernetes-version {k8s_version!r}: expected MAJOR.MINOR, e.g. 1.34"
        ) from None
    return (major, minor) >= DRA_GA


@dataclass(slots=True)
class SharingAdvice:
    recommendation: str
    alternatives: list[str]
    reasons: list[str]
    tradeoffs: list[str]
    config: dict[str, Any]
    workloads: list[WorkloadAdvice]
    gpu_model: str
    gpus_by_mode: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "recommendation": self.recommendation,
            "alternatives": self.alternatives,
            "reasons": self.reasons,
            "tradeoffs": self.tradeoffs,
            "config": self.config,
            "gpu_model": self.gpu_model,
            "gpus_by_mode": self.gpus_by_mode,
            "workloads": [w.to_json() for w in self.workloads],
        }


TRADEOFFS = {
    "none": "whole GPUs: full isolation and performance, but idle capacity is paid for",
    "time-slicing": "time-slicing: simplest and works everywhere, but no memory or fault isolation and "
    "equal time shares (latency grows with busy neighbours)",
    "mps": "MPS: concurrent kernels with enforced memory/compute shares, but one fault domain, full GPUs only "
    "(not MIG) and experimental in the device plugin; requests above 1 are rejected",
    "mig": "MIG: hardware isolation of memory, SMs and faults, but fixed slice sizes, MIG-capable models only, "
    "and changing the layout drains the GPU",
    "dra": "DRA: per-claim choice of GPU, MIG device or MPS/time-slicing (no per-node config split), but needs "
    "Kubernetes >= 1.34 and the NVIDIA DRA driver, whose GPU allocation the README calls not yet officially supported",
}


def _device_plugin_configmap(advice: list[WorkloadAdvice]) -> dict[str, Any] | None:
    data: dict[str, str] = {}
    for mode, key, section in (("time-slicing", "time-slicing", "timeSlicing"), ("mps", "mps", "mps")):
        chosen = [a for a in advice if a.mode == mode]
        if not chosen:
            continue
        # One config per node (device-plugin README): the smallest replica count keeps every share big enough.
        replicas = max(2, min(a.replicas for a in chosen))
        body: dict[str, Any] = {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}
        if mode == "time-slicing":
            body = {"failRequestsGreaterThanOne": True, **body}
        data[key] = yaml.safe_dump({"version": "v1", "sharing": {section: body}}, sort_keys=False)
    if not data:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "gpuplane-device-plugin-config", "namespace": DEVICE_PLUGIN_NAMESPACE},
        "data": data,
    }


def _claim_template(a: WorkloadAdvice) -> dict[str, Any]:
    """A ``resource.k8s.io/v1`` ResourceClaimTemplate for the NVIDIA DRA driver (§5.2 shapes)."""
    name = a.workload.name
    if a.mode == "mig" and a.profile:
        exactly: dict[str, Any] = {
            "deviceClassName": "mig.nvidia.com",
            "selectors": [
                {"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{a.profile}'"}}
            ],
        }
        spec: dict[str, Any] = {"devices": {"requests": [{"name": "mig", "exactly": exactly}]}}
    else:
        spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
        if a.mode in ("mps", "time-slicing"):
            sharing: dict[str, Any] = (
                {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": max(1, 100 // a.replicas)}}
                if a.mode == "mps"
                else {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}
            )
            spec["devices"]["config"] = [
                {
                    "requests": ["gpu"],
                    "opaque": {
                        "driver": "gpu.nvidia.com",
                        "parameters": {
                            "apiVersion": "resource.nvidia.com/v1beta1",
                            "kind": "GpuConfig",
                            "sharing": sharing,
                        },
                    },
                }
            ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": spec},
    }


def advise_sharing(
    workloads: list[Workload],
    model: GpuModel,
    *,
    k8s_version: str | None = None,
    dra_driver: bool = False,
    gpus_per_node: int | None = None,
) -> SharingAdvice:
    """Per-workload modes, one pool-level recommendation and the configs to apply.

    The MIG layout is written per node (``gpus_per_node`` GPUs each, default 8): mig-parted
    applies a config to one node's GPUs, chosen by that node's ``nvidia.com/mig.config``
    label, so a pool-wide GPU numbering would leave GPUs unconfigured or misread."""
    from gpuplane.advise.mig_planner import (  # deferred for start-up time
        DEFAULT_GPUS_PER_NODE,
        FleetEntry,
        configured_slices,
        per_node_mig_parted,
        plan_mig,
    )

    per_node = gpus_per_node if gpus_per_node is not None else DEFAULT_GPUS_PER_NODE
    if per_node < 1:
        raise SharingInputError(f"--gpus-per-node {per_node}: must be a whole number >= 1")

    if not workloads:
        raise SharingInputError("give at least one --workload or --from FILE")
    version_ok = _version_ok(k8s_version)
    dra_ok = bool(dra_driver) and version_ok is not False
    advice = [advise_workload(w, model, dra_ok) for w in workloads]
    config: dict[str, Any] = {}
    mig_layout_reason = ""
    mig_demand: dict[str, int] = {}
    for a in advice:
        if a.mode == "mig" and a.profile:
            mig_demand[a.profile] = mig_demand.get(a.profile, 0) + a.workload.count
    if mig_demand:
        plan = plan_mig([FleetEntry(model)], mig_demand)
        parted = per_node_mig_parted(plan, per_node)
        if parted is not None:  # the model's own profiles on an uncapped fleet: always feasible
            config["mig_parted"], node_configs = parted
            config["mig_node_labels"] = [c.to_json() for c in node_configs]
            mig_nodes = sum(c.nodes for c in node_configs)
            made = configured_slices(node_configs)
            spare = ", ".join(f"{made[k] - n} x {k}" for k, n in mig_demand.items() if made.get(k, 0) > n)
            mig_layout_reason = (
                f"MIG layout: {plan.gpus_needed} {model.name} GPU{'s' if plan.gpus_needed != 1 else ''} needed, on "
                f"{mig_nodes} node{'s' if mig_nodes != 1 else ''} of {per_node} GPUs; mig-parted applies per node "
                "(label each node nvidia.com/mig.config=<config>), so every GPU of a labelled node is configured"
                + (f" ({spare} spare)" if spare else "")
            )
        config["device_plugin_mig_strategy"] = "mixed"
        needed = plan.gpus_needed or 0
        for a in advice:
            if a.mode == "mig":
                a.gpus = 0
        first = next(a for a in advice if a.mode == "mig")
        first.gpus = needed  # the planner packs all MIG workloads together
    cm = _device_plugin_configmap(advice)
    if cm is not None:
        config["device_plugin_configmap"] = cm
    gpus_by_mode: dict[str, int] = {}
    for a in advice:
        gpus_by_mode[a.mode] = gpus_by_mode.get(a.mode, 0) + a.gpus
    modes = [m for m in gpus_by_mode if gpus_by_mode[m] or any(a.mode == m for a in advice)]
    reasons: list[str] = []
    shared_modes = [m for m in modes if m in ("time-slicing", "mps", "mig")]
    if dra_ok and len(shared_modes) > 1:
        recommendation = "dra"
        reasons.append(
            f"the mix needs {', '.join(shared_modes)}: the device plugin applies one sharing config to every GPU of a "
            "node, while DRA (GA in Kubernetes v1.34) lets each claim pick its device and sharing"
        )
        config["resource_claim_templates"] = [_claim_template(a) for a in advice]
    else:
        order = {m: i for i, m in enumerate(("mig", "mps", "time-slicing", "none"))}
        recommendation = max(modes, key=lambda m: (gpus_by_mode[m], -order.get(m, 9)))
        if len(modes) > 1:
            reasons.append(
                f"the mix needs {', '.join(modes)}: the device plugin applies one sharing config per node, so run one "
                "node pool per mode and select its config with the node label nvidia.com/device-plugin.config=<key>"
            )
        if dra_ok:
            config["resource_claim_templates"] = [_claim_template(a) for a in advice if a.mode != "none"]
    for a in advice:
        reasons.append(f"{a.workload.name}: {a.mode}: " + "; ".join(a.reasons))
    if mig_layout_reason:
        reasons.append(mig_layout_reason)
    if version_ok is False:
        reasons.append(
            f"DRA not considered: Kubernetes {k8s_version} is older than v1.34, where DRA became GA"
        )
    elif not dra_driver:
        reasons.append(
            "DRA not considered: pass --dra-driver when the NVIDIA DRA driver is installed (Kubernetes >= 1.34)"
        )
    alternatives = sorted(
        ({alt for a in advice for alt in a.alternatives} | set(modes)) - {recommendation},
        key=lambda m: (MODES.index(m) if m in MODES else 99, m),
    )
    tradeoffs = [TRADEOFFS[m] for m in MODES if m == recommendation or m in modes or m in alternatives]
    return SharingAdvice(
        recommendation, alternatives, reasons, tradeoffs, config, advice, model.name, gpus_by_mode
    )


def _gb_floor(value: float) -> str:
    """A per-replica memory budget in GB, rounded *down* to 0.1 (a bound to stay within: 80/6 -> 13.3)."""
    return f"{math.floor(value * 10 + 1e-9) / 10:g}"
