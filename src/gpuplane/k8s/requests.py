"""A pod's effective resource requests and limits, exactly as kube-scheduler computes them.

Sources (kubernetes/kubernetes):

* ``staging/src/k8s.io/component-helpers/resource/helpers.go``: ``PodRequests``,
  ``AggregateContainerRequests``, ``aggregateContainerResourcesByFn`` (the KEP-753 sidecar
  formula), ``PodLimits`` (overhead only on non-zero limits), ``applyNonMissing``.
* ``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod``: a resource with a limit and no
  request gets ``request = limit``, for app and init containers alike.
* ``pkg/scheduler/framework/types.go`` ``calculateResource`` /
  ``getNonMissingContainerRequests`` and ``pkg/scheduler/util/pod_resources.go``: for scoring,
  a container that does not name cpu or memory counts ``DefaultMilliCPURequest`` (100m) and
  ``DefaultMemoryRequest`` (200Mi); an explicit ``0`` stays 0.
* ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (``computePodResourceRequest``) and
  ``framework.Resource.Add``: cpu is compared in millicores (``MilliValue``), every other
  resource by ``Value()``; both taken on the *summed* quantity, not per container.

Why nano-units: quantities are summed exactly (``resource.Quantity.Add`` is exact) and only
the pod total is rounded, so summing ``int`` nano counts gives upstream's answer bit for bit
while staying fast enough for 150,000 pods.

Pod-level resources (``spec.resources``, PodLevelResources, beta and on by default since
v1.34) replace the aggregate for cpu, memory and ``hugepages-*`` when the pod sets them; the
typed :class:`~gpuplane.k8s.objects.PodSpec` does not carry that field yet, so it is read
only when present.

A quantity that does not parse raises :class:`~gpuplane.k8s.quantity.QuantityError` naming
the container and resource; the API server would have rejected such a pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from gpuplane.k8s.quantity import NANO, QuantityError, nano_value

if TYPE_CHECKING:  # annotations only: importing this must not load msgspec (one-file lint)
    from gpuplane.k8s.objects import Container, Pod

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "aggregate_requests",
    "container_limits",
    "container_requests",
    "format_amount",
    "pod_limits",
    "pod_nonzero_requests",
    "pod_request_nanos",
    "pod_requests",
    "to_scheduler_units",
]

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"

# pkg/scheduler/util/pod_resources.go
DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB

_MILLI_DIVISOR = NANO // 1000
_MAX_INT64 = (1 << 63) - 1
# The scoring defaults in nano-units, applied per container where the key is missing.
_NON_MISSING_NANOS = {CPU: DEFAULT_MILLI_CPU_REQUEST * _MILLI_DIVISOR, MEMORY: DEFAULT_MEMORY_REQUEST * NANO}

Nanos = dict[str, int]


def _nanos(values: Mapping[str, Any], where: str, container: Container | None = None) -> Nanos:
    """A ResourceList as exact nano-units, re-raising parse errors with their location.

    The location text is only built on failure: this runs for every container of every pod.
    """
    out: Nanos = {}
    try:
        for name, q in values.items():
            out[name] = nano_value(q)
    except QuantityError as err:
        bad = next(n for n in values if n not in out)
        prefix = f"container {container.name!r}: " if container is not None else ""
        raise QuantityError(f"{prefix}{where}[{bad}]: Invalid value: {values[bad]!r}: {err}") from None
    return out


def _container_request_nanos(c: Container) -> Nanos:
    """Requests after API defaulting: every limit without a request becomes the request."""
    res = c.resources
    requests = res.requests
    limits = res.limits
    if not limits:
        return _nanos(requests, "resources.requests", c) if requests else {}
    out = _nanos(requests, "resources.requests", c) if requests else {}
    for name, q in limits.items():
        if name not in out:
            out.update(_nanos({name: q}, "resources.limits", c))
    return out


def _container_limit_nanos(c: Container) -> Nanos:
    limits = c.resources.limits
    return _nanos(limits, "resources.limits", c) if limits else {}


def to_scheduler_units(nanos: Mapping[str, int]) -> dict[str, int]:
    """Nano-unit totals in the scheduler's units: cpu via ``MilliValue``, others via ``Value``.

    Both round away from zero, as ``Quantity.ScaledValue`` does for the int64 form, and
    saturate at the int64 rails like upstream (:func:`gpuplane.k8s.quantity.saturate_int64`).
    """
    out: dict[str, int] = {}
    for name, n in nanos.items():
        div = _MILLI_DIVISOR if name == CPU else NANO
        q = -(-abs(n) // div)  # magnitude rounded up
        if q > _MAX_INT64:
            q = _MAX_INT64 if n >= 0 else _MAX_INT64 + 1
        out[name] = q if n >= 0 else -q
    return out


def container_requests(c: Container) -> dict[str, int]:
    """One container's requests (limits fill missing requests); cpu in millicores."""
    return to_scheduler_units(_container_request_nanos(c))


