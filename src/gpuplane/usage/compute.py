"""GPU-hours, activity, memory and idle stretches, computed on the grid with numpy.

Definitions (docs/usage.md repeats them; tests check them by hand):

- a device point is *allocated* when the device's activity series has a value there and the
  series carries a pod; each point stands for one step, so allocated GPU-hours =
  sum over devices of ``share x allocated points x step / 3600`` (``share``: 1 for a GPU, the
  memory-slice share of a MIG profile, 1/replicas on a time-shared GPU);
- a point is *active* when activity >= the active threshold (default 5 % engine activity);
  idle GPU-hours = allocated - active;
- a workload is *idle* at a point when every device it holds there is below the threshold; its
  idle stretches are the runs of such consecutive points;
- mean and p95 are over allocated device points; p95 interpolates linearly between ranks, as
  Prometheus's ``quantile_over_time`` does (``phi x (N - 1)``);
- memory is the per-step peak of ``DCGM_FI_DEV_FB_USED`` (MiB), so right-sizing never misses a
  spike between two steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuplane.usage.join import Device, NodeInfo, WorkloadDevices

DEFAULT_ACTIVE_THRESHOLD = 0.05
"""Engine activity at or above which a GPU counts as working (judgement: a GPU holding a loaded
model with no requests reads 0-2 %; any real kernel traffic reads well above 5 %)."""


def _round(value: float | None, digits: int = 3) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), digits)


@dataclass(slots=True)
class Price:
    usd_per_gpu_hour: float
    instance_type: str
    source: str
    date: str

    @property
    def unverified(self) -> bool:
        return "unverified" in self.source

    def to_json(self) -> dict[str, Any]:
        return {
            "usd_per_gpu_hour": round(self.usd_per_gpu_hour, 4),
            "instance_type": self.instance_type,
            "source": self.source,
            "date": self.date,
            "estimate": True,
            "unverified": self.unverified,
        }


def gpu_hour_prices(nodes: dict[str, NodeInfo], prices_file: str | None = None) -> dict[str, Price]:
    """Per node: the on-demand price of its instance type divided by the type's GPU count
    (``advise/data/prices.yaml`` and the catalog's instance types, as ``advise capacity`` uses)."""
    from gpuplane.advise.capacity import load_prices  # deferred for start-up time
    from gpuplane.gpu.catalog import catalog

    table = load_prices(prices_file)
    out: dict[str, Price] = {}
    for name, info in nodes.items():
        if not info.instance_type or not info.provider:
            continue
        it = catalog().instance(info.instance_type)
        price = table.prices.get((info.provider, info.instance_type))
        if it is None or price is None or not it.gpu_count:
            continue
        out[name] = Price(price.usd_per_hour / it.gpu_count, info.instance_type, price.source, price.date)
    return out


@dataclass(slots=True)
class WorkloadStats:
    devices: WorkloadDevices
    step_s: int
    gpu_equivalents: float
    allocated_gpu_hours: float
    active_gpu_hours: float
    observed_hours: float  # wall-clock hours with at least one allocated device
    activity_mean: float | None
    activity_p95: float | None
    sm_mean: float | None
    sm_p95: float | None
    fb_peak_mib: float | None
    fb_p95_mib: float | None
    fb_total_mib: float | None
    idle_runs: list[tuple[int, int]]  # (first point, points) of each idle stretch
    longest_idle_hours: float
    iowait_mean: float | None
    tensor_mean: float | None
    power_mean_w: float | None  # mean board power of its GPUs (DCGM_FI_DEV_POWER_USAGE)
    energy_kwh: float | None  # power x time over the allocated points
    nodes: list[str]
    pools: list[str]
    model: str | None
    profiles: list[str]
    price: Price | None
    # Per point: GPU-equivalents held (for idle-stretch savings), and whether the workload was idle.
    held: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def idle_gpu_hours(self) -> float:
        return self.allocated_gpu_hours - self.active_gpu_hours

    def idle_run_gpu_hours(self, min_points: int, skip_points: int = 0) -> float:
        """GPU-hours held during idle stretches of at least ``min_points``, past the first
        ``skip_points`` of each (an idle timeout frees the GPUs only after it elapses)."""
        total = 0.0
        for start, length in self.idle_runs:
            if length >= min_points and length > skip_points:
                total += float(self.held[start + skip_points : start + length].sum())
        return total * self.step_s / 3600


def _percentile(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if values.size else None


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True."""
    if not mask.any():
        return []
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return [(int(s), int(e - s)) for s, e in zip(starts, ends)]


def _matrix(devices: list[Device], kind: str, n: int) -> np.ndarray | None:
    rows = [d.signals.get(kind) for d in devices]
    if all(r is None for r in rows):
        return None
    return np.vstack([r if r is not None else np.full(n, np.nan) for r in rows])


def workload_stats(
    group: WorkloadDevices,
    activity_kind: str,
    step_s: int,
    n: int,
    nodes: dict[str, NodeInfo],
    prices: dict[str, Price],
    iowait: dict[str, np.ndarray],
    threshold: float = DEFAULT_ACTIVE_THRESHOLD,
) -> WorkloadStats:
    devs = group.devices
    act = _matrix(devs, activity_kind, n)
    assert act is not None  # a device exists because some signal had it; activity may be all NaN
    shares = np.array([d.share for d in devs])
    allocated = ~np.isnan(act)
    active = allocated & (act >= threshold)
    hours_per_point = step_s / 3600
    allocated_h = float((allocated.sum(axis=1) * shares).sum() * hours_per_point)
    active_h = float((active.sum(axis=1) * shares).sum() * hours_per_point)
    any_alloc = allocated.any(axis=0)
    idle_mask = any_alloc & ~(active.any(axis=0))
    values = act[allocated]

    sm = _matrix(devs, "sm", n)
    sm_values = sm[~np.isnan(sm)] if sm is not None else np.zeros(0)
    fb = _matrix(devs, "fb_used", n)
    fb_values = fb[allocated & ~np.isnan(fb)] if fb is not None else np.zeros(0)
    free = _matrix(devs, "fb_free", n)
    total = None
    if fb is not None and free is not None:
        both = fb + free
        total = float(np.nanmax(both)) if np.isfinite(both).any() else None

    node_names = sorted({d.node for d in devs if d.node})
    io_values = []
    for name in node_names:
        series = iowait.get(name)
        if series is not None:
            mask = any_alloc & ~np.isnan(series)
            io_values.append(series[mask])
    io = np.concatenate(io_values) if io_values else np.zeros(0)

    tensor = _matrix(devs, "tensor", n)
    tensor_values = tensor[allocated & ~np.isnan(tensor)] if tensor is not None else np.zeros(0)
    power = _matrix(devs, "power", n)
    power_values = power[allocated & ~np.isnan(power)] if power is not None else np.zeros(0)

    runs = _runs(idle_mask)
    models = {m.name for x in node_names if x in nodes and (m := nodes[x].model) is not None}
    price_list = [prices[x] for x in node_names if x in prices]
    held = (allocated * shares[:, None]).sum(axis=0)
    return WorkloadStats(
        devices=group,
        step_s=step_s,
        gpu_equivalents=float(sum({(d.pod, d.node, d.gpu, d.gi_id): d.share for d in devs}.values())),
        allocated_gpu_hours=allocated_h,
        active_gpu_hours=active_h,
        observed_hours=float(any_alloc.sum() * hours_per_point),
        activity_mean=float(values.mean()) if values.size else None,
        activity_p95=_percentile(values, 95),
        sm_mean=float(sm_values.mean()) if sm_values.size else None,
        sm_p95=_percentile(sm_values, 95),
        fb_peak_mib=float(fb_values.max()) if fb_values.size else None,
        fb_p95_mib=_percentile(fb_values, 95),
        fb_total_mib=total,
        idle_runs=runs,
        longest_idle_hours=max((length for _, length in runs), default=0) * hours_per_point,
        iowait_mean=float(io.mean()) if io.size else None,
        tensor_mean=float(tensor_values.mean()) if tensor_values.size else None,
        power_mean_w=float(power_values.mean()) if power_values.size else None,
        energy_kwh=float(power_values.sum() * hours_per_point / 1000) if power_values.size else None,
        nodes=node_names,
        pools=sorted({nodes[x].pool for x in node_names if x in nodes}),
        model=next(iter(sorted(models)), None) if models else None,
        profiles=sorted({d.profile for d in devs if d.profile}),
        price=price_list[0] if price_list else None,
        held=held,
    )


@dataclass(slots=True)
class GroupTotals:
    """Totals per namespace (team) or node pool."""

    key: str
    allocated_gpu_hours: float = 0.0
    active_gpu_hours: float = 0.0
    free_gpu_hours: float = 0.0  # pools only: GPU-hours of devices no pod held
    gpus: float = 0.0  # pools only: GPU-equivalents seen
    saving_gpu_hours: float = 0.0
    saving_usd: float = 0.0
    cost_usd: float | None = None
    workloads: int = 0
    peak_allocated_gpus: float = 0.0  # pools only: most GPU-equivalents held at one point
    right_size: dict[str, Any] | None = None  # pools only: advise capacity at the observed peak
    held: np.ndarray | None = field(default=None, repr=False)

    def to_json(self, key_name: str) -> dict[str, Any]:
        doc: dict[str, Any] = {
            key_name: self.key,
            "workloads": self.workloads,
            "allocated_gpu_hours": round(self.allocated_gpu_hours, 2),
            "active_gpu_hours": round(self.active_gpu_hours, 2),
            "idle_gpu_hours": round(self.allocated_gpu_hours - self.active_gpu_hours, 2),
            "active_share": round(self.active_gpu_hours / self.allocated_gpu_hours, 3)
            if self.allocated_gpu_hours
            else None,
            "saving_gpu_hours": round(self.saving_gpu_hours, 2),
            "saving_usd": round(self.saving_usd, 2),
        }
        if key_name == "pool":
            doc["gpus"] = round(self.gpus, 3)
            doc["free_gpu_hours"] = round(self.free_gpu_hours, 2)
            doc["cost_usd"] = round(self.cost_usd, 2) if self.cost_usd is not None else None
            doc["peak_allocated_gpus"] = round(self.peak_allocated_gpus, 3)
            doc["right_size"] = self.right_size
        return doc


def pool_totals(
    devices: list[Device],
    activity_kind: str,
    step_s: int,
    nodes: dict[str, NodeInfo],
    prices: dict[str, Price],
    threshold: float = DEFAULT_ACTIVE_THRESHOLD,
) -> dict[str, GroupTotals]:
    """Per node pool: allocated / active / free GPU-hours over every device series (free GPUs
    included), and the cost of the allocated GPU-hours where a price is known."""
    out: dict[str, GroupTotals] = {}
    seen: dict[str, set[tuple[str, str, str]]] = {}
    hours_per_point = step_s / 3600
    for dev in devices:
        values = dev.signals.get(activity_kind)
        if values is None:
            continue
        pool = nodes[dev.node].pool if dev.node in nodes else "(not in cluster)"
        totals = out.setdefault(pool, GroupTotals(pool))
        present = ~np.isnan(values)
        hours = float(present.sum()) * hours_per_point * dev.share
        ident = (dev.node, dev.gpu, dev.gi_id)
        if ident not in seen.setdefault(pool, set()):
            seen[pool].add(ident)
            totals.gpus += dev.share if not dev.shared_replicas > 1 else 1.0
        if dev.allocated:
            if totals.held is None:
                totals.held = np.zeros(len(values))
            totals.held += present * dev.share
            totals.allocated_gpu_hours += hours
            totals.active_gpu_hours += (
                float((present & (values >= threshold)).sum()) * hours_per_point * dev.share
            )
            price = prices.get(dev.node)
            if price is not None:
                totals.cost_usd = (totals.cost_usd or 0.0) + hours * price.usd_per_gpu_hour
        else:
            totals.free_gpu_hours += hours
    for totals in out.values():
        if totals.held is not None and totals.held.size:
            totals.peak_allocated_gpus = float(totals.held.max())
    return out


def right_size_pool(
    totals: GroupTotals, pool_nodes: list[NodeInfo], max_pod_gpus: int, prices_file: str | None = None
) -> dict[str, Any] | None:
    """``advise capacity`` for the pool's observed peak of allocated GPUs, beside what the pool
    has now: the nodes it would need of the best-fitting instance type that still hosts the
    pool's largest pod (``max_pod_gpus`` GPUs on one node), and the monthly costs.

    Whole-GPU pools only: a MIG pool's capacity is its slice layout (``advise mig``), a
    time-shared pool's is its replicas. None when the pool mixes models, providers or types, or
    one of them is unknown."""
    from gpuplane.advise.capacity import load_prices, plan_capacity  # deferred for start-up time

    models = {n.model.name for n in pool_nodes if n.model is not None}
    providers = {n.provider for n in pool_nodes}
    types = {n.instance_type for n in pool_nodes}
    if len(models) != 1 or len(providers) != 1 or len(types) != 1 or None in providers or None in types:
        return None
    if any(n.sharing_replicas > 1 or n.mig for n in pool_nodes):
        return None
    if totals.peak_allocated_gpus <= 0:
        return None
    model, provider, current_type = models.pop(), providers.pop(), types.pop()
    assert provider is not None and current_type is not None
    table = load_prices(prices_file)
    plan = plan_capacity({model: math.ceil(totals.peak_allocated_gpus - 1e-9)}, provider, prices=table)
    need = plan.models[0]
    options = [
        o
        for o in ([need.choice] if need.choice else []) + need.alternatives
        if o.gpus_per_node >= max_pod_gpus
    ]
    if not options:
        return None
    choice = options[0]
    price_now = table.prices.get((provider, current_type))
    monthly_now = len(pool_nodes) * price_now.usd_per_hour * table.hours_per_month if price_now else None
    return {
        "nodes_now": len(pool_nodes),
        "instance_type_now": current_type,
        "monthly_usd_now": round(monthly_now, 2) if monthly_now is not None else None,
        "gpus_needed_at_peak": need.gpus_demand,
        "largest_pod_gpus": max_pod_gpus,
        "nodes_needed": choice.nodes,
        "instance_type": choice.instance,
        "monthly_usd_needed": round(choice.monthly_usd, 2) if choice.monthly_usd is not None else None,
        "estimate": True,
        "advise": f"gpuplane advise capacity --demand {model}={need.gpus_demand} --provider {provider}",
    }


@dataclass(slots=True)
class Heatmap:
    """Mean activity per node and hour (NaN: no data), for the HTML report."""

    nodes: list[str]
    start: float
    bucket_s: int
    values: np.ndarray  # (nodes, buckets)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "start": self.start,
            "bucket_s": self.bucket_s,
            "values": [[_round(v, 3) for v in row] for row in self.values.tolist()],
        }


MAX_HEATMAP_COLUMNS = 168


def heatmap(devices: list[Device], activity_kind: str, grid_start: float, step_s: int, n: int) -> Heatmap:
    per_bucket = max(1, 3600 // step_s)
    columns = -(-n // per_bucket)
    while columns > MAX_HEATMAP_COLUMNS:
        per_bucket *= 2
        columns = -(-n // per_bucket)
    physical: dict[tuple[str, str, str], tuple[np.ndarray, float]] = {}
    for dev in devices:
        values = dev.signals.get(activity_kind)
        if values is None or not dev.node:
            continue
        key = (dev.node, dev.gpu, dev.gi_id)
        # One physical device has several series: one per pod that held it in the window (and the
        # free stretches without pod labels), one per pod on a time-shared GPU. Merge them point
        # by point (fmax ignores NaN), so each device counts once, weighted by its GPU share (a
        # 1g.5gb slice is an eighth of an A100).
        seen = physical.get(key)
        weight = dev.share * dev.shared_replicas
        physical[key] = (values, weight) if seen is None else (np.fmax(seen[0], values), weight)
    by_node: dict[str, list[tuple[np.ndarray, float]]] = {}
    for (node, _, _), entry in physical.items():
        by_node.setdefault(node, []).append(entry)
    names = sorted(by_node)
    out = np.full((len(names), columns), np.nan)
    pad = columns * per_bucket - n
    for i, name in enumerate(names):
        stacked = np.vstack([v for v, _ in by_node[name]])
        weights = np.array([w for _, w in by_node[name]])
        if pad:
            stacked = np.hstack([stacked, np.full((stacked.shape[0], pad), np.nan)])
        cells = stacked.reshape(stacked.shape[0], columns, per_bucket)
        present = ~np.isnan(cells)
        w = weights[:, None, None] * present
        sums = np.nansum(cells * weights[:, None, None], axis=(0, 2))
        total = w.sum(axis=(0, 2))
        out[i] = np.where(total > 0, sums / np.where(total > 0, total, 1), np.nan)
    return Heatmap(names, grid_start - step_s, per_bucket * step_s, out)
