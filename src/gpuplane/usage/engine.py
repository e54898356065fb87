"""``run_usage``: series + cluster -> per-workload, per-team and per-pool usage, findings, savings.

The CLI and the MCP tool both call this and render :meth:`UsageResult.to_json` (or the text and
HTML renderers, which read the same object and compute nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpuplane.usage.compute import (
    DEFAULT_ACTIVE_THRESHOLD,
    GroupTotals,
    Heatmap,
    WorkloadStats,
    gpu_hour_prices,
    heatmap,
    pool_totals,
    right_size_pool,
    workload_stats,
)
from gpuplane.usage.findings import (
    DEFAULT_IDLE_HOURS,
    DEFAULT_NOTEBOOK_TIMEOUT_MIN,
    RULES,
    UsageFinding,
    findings_for,
)
from gpuplane.usage.join import build_devices, group_workloads, iowait_by_node, node_infos, pods_index
from gpuplane.usage.metrics import SeriesSet, UsageInputError, to_json_grid

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState

SEVERITY_ORDER = {"info": 0, "warning": 1, "error": 2}
ACTIVITY_SIGNAL = {
    "engine": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "util": "DCGM_FI_DEV_GPU_UTIL",
}


@dataclass(slots=True)
class UsageOptions:
    active_threshold: float = DEFAULT_ACTIVE_THRESHOLD
    idle_hours: float = DEFAULT_IDLE_HOURS
    notebook_timeout_min: int = DEFAULT_NOTEBOOK_TIMEOUT_MIN
    prices_file: str | None = None
    heatmap: bool = False


@dataclass(slots=True)
class UsageResult:
    series: SeriesSet
    activity_kind: str
    workloads: list[WorkloadStats]
    findings: list[UsageFinding]
    namespaces: list[GroupTotals]
    pools: list[GroupTotals]
    window_hours: float
    notes: list[str] = field(default_factory=list)
    heat: Heatmap | None = None
    cluster_source: str | None = None

    def only(self, namespace: str) -> UsageResult:
        """The same result with only the workloads of ``namespace``, their findings and namespace
        row (``-n``); ``summary`` follows them. Pools and the heatmap are kept whole: they describe
        the cluster's nodes, which every namespace shares (as diagnose keeps its inventory)."""
        return replace(
            self,
            workloads=[w for w in self.workloads if w.devices.owner.namespace == namespace],
            findings=[f for f in self.findings if f.stats.devices.owner.namespace == namespace],
            namespaces=[n for n in self.namespaces if n.key == namespace],
        )

    def reaches(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        bar = SEVERITY_ORDER[fail_on]
        return any(SEVERITY_ORDER.get(f.severity, 0) >= bar for f in self.findings)

    @property
    def totals(self) -> dict[str, Any]:
        allocated = sum(w.allocated_gpu_hours for w in self.workloads)
        active = sum(w.active_gpu_hours for w in self.workloads)
        saving = sum(f.saving.gpu_hours for f in self.findings)
        usd = [f.saving.usd for f in self.findings if f.saving.usd is not None]
        per_month = 730 / self.window_hours if self.window_hours else 0.0
        return {
            "workloads": len(self.workloads),
            "allocated_gpu_hours": round(allocated, 2),
            "active_gpu_hours": round(active, 2),
            "idle_gpu_hours": round(allocated - active, 2),
            "active_share": round(active / allocated, 3) if allocated else None,
            "findings": len(self.findings),
            "saving_gpu_hours": round(saving, 2),
            "saving_usd": round(sum(usd), 2) if usd else None,
            "saving_usd_per_month": round(sum(usd) * per_month, 2) if usd else None,
            "saving_unpriced_findings": sum(1 for f in self.findings if f.saving.usd is None),
            "estimate": True,
        }

    def workload_json(self, w: WorkloadStats) -> dict[str, Any]:
        def r(x: float | None, d: int = 3) -> float | None:
            return round(x, d) if x is not None else None

        return {
            "object": w.devices.owner.ref(),
            "category": w.devices.category,
            "pods": list(w.devices.pods),
            "in_cluster": w.devices.in_cluster,
            "nodes": w.nodes,
            "pools": w.pools,
            "model": w.model,
            "mig_profiles": w.profiles,
            "gpus": round(w.gpu_equivalents, 3),
            "allocated_gpu_hours": round(w.allocated_gpu_hours, 3),
            "active_gpu_hours": round(w.active_gpu_hours, 3),
            "idle_gpu_hours": round(w.idle_gpu_hours, 3),
            "observed_hours": round(w.observed_hours, 3),
            "longest_idle_hours": round(w.longest_idle_hours, 3),
            "activity_mean": r(w.activity_mean, 4),
            "activity_p95": r(w.activity_p95, 4),
            "sm_active_mean": r(w.sm_mean, 4),
            "sm_active_p95": r(w.sm_p95, 4),
            "fb_used_peak_mib": r(w.fb_peak_mib, 1),
            "fb_used_p95_mib": r(w.fb_p95_mib, 1),
            "fb_total_mib": r(w.fb_total_mib, 1),
            "host_iowait_mean": r(w.iowait_mean, 4),
            "tensor_active_mean": r(w.tensor_mean, 4),
            "power_mean_w": r(w.power_mean_w, 1),
            "energy_kwh": r(w.energy_kwh, 3),
            "usd_per_gpu_hour": round(w.price.usd_per_gpu_hour, 4) if w.price else None,
        }

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "window": {
                **to_json_grid(self.series.grid),
                "hours": round(self.window_hours, 3),
                "source": self.series.source,
                "cluster": self.cluster_source,
            },
            "signals": {
                "activity": ACTIVITY_SIGNAL[self.activity_kind],
                "present": self.series.kinds(),
                "queries": dict(self.series.queries),
            },
            "workloads": [self.workload_json(w) for w in self.workloads],
            "findings": [f.to_json() for f in self.findings],
            "namespaces": [n.to_json("namespace") for n in self.namespaces],
            "pools": [p.to_json("pool") for p in self.pools],
            "summary": self.totals,
            "notes": list(self.notes),
        }
        if self.heat is not None:
            doc["heatmap"] = self.heat.to_json()
        return doc


