"""Queue configuration that silently does nothing: Volcano reclaim, Kueue queues nobody uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import yaml

from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import obj_label
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

VOLCANO_SCHED_GROUP = "scheduling.volcano.sh"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_CONF_KEY = "volcano-scheduler.conf"
HELM_GENERATORS = ("HelmChartInflationGenerator", "HelmRelease")


def _actions(text: Any) -> list[str] | None:
    """The action list of a volcano-scheduler.conf document, or None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        conf = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return None
    actions = conf.get("actions") if isinstance(conf, dict) else None
    if not isinstance(actions, str):
        return None
    return [a.strip() for a in actions.split(",") if a.strip()]


def volcano_scheduler_configs(ctx: LintContext) -> list[tuple[Manifest, list[str]]]:
    """Volcano scheduler configurations in the input or the cluster: the scheduler ConfigMap's
    ``volcano-scheduler.conf``, or the chart value ``custom.scheduler_config_override`` of a
    kustomize HelmChartInflationGenerator / Flux HelmRelease installing the volcano chart
    (volcano-sh/volcano ``installer/helm/chart/volcano/values.yaml``)."""
    out: list[tuple[Manifest, list[str]]] = []
    for cm in ctx.by_kind("ConfigMap", "", include_cluster=True):
        actions = _actions(cm.get("data", VOLCANO_CONF_KEY))
        if actions is not None:
            out.append((cm, actions))
    for kind in HELM_GENERATORS:
        for gen in ctx.by_kind(kind):
            chart = gen.get("chart") or gen.get("spec", "chart", "spec", "chart") or gen.get("name")
            if chart != "volcano":
                continue
            values = (
                gen.get("valuesInline")
                if kind == "HelmChartInflationGenerator"
                else gen.get("spec", "values")
            )
            custom = values.get("custom") if isinstance(values, dict) else None
            override = custom.get("scheduler_config_override") if isinstance(custom, dict) else None
            actions = _actions(override)
            if actions is not None:
                out.append((gen, actions))
    return out


@rule(
    id="volcano-queue-reclaimable-without-reclaim",
    severity="warning",
    category="tenancy",
    summary="Volcano Queue marked reclaimable while the scheduler configuration has no reclaim action.",
)
def volcano_queue_reclaimable_without_reclaim(ctx: LintContext) -> Iterator[Finding]:
    configs = volcano_scheduler_configs(ctx)
    if not configs or any("reclaim" in actions for _, actions in configs):
        return  # no configuration in sight (cannot tell), or reclaim is on
    source, actions = configs[0]
    for q in ctx.by_kind("Queue", VOLCANO_SCHED_GROUP):
        if q.get("spec", "reclaimable") is not True:
            continue
        yield ctx.report(
            q,
            ("spec", "reclaimable"),
            f"{obj_label(q)} is reclaimable, but the Volcano scheduler configuration in {obj_label(source)} runs "
            f"only '{', '.join(actions)}': only the reclaim action takes back resources a queue lends, so "
            "GPUs borrowed from this queue's share are never returned to queues that need them.",
            "Add reclaim to the scheduler's actions (e.g. 'enqueue, allocate, backfill, reclaim'), or drop "
            "reclaimable.",
        )


def _local_queues(ctx: LintContext) -> list[Manifest]:
    return ctx.by_kind("LocalQueue", KUEUE_GROUP, include_cluster=True)


@rule(
    id="kueue-clusterqueue-unused",
    severity="warning",
    category="tenancy",
    summary="Kueue ClusterQueue that no LocalQueue points at: nothing can be admitted against its quota.",
)
def kueue_clusterqueue_unused(ctx: LintContext) -> Iterator[Finding]:
    local = _local_queues(ctx)
    if not local:
        return  # the LocalQueues live elsewhere: cannot tell
    targeted = {lq.get("spec", "clusterQueue") for lq in local}
    for cq in ctx.by_kind("ClusterQueue", KUEUE_GROUP):
        if cq.name in targeted:
            continue
        yield ctx.report(
            cq,
            ("metadata", "name"),
            f"{obj_label(cq)}: no LocalQueue points at it (spec.clusterQueue), so no workload can be submitted "
            "to it and its quota is never used.",
            f"Create a LocalQueue with spec.clusterQueue: {cq.name} in each namespace that should use it.",
        )


@rule(
    id="kueue-workload-without-queue",
    severity="warning",
    category="tenancy",
    summary="GPU workload in a namespace with a Kueue LocalQueue but without the queue-name label: bypasses Kueue.",
)
def kueue_workload_without_queue(ctx: LintContext) -> Iterator[Finding]:
    namespaces: dict[str, list[str]] = {}
    for lq in _local_queues(ctx):
        namespaces.setdefault(lq.namespace or "default", []).append(lq.name)
    if not namespaces:
        return
    done: set[int] = set()
    for ps in ctx.gpu_podsets():
        src = ps.source
        ns = src.namespace or "default"
        if id(src) in done or ns not in namespaces or src.kind in ("Pod", "DaemonSet"):
            continue
        done.add(id(src))
        if src.labels.get(KUEUE_QUEUE_LABEL) or ps.queue:
            continue
        queues = ", ".join(sorted(namespaces[ns]))
        path: FieldPath = (
            ("metadata", "labels") if isinstance(src.get("metadata", "labels"), dict) else ("metadata",)
        )
        yield ctx.report(
            src,
            path,
            f"{obj_label(src)} requests GPUs in namespace {ns}, which has the Kueue LocalQueue {queues}, but it "
            "has no kueue.x-k8s.io/queue-name label: Kueue does not manage it, so it runs outside the "
            "ClusterQueue's quota and fair sharing (unless manageJobsWithoutQueueName is on).",
            f"Add the label kueue.x-k8s.io/queue-name: {sorted(namespaces[ns])[0]} to its metadata.",
        )
