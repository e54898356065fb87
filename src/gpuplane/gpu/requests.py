"""What counts as a pod asking for accelerators: one definition for diagnose, inventory and why-pending.

A pod uses GPUs when its effective request (``resource.PodRequests`` of
``staging/src/k8s.io/component-helpers/resource/helpers.go``: the larger of the app containers'
sum and the largest init container, extended-resource requests defaulted from limits) holds a
positive count of a device resource (:func:`gpuplane.gpu.resources.is_gpu_resource`: whole GPUs,
MIG slices, shared replicas). A zero count allocates no device: the device plugin's Allocate is
never called for it, so such a pod is not a GPU pod.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.requests import pod_requests


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
