"""GPU requests larger than any node can offer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    pass


@rule(
    id="gpu-request-exceeds-node",
    severity="error",
    category="gpu",
    summary="one pod asks for more GPUs (or MIG devices) than any node has",
    context="required",
)
def gpu_request_exceeds_node(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return
    best: dict[str, int] = {}
    for node in cluster.nodes:
        for name, value in cluster.allocatable(node.metadata.name).items():
            if kinds.is_accelerator_resource(name) and value > best.get(name, 0):
                best[name] = value
    for ps in ctx.gpu_podsets():
        holder = ctx.holder(ps)
        wanted = kinds.effective_gpu_requests(ps)
        for name, count in wanted.items():
            top = best.get(name, 0)
            if top == 0 or count <= top:
                continue  # never advertised: gpu-unknown-resource-name / mig rules say why
            path = ps.spec_path
            for c in ctx.containers(ps):
                if name in c.resources("limits"):
                    path = (*c.path, "resources", "limits", name)
                    break
            yield ctx.report(
                holder,
                path,
                f"{where(ps)} needs {count} {name} per pod but the largest node offers {top}: "
                f'Pending for ever ("Insufficient {name}")',
                f"ask for at most {top} {name} per pod (split into more pods) or add nodes with more GPUs",
            )
