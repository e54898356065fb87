"""The DCGM exporter's vocabulary, the PromQL gpuplane sends, and the time grid every source fills.

Metric names are the exporter's field names (NVIDIA/dcgm-exporter ``etc/default-counters.csv``:
``DCGM_FI_DEV_GPU_UTIL`` in %, ``DCGM_FI_DEV_FB_USED`` / ``FB_FREE`` in MiB,
``DCGM_FI_DEV_POWER_USAGE`` in W, and the profiling ratios 0-1 ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``,
``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE``; ``DCGM_FI_PROF_SM_ACTIVE`` is commented out of the default
CSV and only present where a custom counters file enables it).

Labels (``internal/pkg/rendermetrics/render_metrics.go`` and
``internal/pkg/transformation/{const,kubernetes}.go``): ``gpu`` (index), ``UUID``, ``device``,
``modelName``, ``GPU_I_PROFILE`` / ``GPU_I_ID`` on MIG instances, ``Hostname`` (the node: the
exporter reads ``NODE_NAME``; renamed ``hostname`` in 2026, #655), and on GPUs held by a pod
``pod`` / ``namespace`` / ``container`` (``pod_name`` / ``pod_namespace`` / ``container_name``
with ``--use-old-namespace``). Prometheus renames a scraped label that clashes with a target
label to ``exported_<name>`` unless ``honor_labels`` is set (Prometheus configuration docs,
``scrape_config.honor_labels``): a ServiceMonitor without ``honorLabels: true`` turns ``pod`` into
``exported_pod``. Every spelling is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# kind -> (metric, unit scale to the stored unit, PromQL range function)
ACTIVITY_METRICS = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL")
SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"
TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
POWER = "DCGM_FI_DEV_POWER_USAGE"
IOWAIT = "node_cpu_seconds_total"

# The kinds of signal a SeriesSet holds, and how a raw sample stream is reduced to one point
# per step (the same function the PromQL query applies: no sample between two steps is lost).
KINDS: dict[str, str] = {
    "engine": "avg",  # DCGM_FI_PROF_GR_ENGINE_ACTIVE, ratio 0-1
    "util": "avg",  # DCGM_FI_DEV_GPU_UTIL, stored as a ratio 0-1 (the exporter gives %)
    "sm": "avg",
    "tensor": "avg",
    "fb_used": "max",  # MiB: the peak of each step, so right-sizing never misses a spike
    "fb_free": "min",
    "power": "avg",
    "iowait": "avg",  # share of CPU time in iowait on a node, 0-1
}
METRIC_KIND: dict[str, str] = {
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "engine",
    "DCGM_FI_DEV_GPU_UTIL": "util",
    SM_ACTIVE: "sm",
    TENSOR_ACTIVE: "tensor",
    FB_USED: "fb_used",
    FB_FREE: "fb_free",
    POWER: "power",
}
# Stored value = exporter value x scale.
SCALE: dict[str, float] = {"util": 0.01}

HOST_LABELS = ("Hostname", "hostname", "exported_Hostname", "kubernetes_node", "node")
NODE_EXPORTER_NODE_LABELS = ("node", "nodename", "kubernetes_node", "instance")

# Prometheus refuses a range query of more than 11,000 points per series
# (prometheus/prometheus web/api/v1/api.go queryRange: "exceeded maximum resolution of 11,000
# points per timeseries. Try decreasing the query resolution (?step=XX)").
MAX_POINTS = 11_000
# Steps a Prometheus user would pick for a usage report, finest first. One minute is the finest:
# the exporter collects every 30 s by default (``-c 30000``) and is commonly scraped every 30-60 s,
# so a finer grid only repeats samples.
NICE_STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)


class UsageInputError(ValueError):
    """Unusable input (a window, a file, a server answer): one line for the user, exit 2."""


def parse_duration(text: str) -> int:
    """A Prometheus duration (``90m``, ``7d``, ``1h30m``, ``2w``) in seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    raw = text.strip()
    total, number = 0, ""
    for ch in raw:
        if ch.isdigit():
            number += ch
        elif ch in units and number:
            total += int(number) * units[ch]
            number = ""
        else:
            raise UsageInputError(f"{text!r} is not a duration like 7d, 24h or 90m")
    if number or total <= 0:
        raise UsageInputError(f"{text!r} is not a duration like 7d, 24h or 90m")
    return total


def format_duration(seconds: float) -> str:
    """Seconds as the shortest Prometheus duration (``3600`` -> ``1h``, ``90`` -> ``90s``)."""
    s = int(seconds)
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if s % size == 0 and s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def choose_step(window_s: int) -> int:
    """The finest "nice" step that keeps a window within Prometheus's 11,000 points per series.

    7 days -> 1 minute (10,080 points); 30 days -> 5 minutes; 1 year -> 1 hour.
    """
    for step in NICE_STEPS:
        if window_s / step <= MAX_POINTS:
            return step
    return math.ceil(window_s / MAX_POINTS)


