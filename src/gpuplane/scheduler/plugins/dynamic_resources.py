"""DynamicResources (DRA): ResourceClaims, DeviceClasses and the devices ResourceSlices publish.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
(in the default profile, just before DefaultPreemption, from v1.34 when DRA went GA and on by
default). Every rejection is ``statusUnschedulable`` = UnschedulableAndUnresolvable.
PreEnqueue (``foreachPodResourceClaim``): every claim must exist, a template claim must have
been created (``pod.status.resourceClaimStatuses``, ``resourceclaim.Name`` in
k8s.io/dynamic-resource-allocation), not be deleting, and a template claim must be controlled by
the pod (``resourceclaim.IsForPod``); otherwise the pod never enters the active queue, so it
is never tried and no FailedScheduling event is written.
PreFilter: claims not reserved for too many other pods, and their device classes must exist.
Filter: an allocated claim must reach the node (its allocation node selector); unallocated
claims need enough free devices of the class's driver on the node (``cannot allocate all
claims``). Device selectors are CEL; gpuplane reads the driver from the usual
``device.driver == "..."`` selector and counts devices, it does not evaluate other CEL.
PostFilter (v1.34-v1.36) adds its no-op text before the preemption clause: see preemption.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from gpuplane.k8s.objects import NodeSelector
from gpuplane.k8s.selectors import node_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.sources.manifest import Manifest

NAME = "DynamicResources"
GROUP = "resource.k8s.io"
# dynamicresources.go PreFilter / Filter texts
ERR_CLAIM_NOT_FOUND = 'resourceclaim.resource.k8s.io "{}" not found'
ERR_CLAIM_NOT_CREATED = 'pod "{}/{}": ResourceClaim not created yet'
ERR_CLAIM_NOT_OWNED = "ResourceClaim {}/{} was not created for pod {}/{} (pod is not owner)"
ERR_CLAIM_DELETING = 'resourceclaim "{}" is being deleted'
ERR_CLAIM_IN_USE = "resourceclaim in use"
ERR_NO_DEVICE_CLASS = "request {}: device class {} does not exist"
ERR_NOT_ON_NODE = "resourceclaim not available on the node"
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
_DRIVER_RE = re.compile(r"""device\.driver\s*==\s*["']([^"']+)["']""")


def _requests(claim: Manifest) -> list[tuple[str, str, int, bool]]:
    """``(name, deviceClassName, count, all)`` per request (v1 ``exactly`` or v1beta1 flat)."""
    out: list[tuple[str, str, int, bool]] = []
    for req in claim.get("spec", "devices", "requests", default=[]) or []:
        if not isinstance(req, dict):
            continue
        exactly = req.get("exactly")
        body = exactly if isinstance(exactly, dict) else req
        mode = body.get("allocationMode") or "ExactCount"
        count = body.get("count") or 1
        out.append(
            (str(req.get("name", "")), str(body.get("deviceClassName", "")), int(count), mode == "All")
        )
    return out


def _class_driver(device_class: Manifest) -> str | None:
    for sel in device_class.get("spec", "selectors", default=[]) or []:
        expr = (sel.get("cel") or {}).get("expression", "") if isinstance(sel, dict) else ""
        match = _DRIVER_RE.search(expr or "")
        if match:
            return match.group(1)
    return None


def _slices_by_node(ctx: PodContext) -> dict[str, list[tuple[str, str, str]]]:
    """Node name -> ``(driver, pool, device)`` of the devices its ResourceSlices publish."""
    cached = ctx.index.cache.get(NAME + "/slices")
    if cached is None:
        cached = {}
        for obj in ctx.index.cluster.by_kind("ResourceSlice", GROUP):
            node = obj.get("spec", "nodeName")
            if not node:
                continue
            driver = str(obj.get("spec", "driver") or "")
            pool = str(obj.get("spec", "pool", "name") or "")
            for dev in obj.get("spec", "devices", default=[]) or []:
                if isinstance(dev, dict):
                    cached.setdefault(node, []).append((driver, pool, str(dev.get("name", ""))))
        ctx.index.cache[NAME + "/slices"] = cached
    return cached


def _allocated_devices(ctx: PodContext) -> set[tuple[str, str, str]]:
    cached = ctx.index.cache.get(NAME + "/allocated")
    if cached is None:
        cached = set()
        for obj in ctx.index.cluster.by_kind("ResourceClaim", GROUP):
            for res in obj.get("status", "allocation", "devices", "results", default=[]) or []:
                if isinstance(res, dict):
                    cached.add(
                        (str(res.get("driver", "")), str(res.get("pool", "")), str(res.get("device", "")))
                    )
        ctx.index.cache[NAME + "/allocated"] = cached
    return cached


def pod_claims(ctx: PodContext) -> tuple[list[Manifest], str]:
    """The pod's ResourceClaims as ``foreachPodResourceClaim`` resolves them, or the first error.

    A claim by name is looked up as is; a template claim through the pod's
    ``status.resourceClaimStatuses`` (``resourceclaim.Name``: no entry yet is ``ResourceClaim not
    created yet``, an entry without a claim name means no claim is needed) and must be
    controlled by the pod. A claim being deleted is an error too.
    """
    pod = ctx.pod
    ns = ctx.namespace
    by_name = {
        c.name: c
        for c in ctx.index.cluster.by_kind("ResourceClaim", GROUP)
        if (c.namespace or "default") == ns
    }
    statuses = {s.name: s for s in pod.status.resource_claim_statuses}
    found: list[Manifest] = []
    for ref in pod.spec.resource_claims:
        if ref.resource_claim_name:
            name, check_owner = ref.resource_claim_name, False
        elif ref.resource_claim_template_name:
            status = statuses.get(ref.name)
            if status is None:
                return [], ERR_CLAIM_NOT_CREATED.format(ns, pod.metadata.name)
            if status.resource_claim_name is None:
                continue
            name, check_owner = status.resource_claim_name, True
        else:
            continue  # the API server refuses a claim naming neither
        claim = by_name.get(name)
        if claim is None:
            return [], ERR_CLAIM_NOT_FOUND.format(name)
        if claim.metadata.get("deletionTimestamp"):
            return [], ERR_CLAIM_DELETING.format(claim.name)
        if check_owner and not any(
            isinstance(o, dict) and o.get("controller") is True and o.get("uid") == pod.metadata.uid
            for o in claim.metadata.get("ownerReferences") or ()
        ):
            return [], ERR_CLAIM_NOT_OWNED.format(ns, claim.name, ns, pod.metadata.name)
        found.append(claim)
    return found, ""


@dataclass(slots=True)
class ClaimsState:
    """PreFilter's state: the pod's claims and the cluster's DeviceClasses by name."""

    claims: list[Manifest] = field(default_factory=list)
    classes: dict[str, Manifest] = field(default_factory=dict)


