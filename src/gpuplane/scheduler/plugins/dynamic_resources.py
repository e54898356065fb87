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
claims``). A device serves a request when every selector of its DeviceClass and of the
request evaluates to true (CEL, ``dra_cel.py``); devices are taken request by request in slice
order (upstream's allocator also backtracks across requests: not modelled). A selector that
fails at runtime (a missing attribute) is a Filter error, as the allocator returns it:
``claim <ns>/<name>: selector #<i>: CEL runtime error: ...``. ResourceSlices for all nodes or
a node selector (shared devices) are not modelled: only slices with ``nodeName``.
PostFilter (v1.34-v1.36) adds its no-op text before the preemption clause: see preemption.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from gpuplane.k8s.objects import NodeSelector
from gpuplane.k8s.selectors import node_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import Code, NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.dra_cel import CelRuntimeError, device_variable
from gpuplane.scheduler.plugins.dra_cel import matches as cel_matches
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


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One request of a claim (v1 ``exactly`` or v1beta1 flat)."""

    name: str
    device_class: str
    count: int
    all: bool
    selectors: tuple[str, ...]


def _selectors(body: dict[str, Any]) -> tuple[str, ...]:
    out = []
    for sel in body.get("selectors") or ():
        expr = (sel.get("cel") or {}).get("expression") if isinstance(sel, dict) else None
        if isinstance(expr, str):
            out.append(expr)
    return tuple(out)


def _requests(claim: Manifest) -> list[DeviceRequest]:
    out: list[DeviceRequest] = []
    for req in claim.get("spec", "devices", "requests", default=[]) or []:
        if not isinstance(req, dict):
            continue
        exactly = req.get("exactly")
        body = exactly if isinstance(exactly, dict) else req
        mode = body.get("allocationMode") or "ExactCount"
        count = body.get("count") or 1
        out.append(
            DeviceRequest(
                str(req.get("name", "")),
                str(body.get("deviceClassName", "")),
                int(count),
                mode == "All",
                _selectors(body),
            )
        )
    return out


Device = tuple[str, str, str, dict[str, Any]]  # (driver, pool, name, the device variable)


def _slices_by_node(ctx: PodContext) -> dict[str, list[Device]]:
    """Node name -> the devices its ResourceSlices publish, in slice order."""
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
                    cached.setdefault(node, []).append(
                        (driver, pool, str(dev.get("name", "")), device_variable(driver, dev))
                    )
        ctx.index.cache[NAME + "/slices"] = cached
    return cached


def _selects(owner: str, expressions: tuple[str, ...], device: dict[str, Any]) -> bool:
    """Every expression true for the device (``selectorsMatch``); an expression the library
    cannot parse counts as true. ``owner`` prefixes a runtime error (``class X`` / ``claim ns/x``)."""
    for i, expression in enumerate(expressions):
        try:
            result = cel_matches(expression, device)
        except CelRuntimeError as exc:
            raise CelRuntimeError(f"{owner}: selector #{i}: CEL runtime error: {exc}") from None
        if result is False:
            return False
    return True


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
                for request in _requests(claim):
                    if request.device_class not in classes:
                        return None, unresolvable(
                            NAME, ERR_NO_DEVICE_CLASS.format(request.name, request.device_class)
                        )
        ctx.state.write(ClaimsState(found, classes))
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.read(ClaimsState)
        if state is None or not state.claims:
            return None
        claims, classes = state.claims, state.classes
        allocated = _allocated_devices(ctx)
        free = [d for d in _slices_by_node(ctx).get(node.name, []) if (d[0], d[1], d[2]) not in allocated]
        taken: set[int] = set()
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
            owner = f"claim {claim.namespace or 'default'}/{claim.name}"
            for request in _requests(claim):
                device_class = classes.get(request.device_class)
                class_selectors = (
                    _selectors(device_class.get("spec") or {}) if device_class is not None else ()
                )
                try:
                    fitting = [
                        k
                        for k, dev in enumerate(free)
                        if k not in taken
                        and _selects(f"class {request.device_class}", class_selectors, dev[3])
                        and _selects(owner, request.selectors, dev[3])
                    ]
                except CelRuntimeError as exc:
                    return Status(Code.ERROR, (str(exc),), NAME)
                need = max(len(fitting), 1) if request.all else request.count
                if len(fitting) < need:
                    return unresolvable(NAME, ERR_CANNOT_ALLOCATE)
                taken.update(fitting[:need])
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
