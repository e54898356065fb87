"""Accelerator resource names no device plugin advertises."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.context import LintContext
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import container_resource_items, is_extended_resource, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    pass


def _advertised(ctx: LintContext) -> set[str]:
    names: set[str] = set()
    if ctx.cluster is None:
        return names
    for node in ctx.cluster.nodes:
        names.update(node.status.allocatable or {})
        names.update(node.status.capacity or {})
    return names


def _is_mig_profile(name: str) -> bool:
    """A MIG slice resource (``nvidia.com/mig-5g.50gb``): mig-profile-unknown owns those, naming the
    profile and the GPU models that offer it, so one request never gets two findings."""
    from gpuplane.gpu.resources import classify  # deferred for start-up time

    res = classify(name)
    return res is not None and bool(res.mig_profile)


@rule(
    id="gpu-unknown-resource-name",
    severity="error",
    category="gpu",
    summary="GPU-looking resource name no device plugin exposes (nvidia.com/gpus, gpu, wrong case); "
    "ctx: any extended resource no node advertises",
    context="optional",
)
def gpu_unknown_resource_name(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.resources import suspicious_gpu_name  # deferred for start-up time

    advertised = _advertised(ctx)
    have_nodes = bool(ctx.cluster is not None and ctx.cluster.nodes)
    for ps in ctx.podsets:
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            for section in ("limits", "requests"):
                other = c.resources("requests" if section == "limits" else "limits")
                for name, _value in container_resource_items(c, section):
                    if section == "requests" and name in other:
                        continue  # reported once, on the limit
                    path = (*c.path, "resources", section, name)
                    better = suspicious_gpu_name(name)
                    if better is not None and better != name:
                        api = (
                            'the API server rejects it ("must be a standard resource for containers")'
                            if "/" not in name
                            else "no device plugin advertises it, so the pod stays Pending "
                            f'("Insufficient {name}")'
                        )
                        yield ctx.report(
                            holder, path, f"{where(ps, c)} asks for {name}: {api}", f"use {better}"
                        )
                    elif (
                        have_nodes
                        and is_extended_resource(name)
                        and name not in advertised
                        and not _is_mig_profile(name)
                    ):  # mig-profile-unknown says it more precisely
                        yield ctx.report(
                            holder,
                            path,
                            f"{where(ps, c)} asks for {name}, which no node of the cluster advertises: "
                            f'the pod stays Pending ("Insufficient {name}")',
                            "use a resource name from `kubectl describe node` Allocatable, or install the device "
                            "plugin that provides it",
                        )
