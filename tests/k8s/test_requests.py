"""Pod effective requests/limits as kube-scheduler computes them.

Cases from kubernetes/kubernetes ``staging/src/k8s.io/component-helpers/resource/helpers_test.go``
(TestPodRequestsAndLimits*: "multiple restartable init containers" -> 7,
"multiple restartable and regular init containers" -> 8), the ``PodRequests`` doc
example (init 2cpu/1G, 2cpu/3G; containers 2cpu/1G, 1cpu/1G -> 3 cpu, 3G), KEP-753
"Resources calculation for scheduling and pod admission", and
``pkg/scheduler/framework/types.go`` ``calculateResource`` (non-zero defaults).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.k8s.objects import Pod, pod_from_dict
from gpuplane.k8s.quantity import QuantityError
from gpuplane.k8s.requests import (
    DEFAULT_MEMORY_REQUEST,
    container_limits,
    container_requests,
    pod_limits,
    pod_nonzero_requests,
    pod_request_nanos,
    pod_requests,
)

MI = 1024 * 1024


def ctr(
    name: str,
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    sidecar: bool = False,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "resources": {}}
    if requests is not None:
        c["resources"]["requests"] = requests
    if limits is not None:
        c["resources"]["limits"] = limits
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None, **spec: Any) -> Pod:
    return pod_from_dict(
        {"metadata": {"name": "p"}, "spec": {"containers": containers, "initContainers": init or [], **spec}}
    )


def test_sum_of_app_containers() -> None:
    p = pod([ctr("a", {"cpu": "500m", "memory": "1Gi"}), ctr("b", {"cpu": 1, "nvidia.com/gpu": "1"})])
    assert pod_requests(p) == {"cpu": 1500, "memory": 1024 * MI, "nvidia.com/gpu": 1}


def test_podrequests_doc_example() -> None:
    p = pod(
        [ctr("c1", {"cpu": "2", "memory": "1G"}), ctr("c2", {"cpu": "1", "memory": "1G"})],
        init=[ctr("i1", {"cpu": "2", "memory": "1G"}), ctr("i2", {"cpu": "2", "memory": "3G"})],
    )
    assert pod_requests(p) == {"cpu": 3000, "memory": 3 * 10**9}


def test_restartable_init_adds() -> None:
    p = pod([ctr("c1", {"cpu": "1"})], init=[ctr("ri1", {"cpu": "1"}, sidecar=True)])
    assert pod_requests(p) == {"cpu": 2000}


def test_multiple_restartable_init_containers() -> None:
    # helpers_test.go: max(5, (1+2+3) + 1) = 7
    p = pod(
        [ctr("c1", {"cpu": "1"})],
        init=[
            ctr("init-1", {"cpu": "5"}),
            ctr("ri1", {"cpu": "1"}, sidecar=True),
            ctr("ri2", {"cpu": "2"}, sidecar=True),
            ctr("ri3", {"cpu": "3"}, sidecar=True),
        ],
    )
    assert pod_requests(p) == {"cpu": 7000}


def test_multiple_restartable_and_regular_init_containers() -> None:
    # helpers_test.go: init-2 needs 5 + sidecars started before it (1+2) = 8; ri3 starts after.
    p = pod(
        [ctr("c1", {"cpu": "1"})],
        init=[
            ctr("init-1", {"cpu": "5"}),
            ctr("ri1", {"cpu": "1"}, sidecar=True),
            ctr("ri2", {"cpu": "2"}, sidecar=True),
            ctr("init-2", {"cpu": "5"}),
            ctr("ri3", {"cpu": "3"}, sidecar=True),
        ],
    )
    assert pod_requests(p) == {"cpu": 8000}


def test_sidecar_order_matters() -> None:
    before = pod(
        [ctr("c", {"cpu": "1"})], init=[ctr("s", {"cpu": "2"}, sidecar=True), ctr("i", {"cpu": "4"})]
    )
    after = pod([ctr("c", {"cpu": "1"})], init=[ctr("i", {"cpu": "4"}), ctr("s", {"cpu": "2"}, sidecar=True)])
    assert pod_requests(before) == {"cpu": 6000}  # init runs beside the sidecar: 4 + 2
    assert pod_requests(after) == {"cpu": 4000}  # max(4, 1 + 2)


def test_limits_default_requests() -> None:
    c = ctr("gpu", {"cpu": "1"}, {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 2})
    p = pod([c])
    assert container_requests(p.spec.containers[0]) == {"cpu": 1000, "memory": 4096 * MI, "nvidia.com/gpu": 2}
    assert container_limits(p.spec.containers[0]) == {"cpu": 2000, "memory": 4096 * MI, "nvidia.com/gpu": 2}
    assert pod_requests(p) == {"cpu": 1000, "memory": 4096 * MI, "nvidia.com/gpu": 2}


def test_overhead_added_to_requests_and_non_zero_limits() -> None:
    p = pod(
        [ctr("c", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2"})], overhead={"cpu": "250m", "memory": "120Mi"}
    )
    assert pod_requests(p) == {"cpu": 1250, "memory": 1144 * MI}
    # PodLimits: overhead only where a non-zero limit exists
    assert pod_limits(p) == {"cpu": 2250}


def test_rounding_happens_on_the_pod_total() -> None:
    # Two 0.5m requests sum to exactly 1m (Quantity.Add is exact; MilliValue on the sum).
    p = pod([ctr("a", {"cpu": "0.5m"}), ctr("b", {"cpu": "0.5m"})])
    assert pod_requests(p) == {"cpu": 1}
    p = pod([ctr("a", {"memory": "0.5"}), ctr("b", {"memory": "0.25"})])
    assert pod_requests(p) == {"memory": 1}
    assert pod_request_nanos(p) == {"memory": 750_000_000}


def test_nonzero_requests_defaults_per_container() -> None:
    p = pod([ctr("a"), ctr("b", {"cpu": "300m"}), ctr("c", {"cpu": "0", "memory": "0"})])
    assert pod_requests(p) == {"cpu": 300, "memory": 0}
    # a: 100m + 200Mi; b: 300m + 200Mi; c: explicit zeros stay zero
    assert pod_nonzero_requests(p) == {"cpu": 400, "memory": 2 * DEFAULT_MEMORY_REQUEST}


def test_nonzero_requests_apply_to_init_containers() -> None:
    p = pod([ctr("a", {"cpu": "50m", "memory": "10Mi"})], init=[ctr("i")])
    assert pod_nonzero_requests(p) == {"cpu": 100, "memory": 200 * MI}


def test_empty_pod() -> None:
    p = pod([ctr("a")])
    assert pod_requests(p) == {}
    assert pod_limits(p) == {}
    assert pod_nonzero_requests(p) == {"cpu": 100, "memory": 200 * MI}


def test_bad_quantity_names_container_and_resource() -> None:
    p = pod([ctr("trainer", {"memory": "1KB"})])
    with pytest.raises(QuantityError) as err:
        pod_requests(p)
    assert str(err.value) == (
        "container 'trainer': resources.requests[memory]: Invalid value: '1KB': "
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


# -- dict-level variant (lint reads manifests as dicts) --------------------------------------


def _spec(init: list[dict[str, Any]], app: list[dict[str, Any]]) -> dict[str, Any]:
    return {"initContainers": init, "containers": app}


def _gpus(c: dict[str, Any]) -> dict[str, int]:
    limits = c.get("resources", {}).get("limits", {})
    return {k: int(v) for k, v in limits.items()}


def test_aggregate_requests_matches_pod_requests_with_sidecars() -> None:
    """Same KEP-753 formula as pod_requests: helpers_test.go "multiple restartable and regular
    init containers" shape (sidecars add to the total and to later init containers)."""
    from gpuplane.k8s.requests import aggregate_requests

    init = [
        ctr("s1", limits={"cpu": "1"}, sidecar=True),
        ctr("i1", limits={"cpu": "5"}),
        ctr("s2", limits={"cpu": "2"}, sidecar=True),
        ctr("i2", limits={"cpu": "4"}),
    ]
    app = [ctr("a", limits={"cpu": "1"})]
    spec = _spec(init, app)
    typed = pod_requests(pod_from_dict({"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}))
    # running: 1 + 2 + 1 = 4; i1 runs beside s1: 6; i2 beside s1+s2: 7 -> 7 cores
    assert aggregate_requests(spec, _gpus) == {"cpu": 7}
    assert typed == {"cpu": 7000}


def test_aggregate_requests_skips_malformed_entries() -> None:
    from gpuplane.k8s.requests import aggregate_requests

    assert aggregate_requests({"containers": "x", "initContainers": [1, None]}, _gpus) == {}
    assert aggregate_requests({}, _gpus) == {}
