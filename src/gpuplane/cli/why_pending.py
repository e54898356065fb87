"""``gpuplane why-pending``: explain Pending GPU pods exactly as kube-scheduler would."""

from __future__ import annotations

from dataclasses import replace

import click

from gpuplane.cli.common import (
    cli_messages,
    cluster_options,
    emit_json,
    fail,
    format_option,
    namespace_filter,
    namespace_options,
    progress_display,
    quiet_option,
    resolve_cluster,
)
from gpuplane.sources.gc_policy import paused_gc


@click.command("why-pending")
@cluster_options(live_default=True)
@namespace_options
@click.option("--pod", default=None, metavar="NS/NAME", help="Explain only this pod.")
@click.option(
    "--kubernetes-version",
    default=None,
    metavar="1.MINOR",
    help="Word messages as this kube-scheduler version (default: from the cluster).",
)
@format_option("text", "json")
@quiet_option
# From load to output: explaining builds every pod's per-node verdicts (pending x nodes lists),
# and each full collection in between rescanned all the explanations built so far.
@paused_gc(then_freeze=True)
def why_pending(
    cluster: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    namespace: str | None,
    all_namespaces: bool,
    pod: str | None,
    kubernetes_version: str | None,
    fmt: str,
    quiet: bool,
) -> None:
    """Explain why GPU pods are Pending, in kube-scheduler's own words, with causes and fixes.

    For every Pending pod of the cluster (or the one --pod names), prints the
    FailedScheduling message kube-scheduler would write for that cluster state,
    in the wording of the cluster's Kubernetes version, the per-node reasons, and
    the GPU-aware causes (gang, quota, queue, MIG, taints) with their fixes.

    \b
    Examples:
      gpuplane why-pending --cluster examples/clusters/demo.yaml
      gpuplane why-pending --cluster examples/clusters/demo.yaml --pod team-nlp/qwen-sft-gb55k
      gpuplane why-pending --cluster examples/clusters/demo.yaml -f json --kubernetes-version 1.30
      gpuplane why-pending -n team-a               # the current kube-context, like kubectl
      gpuplane why-pending --pod team-a/train-worker-3

    \b
    Exit codes: 0 explained, 2 unusable cluster source, unknown pod or bad option.
    """
    from gpuplane.app import why_pending as why_pending_app  # deferred for start-up time
    from gpuplane.app.outcome import CLI, AppError

    try:
        why_pending_app.check(pod, kubernetes_version, CLI)
        request = why_pending_app.WhyPendingRequest(
            cluster="",  # below: after the options are checked, as kubectl names the context
            context=kube_context,
            kubeconfig=kubeconfig,
            label=cluster,
            pod=pod,
            kubernetes_version=kubernetes_version,
            namespace=namespace_filter(namespace, all_namespaces),
        )
        request = replace(request, cluster=resolve_cluster(cluster, kube_context, kubeconfig))
        with progress_display(quiet):
            outcome = why_pending_app.run(request, cli_messages(), CLI)
    except AppError as exc:
        fail(str(exc))
    if fmt == "json":
        # Written pod by pod, each pod's nodes per Status: the same bytes as one encode of the
        # whole (report/json_pieces.py), without holding a 1 GB document three times over.
        emit_json(outcome.to_json(streamed=True), spread=3)
    else:
        from gpuplane.report.why_pending_text import render_text  # deferred for start-up time

        render_text(outcome.explanations, outcome.scheduler)
    # SystemExit even for 0: its traceback keeps this frame, so a big cluster's process can end
    # without freeing the outcome (gc_policy.exit_at_once, under run_guarded)
    raise SystemExit(2 if outcome.bad_input else 0)