@dataclass(frozen=True, slots=True)
class Grid:
    """Evaluation times ``start, start + step, ... end``; point ``i`` stands for the step that
    ends at its time, ``(t - step, t]``, so ``n`` points cover exactly ``n x step`` seconds."""

    start: float
    step: int
    n: int

    @property
    def end(self) -> float:
        return self.start + (self.n - 1) * self.step

    @classmethod
    def for_window(cls, end: float, window_s: int, step: int) -> Grid:
        """Aligned on multiples of the step (what Grafana does: stable, cacheable answers)."""
        aligned_end = math.floor(end / step) * step
        n = max(1, window_s // step)
        return cls(aligned_end - (n - 1) * step, step, n)

    def index(self, times: np.ndarray) -> np.ndarray:
        return np.rint((times - self.start) / self.step).astype(np.int64)


def promql(kind: str, step: int, selector: str = "") -> str:
    """The query for one kind of signal, reduced per step like :data:`KINDS` says.

    ``selector``: extra matchers for every DCGM series (``cluster="prod"``), without braces.
    """
    rng = format_duration(step)
    if kind == "iowait":
        window = format_duration(max(step, 120))  # rate() needs at least two samples
        inner = f'mode="iowait"{"," + selector if selector else ""}'
        return f"avg by (instance, node, nodename) (rate({IOWAIT}{{{inner}}}[{window}]))"
    metric = next(name for name, k in METRIC_KIND.items() if k == kind)
    func = {"avg": "avg_over_time", "max": "max_over_time", "min": "min_over_time"}[KINDS[kind]]
    matchers = f"{{{selector}}}" if selector else ""
    return f"{func}({metric}{matchers}[{rng}])"


@dataclass(slots=True)
class Series:
    labels: dict[str, str]
    values: np.ndarray  # float64, one per grid point, NaN where there is no sample


@dataclass(slots=True)
class SeriesSet:
    """Every signal on one grid: the form all sources produce and the engine reads."""

    grid: Grid
    series: dict[str, list[Series]] = field(default_factory=dict)
    source: str = ""
    queries: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, kind: str, labels: dict[str, str], values: np.ndarray) -> None:
        self.series.setdefault(kind, []).append(Series(labels, values))

    def kinds(self) -> list[str]:
        return [k for k in KINDS if self.series.get(k)]

    def activity_kind(self) -> str | None:
        """Engine activity if the exporter has it (DCGM_FI_PROF_GR_ENGINE_ACTIVE), else GPU_UTIL."""
        for kind in ("engine", "util"):
            if self.series.get(kind):
                return kind
        return None


def first_label(labels: dict[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        value = labels.get(name)
        if value:
            return value
    return ""


def workload_pod(labels: dict[str, str]) -> tuple[str, str, str]:
    """(namespace, pod, container) of the workload holding the GPU, or empty strings.

    ``exported_*`` wins when present: then ``pod`` / ``namespace`` are the scrape target's (the
    exporter's own pod). Without it, a ``pod`` that is the exporter itself (its container is the
    dcgm-exporter) is a target label on a free GPU, not a workload."""
    if labels.get("exported_pod"):
        return (
            labels.get("exported_namespace", ""),
            labels["exported_pod"],
            labels.get("exported_container", ""),
        )
    pod = labels.get("pod") or labels.get("pod_name", "")
    container = labels.get("container") or labels.get("container_name", "")
    if not pod or "dcgm-exporter" in container or pod.startswith(("nvidia-dcgm-exporter-", "dcgm-exporter-")):
        return ("", "", "")
    return (labels.get("namespace") or labels.get("pod_namespace", ""), pod, container)


def device_key(labels: dict[str, str]) -> tuple[str, str, str, str]:
    """(host, gpu index or UUID, GPU instance id, pod) of a DCGM series: one GPU or MIG device as
    one pod sees it (time-shared GPUs repeat the device under each pod: ``vgpu`` label)."""
    gpu = labels.get("gpu") or labels.get("UUID") or labels.get("uuid") or labels.get("device", "")
    ns, pod, _ = workload_pod(labels)
    return (
        first_label(labels, HOST_LABELS),
        gpu,
        labels.get("GPU_I_ID", ""),
        f"{ns}/{pod}/{labels.get('vgpu', '')}" if pod else "",
    )


def to_json_grid(grid: Grid) -> dict[str, Any]:
    return {"start": grid.start, "end": grid.end, "step_s": grid.step, "points": grid.n}
