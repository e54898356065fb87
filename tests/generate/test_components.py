"""The pinned component versions live in one data file, each with a citation naming it."""

from __future__ import annotations

import pytest

from gpuplane.generate.components import checked, component, components
from gpuplane.generate.render import controllers, operator, scheduling


def test_every_component_cites_the_version_it_pins() -> None:
    pinned = components()
    assert set(pinned) == {
        "gpu-operator",
        "karpenter",
        "volcano",
        "kueue",
        "scheduler-plugins",
        "training-operator",
        "jobset",
        "mpi-operator",
        "aws-efa-k8s-device-plugin",
        "network-operator",
        "trainer",
        "kuberay-operator",
        "lws",
    }
    for name, entry in pinned.items():
        bare = entry.version.removeprefix("v")
        assert bare in entry.source, f"{name}: source does not name {entry.version}"
        if entry.ref is not None:
            assert entry.version in entry.ref, f"{name}: ref does not name {entry.version}"


def test_renderers_read_the_data_file() -> None:
    assert operator.OPERATOR.version == component("gpu-operator").version == "v26.7.0"
    assert scheduling.KUEUE.source == "kubernetes-sigs/kueue tag v0.19.2 (charts/kueue)"
    assert controllers.JOBSET.ref == (
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
    )


def test_unknown_component_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        component("no-such-component")


def test_versions_carry_the_date_they_were_checked() -> None:
    # cluster-autoscaler is pinned per Kubernetes minor in data/cluster_autoscaler.yaml
    assert checked() == "2026-12-01"
    assert "cluster-autoscaler" not in components()