class DynamicResources(FilterPlugin):
    name = NAME
    prefilter_on_skip = True

    def relevant(self, ctx: PodContext) -> bool:
        return bool(ctx.pod.spec.resource_claims)

    def pre_enqueue(self, ctx: PodContext) -> Status | None:
        if not ctx.pod.spec.resource_claims:
            return None
        _, error = pod_claims(ctx)
        return unresolvable(NAME, error) if error else None

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        ctx.state.write(ClaimsState())  # upstream writes its state first: PostFilter can read it
        if not ctx.pod.spec.resource_claims:
            return None, None
        classes = {c.name: c for c in ctx.index.cluster.by_kind("DeviceClass", GROUP)}
        found, error = pod_claims(ctx)
        if error:
            return None, unresolvable(NAME, error)
        for claim in found:
            reserved = claim.get("status", "reservedFor", default=[]) or []
            if (
                claim.get("status", "allocation")
                and reserved
                and not any(isinstance(r, dict) and r.get("uid") == ctx.pod.metadata.uid for r in reserved)
                and len(reserved) >= 256
            ):
                return None, unresolvable(NAME, ERR_CLAIM_IN_USE)
            if not claim.get("status", "allocation"):
                for req_name, class_name, _, _ in _requests(claim):
                    if class_name not in classes:
                        return None, unresolvable(NAME, ERR_NO_DEVICE_CLASS.format(req_name, class_name))
        ctx.state.write(ClaimsState(found, classes))
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.read(ClaimsState)
        if state is None or not state.claims:
            return None
        claims, classes = state.claims, state.classes
        devices = _slices_by_node(ctx).get(node.name, [])
        allocated = _allocated_devices(ctx)
        free: dict[str, int] = {}
        for driver, pool, dev in devices:
            if (driver, pool, dev) not in allocated:
                free[driver] = free.get(driver, 0) + 1
        for claim in claims:
            allocation = claim.get("status", "allocation")
            if allocation:
                raw = allocation.get("nodeSelector") if isinstance(allocation, dict) else None
                if raw:
                    try:
                        selector = msgspec.convert(raw, NodeSelector, strict=False)
                    except msgspec.ValidationError:
                        selector = None
                    if selector is not None and not node_selector_matches(selector, node.node):
                        return unresolvable(NAME, ERR_NOT_ON_NODE)
                continue
            for _, class_name, count, all_mode in _requests(claim):
                class_driver = _class_driver(classes[class_name]) if class_name in classes else None
                available = free.get(class_driver, 0) if class_driver else sum(free.values())
                need = max(available, 1) if all_mode else count
                if available < need:
                    return unresolvable(NAME, ERR_CANNOT_ALLOCATE)
                if class_driver:
                    free[class_driver] = available - need
        return None


def postfilter_text(ctx: PodContext, prefilter_reached: bool) -> tuple[str, bool]:
    """The DynamicResources PostFilter text and whether it aborts PostFilter (Error status).

    dynamicresources.go PostFilter: reading its cycle state fails (``not found``, an Error
    that stops the PostFilter loop) when an earlier PreFilter rejected the pod; no claims gives
    ``no new claims to deallocate``; claims that cannot be deallocated give
    ``still not schedulable`` (``deallocation of ResourceClaim completed`` when an allocated,
    unreserved claim is released for another try).
    """
    del prefilter_reached  # the state itself says whether this plugin's PreFilter ran
    state = ctx.state.read(ClaimsState)
    if state is None:
        return "not found", True
    claims = state.claims
    if not claims:
        return "no new claims to deallocate", False
    for claim in claims:
        if claim.get("status", "allocation") and not claim.get("status", "reservedFor"):
            return "deallocation of ResourceClaim completed", False
    return "still not schedulable", False
