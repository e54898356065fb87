"""Gang scheduling: all-or-nothing placement of distributed jobs and the minimum members."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.k8s.workloads.kubeflow import REPLICA_FIELDS
from gpuplane.lint import kinds
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_dict, as_int, as_str, obj_label
from gpuplane.lint.rules.distributed._launcher import (
    PODGROUP_GROUPS,
    launcher_deadlocks,
    launcher_waits_for_workers,
)
from gpuplane.lint.rules.distributed._shared import _ns
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext


# Schedulers that gang a workload's pods on their own, with no PodGroup in the manifest:
# KAI's pod-grouper makes one PodGroup per top owner (NVIDIA/KAI-Scheduler pkg/podgrouper), Volcano's
# PodGroup controller one per owner (volcano-sh/volcano pkg/controllers/podgroup), YuniKorn places
# an application's pods together (apache/yunikorn-k8shim, gang scheduling with task groups).
GANG_SCHEDULERS = ("kai-scheduler", "volcano", "yunikorn")


def _gang_scheduler(group: list[PodSet]) -> str | None:
    """The gang-aware scheduler every pod of the workload names, if any."""
    names = {as_str(as_dict(ps.template.get("spec")).get("schedulerName")) for ps in group}
    return names.pop() if len(names) == 1 and next(iter(names)) in GANG_SCHEDULERS else None


def _by_source(podsets: list[PodSet]) -> dict[int, list[PodSet]]:
    """Pod sets grouped by the object that creates them, in input order."""
    groups: dict[int, list[PodSet]] = {}
    for ps in podsets:
        groups.setdefault(id(ps.source), []).append(ps)
    return groups


@rule(
    id="gang-scheduling-missing",
    severity="warning",
    category="distributed",
    summary="Multi-pod GPU job with no gang mechanism (Volcano, coscheduling, Kueue, schedulingPolicy).",
)
def gang_scheduling_missing(ctx: LintContext) -> Iterator[Finding]:
    for group in _by_source(ctx.podsets).values():
        src = group[0].source
        if src.kind == "RayService" or not any(ps.distributed for ps in group):
            continue  # Ray Serve: autoscaled replicas, no rendezvous
        gpu_sets = [ps for ps in group if ctx.is_gpu(ps)]
        if src.kind == "LeaderWorkerSet":
            size = as_int(src.get("spec", "leaderWorkerTemplate", "size"), 1) or 1
            # GPU pods of one group: the leader (when it asks for GPUs) plus size - 1 workers
            total = sum(1 if ps.role == "leader" else size - 1 for ps in gpu_sets)
        else:
            total = sum(ps.count for ps in gpu_sets)
        if total < 2:
            continue
        if any(ps.gang is not None or ps.queue for ps in group):
            continue
        if _gang_scheduler(group) is not None:
            continue
        yield ctx.report(
            src,
            ("metadata", "name"),
            f"{obj_label(src)} runs {total} GPU pods that must all run together, with no gang mechanism: "
            "kube-scheduler can bind some ranks and leave the rest Pending (Insufficient GPUs), so the bound "
            "ranks hold GPUs and hang in rendezvous.",
            "Admit it all-or-nothing: add the label kueue.x-k8s.io/queue-name: <LocalQueue>, or run it under "
            "Volcano (schedulerName: volcano + minAvailable/PodGroup) or coscheduling (scheduling.x-k8s.io/pod-group "
            "label + PodGroup minMember).",
        )


def _pods(ps: PodSet) -> int:
    """Pods of a PodSet once it runs: a suspended controller (Kueue holds it) keeps its size
    in ``resume_count``, and its gang minimum is judged against that size."""
    return ps.resume_count if ps.suspended else ps.count


def _explicit_gang_mins(ctx: LintContext) -> Iterator[tuple[Manifest, FieldPath, int, int, str, bool]]:
    """Every explicit gang minimum in the input: (object, field, min, pods, what, elastic).

    Pod counts come from the PodSets (the workload model sums replicas once); the minimum of
    a controller's own gang is its ``Gang.min_member``. Only minimums written in the input
    count (the field path is where the finding points); a defaulted one equals the pods.
    """
    for group in _by_source(ctx.podsets).values():
        src = group[0].source
        gang = group[0].gang
        if src.kind == "Job" and src.group == "batch.volcano.sh":
            for ps in group:
                # template_path is ("spec", "tasks", <index>, "template"): the task's own minimum
                index = ps.template_path[2]
                task_min = as_int(src.get("spec", "tasks", index, "minAvailable"), None)
                if task_min is not None:
                    yield (
                        src,
                        ("spec", "tasks", index, "minAvailable"),
                        task_min,
                        _pods(ps),
                        f"task {ps.name}",
                        True,
                    )
            if (
                gang is not None
                and gang.min_member is not None
                and as_int(src.get("spec", "minAvailable"), None) is not None
            ):
                yield src, ("spec", "minAvailable"), gang.min_member, sum(map(_pods, group)), "job", False
        elif src.group == "kubeflow.org" and src.kind in REPLICA_FIELDS:
            path: FieldPath = ("spec", "runPolicy", "schedulingPolicy", "minAvailable")
            if gang is None or gang.min_member is None or as_int(src.get(*path), None) is None:
                continue
            elastic = src.get("spec", "elasticPolicy") is not None
            pods = sum(_pods(ps) for ps in group if not launcher_waits_for_workers(ps))
            yield src, path, gang.min_member, pods, "job", elastic
    # PodGroup objects joined by pods of other workloads (coscheduling label / Volcano annotation).
    members: dict[tuple[str, str], int] = {}
    jobs: dict[tuple[str, str], bool] = {}
    for ps in ctx.podsets:
        gang = ps.gang
        if gang is not None and gang.name and gang.mechanism in ("coscheduling", "volcano"):
            if launcher_waits_for_workers(ps):
                continue
            key = (_ns(ps.source), gang.name)
            members[key] = members.get(key, 0) + ps.count
            jobs[key] = jobs.get(key, False) or kinds.is_training(ps) or ps.distributed
    for api_group in PODGROUP_GROUPS:
        for pg in ctx.by_kind("PodGroup", api_group):
            key = (_ns(pg), pg.name)
            min_member = as_int(pg.get("spec", "minMember"), None)
            if key in members and min_member is not None:
                yield (
                    pg,
                    ("spec", "minMember"),
                    min_member,
                    members[key],
                    "PodGroup",
                    not jobs.get(key, False),
                )


@rule(
    id="gang-min-exceeds-replicas",
    severity="error",
    category="distributed",
    summary="Gang minimum (minMember / minAvailable) larger than the job's pods: never schedulable.",
    fixable=True,
)
def gang_min_exceeds_replicas(ctx: LintContext) -> Iterator[Finding]:
    # A minimum that only counts a launcher created after the workers run is
    # mpijob-gang-launcher-deadlock's finding (a deadlock, not a count mistake).
    deadlocked = {(id(d.obj), d.path) for d in launcher_deadlocks(ctx)}
    for obj, path, minimum, pods, what, _elastic in _explicit_gang_mins(ctx):
        if minimum <= pods or (id(obj), path) in deadlocked:
            continue
        if obj.kind == "Job" and what == "job":
            upstream = "job 'minAvailable' should not be greater than total replicas in tasks"
        elif obj.kind == "Job":
            upstream = (
                f"'minAvailable' is greater than 'replicas' in {what.replace('task ', 'task: ')}, "
                f"job: {obj.name}"
            )
        else:
            upstream = "the gang never completes and no pod is scheduled"
        yield ctx.report(
            obj,
            path,
            f"{obj_label(obj)}: {what} gang minimum {minimum} is larger than its {pods} pod(s): "
            f"never schedulable ({upstream}).",
            f"Set {path[-1]} to at most {pods} (the number of pods that must run together).",
            patch=(SetValue(path, pods),) if pods > 0 else (),
        )


@rule(
    id="gang-min-below-replicas",
    severity="warning",
    category="distributed",
    summary="Gang minimum below the pod count of a non-elastic job: starts partially, then hangs.",
    fixable=True,
    fix_safety="unsafe",
)
def gang_min_below_replicas(ctx: LintContext) -> Iterator[Finding]:
    gpu_sources = {id(ps.source) for ps in ctx.gpu_podsets()}
    gpu_groups = {(_ns(ps.source), ps.gang.name) for ps in ctx.gpu_podsets() if ps.gang is not None}
    for obj, path, minimum, pods, what, elastic in _explicit_gang_mins(ctx):
        if elastic or minimum >= pods or minimum < 1:
            continue
        if obj.kind == "PodGroup":
            if (_ns(obj), obj.name) not in gpu_groups:
                continue
        elif id(obj) not in gpu_sources:
            continue
        yield ctx.report(
            obj,
            path,
            f"{obj_label(obj)}: {what} gang minimum {minimum} is below its {pods} pods: the job starts with "
            f"{minimum} ranks holding GPUs while the others may stay Pending, and a fixed-size job hangs in "
            "rendezvous.",
            f"Set {path[-1]} to {pods}, or make the job elastic if it can really start with fewer ranks.",
            patch=(SetValue(path, pods),),
        )
