"""One definition of "this pod asks for accelerators" (gpuplane.gpu.requests), shared by
diagnose's facts and the inventory's GPU-pod count."""

from __future__ import annotations

from typing import Any

from gpuplane.gpu.requests import device_requests, pod_device_requests, pod_uses_gpus
from gpuplane.k8s.objects import pod_from_dict


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Any:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def _c(limits: dict[str, Any] | None = None, requests: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"name": "c", "image": "i", "resources": resources}


def test_whole_mig_and_shared_devices_count() -> None:
    pod = _pod(
        [_c({"nvidia.com/gpu": 2}), _c({"nvidia.com/mig-1g.10gb": 1}), _c({"nvidia.com/gpu.shared": 1})]
    )
    assert pod_device_requests(pod) == {
        "nvidia.com/gpu": 2,
        "nvidia.com/mig-1g.10gb": 1,
        "nvidia.com/gpu.shared": 1,
    }


def test_init_container_takes_the_max_as_pod_requests_does() -> None:
    # resource.PodRequests: max(sum of app containers, largest init container)
    pod = _pod([_c({"nvidia.com/gpu": 1})], init=[_c({"nvidia.com/gpu": 4})])
    assert pod_device_requests(pod) == {"nvidia.com/gpu": 4}


def test_a_zero_count_is_not_a_gpu_pod() -> None:
    # Inventory used to count a pod with nvidia.com/gpu: 0 as a GPU pod; no device is allocated.
    assert not pod_uses_gpus(_pod([_c({"nvidia.com/gpu": 0, "cpu": "1"})]))
    assert pod_uses_gpus(_pod([_c({"nvidia.com/gpu": 1})]))


def test_non_device_resources_are_not_gpu_requests() -> None:
    assert device_requests({"cpu": 1000, "memory": 1 << 30, "nvidia.com/gpumem": 4096}) == {}
