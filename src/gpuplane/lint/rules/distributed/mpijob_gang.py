"""MPIJob gangs that wait for a launcher mpi-operator creates only after the gang runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_int, obj_label
from gpuplane.lint.rules.distributed._shared import _ns
from gpuplane.lint.rules.distributed.gang import PODGROUP_GROUPS, launcher_waits_for_workers
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

POLICY: FieldPath = ("spec", "runPolicy", "schedulingPolicy")


@dataclass(frozen=True, slots=True)
class LauncherDeadlock:
    """A gang minimum (on the MPIJob or on a PodGroup its pods join) that counts the launcher."""

    job: Manifest
    obj: Manifest
    path: FieldPath
    minimum: int
    workers: int
    defaulted: bool


def launcher_deadlocks(ctx: LintContext) -> list[LauncherDeadlock]:
    """Every WaitForWorkersReady MPIJob whose gang needs more pods than its workers.

    mpi-operator v0.8.0: ``pkg/controller/mpi_job_controller.go`` (syncHandler) creates the
    launcher Job only when ``countReadyWorkerPods(worker) == len(worker)``; ``pkg/controller/
    podgroup.go`` ``calculateMinAvailable`` gives the PodGroup it creates (Volcano or
    scheduler-plugins) ``schedulingPolicy.minAvailable``, or workers + 1 when it is unset.
    """
    out: list[LauncherDeadlock] = []
    jobs: dict[int, tuple[Manifest, int]] = {}
    groups: dict[tuple[str, str], tuple[Manifest, int]] = {}
    for ps in ctx.podsets:
        src = ps.source
        if not (src.kind == "MPIJob" and src.group == "kubeflow.org"):
            continue
        if src.get("spec", "launcherCreationPolicy") != "WaitForWorkersReady":
            continue
        workers = sum(
            p.resume_count if p.suspended else p.count
            for p in ctx.podsets
            if p.source is src and not launcher_waits_for_workers(p)
        )
        jobs[id(src)] = (src, workers)
        gang = ps.gang
        if gang is not None and gang.name and gang.mechanism in ("coscheduling", "volcano"):
            groups[(_ns(src), gang.name)] = (src, workers)
    for src, workers in jobs.values():
        policy = src.get(*POLICY)
        if not isinstance(policy, dict):
            continue
        minimum = as_int(policy.get("minAvailable"), None)
        if minimum is None:
            out.append(LauncherDeadlock(src, src, POLICY, workers + 1, workers, True))
        elif minimum > workers:
            out.append(LauncherDeadlock(src, src, (*POLICY, "minAvailable"), minimum, workers, False))
    for api_group in PODGROUP_GROUPS:
        for pg in ctx.by_kind("PodGroup", api_group):
            joined = groups.get((_ns(pg), pg.name))
            min_member = as_int(pg.get("spec", "minMember"), None)
            if joined is None or min_member is None or min_member <= joined[1]:
                continue
            out.append(LauncherDeadlock(joined[0], pg, ("spec", "minMember"), min_member, joined[1], False))
    return out


@rule(
    id="mpijob-gang-launcher-deadlock",
    severity="error",
    category="distributed",
    summary="MPIJob with launcherCreationPolicy WaitForWorkersReady whose gang minimum counts the launcher: never starts.",
    fixable=True,
)
def mpijob_gang_launcher_deadlock(ctx: LintContext) -> Iterator[Finding]:
    for d in launcher_deadlocks(ctx):
        target = d.path if not d.defaulted else (*d.path, "minAvailable")
        if d.defaulted:
            what = (
                f"schedulingPolicy has no minAvailable, so mpi-operator sizes the gang workers + 1 = {d.minimum}, "
                "counting the launcher"
            )
        else:
            what = f"gang minimum {d.minimum} counts the launcher"
        job = "" if d.obj is d.job else f" of {obj_label(d.job)}"
        yield ctx.report(
            d.obj,
            d.path,
            f"{obj_label(d.obj)}: {what}{job}, which mpi-operator creates only after the {d.workers} workers "
            "are Ready (launcherCreationPolicy: WaitForWorkersReady): the gang waits for a pod that is never "
            "created and no worker is scheduled (kubeflow/mpi-operator#608).",
            f"Set {target[-1]} to {d.workers} (the workers), or use launcherCreationPolicy: AtStartup with "
            f"{d.workers + 1}.",
            patch=(SetValue(target, d.workers),),
        )
