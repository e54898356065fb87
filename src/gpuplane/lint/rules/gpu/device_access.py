"""Reaching GPUs around the device plugin: ``NVIDIA_VISIBLE_DEVICES``, privileged
containers, CUDA images that request no GPU (NVIDIA container toolkit behaviour).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint import kinds
from gpuplane.lint.context import ALL_SECTIONS, ContainerRef, LintContext, pod_spec
from gpuplane.lint.finding import AppendItem, Finding
from gpuplane.lint.rules._common import where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet


_INDEX_LIST = LazyPattern(r"^\s*[0-9A-Za-z-]+(\s*,\s*[0-9A-Za-z-]+)*\s*$")
_NO_DEVICES = {"void", "none", ""}


@rule(
    id="gpu-visible-devices-env",
    severity="warning",
    category="gpu",
    summary="container sets NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES to bypass the device plugin",
)
def gpu_visible_devices_env(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if kinds.is_daemon(ps):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            allocated = sum(c.gpu_requests().values())
            for i, var in c.env():
                name = var.get("name")
                if name not in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") or "valueFrom" in var:
                    continue
                value = str(var.get("value") if var.get("value") is not None else "").strip()
                path = (*c.path, "env", i, "value")
                if name == "NVIDIA_VISIBLE_DEVICES":
                    if value.lower() in _NO_DEVICES:
                        continue
                    yield ctx.report(
                        holder,
                        path,
                        f"{where(ps, c)} sets NVIDIA_VISIBLE_DEVICES={value}: the runtime injects those GPUs "
                        "outside the device plugin's allocation",
                        "remove the variable and request GPUs in resources.limits (containers that need no GPU: "
                        "NVIDIA_VISIBLE_DEVICES=void)",
                    )
                elif _INDEX_LIST.match(value) and allocated and len(value.split(",")) > allocated:
                    yield ctx.report(
                        holder,
                        path,
                        f"{where(ps, c)} sets CUDA_VISIBLE_DEVICES={value} ({len(value.split(','))} devices) but "
                        f"is allocated {allocated}: the extra indices do not exist in the container",
                        "remove CUDA_VISIBLE_DEVICES (the container already sees exactly its allocated GPUs) or "
                        "request as many GPUs as it names",
                    )


def _targets_gpu_nodes(ps: PodSet) -> bool:
    # deferred for start-up time
    from gpuplane.lint.rules._common import GPU_LABELS, node_selector, required_terms, term_expressions

    if any(k in GPU_LABELS for k in node_selector(ps)):
        return True
    for term in required_terms(ps):
        if any(e.get("key") in GPU_LABELS for e in term_expressions(term)):
            return True
    tols = pod_spec(ps).get("tolerations")
    return isinstance(tols, list) and any(
        isinstance(t, dict) and str(t.get("key", "")).endswith(("/gpu", "gpu")) for t in tols
    )


@rule(
    id="gpu-privileged-access",
    severity="warning",
    category="gpu",
    summary="privileged container or /dev/nvidia* hostPath on a GPU pod: sees every GPU of the node",
)
def gpu_privileged_access(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if kinds.is_daemon(ps) or not (ctx.is_gpu(ps) or _targets_gpu_nodes(ps)):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps, ALL_SECTIONS):
            sc = c.data.get("securityContext")
            if not isinstance(sc, dict):
                continue
            if sc.get("privileged") is True:
                yield ctx.report(
                    holder,
                    (*c.path, "securityContext", "privileged"),
                    f"{where(ps, c)} is privileged on a GPU pod: it sees every GPU of the node",
                    "remove privileged: true and request GPUs in resources.limits",
                )
                continue
            caps = sc.get("capabilities")
            added = caps.get("add") if isinstance(caps, dict) else None
            if isinstance(added, list):
                for j, cap in enumerate(added):
                    if str(cap).upper() in ("SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"):
                        yield ctx.report(
                            holder,
                            (*c.path, "securityContext", "capabilities", "add", j),
                            f"{where(ps, c)} adds {cap}: the NVIDIA runtime treats it as privileged "
                            "and exposes every GPU of the node",
                            f"drop {cap}; add only the capability the workload needs",
                        )
        volumes = pod_spec(ps).get("volumes")
        for i, vol in enumerate(volumes if isinstance(volumes, list) else ()):
            host = vol.get("hostPath") if isinstance(vol, dict) else None
            path = str(host.get("path", "")) if isinstance(host, dict) else ""
            if path.rstrip("/") == "/dev" or path.startswith("/dev/nvidia") or path.startswith("/dev/dri"):
                yield ctx.report(
                    holder,
                    (*ps.spec_path, "volumes", i, "hostPath", "path"),
                    f"{where(ps)} mounts host {path}: GPU devices outside the device plugin's allocation",
                    "remove the hostPath volume; request GPUs in resources.limits",
                )


_CUDA_IMAGE = LazyPattern(
    r"(^|/)nvidia/cuda[:@]|nvcr\.io/nvidia/|cuda|-gpu\b|[:-]gpu$|vllm|tritonserver|tensorrt|"
    r"text-generation-inference|pytorch/pytorch:.*cuda|rapidsai/|sglang",
)


def _misspelled_request(c: ContainerRef) -> bool:
    """The container asks for a misspelled accelerator resource (``nvidia.com/gpus``)."""
    from gpuplane.gpu.resources import resource_name_typo, suspicious_gpu_name  # deferred for start-up time

    return any(
        isinstance(name, str)
        and (resource_name_typo(name) is not None or suspicious_gpu_name(name) is not None)
        for block in ("limits", "requests")
        for name in c.resources(block)
    )


@rule(
    id="gpu-unrequested-cuda-image",
    severity="info",
    category="gpu",
    summary="CUDA/GPU framework image with no GPU request and no NVIDIA_VISIBLE_DEVICES=void: may see all GPUs",
    fixable=True,
    fix_safety="unsafe",
    tier="opt-in",
)
def gpu_unrequested_cuda_image(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if kinds.is_daemon(ps):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            image = c.data.get("image")
            if not isinstance(image, str) or not _CUDA_IMAGE.search(image.lower()):
                continue
            if c.gpu_requests() or kinds.names_accelerator(c.data):
                continue  # any GPU request counts, even an invalid one (gpu-fractional-quantity reports that)
            if _misspelled_request(c):
                # it does ask for a GPU, under a wrong name (gpu-resource-name-typo): hiding every GPU
                # with NVIDIA_VISIBLE_DEVICES=void would bury that bug under a second one
                continue
            res = c.data.get("resources")
            if isinstance(res, dict) and res.get("claims"):
                continue  # DRA claim: the DRA driver controls which devices are visible
            if any(var.get("name") == "NVIDIA_VISIBLE_DEVICES" for _, var in c.env()):
                continue
            patch = (
                ()
                if ps.synthetic
                else (AppendItem((*c.path, "env"), {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}),)
            )
            yield ctx.report(
                holder,
                (*c.path, "image"),
                f"{where(ps, c)} runs GPU image {image} without requesting a GPU: where nvidia is the default "
                "runtime it sees every GPU of the node",
                "add env NVIDIA_VISIBLE_DEVICES=void (or request the GPU it needs in resources.limits)",
                patch=patch,
            )
