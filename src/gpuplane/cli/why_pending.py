"""``gpuplane why-pending``: explain Pending GPU pods exactly as kube-scheduler would."""

from __future__ import annotations

import click

from gpuplane.cli.common import (
    cluster_options,
    emit_json,
    fail,
    format_option,
    load_cluster_or_fail,
    namespace_filter,
    namespace_options,
)


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
def why_pending(
    cluster: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    namespace: str | None,
    all_namespaces: bool,
    pod: str | None,
    kubernetes_version: str | None,
    fmt: str,
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
    from gpuplane.scheduler.scheduler import Scheduler  # deferred for start-up time
    from gpuplane.scheduler.versions import parse_minor
    from gpuplane.why_pending.explain import pending

    if kubernetes_version is not None and parse_minor(kubernetes_version) is None:
        fail(f"--kubernetes-version {kubernetes_version!r} is not a Kubernetes version like 1.31")
    if pod is not None and pod.count("/") != 1:
        fail(f"--pod {pod!r}: expected NAMESPACE/NAME")
    keep_namespace = namespace_filter(namespace, all_namespaces)
    # an explicit --kubernetes-version makes the cluster's version warnings moot
    state, errors = load_cluster_or_fail(
        cluster, kube_context, kubeconfig, warnings=kubernetes_version is None
    )
    scheduler = Scheduler(state, version=kubernetes_version)
    _note_clamped_version(kubernetes_version or state.kubernetes_version())
    if pod is not None and not any(p.key == pod for p in state.pending_pods):
        known = any(p.key == pod for p in state.pods)
        where = cluster or state.source or "the cluster"
        fail(f"pod {pod} is not Pending in {where}" if known else f"pod {pod} not found in {where}")
    explanations = pending(scheduler, pod)
    if keep_namespace is not None:
        explanations = [e for e in explanations if (e.pod.metadata.namespace or "default") == keep_namespace]
    if fmt == "json":
        from gpuplane.report.why_pending_text import to_json  # deferred for start-up time

        emit_json(to_json(explanations, scheduler))
    else:
        from gpuplane.report.why_pending_text import render_text  # deferred for start-up time

        render_text(explanations, scheduler)
    if errors:
        raise SystemExit(2)


def _note_clamped_version(requested: str | None) -> None:
    """Say so on stderr when the cluster's minor is outside the wordings gpuplane knows."""
    # deferred for start-up time
    from gpuplane.scheduler.versions import NEWEST_MINOR, OLDEST_MINOR, parse_minor

    minor = parse_minor(requested) if requested else None
    if minor is None or OLDEST_MINOR <= minor <= NEWEST_MINOR:
        return
    used = NEWEST_MINOR if minor > NEWEST_MINOR else OLDEST_MINOR
    why = "the newest" if minor > NEWEST_MINOR else "the oldest"
    click.echo(
        f"gpuplane: note: kube-scheduler 1.{minor} wording is not modelled; using 1.{used} ({why} "
        "gpuplane knows)",
        err=True,
    )
