"""``gpuplane simulate``: where would these workloads land, when, and what waits."""

from __future__ import annotations

import click

from gpuplane.cli.common import (
    call_service,
    cluster_options,
    emit_json,
    format_option,
    namespace_filter,
    resolve_cluster,
)


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
    "-n",
    "--namespace",
    default=None,
    metavar="NS",
    help="Submit the workloads to this namespace, as kubectl apply -n: objects without one get it, "
    "objects naming another are refused.",
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
    namespace: str | None,
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
      gpuplane simulate --cluster live -n team-a k8s/train.yaml   # as kubectl apply -n team-a would

    \b
    Exit codes: 0 simulated (or --fail-on not reached), 1 --fail-on reached (a deadlock; with
    pending, also any pod still Pending at the end), 2 unusable input or arguments.
    """
    from gpuplane.app import simulate as simulate_app  # deferred for start-up time

    request = simulate_app.SimulateRequest(
        resolve_cluster(cluster, kube_context, kubeconfig),
        kube_context,
        kubeconfig,
        paths=paths,
        scheduler=scheduler,
        autoscaler=autoscaler,
        scenario=scenario,
        kubernetes_version=kubernetes_version,
        namespace=namespace_filter(namespace, False),
    )
    outcome = call_service(simulate_app.run, request)
    if fmt == "json":
        emit_json(outcome.run.document)
    else:
        from gpuplane.report.simulate_text import render_text  # deferred for start-up time

        render_text(outcome.run.document)
    if outcome.bad_input:
        raise SystemExit(2)
    # SystemExit even for 0: its traceback keeps this frame (gc_policy.exit_at_once)
    raise SystemExit(1 if outcome.reaches(fail_on) else 0)
