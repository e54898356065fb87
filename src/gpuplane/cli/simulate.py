"""``gpuplane simulate``: where would these workloads land, when, and what waits."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, emit_json, fail, format_option, load_cluster_or_fail


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@cluster_options(required=True)
@click.option(
    "--scheduler",
    type=click.Choice(["default", "volcano", "coscheduling", "kueue"]),
    default="default",
    show_default=True,
    help="Which scheduler places the pods.",
)
@click.option(
    "--autoscaler",
    default=None,
    metavar="SPEC",
    help="auto (default: the Karpenter NodePools / gpuplane ClusterAutoscalerNodeGroups found in the "
    "inputs), none, karpenter, cluster-autoscaler, or a YAML file with NodePools, node groups "
    "and a ColdStart override object.",
)
@click.option(
    "--scenario",
    default=None,
    metavar="FILE",
    help="Arrival / duration / image size per workload, cold-start and Kueue/coscheduling settings.",
)
@click.option(
    "--kubernetes-version",
    default=None,
    metavar="1.MINOR",
    help="Word messages as this kube-scheduler version (default: from the cluster).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["deadlock", "pending", "never"]),
    default="never",
    show_default=True,
    help="Exit 1 on a deadlock (a partly placed distributed job), or on any pod left Pending.",
)
@format_option("text", "json")
def simulate(
    paths: tuple[str, ...],
    cluster: str,
    kube_context: str | None,
    kubeconfig: str | None,
    scheduler: str,
    autoscaler: str | None,
    scenario: str | None,
    kubernetes_version: str | None,
    fail_on: str,
    fmt: str,
) -> None:
    """Simulate submitting workloads to a cluster, over time.

    Workload times come from annotations (gpuplane.io/arrival-s, gpuplane.io/duration-s,
    gpuplane.io/image-size-gib) or --scenario. A partly placed distributed job holds its GPUs
    and cannot start: gpuplane reports such deadlocks.

    \b
    Examples:
      gpuplane simulate --cluster examples/clusters/demo.yaml examples/manifests/
      gpuplane simulate --cluster examples/simulate/cluster.yaml examples/simulate/deadlock-jobs.yaml
      gpuplane simulate --cluster examples/simulate/cluster.yaml examples/simulate/deadlock-jobs.yaml --scheduler volcano
      gpuplane simulate --cluster examples/simulate/cluster.yaml examples/simulate/deadlock-jobs.yaml -f json
      gpuplane simulate --cluster examples/simulate/cluster.yaml examples/simulate/deadlock-jobs.yaml --fail-on deadlock

    \b
    Exit codes: 0 simulated (or --fail-on not reached), 1 --fail-on reached (a deadlock; with
    pending, also any pod still Pending at the end), 2 unusable input or arguments.
    """
    # deferred for start-up time
    from gpuplane.scheduler.simulate.run import SimulateInputError, run_simulation
    from gpuplane.sources import load_paths

    # version warnings come after the run's own messages (below)
    state, cluster_errors = load_cluster_or_fail(cluster, kube_context, kubeconfig, warnings=False)
    loaded = load_paths(paths)
    for note in loaded.skipped:
        click.echo(f"gpuplane: skipped {note}", err=True)
    messages = [str(e) for e in loaded.errors]
    if loaded.errors and not loaded.objects:
        # nothing to submit: no empty simulation on stdout (some objects read: simulate them, exit 2)
        _echo(messages)
        fail(f"nothing usable in {', '.join(paths)}")
    try:
        run = run_simulation(
            state,
            list(loaded.objects),
            scheduler=scheduler,
            autoscaler=autoscaler,
            scenario=scenario,
            kubernetes_version=kubernetes_version,
        )
    except SimulateInputError as exc:
        fail(str(exc))
    messages.extend(run.problems)
    _echo(messages)
    for warning in state.version_warnings():
        click.echo(f"gpuplane: warning: {warning}", err=True)
    for note in run.notes:
        click.echo(f"gpuplane: note: {note}", err=True)
    if fmt == "json":
        emit_json(run.document)
    else:
        from gpuplane.report.simulate_text import render_text  # deferred for start-up time

        render_text(run.document)
    if messages or cluster_errors:
        raise SystemExit(2)
    if fail_reached(run.document, fail_on):
        raise SystemExit(1)


def fail_reached(document: dict, fail_on: str) -> bool:
    """``--fail-on``: ``deadlock`` when a distributed job is partly placed; ``pending`` when any pod
    stays Pending (a deadlock leaves pods Pending, so it counts too)."""
    if fail_on == "never":
        return False
    if document.get("deadlock"):
        return True
    return fail_on == "pending" and bool(document.get("pending"))


def _echo(messages: list[str]) -> None:
    for message in messages:
        click.echo(f"gpuplane: {message}", err=True)
