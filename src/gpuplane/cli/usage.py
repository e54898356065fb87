"""``gpuplane usage``: what the GPUs really do, from DCGM metrics joined with the cluster."""

from __future__ import annotations

import sys
from typing import Any

import click

from gpuplane.cli.common import (
    call_service,
    cluster_options,
    finish_report,
    format_option,
    namespace_filter,
    namespace_options,
    resolve_cluster,
)


@click.command()
@click.option(
    "--prometheus", metavar="URL", default=None, help="Prometheus server (or Thanos/Mimir query API)."
)
@click.option(
    "--metrics",
    "metrics_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Offline metrics instead: a saved range-query answer (JSON) or OpenMetrics / text samples "
    "with timestamps. Repeatable.",
)
@cluster_options(required=False)
@click.option(
    "--since", default="7d", show_default=True, metavar="DURATION", help="Window to read (7d, 24h, 90m)."
)
@click.option(
    "--end", default=None, metavar="TIME", help="End of the window (RFC 3339 or Unix seconds; default now)."
)
@click.option(
    "--step",
    default=None,
    metavar="DURATION",
    help="Resolution (default: 1m, coarser only to keep under Prometheus's 11,000 points per series).",
)
@click.option(
    "--selector",
    default="",
    metavar="MATCHERS",
    help='Extra label matchers for every DCGM series, e.g. cluster="prod".',
)
@click.option(
    "--prometheus-token-file", type=click.Path(dir_okay=False), default=None, help="Bearer token file."
)
@click.option("--prometheus-username", default=None, help="Basic-auth user (password from the file or env).")
@click.option(
    "--prometheus-password-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Basic-auth password file.",
)
@click.option("--prometheus-ca", type=click.Path(dir_okay=False), default=None, help="CA bundle for https.")
@click.option(
    "--prometheus-cert", type=click.Path(dir_okay=False), default=None, help="Client certificate (mTLS)."
)
@click.option("--prometheus-key", type=click.Path(dir_okay=False), default=None, help="Client key (mTLS).")
@click.option("--prometheus-insecure-skip-verify", is_flag=True, help="Do not verify the server certificate.")
@click.option("--prometheus-timeout", type=float, default=120.0, show_default=True, help="Seconds per query.")
@click.option(
    "--active-threshold",
    type=click.FloatRange(0, 100),
    default=5.0,
    show_default=True,
    metavar="PCT",
    help="Engine activity (%) at or above which a GPU counts as working.",
)
@click.option(
    "--idle-hours",
    type=click.FloatRange(min=0, min_open=True),
    default=4.0,
    show_default=True,
    help="gpu-allocated-idle: an idle stretch at least this long.",
)
@click.option(
    "--notebook-idle-timeout",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    metavar="MIN",
    help="Idle timeout proposed for notebooks (its saving is computed with it).",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Price overrides (advise capacity's format).",
)
@namespace_options
@format_option("text", "json", "html")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
@click.option(
    "--fail-on",
    type=click.Choice(["warning", "info", "never"]),
    default="never",
    show_default=True,
    help="Exit 1 when a finding reaches this severity.",
)
def usage(
    prometheus: str | None,
    metrics_files: tuple[str, ...],
    cluster: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    since: str,
    end: str | None,
    step: str | None,
    selector: str,
    prometheus_token_file: str | None,
    prometheus_username: str | None,
    prometheus_password_file: str | None,
    prometheus_ca: str | None,
    prometheus_cert: str | None,
    prometheus_key: str | None,
    prometheus_insecure_skip_verify: bool,
    prometheus_timeout: float,
    active_threshold: float,
    idle_hours: float,
    notebook_idle_timeout: int,
    prices_file: str | None,
    namespace: str | None,
    all_namespaces: bool,
    fmt: str,
    output: str | None,
    fail_on: str,
) -> None:
    """Tune GPU clusters from what the GPUs really do: idle and oversized allocations.

    Reads the NVIDIA DCGM exporter's series (engine activity, memory, MIG
    instances) from Prometheus over a window, or from offline files, and joins
    them with the cluster's pods (owners, teams, node pools, prices). Reports per
    workload, namespace and pool: GPU-hours allocated and active, mean/p95
    activity, peak memory, idle stretches. Each finding comes with the change
    that fixes it and its saving in GPU-hours and dollars (estimates from
    on-demand list prices):

    \b
      gpu-allocated-idle    idle for --idle-hours at a stretch: a notebook
                            idle timeout, scale to zero, or a hung job
      gpu-underused         p95 fits a MIG slice or a GPU share
                            (advise sharing)
      gpu-memory-oversized  a MIG slice whose use fits a smaller profile
                            (advise mig)
      gpu-data-starved      training at low activity, nodes waiting on I/O

    \b
    Examples:
      gpuplane usage --cluster examples/clusters/demo.yaml \\
        --metrics examples/usage/demo-metrics.json
      gpuplane usage --prometheus http://prometheus.monitoring:9090 \\
        --cluster live --since 7d -f html -o usage.html
      gpuplane usage --prometheus https://prom.example.com \\
        --prometheus-token-file /var/run/token --selector 'cluster="prod"'
      gpuplane usage -n team-a --cluster live --prometheus http://prometheus:9090

    -n keeps one namespace's workloads and findings (the summary counts them);
    node pools stay cluster-wide.

    Credentials: GPUPLANE_PROMETHEUS_TOKEN (bearer), or
    GPUPLANE_PROMETHEUS_USERNAME and GPUPLANE_PROMETHEUS_PASSWORD (basic); the
    --prometheus-*-file options win. Read-only: only GET /api/v1/query_range is
    sent. The queries and definitions are in docs/usage.md.

    \b
    Exit codes: 0 done (or no finding reaches --fail-on), 1 a finding
    reaches --fail-on, 2 unusable input (no source, an unreadable file,
    a server error).
    """
    # Engines and renderers are imported here, not at module level: `gpuplane --help` stays light.
    from gpuplane.app import usage as usage_app  # deferred for start-up time

    request = usage_app.UsageRequest(
        prometheus=prometheus,
        metrics_files=metrics_files,
        since=since,
        end=end,
        step=step,
        selector=selector,
        token_file=prometheus_token_file,
        username=prometheus_username,
        password_file=prometheus_password_file,
        ca_file=prometheus_ca,
        cert_file=prometheus_cert,
        key_file=prometheus_key,
        insecure_skip_verify=prometheus_insecure_skip_verify,
        timeout_s=prometheus_timeout,
        active_threshold_pct=active_threshold,
        idle_hours=idle_hours,
        notebook_idle_timeout_min=notebook_idle_timeout,
        prices_file=prices_file,
        heatmap=fmt == "html",
        namespace=namespace_filter(namespace, all_namespaces),
        cluster=resolve_cluster(cluster, kube_context, kubeconfig) if cluster else None,
        context=kube_context,
        kubeconfig=kubeconfig,
        progress=sys.stderr.isatty(),
    )
    outcome = call_service(usage_app.run, request)
    finish_report(outcome, fmt, output, fail_on, html=_html, plain=_plain, terminal=_terminal)


def _html(result: Any) -> str:
    from gpuplane.report.usage_html import render_usage_html  # deferred for start-up time

    return render_usage_html(result)


def _plain(result: Any) -> str:
    import io  # deferred for start-up time

    from gpuplane.report.console import make_console
    from gpuplane.report.usage_text import render_usage

    buffer = io.StringIO()
    render_usage(result, make_console(buffer))
    return buffer.getvalue()


def _terminal(result: Any) -> None:
    from gpuplane.report.console import make_console  # deferred for start-up time
    from gpuplane.report.usage_text import render_usage

    render_usage(result, make_console())
