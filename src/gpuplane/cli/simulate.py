"""``gpuplane simulate``: where would these workloads land, when, and what waits."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, emit_json, fail, format_option

AUTOSCALER_MODES = ("auto", "none", "karpenter", "cluster-autoscaler")


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@cluster_options(required=True)
@click.option("--scheduler", type=click.Choice(["default", "volcano", "coscheduling", "kueue"]),
              default="default", show_default=True, help="Which scheduler places the pods.")
@click.option("--autoscaler", default=None, metavar="SPEC",
              help="auto (default: the Karpenter NodePools / gpuplane ClusterAutoscalerNodeGroups found in the "
                   "inputs), none, karpenter, cluster-autoscaler, or a YAML file with NodePools, node groups "
                   "and a ColdStart override object.")
@click.option("--scenario", default=None, metavar="FILE",
              help="Arrival / duration / image size per workload, cold-start and Kueue/coscheduling settings.")
@click.option("--kubernetes-version", default=None, metavar="1.MINOR",
              help="Word messages as this kube-scheduler version (default: from the cluster).")
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
    fmt: str,
) -> None:
    """Simulate submitting workloads to a cluster, over time.

    Workload times come from annotations (gpuplane.io/arrival-s, gpuplane.io/duration-s,
    gpuplane.io/image-size-gib) or --scenario. A partly placed distributed job holds its GPUs
    and cannot start: gpuplane reports such deadlocks.

    \b
    Examples:
      gpuplane simulate --cluster examples/clusters/demo.yaml examples/manifests/
      gpuplane simulate --cluster examples/simulate/cluster.yaml examples/simulate/jobs.yaml --scheduler volcano
    """
    from gpuplane.k8s.cluster import load_cluster_state
    from gpuplane.scheduler.simulate.autoscaler import Autoscaler
    from gpuplane.scheduler.simulate.coldstart import default_model, parse_overrides
    from gpuplane.scheduler.simulate.engine import Engine, Options
    from gpuplane.scheduler.simulate.result import to_document
    from gpuplane.scheduler.simulate.scenario import ScenarioError, load_scenario
    from gpuplane.scheduler.versions import parse_minor
    from gpuplane.sources import load_paths

    if kubernetes_version is not None and parse_minor(kubernetes_version) is None:
        fail(f"--kubernetes-version {kubernetes_version!r} is not a Kubernetes version like 1.31")
    try:
        state, errors = load_cluster_state(cluster, context=kube_context, kubeconfig=kubeconfig)
    except (OSError, ValueError) as exc:
        fail(f"--cluster {cluster}: {exc}")
    messages = [str(e) for e in errors]
    loaded = load_paths(paths)
    messages.extend(str(e) for e in loaded.errors)
    objects = list(loaded.objects)
    try:
        plan = load_scenario(scenario) if scenario else None
    except ScenarioError as exc:
        fail(str(exc))
    mode = autoscaler or "auto"
    extra = []
    overrides: dict[str, float] = dict(plan.cold_start) if plan else {}
    if mode not in AUTOSCALER_MODES:
        spec = load_paths([mode])
        if spec.errors:
            fail(f"--autoscaler {mode}: {spec.errors[0]}")
        extra = list(spec.objects)
        for obj in extra:
            if obj.kind == "ColdStart" and obj.group == "gpuplane.io":
                values, problems = parse_overrides(obj.get("spec") or {})
                if problems:
                    fail(f"--autoscaler {mode}: {problems[0]}")
                overrides.update(values)
        mode = "auto"
    scaler = None
    if mode != "none":
        scaler, problems = Autoscaler.from_objects([*state.objects, *objects, *extra], mode)
        messages.extend(problems)
    for message in messages:
        click.echo(f"gpuplane: {message}", err=True)
    options = Options(
        scheduler=scheduler,
        autoscaler=scaler,
        cold_start=default_model(overrides),
        scenario=plan,
        kubernetes_version=kubernetes_version,
    )
    try:
        engine = Engine(state, objects, options).run()
    except ScenarioError as exc:
        fail(str(exc))
    doc = to_document(engine)
    if fmt == "json":
        emit_json(doc)
    else:
        from gpuplane.report.simulate_text import render_text

        render_text(doc)
    if messages:
        raise SystemExit(2)
