"""Offline metrics for air-gapped clusters and tests: the same :class:`SeriesSet` as a server gives.

Accepted files (``--metrics FILE``, repeatable):

- a Prometheus range-query answer (JSON) whose series carry ``__name__``, e.g. saved with
  ``curl .../api/v1/query_range --data-urlencode 'query={__name__=~"DCGM_FI_.*"}' ...``; or a
  JSON object mapping metric names (or gpuplane's signal kinds, for answers to the queries of
  ``docs/usage.md``) to such answers. Points are used as they are: their spacing is the step;
- OpenMetrics (ends with ``# EOF``) or Prometheus text exposition samples *with timestamps*:
  what ``promtool tsdb create-blocks-from openmetrics`` loads, parsed by the official
  ``prometheus_client`` parsers. Samples are reduced per step as the PromQL queries reduce them
  (``avg_over_time`` / ``max_over_time`` / ``min_over_time`` over ``(t - step, t]``), and
  ``node_cpu_seconds_total{mode="iowait"}`` becomes a per-node rate, like ``rate()``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from gpuplane.usage.metrics import (
    IOWAIT,
    KINDS,
    METRIC_KIND,
    NODE_EXPORTER_NODE_LABELS,
    SCALE,
    Grid,
    SeriesSet,
    UsageInputError,
    choose_step,
    first_label,
)
from gpuplane.usage.prometheus import decode_matrix, place

MAX_FILE_BYTES = 4 << 30


def _read(path: str) -> bytes:
    try:
        p = Path(path)
        if p.stat().st_size > MAX_FILE_BYTES:
            raise UsageInputError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
        return p.read_bytes()
    except OSError as exc:
        raise UsageInputError(f"--metrics {path}: {exc.strerror or exc}") from None


# (metric name, labels, samples (n, 2))
RawSeries = tuple[str, dict[str, str], np.ndarray]


def _json_series(path: str, body: bytes) -> tuple[list[RawSeries], list[str]]:
    import msgspec  # deferred for start-up time

    try:
        doc = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise UsageInputError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise UsageInputError(f"{path}: expected a Prometheus API answer or a mapping of them")
    answers: list[tuple[str, bytes]]
    if "status" in doc:
        answers = [("", body)]
    else:
        answers = [(str(key), msgspec.json.encode(value)) for key, value in doc.items()]
    out: list[RawSeries] = []
    notes: list[str] = []
    for key, raw in answers:
        where = f"{path}" + (f" [{key}]" if key else "")
        result, warnings = decode_matrix(raw, where)
        notes.extend(f"{where}: Prometheus warning: {w}" for w in warnings)
        for labels, samples in result:
            name = labels.get("__name__") or key
            out.append((name, labels, samples))
    return out, notes


def _reason(exc: Exception) -> str:
    """The parser's complaint without the text it quotes: ``invalid metric name:<the line>`` and
    ``could not convert string to float: '<value>'`` would echo any file named as metrics (a
    private key, an ``.env`` file) into the error, also over MCP; the kind of problem is enough."""
    head, colon, _ = str(exc).partition(":")
    return head.strip()[:80] if colon and head.strip() else type(exc).__name__


def _first_bad_line(text: str, parse: Any) -> str:
    """``:N`` for the first sample line the text-format parser refuses on its own, else ``""``."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            for _family in parse(line + "\n"):
                pass
        except Exception:
            return f":{number}"
    return ""


def _exposition_series(path: str, body: bytes) -> list[RawSeries]:
    text = body.decode("utf-8", errors="replace")
    openmetrics = text.rstrip().endswith("# EOF")
    try:
        if openmetrics:
            # deferred for start-up time
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
        else:
            from prometheus_client.parser import text_string_to_metric_families  # deferred for start-up time
        grouped: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]] = defaultdict(list)
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.timestamp is None:
                    raise UsageInputError(
                        f"{path}: sample {sample.name} has no timestamp; offline files need timestamped samples"
                    )
                key = (sample.name, tuple(sorted(sample.labels.items())))
                grouped[key].append((float(sample.timestamp), float(sample.value)))
    except UsageInputError:
        raise
    except Exception as exc:  # the parsers raise ValueError and friends with the bad line
        kind = "OpenMetrics" if openmetrics else "Prometheus text exposition"
        line = "" if openmetrics else _first_bad_line(text, text_string_to_metric_families)
        raise UsageInputError(f"{path}{line}: not valid {kind} ({_reason(exc)})") from None
    out: list[RawSeries] = []
    for (name, labels), points in grouped.items():
        arr = np.array(sorted(points), dtype=np.float64).reshape(-1, 2)
        out.append((name, dict(labels), arr))
    return out


