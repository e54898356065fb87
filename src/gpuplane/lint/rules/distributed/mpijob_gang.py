"""MPIJob gangs that wait for a launcher mpi-operator creates only after the gang runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import obj_label
from gpuplane.lint.rules.distributed._launcher import launcher_deadlocks
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


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
