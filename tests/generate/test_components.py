"""The pinned component versions live in one data file, each with a citation naming it."""

from __future__ import annotations

import pytest

from gpuplane.generate.components import checked, component, components
from gpuplane.generate.render import controllers, operator, scheduling
from gpuplane.generate.render.base import helm_release


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


def test_helm_charts_carry_chart_and_repository_together() -> None:
    charts = {name: entry for name, entry in components().items() if entry.chart is not None}
    assert {name: (entry.chart, entry.repo) for name, entry in charts.items()} == {
        "gpu-operator": ("gpu-operator", "https://helm.ngc.nvidia.com/nvidia"),
        "karpenter": ("karpenter", "oci://public.ecr.aws/karpenter"),
        "volcano": ("volcano", "https://volcano-sh.github.io/helm-charts"),
        "kueue": ("kueue", "oci://registry.k8s.io/kueue/charts"),
        "kuberay-operator": ("kuberay-operator", "https://ray-project.github.io/kuberay-helm/"),
        "lws": ("lws", "oci://registry.k8s.io/lws/charts"),
        "aws-efa-k8s-device-plugin": ("aws-efa-k8s-device-plugin", "https://aws.github.io/eks-charts"),
        "network-operator": ("network-operator", "https://helm.ngc.nvidia.com/nvidia"),
    }
    for name, entry in components().items():
        assert (entry.chart is None) == (entry.repo is None), name
        assert entry.chart is None or entry.ref is None, f"{name}: a chart is not also a remote manifest"


def test_a_release_is_the_pinned_chart_named_as_the_chart() -> None:
    release = helm_release(component("kueue"), "kueue-system", {"a": 1}, order=20)
    assert (release.release, release.chart, release.repo, release.version, release.source) == (
        "kueue",
        "kueue",
        "oci://registry.k8s.io/kueue/charts",
        "0.19.2",
        "kubernetes-sigs/kueue tag v0.19.2 (charts/kueue)",
    )
    assert (release.namespace, release.values, release.order) == ("kueue-system", {"a": 1}, 20)
    with pytest.raises(ValueError, match=r"not a Helm chart"):
        helm_release(component("jobset"), "jobset-system", {}, order=25)


def test_unknown_component_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        component("no-such-component")


def test_versions_carry_the_date_they_were_checked() -> None:
    # cluster-autoscaler is pinned per Kubernetes minor in data/cluster_autoscaler.yaml
    assert checked() == "2026-12-01"
    assert "cluster-autoscaler" not in components()
