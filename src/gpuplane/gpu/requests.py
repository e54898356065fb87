"""What counts as a pod asking for accelerators: one definition for diagnose, inventory and why-pending.

A pod uses GPUs when its effective request (``resource.PodRequests`` of
``staging/src/k8s.io/component-helpers/resource/helpers.go``: the larger of the app containers'
sum and the largest init container, extended-resource requests defaulted from limits) holds a
positive count of a device resource (:func:`gpuplane.gpu.resources.is_gpu_resource`: whole GPUs,
MIG slices, shared replicas). A zero count allocates no device: the device plugin's Allocate is
never called for it, so such a pod is not a GPU pod.

Two readings of the same formula: :func:`pod_device_requests` on a typed
:class:`~gpuplane.k8s.objects.Pod` (cluster pods: diagnose, inventory), and
:func:`container_device_requests` / :func:`spec_device_requests` on the plain pod-spec dicts of
manifests (lint's ``kinds`` helpers are adapters over them). Both apply the API's defaulting (a
missing request takes the limit; an explicit request wins, ``0`` included) and the pod formula of
``PodRequests`` (sidecars included). The manifest reading counts only whole numbers (``1``,
``"2"``, ``"1000m"``): the API server refuses a fractional extended resource ("must be an
integer", ``validateResourceQuantityValue`` in pkg/apis/core/validation/validation.go), which is
its own finding (gpu-fractional-quantity), so an invalid pod never counts as a GPU pod there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpuplane.gpu.resources import classify, is_gpu_resource
from gpuplane.k8s.quantity import NANO, QuantityError, nano_value
from gpuplane.k8s.requests import aggregate_requests, pod_requests

if TYPE_CHECKING:  # annotations only: importing this must not load msgspec (one-file lint)
    from gpuplane.k8s.objects import Pod

# classify() kinds that count devices of any accelerator (HAMi memory/core shares and Intel
# monitoring do not): GPUs, MIG slices, shared replicas, and TPUs/Neuron/Gaudi/Intel tiles.
ACCELERATOR_KINDS = frozenset({"gpu", "mig", "shared", "other-accelerator"})

_ACCELERATOR_NAMES: dict[str, bool] = {}


def device_requests(requests: Mapping[str, int]) -> dict[str, int]:
    """The accelerator device counts of a request map: device resources with a positive count."""
    return {name: value for name, value in requests.items() if value > 0 and is_gpu_resource(name)}


def pod_device_requests(pod: Pod) -> dict[str, int]:
    """The pod's effective accelerator requests; empty for a pod whose quantities do not parse
    (the API server would have refused it)."""
    try:
        requests = pod_requests(pod)
    except (ValueError, TypeError):
        return {}
    return device_requests(requests)


def pod_uses_gpus(pod: Pod) -> bool:
    return bool(pod_device_requests(pod))


def is_accelerator_resource(name: str) -> bool:
    """A device count of any accelerator: :func:`~gpuplane.gpu.resources.is_gpu_resource` plus
    the non-GPU accelerators (TPU, Neuron, Gaudi, Intel tiles), which lint treats alike (a TPU
    training job needs a gang as much as a GPU one); cached, rules ask for every resource name."""
    found = _ACCELERATOR_NAMES.get(name)
    if found is None:
        if "/" not in name or name.startswith(("requests.", "limits.")):
            found = False
        else:
            res = classify(name)
            found = res is not None and res.kind in ACCELERATOR_KINDS
        _ACCELERATOR_NAMES[name] = found
    return found


def whole_count(value: Any) -> int | None:
    """Integer device count of a quantity (``1``, ``"2"``, ``"1000m"``), None when not a whole number."""
    if type(value) is int:
        return value
    if type(value) is str and value.isascii() and value.isdigit():
        return int(value)  # the common spelling, without the full parser
    if value is None:
        return None
    try:
        nano = nano_value(value)
    except QuantityError:
        return None
    whole, rest = divmod(nano, NANO)
    return None if rest else whole


def container_device_requests(container: Mapping[str, Any]) -> dict[str, int]:
    """Accelerator requests of one container dict, after API defaulting: ``requests`` where set
    (``0`` included: it allocates nothing), else ``limits`` (``SetDefaults_Pod`` copies a missing
    request from the limit, pkg/apis/core/v1/defaults.go); positive whole counts only."""
    res = container.get("resources")
    if not isinstance(res, dict):
        return {}
    out: dict[str, int] = {}
    for kind in ("limits", "requests"):  # requests override limits
        block = res.get(kind)
        if not isinstance(block, dict):
            continue
        for name, value in block.items():
            if isinstance(name, str) and is_accelerator_resource(name):
                count = whole_count(value)
                if count:
                    out[name] = count
                elif kind == "requests" and name in out and count == 0:
                    del out[name]
    return out


def spec_device_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    """The accelerator requests of a pod-spec dict by ``PodRequests``'s formula (app containers
    summed, init containers one at a time, sidecars added): what the scheduler reserves."""
    return {name: n for name, n in aggregate_requests(spec, container_device_requests).items() if n > 0}