def container_limits(c: Container) -> dict[str, int]:
    """One container's limits; cpu in millicores, everything else via ``Value()``."""
    return to_scheduler_units(_container_limit_nanos(c))


def _add(into: Nanos, other: Mapping[str, int]) -> None:
    for name, n in other.items():
        into[name] = into.get(name, 0) + n


def _max_into(into: Nanos, other: Mapping[str, int]) -> None:
    for name, n in other.items():
        cur = into.get(name)
        if cur is None or n > cur:
            into[name] = n


def _aggregate(pod: Pod, per_container: Any, non_missing: Mapping[str, int] | None) -> Nanos:
    """``aggregateContainerResourcesByFn``: app containers plus the KEP-753 init formula.

    Sidecars (init containers with ``restartPolicy: Always``) add to the running total and
    to a cumulative sidecar sum; each init container's usage while it runs is its own
    request plus the sidecars started before it; the pod needs the max of the two.
    """
    spec = pod.spec
    result: Nanos = {}
    for c in spec.containers:
        res = per_container(c)
        if non_missing:
            res = _apply_non_missing(res, non_missing)
        _add(result, res)
    if not spec.init_containers:
        return result
    inits = []
    for c in spec.init_containers:
        res = per_container(c)
        if non_missing:
            res = _apply_non_missing(res, non_missing)
        inits.append((res, c.restart_policy == "Always"))
    _add_init_containers(result, inits)
    return result


def _add_init_containers(result: dict[str, int], inits: Iterable[tuple[Mapping[str, int], bool]]) -> None:
    """The init-container half of ``aggregateContainerResourcesByFn`` (KEP-753), into ``result``.

    ``inits`` are ``(requests, is_sidecar)`` in spec order. A sidecar (``restartPolicy:
    Always``) keeps running: it adds to the pod total and to every later init container's
    usage; a regular init container's usage is its own request plus the sidecars started
    before it. The pod needs the larger of the running total and the largest init usage.
    """
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for res, sidecar in inits:
        if sidecar:
            _add(result, res)
            _add(sidecars, res)
            _max_into(init_max, sidecars)
        else:
            combined = dict(res)
            _add(combined, sidecars)
            _max_into(init_max, combined)
    _max_into(result, init_max)


def aggregate_requests(
    spec: Mapping[str, Any],
    per_container: Callable[[dict[str, Any]], Mapping[str, int]],
) -> dict[str, int]:
    """``PodRequests``'s container formula on a plain pod-spec dict (a manifest's template).

    ``per_container`` gives one container dict's amounts in any additive unit (device counts,
    nano-units); the result is the pod's, with sidecars handled as upstream does
    (``aggregateContainerResourcesByFn`` in component-helpers/resource/helpers.go). For rules
    that read manifests as dicts and need only a few resources: no typed :class:`Pod` is built.
    Malformed entries (a container that is not a mapping) are skipped, as the rules skip them.
    """
    result: dict[str, int] = {}
    containers = spec.get("containers")
    for c in containers if isinstance(containers, list) else ():
        if isinstance(c, dict):
            _add(result, per_container(c))
    init = spec.get("initContainers")
    if isinstance(init, list) and init:
        _add_init_containers(
            result,
            ((per_container(c), c.get("restartPolicy") == "Always") for c in init if isinstance(c, dict)),
        )
    return result


