"""The ``usage`` service: where the series come from and the options, the same for CLI and MCP.

:func:`read_series` turns a :class:`UsageRequest` into a :class:`~gpuplane.usage.metrics.SeriesSet`
(Prometheus over its HTTP API, or offline files); :func:`analyse` runs the engine on them and a
cluster; :func:`run` does both, reading the request's cluster in between. Unusable input is an
:class:`~gpuplane.app.outcome.AppError` with one line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, read_cluster
from gpuplane.app.outcome import AppError, Messages, Served, Surface

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.usage.engine import UsageResult
    from gpuplane.usage.metrics import SeriesSet


@dataclass(slots=True)
class UsageRequest:
    prometheus: str | None = None
    metrics_files: tuple[str, ...] = ()
    since: str = "7d"
    end: str | None = None
    step: str | None = None
    selector: str = ""
    token_file: str | None = None
    username: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure_skip_verify: bool = False
    timeout_s: float = 120.0
    active_threshold_pct: float = 5.0
    idle_hours: float = 4.0
    notebook_idle_timeout_min: int = 60
    prices_file: str | None = None
    heatmap: bool = False
    namespace: str | None = None  # -n: only this namespace's workloads and findings
    cluster: str | None = None  # owners, teams, pools and prices: a snapshot or live
    context: str | None = None
    kubeconfig: str | None = None
    progress: bool = False


def end_time(text: str | None) -> float:
    """``--end``: RFC 3339 or Unix seconds; now when absent."""
    if not text:
        return time.time()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise AppError(f"end {text!r}: expected RFC 3339 (2026-03-10T09:40:00Z) or Unix seconds") from None


def read_series(request: UsageRequest, *, option_prefix: str = "--") -> SeriesSet:
    # deferred for start-up time
    from gpuplane.usage.metrics import MAX_POINTS, Grid, UsageInputError, choose_step, parse_duration

    if bool(request.prometheus) == bool(request.metrics_files):
        raise AppError(
            f"give one metrics source: {option_prefix}prometheus URL or {option_prefix}metrics FILE"
        )
    try:
        window = parse_duration(request.since)
        step = parse_duration(request.step) if request.step else None
        if request.metrics_files:
            from gpuplane.usage.files import load_metrics_files  # deferred for start-up time

            return load_metrics_files(list(request.metrics_files), step=step)
        from gpuplane.usage.prometheus import config_from, fetch_series  # deferred for start-up time

        assert request.prometheus is not None
        config = config_from(
            request.prometheus,
            token_file=request.token_file,
            username=request.username,
            password_file=request.password_file,
            ca_file=request.ca_file,
            cert_file=request.cert_file,
            key_file=request.key_file,
            insecure_skip_verify=request.insecure_skip_verify,
            timeout_s=request.timeout_s,
            selector=request.selector,
        )
        chosen = step or choose_step(window)
        if window / chosen > MAX_POINTS:
            raise AppError(
                f"step {request.step}: {window // chosen} points per series, more than Prometheus's 11,000"
            )
        return fetch_series(config, Grid.for_window(end_time(request.end), window, chosen))
    except UsageInputError as exc:
        raise AppError(str(exc)) from None


def run(
    request: UsageRequest, messages: Messages, surface: Surface, *, cache: ClusterCache | None = None
) -> Served[UsageResult]:
    """The series, then the cluster (when named), then the engine."""
    series = read_series(request, option_prefix=surface.option_prefix)
    state, bad_input = (
        read_cluster(request, messages, surface, cache=cache) if request.cluster else (None, False)
    )
    return Served(analyse(request, series, state), bad_input)


def analyse(request: UsageRequest, series: SeriesSet, state: ClusterState | None) -> UsageResult:
    from gpuplane.usage.engine import UsageOptions, run_usage  # deferred for start-up time
    from gpuplane.usage.metrics import UsageInputError

    options = UsageOptions(
        active_threshold=request.active_threshold_pct / 100,
        idle_hours=request.idle_hours,
        notebook_timeout_min=request.notebook_idle_timeout_min,
        prices_file=request.prices_file,
        heatmap=request.heatmap,
    )
    try:
        result = run_usage(series, state, options)
    except (UsageInputError, ValueError) as exc:  # ValueError: a bad prices file (CapacityInputError)
        raise AppError(str(exc)) from None
    return result if request.namespace is None else result.only(request.namespace)
