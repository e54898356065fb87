"""MPIJob launcher timing shared by the gang rules: which launcher pods do not exist yet when the
gang is placed, and the gang minimums that therefore wait for them forever."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.lint.rules._common import as_int
from gpuplane.lint.rules.distributed._shared import _ns
from gpuplane.records import FrozenRecord, set_field
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

PODGROUP_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io", "scheduling.volcano.sh")
POLICY: FieldPath = ("spec", "runPolicy", "schedulingPolicy")


def launcher_waits_for_workers(ps: PodSet) -> bool:
    """An MPIJob launcher created only after every worker is Ready (``launcherCreationPolicy:
    WaitForWorkersReady``; kubeflow/mpi-operator v0.8.0 ``pkg/controller/mpi_job_controller.go``
    syncHandler). It is not there while the gang is being placed, so it does not count towards
    the pods the gang minimum must cover."""
    src = ps.source
    return (
        src.kind == "MPIJob"
        and src.group == "kubeflow.org"
        and ps.name == "launcher"
        and src.get("spec", "launcherCreationPolicy") == "WaitForWorkersReady"
    )


class LauncherDeadlock(FrozenRecord):
    """A gang minimum (on the MPIJob or on a PodGroup its pods join) that counts the launcher."""

    __slots__ = ("defaulted", "job", "minimum", "obj", "path", "workers")
    job: Manifest
    obj: Manifest
    path: FieldPath
    minimum: int
    workers: int
    defaulted: bool

    def __init__(
        self, job: Manifest, obj: Manifest, path: FieldPath, minimum: int, workers: int, defaulted: bool
    ) -> None:
        set_field(self, "job", job)
        set_field(self, "obj", obj)
        set_field(self, "path", path)
        set_field(self, "minimum", minimum)
        set_field(self, "workers", workers)
        set_field(self, "defaulted", defaulted)


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
