"""Accelerator resource names no device plugin advertises, and misspellings of the real ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, RenameKey
from gpuplane.lint.rules._common import container_resource_items, is_extended_resource, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.k8s.manifest import Manifest
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import ContainerRef, LintContext


def _advertised(ctx: LintContext) -> set[str]:
    names: set[str] = set()
    if ctx.cluster is None:
        return names
    for node in ctx.cluster.nodes:
        names.update(node.status.allocatable or {})
        names.update(node.status.capacity or {})
    return names


_Named = tuple["PodSet", "Manifest", "ContainerRef", str, str]


def _named_resources(ctx: LintContext) -> list[_Named]:
    """Every resource name each container asks for, once per container: a name in both limits and
    requests is given with its limit (the section a finding should point at). One walk per run
    for both rules of this module (do not mutate)."""
    return ctx.once("gpu.resource_names.named_resources", lambda: _walk_named_resources(ctx))


def _walk_named_resources(ctx: LintContext) -> list[_Named]:
    found: list[_Named] = []
    for ps in ctx.podsets:
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            for section in ("limits", "requests"):
                other = c.resources("requests" if section == "limits" else "limits")
                for name, _value in container_resource_items(c, section):
                    if section == "requests" and name in other:
                        continue  # reported once, on the limit
                    found.append((ps, holder, c, section, name))
    return found


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
    summary="GPU-looking resource name no device plugin exposes (gpu, nvidia.com/cuda, malformed MIG names); "
    "ctx: any extended resource no node advertises",
    context="optional",
)
def gpu_unknown_resource_name(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.resources import resource_name_typo, suspicious_gpu_name  # deferred for start-up time

    advertised = _advertised(ctx)
    have_nodes = bool(ctx.cluster is not None and ctx.cluster.nodes)
    for ps, holder, c, section, name in _named_resources(ctx):
        path = (*c.path, "resources", section, name)
        if resource_name_typo(name) is not None and name not in advertised:
            continue  # one edit from a real name: gpu-resource-name-typo says which
        better = suspicious_gpu_name(name)
        if better is not None and better != name:
            api = (
                'the API server rejects it ("must be a standard resource for containers")'
                if "/" not in name
                else f'no device plugin advertises it, so the pod stays Pending ("Insufficient {name}")'
            )
            yield ctx.report(holder, path, f"{where(ps, c)} asks for {name}: {api}", f"use {better}")
        elif (
            have_nodes and is_extended_resource(name) and name not in advertised and not _is_mig_profile(name)
        ):  # mig-profile-unknown says it more precisely
            yield ctx.report(
                holder,
                path,
                f"{where(ps, c)} asks for {name}, which no node of the cluster advertises: "
                f'the pod stays Pending ("Insufficient {name}")',
                "use a resource name from `kubectl describe node` Allocatable, or install the device "
                "plugin that provides it",
            )


def _not_found(name: str) -> str:
    """What happens to a pod asking for a resource no node has, as the API and scheduler say it."""
    if "/" not in name:
        return 'the API server rejects it ("must be a standard resource for containers")'
    return (
        f'no device plugin advertises it, so the pod stays Pending ("Insufficient {name}") and never '
        "gets the device"
    )


@rule(
    id="gpu-resource-name-typo",
    severity="error",
    category="gpu",
    summary="resource name one edit (or only case) away from a known accelerator resource "
    "(nvidia.com/gpus, nvidia.com/GPU, nvidia/gpu, amd.com/gpus): the pod never gets the device",
    fixable=True,
    fix_safety="unsafe",
)
def gpu_resource_name_typo(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.resources import resource_name_typo  # deferred for start-up time

    advertised = _advertised(ctx)
    for ps, holder, c, section, name in _named_resources(ctx):
        known = resource_name_typo(name)
        if known is None or name in advertised:
            continue
        path = (*c.path, "resources", section, name)
        patch = []
        for block in ("limits", "requests"):
            entries = c.resources(block)
            if name in entries and known not in entries:
                patch.append(RenameKey((*c.path, "resources", block, name), known))
        how = (
            f"which differs only in case from {known} (resource names are case-sensitive)"
            if name.lower() == known
            else f"a misspelling of {known}"
        )
        yield ctx.report(
            holder,
            path,
            f"{where(ps, c)} asks for {name}, {how}: {_not_found(name)}.",
            f"use {known}",
            patch=patch if all(ctx.writable(ps, op.path) for op in patch) else (),
        )
