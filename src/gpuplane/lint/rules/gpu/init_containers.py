"""Init containers that hold GPUs the main containers then wait for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.context import LintContext
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    pass


@rule(
    id="gpu-init-container-hoards",
    severity="warning",
    category="gpu",
    summary="init container asks for more GPUs than the app containers: the pod reserves the maximum for its whole life",
)
def gpu_init_container_hoards(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        app = ctx.gpu_requests(ps)
        holder = ctx.holder(ps)
        for c in ctx.containers(ps, ("initContainers",)):
            if c.data.get("restartPolicy") == "Always":
                continue  # sidecar: runs alongside the app and is added to its total
            for name, count in c.gpu_requests().items():
                if count > app.get(name, 0):
                    section = "limits" if name in c.resources("limits") else "requests"
                    yield ctx.report(
                        holder,
                        (*c.path, "resources", section, name),
                        f"{where(ps, c)} asks for {count} {name} but the app containers use {app.get(name, 0)}: "
                        f"the pod keeps {count} reserved for its whole life",
                        f"lower the init container to at most {app.get(name, 0)} {name} (or none)",
                    )