def run_usage(
    series: SeriesSet, state: ClusterState | None = None, options: UsageOptions | None = None
) -> UsageResult:
    """Join ``series`` with ``state`` and compute everything ``gpuplane usage`` reports."""
    opts = options or UsageOptions()
    kind = series.activity_kind()
    if kind is None:
        raise UsageInputError(
            f"no GPU activity series in {series.source or 'the input'}: expected DCGM_FI_PROF_GR_ENGINE_ACTIVE "
            "or DCGM_FI_DEV_GPU_UTIL from the DCGM exporter"
        )
    grid = series.grid
    nodes = node_infos(state)
    prices = gpu_hour_prices(nodes, opts.prices_file)
    devices = build_devices(series, pods_index(state), nodes)
    groups = group_workloads(devices, state)
    iowait = iowait_by_node(series)
    window_h = grid.n * grid.step / 3600
    stats = [
        workload_stats(g, kind, grid.step, grid.n, nodes, prices, iowait, opts.active_threshold)
        for g in groups
    ]
    stats.sort(key=lambda w: (-w.idle_gpu_hours, w.devices.owner.label()))
    found: list[UsageFinding] = []
    for s in stats:
        found.extend(
            findings_for(
                s, window_h, idle_hours=opts.idle_hours, notebook_timeout_min=opts.notebook_timeout_min
            )
        )
    found.sort(key=lambda f: (-f.saving.gpu_hours, f.rule, f.stats.devices.owner.label()))

    namespaces: dict[str, GroupTotals] = {}
    for s in stats:
        t = namespaces.setdefault(s.devices.owner.namespace, GroupTotals(s.devices.owner.namespace))
        t.workloads += 1
        t.allocated_gpu_hours += s.allocated_gpu_hours
        t.active_gpu_hours += s.active_gpu_hours
    pools = pool_totals(devices, kind, grid.step, nodes, prices, opts.active_threshold)
    pod_gpus: dict[tuple[str, str], int] = {}
    pool_of_pod: dict[tuple[str, str], str] = {}
    for dev in devices:
        if dev.allocated and dev.node in nodes:
            key = (dev.namespace, dev.pod)
            pod_gpus[key] = pod_gpus.get(key, 0) + 1
            pool_of_pod[key] = nodes[dev.node].pool
    for name, totals in pools.items():
        members = [info for info in nodes.values() if info.pool == name]
        largest = max((n for k, n in pod_gpus.items() if pool_of_pod[k] == name), default=1)
        if members:
            totals.right_size = right_size_pool(totals, members, largest, opts.prices_file)
    for s in stats:
        for pool in s.pools or ["(not in cluster)"]:
            if pool in pools:
                pools[pool].workloads += 1
    for f in found:
        ns = namespaces[f.stats.devices.owner.namespace]
        ns.saving_gpu_hours += f.saving.gpu_hours
        ns.saving_usd += f.saving.usd or 0.0
        pool_name = (f.stats.pools or ["(not in cluster)"])[0]
        if pool_name in pools:
            pools[pool_name].saving_gpu_hours += f.saving.gpu_hours
            pools[pool_name].saving_usd += f.saving.usd or 0.0

    notes = list(series.notes)
    if kind == "util":
        notes.append(
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE is absent: activity is DCGM_FI_DEV_GPU_UTIL (duty cycle: a GPU "
            "running one small kernel at a time reads busy), so underuse is understated"
        )
    if state is None:
        notes.append("no --cluster: workloads are pods, without owners, node pools or prices")
    else:
        missing = sorted(
            {
                f"{d.namespace}/{d.pod}"
                for d in devices
                if d.allocated and (d.namespace, d.pod) not in pods_index(state)
            }
        )
        if missing:
            notes.append(
                f"{len(missing)} pod(s) in the metrics are not in the cluster state (finished or from another "
                f"cluster): {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
            )
    if not prices:
        notes.append("no node with a known instance price: savings are in GPU-hours only")
    unpriced = sorted({f.stats.devices.owner.label() for f in found if f.saving.price is None})
    if prices and unpriced:
        notes.append(f"no price for the nodes of: {', '.join(unpriced)} (add one with --prices FILE)")
    if "iowait" not in series.series:
        notes.append(
            'no node_cpu_seconds_total{mode="iowait"} series (node_exporter): gpu-data-starved was not checked'
        )
    return UsageResult(
        series,
        kind,
        stats,
        found,
        sorted(namespaces.values(), key=lambda t: (-t.allocated_gpu_hours, t.key)),
        sorted(pools.values(), key=lambda t: (-t.allocated_gpu_hours, t.key)),
        window_h,
        notes,
        heatmap(devices, kind, grid.start, grid.step, grid.n) if opts.heatmap else None,
        state.source if state is not None else None,
    )


__all__ = ["RULES", "UsageOptions", "UsageResult", "run_usage"]