def _infer_step(raw: list[RawSeries]) -> int | None:
    diffs = [np.diff(s[:, 0]) for _, _, s in raw if len(s) > 1]
    if not diffs:
        return None
    positive = np.concatenate(diffs)
    positive = positive[positive > 0]
    return round(float(positive.min())) if len(positive) else None


def _bucket(grid: Grid, samples: np.ndarray, how: str, scale: float) -> np.ndarray:
    """Samples -> one value per ``(t - step, t]`` bucket, reduced by ``how``."""
    values = np.full(grid.n, np.nan)
    idx = np.ceil((samples[:, 0] - grid.start) / grid.step - 1e-9).astype(np.int64)
    ok = (idx >= 0) & (idx < grid.n)
    idx, vals = idx[ok], samples[ok, 1] * scale
    if not len(idx):
        return values
    if how == "avg":
        sums = np.bincount(idx, weights=vals, minlength=grid.n)
        counts = np.bincount(idx, minlength=grid.n)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    elif how == "max":
        values[:] = -np.inf
        np.maximum.at(values, idx, vals)
        values[np.isneginf(values)] = np.nan
    else:
        values[:] = np.inf
        np.minimum.at(values, idx, vals)
        values[np.isposinf(values)] = np.nan
    return values


def _counter_rate(grid: Grid, samples: np.ndarray) -> np.ndarray:
    """Per-second increase of a counter over each grid point's window, like ``rate()``: from the
    first to the last sample inside ``(t - window, t]``, counter resets added back."""
    window = max(grid.step, 120)
    times, vals = samples[:, 0], samples[:, 1]
    # Undo resets: a drop means the counter restarted from zero.
    prev = np.concatenate([vals[:1], vals[:-1]])
    corrected = vals + np.cumsum(np.where(vals < prev, prev, 0.0))
    out = np.full(grid.n, np.nan)
    ends = grid.start + np.arange(grid.n) * grid.step
    hi = np.searchsorted(times, ends, side="right") - 1
    lo = np.searchsorted(times, ends - window, side="right")
    ok = (hi > lo) & (hi >= 0)
    span = times[hi[ok]] - times[lo[ok]]
    with np.errstate(invalid="ignore", divide="ignore"):
        out[ok] = np.where(span > 0, (corrected[hi[ok]] - corrected[lo[ok]]) / span, np.nan)
    return out


def load_metrics_files(paths: list[str], *, step: int | None = None) -> SeriesSet:
    """Read every file and put all series on one grid (the files' joint time span)."""
    raw: list[RawSeries] = []
    notes: list[str] = []
    exposition = False
    for path in paths:
        body = _read(path)
        if body.lstrip()[:1] == b"{":
            series, file_notes = _json_series(path, body)
            raw.extend(series)
            notes.extend(file_notes)
        else:
            raw.extend(_exposition_series(path, body))
            exposition = True
    raw = [r for r in raw if len(r[2])]
    if not raw:
        raise UsageInputError(f"no samples in {', '.join(paths)}")
    t_min = min(float(s[0, 0]) for _, _, s in raw)
    t_max = max(float(s[-1, 0]) for _, _, s in raw)
    if step is None:
        step = choose_step(int(t_max - t_min) or 60) if exposition else (_infer_step(raw) or 60)
    if exposition:
        # Buckets end on multiples of the step, as the server's aligned grid does.
        end = math.ceil(t_max / step) * step
        start = math.ceil(t_min / step) * step
        grid = Grid(start, step, int((end - start) // step) + 1)
    else:
        grid = Grid(t_min, step, round((t_max - t_min) / step) + 1)
    out = SeriesSet(grid, source=", ".join(paths), notes=notes)
    iowait: dict[str, list[np.ndarray]] = defaultdict(list)
    for name, labels, samples in raw:
        kind = METRIC_KIND.get(name) or (name if name in KINDS else None)
        if name == IOWAIT or kind == "iowait":
            if name == IOWAIT and labels.get("mode") != "iowait":
                continue
            node = first_label(labels, NODE_EXPORTER_NODE_LABELS)
            if name == IOWAIT:
                iowait[node].append(_counter_rate(grid, samples))
            else:
                out.add("iowait", labels, place(grid, samples))
            continue
        if kind is None:
            continue
        scale = SCALE.get(kind, 1.0)
        if exposition:
            out.add(kind, labels, _bucket(grid, samples, KINDS[kind], scale))
        else:
            out.add(kind, labels, place(grid, samples, scale))
    for node, rates in iowait.items():
        stacked = np.vstack(rates)
        counts = np.sum(~np.isnan(stacked), axis=0)
        sums = np.nansum(stacked, axis=0)
        out.add("iowait", {"instance": node}, np.where(counts > 0, sums / np.maximum(counts, 1), np.nan))
    if out.series.get("engine"):
        out.series.pop("util", None)
    return out
