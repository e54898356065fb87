"""The usage findings, each with the change that fixes it and what that saves.

- ``gpu-allocated-idle``: GPUs held and idle for a stretch of at least ``idle_hours``. Notebooks:
  an idle timeout (Kubeflow's notebook controller culls idle notebooks with ``ENABLE_CULLING`` /
  ``CULL_IDLE_TIME`` in minutes; JupyterHub's ``cull.timeout`` in seconds); inference: scale to
  zero when idle; jobs: release the GPUs (a job idle for hours is usually hung).
- ``gpu-underused``: single-GPU pods whose p95 activity and peak memory fit a MIG slice or a share
  of a GPU: the mode and share come from ``advise sharing`` (its rules, its configs).
- ``gpu-memory-oversized``: a MIG slice whose peak memory (plus headroom) and compute fit a
  smaller profile of the same GPU; the layout comes from ``advise mig``.
- ``gpu-data-starved``: a training workload with low mean activity while its nodes spend a large
  share of CPU time in iowait (``node_cpu_seconds_total{mode="iowait"}``, only where
  node_exporter is scraped): the GPUs wait for input.

Savings are GPU-hours over the window (GPU-equivalents: a MIG slice counts its memory-slice share)
and money at the node's on-demand price per GPU-hour: always estimates, and flagged unverified
where the price table says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gpuplane.usage.compute import Price, WorkloadStats

DEFAULT_IDLE_HOURS = 4.0
"""An idle stretch at least this long makes an allocation idle (judgement: longer than a lunch
break or a meeting, shorter than a night)."""
DEFAULT_NOTEBOOK_TIMEOUT_MIN = 60
"""The idle timeout proposed for notebooks (Kubeflow's default CULL_IDLE_TIME is 1440 minutes)."""
MIN_OBSERVED_HOURS = 1.0
"""Right-sizing needs at least this much allocated time to read a p95 from."""
MEMORY_HEADROOM = 0.10
"""A smaller slice must hold the peak framebuffer use plus this share (allocator growth)."""
STARVED_ACTIVITY_BELOW = 0.5
"""Mean activity under which a training job's GPUs are mostly waiting."""
STARVED_IOWAIT_AT_LEAST = 0.10
"""Mean share of node CPU time in iowait at which input I/O is the bottleneck."""
STARVED_ACTIVE_SHARE = 0.5
"""A starved job's GPUs run (are active) most of the time, slowly; a job idle most of the time
is bursty or stopped, not waiting on input."""
HOURS_PER_MONTH = 730

LATENCY = {"notebook": "interactive", "inference": "interactive", "training": "batch", "other": "batch"}
ISOLATION = {"notebook": "team"}

RULES = {
    "gpu-allocated-idle": "GPUs allocated and idle for hours",
    "gpu-underused": "whole GPUs whose p95 activity and memory fit a MIG slice or a shared GPU",
    "gpu-memory-oversized": "MIG slices whose memory and compute use fit a smaller profile",
    "gpu-data-starved": "training GPUs waiting on input (low activity, high host iowait)",
}


@dataclass(slots=True)
class Saving:
    gpu_hours: float
    window_hours: float
    price: Price | None
    basis: str

    @property
    def usd(self) -> float | None:
        return self.gpu_hours * self.price.usd_per_gpu_hour if self.price else None

    def to_json(self) -> dict[str, Any]:
        per_month = HOURS_PER_MONTH / self.window_hours if self.window_hours else 0.0
        usd = self.usd
        return {
            "gpu_hours": round(self.gpu_hours, 2),
            "gpu_hours_per_month": round(self.gpu_hours * per_month, 1),
            "usd": round(usd, 2) if usd is not None else None,
            "usd_per_month": round(usd * per_month, 2) if usd is not None else None,
            "estimate": True,
            "basis": self.basis,
            "price": self.price.to_json() if self.price else None,
        }


@dataclass(slots=True)
class UsageFinding:
    rule: str
    stats: WorkloadStats
    message: str
    fix: str
    change: dict[str, Any]
    saving: Saving
    severity: str = "warning"
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        owner = self.stats.devices.owner
        return {
            "rule": self.rule,
            "severity": self.severity,
            "object": owner.ref(),
            "category": self.stats.devices.category,
            "message": self.message,
            "fix": self.fix,
            "change": self.change,
            "saving": self.saving.to_json(),
            "evidence": self.evidence,
        }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _gib(mib: float | None) -> str:
    return "n/a" if mib is None else f"{mib / 1024:.1f} GiB"


def _h(hours: float) -> str:
    return f"{hours:.1f} h"


def allocated_idle(
    s: WorkloadStats, window_h: float, idle_hours: float, notebook_timeout_min: int
) -> UsageFinding | None:
    points_per_hour = 3600 / s.step_s
    min_points = math.ceil(idle_hours * points_per_hour - 1e-9)
    if not s.idle_runs or max(length for _, length in s.idle_runs) < min_points:
        return None
    owner = s.devices.owner
    stretches = sum(1 for _, length in s.idle_runs if length >= min_points)
    idle_held = s.idle_run_gpu_hours(min_points)
    evidence = {
        "longest_idle_hours": round(s.longest_idle_hours, 2),
        "idle_stretches": stretches,
        "idle_gpu_hours_in_stretches": round(idle_held, 2),
        "activity_p95": s.activity_p95,
    }
    message = (
        f"{owner.label()} held {s.gpu_equivalents:g} GPU(s) idle (activity < threshold) for "
        f"{_h(s.longest_idle_hours)} at a stretch; {idle_held:.1f} GPU-hours idle in {stretches} "
        f"stretch(es) of at least {idle_hours:g} h"
    )
    category = s.devices.category
    if category == "notebook":
        skip = math.ceil(notebook_timeout_min * 60 / s.step_s - 1e-9)
        saved = s.idle_run_gpu_hours(min_points, skip)
        change = {
            "kind": "notebook-idle-timeout",
            "timeout_minutes": notebook_timeout_min,
            "kubeflow_notebook_controller_env": {
                "ENABLE_CULLING": "true",
                "CULL_IDLE_TIME": str(notebook_timeout_min),
            },
            "jupyterhub_values": {"cull": {"enabled": True, "timeout": notebook_timeout_min * 60}},
        }
        fix = (
            f"cull idle notebooks after {notebook_timeout_min} min: Kubeflow notebook-controller "
            f"ENABLE_CULLING=true, CULL_IDLE_TIME={notebook_timeout_min} (JupyterHub: cull.timeout: "
            f"{notebook_timeout_min * 60})"
        )
        basis = f"GPU-hours of idle stretches beyond the first {notebook_timeout_min} min of each"
    elif category == "inference":
        saved = idle_held
        change = {
            "kind": "scale-to-zero-when-idle",
            "keda_scaled_object": {"minReplicaCount": 0, "trigger": "prometheus (requests or queue length)"},
        }
        fix = (
            "scale the server to zero while it gets no traffic (KEDA ScaledObject minReplicaCount: 0 on a "
            "request or queue metric), or remove replicas nobody calls"
        )
        basis = "GPU-hours of the idle stretches"
    else:
        saved = idle_held
        change = {"kind": "release-idle-gpus", "active_deadline_seconds": True}
        fix = (
            "a job idle on its GPUs for hours is usually hung (a lost peer, a stuck collective): find why, "
            "and bound it with activeDeadlineSeconds so it cannot hold GPUs idle"
        )
        basis = "GPU-hours of the idle stretches"
    return UsageFinding(
        "gpu-allocated-idle",
        s,
        message,
        fix,
        change,
        Saving(saved, window_h, s.price, basis),
        evidence=evidence,
    )


def _sharing_change(s: WorkloadStats) -> tuple[str, dict[str, Any], float] | None:
    """(mode, change, GPU-equivalents after) from advise sharing; None when it keeps whole GPUs."""
    from gpuplane.advise.sharing import Workload, advise_sharing  # deferred for start-up time
    from gpuplane.gpu.catalog import catalog

    if s.model is None or s.activity_p95 is None or s.fb_peak_mib is None:
        return None
    model = catalog().model(s.model)
    if model is None:
        return None
    count = max(1, round(s.gpu_equivalents))
    w = Workload(
        s.devices.owner.name,
        mem_gb=round(s.fb_peak_mib * (1 + MEMORY_HEADROOM) / 1024, 2),
        util_pct=round(s.activity_p95 * 100, 1),
        isolation=ISOLATION.get(s.devices.category, "none"),
        latency=LATENCY[s.devices.category],
        count=count,
    )
    advice = advise_sharing([w], model)
    a = advice.workloads[0]
    if a.mode == "none":
        return None
    if a.mode == "mig" and a.profile:
        prof = model.profile(a.profile)
        after = count * (prof.size / model.memory_slices) if prof and model.memory_slices else float(count)
        target: dict[str, Any] = {"mig_profile": a.profile, "resource": f"nvidia.com/mig-{a.profile}"}
    else:
        after = count / max(a.replicas, 1)
        target = {"replicas_per_gpu": a.replicas}
    change = {
        "kind": "sharing",
        "mode": a.mode,
        **target,
        "gpus_before": count,
        "gpus_after": round(after, 3),
        "reasons": list(a.reasons),
        "config": advice.config,
        "advise": (
            f"gpuplane advise sharing --gpu {model.name} --workload name={w.name},mem={w.mem_gb:g},"
            f"util={w.util_pct:g},latency={w.latency},isolation={w.isolation},count={count}"
        ),
    }
    return a.mode, change, after


def underused(s: WorkloadStats, window_h: float, already_saved: float) -> UsageFinding | None:
    from gpuplane.advise.sharing import HIGH_UTIL_PCT  # deferred for start-up time

    whole = all(not d.profile and d.shared_replicas == 1 for d in s.devices.devices)
    # A pod holding several GPUs runs one job across them (NCCL, tensor parallelism): MIG
    # instances do not talk peer-to-peer, and time-slicing would cut every rank at once.
    per_pod: dict[str, int] = {}
    for d in s.devices.devices:
        per_pod[d.pod] = per_pod.get(d.pod, 0) + 1
    if not whole or max(per_pod.values(), default=0) > 1:
        return None
    if s.observed_hours < MIN_OBSERVED_HOURS or s.activity_p95 is None:
        return None
    if s.activity_p95 * 100 >= HIGH_UTIL_PCT:
        return None
    found = _sharing_change(s)
    if found is None:
        return None
    mode, change, after = found
    before = max(1, round(s.gpu_equivalents))
    remaining = max(0.0, s.allocated_gpu_hours - already_saved)
    saved = remaining * (1 - after / before)
    if saved <= 0:
        return None
    what = (
        f"MIG {change['mig_profile']}"
        if mode == "mig"
        else f"{mode} with {change['replicas_per_gpu']} replicas per GPU"
    )
    message = (
        f"{s.devices.owner.label()} holds {before} whole {s.model} GPU(s) at p95 activity "
        f"{_pct(s.activity_p95)} and peak memory {_gib(s.fb_peak_mib)}: {what} fits"
    )
    fix = f"move it to {what} ({after:g} GPU-equivalents instead of {before}); {change['advise']}"
    return UsageFinding(
        "gpu-underused",
        s,
        message,
        fix,
        change,
        Saving(saved, window_h, s.price, f"allocated GPU-hours x (1 - {after:g}/{before})"),
        evidence={
            "activity_p95": s.activity_p95,
            "activity_mean": s.activity_mean,
            "fb_peak_mib": s.fb_peak_mib,
        },
    )


def memory_oversized(s: WorkloadStats, window_h: float, already_saved: float = 0.0) -> UsageFinding | None:
    from gpuplane.advise.mig_planner import FleetEntry, plan_mig  # deferred for start-up time
    from gpuplane.advise.sharing import _plain_profiles
    from gpuplane.gpu.catalog import catalog

    if len(s.profiles) != 1 or s.model is None or s.fb_peak_mib is None or s.activity_p95 is None:
        return None
    if s.observed_hours < MIN_OBSERVED_HOURS:
        return None
    model = catalog().model(s.model)
    current = model.profile(s.profiles[0]) if model else None
    if model is None or current is None:
        return None
    need_gb = s.fb_peak_mib * (1 + MEMORY_HEADROOM) / 1024
    need_compute = s.activity_p95 * current.compute_slices
    fits = [
        p
        for p in _plain_profiles(model)
        if p.size < current.size and p.memory_gb >= need_gb and p.compute_slices >= need_compute
    ]
    if not fits:
        return None
    best = min(fits, key=lambda p: (p.size, p.compute_slices, p.memory_gb))
    count = len({(d.node, d.gpu, d.gi_id, d.pod) for d in s.devices.devices})
    plan = plan_mig([FleetEntry(model)], {best.name: count})
    saved = max(0.0, s.allocated_gpu_hours - already_saved) * (1 - best.size / current.size)
    change = {
        "kind": "mig-profile",
        "from": current.name,
        "to": best.name,
        "resource_before": f"nvidia.com/mig-{current.name}",
        "resource_after": f"nvidia.com/mig-{best.name}",
        "instances": count,
        "mig_plan": plan.to_json(),
        "advise": f"gpuplane advise mig --gpu {model.name} --demand {best.name}={count}",
    }
    message = (
        f"{s.devices.owner.label()} uses at most {_gib(s.fb_peak_mib)} of its {current.name} slice(s) "
        f"({current.memory_gb:g} GB) at p95 activity {_pct(s.activity_p95)}: {best.name} "
        f"({best.memory_gb:g} GB, {best.compute_slices} of {model.total_compute_slices} compute slices) fits"
    )
    fix = (
        f"request nvidia.com/mig-{best.name} instead of nvidia.com/mig-{current.name}; "
        f"layout: {change['advise']}"
    )
    return UsageFinding(
        "gpu-memory-oversized",
        s,
        message,
        fix,
        change,
        Saving(
            saved, window_h, s.price, f"allocated GPU-hours x (1 - {best.size}/{current.size} memory slices)"
        ),
        evidence={"fb_peak_mib": s.fb_peak_mib, "activity_p95": s.activity_p95, "profile": current.name},
    )


def data_starved(s: WorkloadStats, window_h: float) -> UsageFinding | None:
    if s.devices.category != "training" or s.iowait_mean is None or s.activity_mean is None:
        return None
    if s.observed_hours < MIN_OBSERVED_HOURS:
        return None
    if s.activity_mean >= STARVED_ACTIVITY_BELOW or s.iowait_mean < STARVED_IOWAIT_AT_LEAST:
        return None
    if s.active_gpu_hours < STARVED_ACTIVE_SHARE * s.allocated_gpu_hours:
        return None
    waiting = s.allocated_gpu_hours * (1 - s.activity_mean)
    message = (
        f"{s.devices.owner.label()} trains at mean activity {_pct(s.activity_mean)} while its nodes spend "
        f"{_pct(s.iowait_mean)} of CPU time in iowait: the GPUs wait for input"
    )
    fix = (
        "feed the GPUs faster: more DataLoader workers with pinned memory and prefetch, the dataset staged "
        "on local NVMe (or a cache in front of object storage), larger sequential shards (WebDataset, "
        "TFRecord)"
    )
    change = {
        "kind": "input-pipeline",
        "steps": [
            "DataLoader(num_workers=<CPU cores per GPU>, pin_memory=True, prefetch_factor=4, persistent_workers=True)",
            "stage the dataset on local NVMe (emptyDir on instance storage) or a read cache",
            "read large sequential shards instead of many small files",
        ],
    }
    return UsageFinding(
        "gpu-data-starved",
        s,
        message,
        fix,
        change,
        Saving(waiting, window_h, s.price, "up to: allocated GPU-hours x (1 - mean activity)"),
        evidence={"activity_mean": s.activity_mean, "iowait_mean": s.iowait_mean},
    )


def findings_for(
    s: WorkloadStats, window_h: float, *, idle_hours: float, notebook_timeout_min: int
) -> list[UsageFinding]:
    out: list[UsageFinding] = []
    idle = allocated_idle(s, window_h, idle_hours, notebook_timeout_min)
    if idle is not None:
        out.append(idle)
    found = underused(s, window_h, idle.saving.gpu_hours if idle else 0.0)
    if found is not None:
        out.append(found)
    oversized = memory_oversized(s, window_h, idle.saving.gpu_hours if idle else 0.0)
    if oversized is not None:
        out.append(oversized)
    starved = data_starved(s, window_h)
    if starved is not None:
        out.append(starved)
    return out
