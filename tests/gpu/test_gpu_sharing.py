"""Which advertised GPU units are shared replicas (gpu/sharing.py), from GFD's labels.

GFD labels each resource ``<resource>.replicas`` / ``.sharing-strategy`` / ``.product`` and
appends ``-SHARED`` to the product of a shared, not renamed resource (k8s-device-plugin
``internal/lm/resource.go``: ``baseLabeler``, ``getProductName``, ``getReplicas``); a renamed
resource (``rename`` / ``renameByDefault``) keeps its labels under the original name."""

from __future__ import annotations

import pytest

from gpuplane.gpu.sharing import Replication, UnitCount, labelled_resource, replication, unit_word

WHOLE = {
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/gpu.replicas": "1",
    "nvidia.com/gpu.sharing-strategy": "none",
}
TIME_SLICED = {
    "nvidia.com/gpu.product": "NVIDIA-L4-SHARED",
    "nvidia.com/gpu.replicas": "4",
    "nvidia.com/gpu.sharing-strategy": "time-slicing",
}


@pytest.mark.parametrize(
    ("labels", "resource", "expected"),
    [
        (WHOLE, "nvidia.com/gpu", None),
        # sharing not configured at all: getReplicas returns 0
        ({"nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "none"}, "nvidia.com/gpu", None),
        (TIME_SLICED, "nvidia.com/gpu", Replication("nvidia.com/gpu", "time-slicing", 4, False)),
        # an older GFD without the sharing labels: the -SHARED product alone
        (
            {"nvidia.com/gpu.product": "NVIDIA-L4-SHARED"},
            "nvidia.com/gpu",
            Replication("nvidia.com/gpu", "time-slicing", None, False),
        ),
        (
            {"nvidia.com/gpu.replicas": "10", "nvidia.com/gpu.sharing-strategy": "mps"},
            "nvidia.com/gpu.shared",
            Replication("nvidia.com/gpu.shared", "mps", 10, True),
        ),
        # renamed without any label: the name says it is a replica
        ({}, "nvidia.com/gpu.shared", Replication("nvidia.com/gpu.shared", "time-slicing", None, True)),
        # MIG mixed: each profile has its own labels
        (
            {"nvidia.com/mig-1g.5gb.replicas": "2", "nvidia.com/mig-1g.5gb.sharing-strategy": "time-slicing"},
            "nvidia.com/mig-1g.5gb",
            Replication("nvidia.com/mig-1g.5gb", "time-slicing", 2, False),
        ),
        ({"nvidia.com/mig-1g.5gb.replicas": "2"}, "nvidia.com/mig-3g.20gb", None),
        # labels of the whole GPU do not make another resource shared
        (TIME_SLICED, "amd.com/gpu", None),
        (TIME_SLICED, "cpu", None),
        ({"nvidia.com/gpu.replicas": "many"}, "nvidia.com/gpu", None),
    ],
)
def test_replication(labels: dict[str, str], resource: str, expected: Replication | None) -> None:
    assert replication(labels, resource) == expected


def test_labelled_resource_is_the_name_before_a_rename() -> None:
    assert labelled_resource("nvidia.com/gpu.shared") == "nvidia.com/gpu"
    assert labelled_resource("nvidia.com/mig-1g.5gb.shared") == "nvidia.com/mig-1g.5gb"
    assert labelled_resource("nvidia.com/gpu") == "nvidia.com/gpu"


def test_unit_count_texts() -> None:
    sliced = Replication("nvidia.com/gpu", "time-slicing", 4, False)
    units = UnitCount()
    for node, amount, shared in [
        ("a", 2, None),
        ("b", 1, None),
        ("c", 0, None),
        ("l4-1", 3, sliced),
        ("l4-2", 5, sliced),
        ("l4-3", 0, sliced),
    ]:
        units.add(node, amount, shared)
    assert (units.whole, units.total) == (3, 11)
    assert units.text("GPUs", free=True) == "3 free GPUs +8 time-sliced replicas on 2 shared nodes"
    assert units.text("GPUs") == "3 GPUs +8 time-sliced replicas on 2 shared nodes"
    units.add("t4", 1, Replication("nvidia.com/gpu", "mps", 10, False))
    assert units.replica_text() == "+1 MPS replica, +8 time-sliced replicas on 3 shared nodes"
    plain = UnitCount()
    plain.add("a", 14, None)
    assert (plain.text("GPUs", free=True), plain.text("GPUs"), plain.replica_text()) == ("14 free", "14", "")


def test_unit_word() -> None:
    assert [
        unit_word(r)
        for r in (
            "nvidia.com/gpu",
            "amd.com/gpu",
            "nvidia.com/mig-1g.5gb",
            "nvidia.com/gpu.shared",
            "gpu.intel.com/i915",
        )
    ] == ["GPUs", "GPUs", "MIG devices", "GPUs", "GPUs"]


def test_unit_word_names_mig_devices_advertised_as_gpus() -> None:
    single = {"nvidia.com/mig.strategy": "single"}
    assert unit_word("nvidia.com/gpu", [{}, single]) == "GPUs or MIG devices"
    assert unit_word("nvidia.com/gpu", [{"nvidia.com/mig.strategy": "mixed"}]) == "GPUs"
    units = UnitCount()
    units.add("a", 1, None)
    units.add("l4", 2, Replication("nvidia.com/gpu", "time-slicing", 4, False))
    assert units.text("GPUs or MIG devices", free=True) == (
        "1 free GPU or MIG device +2 time-sliced replicas on 1 shared node"
    )
