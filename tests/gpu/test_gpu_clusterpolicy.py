"""ClusterPolicy and gpu-operator chart values -> ClusterPolicyView, with CRD-style problems."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuplane.gpu.clusterpolicy import ClusterPolicyView, parse_clusterpolicy, parse_operator_helm_values

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gpu" / "clusterpolicy"


def test_upstream_sample(shared_dir: Path) -> None:
    obj = yaml.safe_load(
        (shared_dir / "corpus/upstream/nvidia/gpu-operator/v1_clusterpolicy.yaml").read_text()
    )
    view, problems = parse_clusterpolicy(obj)
    assert problems == []
    assert view == ClusterPolicyView(
        mig_strategy="single",
        mig_manager_enabled=True,
        device_plugin_config=None,
        dcgm_exporter_enabled=True,
        driver_enabled=True,
        toolkit_enabled=True,
        gfd_enabled=True,
        operator_namespace=None,
    )
    # the spec alone gives the same view
    assert parse_clusterpolicy(obj["spec"])[0] == view


def test_defaults_follow_the_operator_not_the_chart() -> None:
    spec = {
        k: {}
        for k in (
            "daemonsets",
            "dcgm",
            "dcgmExporter",
            "devicePlugin",
            "driver",
            "gfd",
            "nodeStatusExporter",
            "operator",
            "toolkit",
        )
    }
    view, problems = parse_clusterpolicy(spec)
    assert problems == []
    # No CRD default for mig.strategy: the device plugin's own default (none) applies.
    assert view.mig_strategy == "none"
    assert (
        view.driver_enabled,
        view.toolkit_enabled,
        view.gfd_enabled,
        view.dcgm_exporter_enabled,
        view.mig_manager_enabled,
        view.device_plugin_enabled,
    ) == (True, True, True, True, True, True)
    assert view.mig_manager_config == ("default-mig-parted-config", "all-disabled")


def test_invalid_clusterpolicy_exact_messages() -> None:
    view, problems = parse_clusterpolicy(yaml.safe_load((FIXTURES / "invalid.yaml").read_text()))
    assert [(p.message, p.path, p.severity) for p in problems] == [
        ("spec.toolkit: Required value", ("spec", "toolkit"), "error"),
        (
            'spec.mig.strategy: Unsupported value: "Mixed": supported values: "none", "single", "mixed"',
            ("spec", "mig", "strategy"),
            "error",
        ),
        (
            'spec.migManager.config.default: Unsupported value: "all-balanced": supported values: "all-disabled", ""',
            ("spec", "migManager", "config", "default"),
            "error",
        ),
        (
            "devicePlugin.config.default is ignored without devicePlugin.config.name: the operator only mounts a "
            "device-plugin ConfigMap when its name is set",
            ("spec", "devicePlugin", "config", "default"),
            "warning",
        ),
    ]
    assert (view.driver_enabled, view.dcgm_exporter_enabled, view.mig_manager_enabled) == (
        False,
        False,
        False,
    )
    assert view.device_plugin_config is None


def test_mig_strategy_without_mig_manager_warns() -> None:
    spec = {
        k: {}
        for k in (
            "daemonsets",
            "dcgm",
            "dcgmExporter",
            "devicePlugin",
            "driver",
            "gfd",
            "nodeStatusExporter",
            "operator",
            "toolkit",
        )
    }
    spec["mig"] = {"strategy": "mixed"}
    spec["migManager"] = {"enabled": False}
    _, problems = parse_clusterpolicy(spec)
    assert [(p.path, p.severity) for p in problems] == [(("spec", "migManager", "enabled"), "warning")]


def test_helm_values_defaults_and_overrides() -> None:
    assert parse_operator_helm_values({}) == ClusterPolicyView(mig_strategy="single")
    view = parse_operator_helm_values(
        {
            "driver": {"enabled": False},
            "toolkit": {"enabled": False},
            "mig": {"strategy": "mixed"},
            "devicePlugin": {"config": {"name": "time-slicing-config", "default": "any", "create": False}},
            "dcgmExporter": {"enabled": False},
        },
        namespace="gpu-operator",
    )
    assert view.mig_strategy == "mixed"
    assert view.device_plugin_config == ("time-slicing-config", "any")
    assert (view.driver_enabled, view.toolkit_enabled, view.dcgm_exporter_enabled) == (False, False, False)
    assert view.operator_namespace == "gpu-operator"
