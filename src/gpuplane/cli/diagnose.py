"""``gpuplane diagnose``: what is wrong with this cluster's GPU stack and capacity right now."""

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
    progress_display,
    quiet_option,
    resolve_cluster,
)
from gpuplane.sources.gc_policy import paused_gc


@click.command()
@cluster_options(live_default=True)
@namespace_options
@format_option("text", "json", "html")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default="never",
    show_default=True,
    help="Exit 1 when a finding reaches this severity.",
)
@click.option(
    "--min-severity",
    type=click.Choice(["error", "warning", "info"]),
    default="info",
    show_default=True,
    help="Report only findings at or above this severity (the inventory stays whole).",
)
@quiet_option
# From load to output: the findings' JSON alone started a full collection over the cluster read.
@paused_gc(then_freeze=True)
def diagnose(
    cluster: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    namespace: str | None,
    all_namespaces: bool,
    fmt: str,
    output: str | None,
    fail_on: str,
    min_severity: str,
    quiet: bool,
) -> None:
    """Find what is wrong with a cluster's GPU stack, capacity and workloads right now.

    Reads one cluster state (a snapshot file or folder, - for stdin, or live) and
    runs the cluster rules (GPU nodes that advertise no GPUs, failing GPU
    Operator pods, half-placed gangs, Pending GPU pods with the scheduler's
    reason, fragmentation, MIG config failures), each with the evidence that
    proves it, then every lint rule on the cluster's own workloads, then the
    GPU inventory. Findings point at the object's line when the snapshot is a
    file.

    \b
    Examples:
      gpuplane diagnose --cluster examples/clusters/demo.yaml
      gpuplane diagnose --cluster examples/clusters/demo.yaml -f json
      gpuplane diagnose --cluster examples/clusters/demo.yaml -f html -o report.html
      gpuplane diagnose --fail-on error            # the current kube-context
      gpuplane diagnose -n team-a --min-severity warning

    \b
    Exit codes: 0 done (or no finding reaches --fail-on), 1 a finding reaches
    --fail-on, 2 unusable cluster source.
    """
    # Engines and renderers are imported here, not at module level: `gpuplane --help` stays light.
    from gpuplane.app import diagnose as diagnose_app  # deferred for start-up time

    keep_namespace = namespace_filter(namespace, all_namespaces)
    request = diagnose_app.DiagnoseRequest(
        resolve_cluster(cluster, kube_context, kubeconfig),
        kube_context,
        kubeconfig,
        progress=sys.stderr.isatty() and not quiet,
        namespace=keep_namespace,
        min_severity=min_severity,
        report_data=fmt == "html",
    )
    with progress_display(quiet):
        outcome = call_service(diagnose_app.run, request)
    finish_report(outcome, fmt, output, fail_on, html=_html, plain=_plain, terminal=_terminal)


def _html(result: Any) -> str:
    from gpuplane.report.html import render_html  # deferred for start-up time

    return render_html(result)


def _plain(result: Any) -> str:
    from gpuplane.report.diagnose_text import render_plain  # deferred for start-up time

    return render_plain(result)


def _terminal(result: Any) -> None:
    from gpuplane.report.console import make_console  # deferred for start-up time
    from gpuplane.report.diagnose_text import render

    render(result, make_console())
