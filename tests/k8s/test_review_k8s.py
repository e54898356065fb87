"""Review findings in the Kubernetes model: int64 quantities, default StorageClass, Spark sizes, versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import node_from_dict, pod_from_dict
from gpuplane.k8s.quantity import milli_value, saturate_int64, scaled_ceil, value
from gpuplane.k8s.requests import pod_requests
from gpuplane.k8s.storage import default_storage_class, is_default_class
from gpuplane.k8s.workloads import expand_all
from gpuplane.k8s.workloads.spark import SparkSizeError, spark_mib
from gpuplane.sources import load_paths
from gpuplane.sources.manifest import Manifest

REVIEW = Path(__file__).resolve().parent.parent / "fixtures" / "simulate" / "review"
MAX = (1 << 63) - 1
MIN = -(1 << 63)


def test_quantity_accessors_saturate_at_int64() -> None:
    assert value("1e30") == MAX
    assert value("-1e30") == MIN
    assert milli_value("1e30") == MAX
    assert milli_value("9223372036854775807") == MAX  # x1000 overflows int64
    assert scaled_ceil("100E", 0) == MAX
    assert value("9223372036854775807") == MAX and value("9Ei") == MAX
    assert value(10**30) == MAX
    assert value("8") == 8 and milli_value("1.5") == 1500
    assert saturate_int64(MAX + 1) == MAX and saturate_int64(MIN - 1) == MIN and saturate_int64(5) == 5


def test_pod_requests_saturate_like_the_scheduler() -> None:
    pod = pod_from_dict(
        {
            "spec": {
                "containers": [
                    {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "100E"}}},
                    {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "100E"}}},
                ]
            }
        }
    )
    assert pod_requests(pod) == {"nvidia.com/gpu": MAX}


def test_huge_node_allocatable_is_saturated_not_an_overflow() -> None:
    loaded = load_paths([str(REVIEW / "huge-node.yaml")])
    state = ClusterState.from_objects(loaded.objects)
    assert state.allocatable("gpu-1")["nvidia.com/gpu"] == MAX
    node = node_from_dict(loaded.objects[0].data)
    assert node.metadata.name == "gpu-1"


def _sc(name: str, annotations: dict[str, str], created: str | None = None) -> Manifest:
    meta: dict[str, object] = {"name": name, "annotations": annotations}
    if created is not None:
        meta["creationTimestamp"] = created
    return Manifest({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta})


GA = "storageclass.kubernetes.io/is-default-class"
BETA = "storageclass.beta.kubernetes.io/is-default-class"


def test_default_storage_class_follows_get_default_class() -> None:
    assert is_default_class(_sc("a", {GA: "true"}))
    assert is_default_class(_sc("b", {BETA: "true"}))
    assert not is_default_class(_sc("c", {GA: "True"}))  # exactly "true"
    assert not is_default_class(_sc("d", {GA: "false", BETA: "yes"}))
    assert default_storage_class([]) is None
    assert default_storage_class([_sc("c", {GA: "True"})]) is None
    older = _sc("older", {GA: "true"}, "2024-01-01T00:00:00Z")
    newer = _sc("newer", {BETA: "true"}, "2024-06-01T00:00:00Z")
    assert default_storage_class([older, newer]).name == "newer"
    # equal creation times: the name that sorts first
    twin_b = _sc("b-class", {GA: "true"}, "2024-06-01T00:00:00Z")
    twin_a = _sc("a-class", {GA: "true"}, "2024-06-01T00:00:00Z")
    assert default_storage_class([twin_b, twin_a, older]).name == "a-class"
    # no timestamp is Go's zero time: older than any real one
    assert default_storage_class([_sc("untimed", {GA: "true"}), older]).name == "older"


@pytest.mark.parametrize(
    ("text", "mib"),
    [
        ("512m", 512),
        ("4g", 4096),
        ("4G", 4096),
        ("2048", 2048),
        (2048, 2048),
        ("512k", 0),
        ("1536k", 1),
        ("1t", 1024 * 1024),
        ("3gb", 3072),
        (" 8g ", 8192),
        ("1048576b", 1),
    ],
)
def test_spark_sizes_are_integer_mib(text: object, mib: int) -> None:
    assert spark_mib(text, 1024) == mib


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.5g", "Failed to parse byte string: 1.5g"),
        (float("inf"), "Failed to parse byte string: inf"),
        ("4x", 'Invalid suffix: "x"'),
        (True, "Failed to parse byte string: True"),
        ("9223372036854775807t", "Conversion of 9223372036854775807 exceeds Long.MAX_VALUE in MiB"),
    ],
)
def test_spark_refuses_what_byte_string_as_mib_refuses(text: object, message: str) -> None:
    with pytest.raises(SparkSizeError) as info:
        spark_mib(text, 1024)
    assert str(info.value) == message


def test_spark_pod_memory_is_integer_mib_and_inf_never_raises() -> None:
    app = Manifest(
        {
            "apiVersion": "sparkoperator.k8s.io/v1beta2",
            "kind": "SparkApplication",
            "metadata": {"name": "s"},
            "spec": {
                "type": "Scala",
                "driver": {"memory": "1000m"},
                "executor": {"instances": 1, "memory": "4g"},
            },
        }
    )
    podsets = expand_all([app])
    memory = [ps.template["spec"]["containers"][0]["resources"]["requests"]["memory"] for ps in podsets]
    # 1000 + max(384, int(0.1 * 1000)) and 4096 + int(0.1 * 4096)
    assert memory == ["1384Mi", "4505Mi"]
    assert expand_all(load_paths([str(REVIEW / "spark-inf.yaml")]).objects) == []


def test_kubernetes_version_accepts_major_1_only() -> None:
    def state(server: str | None, kubelets: list[str]) -> ClusterState:
        nodes = [
            node_from_dict({"metadata": {"name": f"n{i}"}, "status": {"nodeInfo": {"kubeletVersion": v}}})
            for i, v in enumerate(kubelets)
        ]
        return ClusterState(nodes, [], [], server_version=server)

    assert state("v2.99.1", []).kubernetes_version() is None
    assert state("banana", ["v1.30.2", "v1.31.4-eks-1"]).kubernetes_version() == "1.31"
    assert state("1.29+", []).kubernetes_version() == "1.29"
    assert state("banana", ["v1.30.2"]).version_warnings() == [
        "cluster version 'banana' is not a Kubernetes version like v1.31; using Kubernetes 1.30 from the nodes' kubelets"
    ]
    assert state(None, ["v2.1.0", "v1.30.2"]).version_warnings() == [
        "kubelet version 'v2.1.0' is not a Kubernetes version like v1.31; ignored"
    ]
    assert state("v1.31.0", ["v1.31.0"]).version_warnings() == []