def format_amount(resource: str, amount: int) -> str:
    """An amount in scheduler units (cpu in millicores) as a person reads it: ``64 cpu``,
    ``500m cpu``, ``2Gi memory``, ``8 nvidia.com/gpu`` (QA: a cause read "64000m cpu")."""
    from gpuplane.k8s.quantity import format_quantity  # deferred for start-up time

    if resource == CPU:
        return f"{format_quantity(amount, milli=True)} cpu"
    if resource in (MEMORY, "ephemeral-storage") or resource.startswith(HUGEPAGES_PREFIX):
        return f"{format_quantity(amount, binary=True)} {resource}"
    return f"{amount} {resource}"


def _apply_non_missing(res: Nanos, non_missing: Mapping[str, int]) -> Nanos:
    """``applyNonMissing``: defaults only for names the container does not set at all."""
    missing = [name for name in non_missing if name not in res]
    if not missing:
        return res
    out = dict(res)
    for name in missing:
        out[name] = non_missing[name]
    return out


def _is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages-*."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _pod_level(pod: Pod, field: str) -> Nanos:
    """Supported pod-level requests/limits (``spec.resources``) when the spec carries them."""
    res = getattr(pod.spec, "resources", None)
    values = getattr(res, field, None) if res is not None else None
    if not values:
        return {}
    supported = {k: v for k, v in values.items() if _is_pod_level_resource(k)}
    return _nanos(supported, f"spec.resources.{field}") if supported else {}


def _pod_total(pod: Pod, field: str, per_container: Any, non_missing: Mapping[str, int] | None) -> Nanos:
    """The containers' aggregate with the pod-level values (``spec.resources``) written over it:
    the common start of ``PodRequests`` and ``PodLimits`` (kubernetes
    staging/src/k8s.io/component-helpers/resource/helpers.go), which then differ in how they add
    the overhead."""
    total = _aggregate(pod, per_container, non_missing)
    pod_level = _pod_level(pod, field)
    if pod_level:
        total.update(pod_level)
    return total


def pod_request_nanos(pod: Pod, non_missing: Mapping[str, int] | None = None) -> Nanos:
    """``PodRequests`` in exact nano-units (overhead included); the base of the others.

    ``non_missing`` maps resource names to nano-unit defaults for containers that do not
    name them (``PodResourcesOptions.NonMissingContainerRequests``).
    """
    reqs = _pod_total(pod, "requests", _container_request_nanos, non_missing)
    overhead = pod.spec.overhead
    if overhead:
        _add(reqs, _nanos(overhead, "spec.overhead"))
    return reqs


def pod_requests(pod: Pod) -> dict[str, int]:
    """What NodeResourcesFit charges a pod: cpu in millicores, the rest via ``Value()``."""
    return to_scheduler_units(pod_request_nanos(pod))


def pod_nonzero_requests(pod: Pod) -> dict[str, int]:
    """Requests for *scoring*: missing cpu/memory count 100m / 200Mi per container.

    Mirrors ``calculateResource``: without pod-level requests every container lacking a
    cpu (memory) entry gets the default; with pod-level requests the default applies only
    to a resource that neither the pod nor any container sets.
    """
    if _pod_level(pod, "requests"):
        requests = pod_request_nanos(pod)
        non_missing = {name: n for name, n in _NON_MISSING_NANOS.items() if name not in requests}
        if not non_missing:
            return to_scheduler_units(requests)
        return to_scheduler_units(pod_request_nanos(pod, non_missing))
    return to_scheduler_units(pod_request_nanos(pod, _NON_MISSING_NANOS))


def pod_limits(pod: Pod) -> dict[str, int]:
    """``PodLimits``: same aggregation over limits; overhead added only to non-zero limits."""
    limits = _pod_total(pod, "limits", _container_limit_nanos, None)
    overhead = pod.spec.overhead
    if overhead:
        for name, n in _nanos(overhead, "spec.overhead").items():
            cur = limits.get(name)
            if cur:
                limits[name] = cur + n
    return to_scheduler_units(limits)
