"""The API server's extended-resource checks (request without limit, request != limit,
fractional quantity), reported from :mod:`gpuplane.k8s.validation` so lint and simulate
never disagree (kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.k8s import validation
from gpuplane.k8s.validation import ResourceError
from gpuplane.lint.context import ContainerRef, LintContext
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import where
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet


_Located = tuple["PodSet", Manifest, ContainerRef, ResourceError]


def _api_errors(ctx: LintContext, check: str) -> Iterator[_Located]:
    """``(pod set, holder, container, error)`` for each API error of kind ``check`` on a field the
    manifest writes (defaulted requests repeat their limit's error: one finding, on the written field)."""
    for found in ctx.once("gpu.requests.api_errors", lambda: _written_api_errors(ctx)):
        if found[3].check == check:
            yield found


def _written_api_errors(ctx: LintContext) -> list[_Located]:
    """Every written API error of every container, in pod set and container order: one walk for
    the three rules (each pod set's containers were walked once per rule)."""
    return [
        (ps, ctx.holder(ps), c, err)
        for ps in ctx.podsets
        for c in ctx.containers(ps)
        for err in c.api_errors()
        if not err.defaulted
    ]


@rule(
    id="gpu-request-without-limit",
    severity="error",
    category="gpu",
    summary="GPU (extended resource) in requests but not in limits: the API server rejects the pod",
    fixable=True,
)
def gpu_request_without_limit(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.LIMIT_REQUIRED):
        name, value = err.name, c.resources("requests")[err.name]
        target = (*c.path, "resources", "limits", name)
        patch = (SetValue(target, value),) if ctx.writable(ps, target) else ()
        yield ctx.report(
            holder,
            (*c.path, "resources", "requests", name),
            f"{where(ps, c)} requests {name}: {value} without a limit; the API server rejects it "
            f'("{err.detail}")',
            f"set resources.limits[{name}]: {value} (a limit alone is enough: the request defaults to it)",
            patch=patch,
        )


@rule(
    id="gpu-request-limit-mismatch",
    severity="error",
    category="gpu",
    summary="GPU requests differ from limits: extended resources cannot be overcommitted, the API rejects it",
)
def gpu_request_limit_mismatch(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.NOT_EQUAL):
        name = err.name
        yield ctx.report(
            holder,
            (*c.path, "resources", "requests", name),
            f"{where(ps, c)} requests {name}: {c.resources('requests')[name]} but limits it to "
            f'{c.resources("limits")[name]}; the API server rejects it ("{err.detail}")',
            f"remove requests[{name}] and keep only limits[{name}] with the count the container needs",
        )


@rule(
    id="gpu-fractional-quantity",
    severity="error",
    category="gpu",
    summary="non-integer GPU quantity (0.5, 500m): the API rejects it; use time-slicing, MPS, MIG or DRA",
)
def gpu_fractional_quantity(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.NOT_INTEGER):
        name, value = err.name, c.resources(err.section)[err.name]
        yield ctx.report(
            holder,
            (*c.path, "resources", err.section, name),
            f"{where(ps, c)} asks for {name}: {value}; extended resources must be whole numbers "
            f'(API: "{err.detail}")',
            "request a whole device, or share GPUs with device-plugin time-slicing/MPS replicas, "
            "a MIG slice (nvidia.com/mig-<profile>: 1) or DRA",
        )
