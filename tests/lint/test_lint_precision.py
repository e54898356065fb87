"""Precision: the context that makes a manifest right silences the rule (issue 12 item 1).

Each case is written from the general case; the fixture folders under tests/fixtures/lint hold
the failing and passing manifests, this module the cases that need a config or a cluster."""

from __future__ import annotations

from pathlib import Path

from gpuplane.lint.config import LintConfig, load_config
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import get_rule
from gpuplane.sources import load_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"


def _rule_lines(rule_id: str, file: Path, config: LintConfig) -> list[int]:
    loaded = load_paths([str(file)])
    assert not loaded.errors
    meta = get_rule(rule_id)
    assert meta is not None
    return [f.line for f in run_lint(loaded.objects, config=config, rules=[meta]).findings]


def test_declared_extended_resource_toleration_silences_taint_rule(tmp_path: Path) -> None:
    """`.gpuplane.yaml` `cluster.admission-plugins: [ExtendedResourceToleration]`: the API server
    adds the GPU toleration (plugin/pkg/admission/extendedresourcetoleration), nothing to report."""
    manifest = FIXTURES / "gpu-taint-not-tolerated" / "manifests-only" / "fail.yaml"
    assert _rule_lines("gpu-taint-not-tolerated", manifest, LintConfig()) == [10]
    config_file = tmp_path / ".gpuplane.yaml"
    config_file.write_text("cluster:\n  admission-plugins: [ExtendedResourceToleration]\n")
    assert _rule_lines("gpu-taint-not-tolerated", manifest, load_config(str(config_file))) == []


ROLLOUT = FIXTURES / "gpu-rollout-surge-deadlock"


def _rollout(file: Path, with_cluster: bool):
    from gpuplane.sources.cluster import load_cluster_state

    state = load_cluster_state(str(ROLLOUT / "cluster.yaml"))[0] if with_cluster else None
    loaded = load_paths([str(file)])
    meta = get_rule("gpu-rollout-surge-deadlock")
    assert meta is not None
    return run_lint(loaded.objects, cluster=state, config=LintConfig(), rules=[meta]).findings


def test_rollout_stall_is_a_warning_only_with_cluster_evidence() -> None:
    (with_cluster,) = _rollout(ROLLOUT / "fail.yaml", True)
    assert with_cluster.severity == "warning"
    assert "no node of the cluster has the spare GPUs and no autoscaler would add one" in with_cluster.message
    (without,) = _rollout(ROLLOUT / "manifests-only" / "fail-explicit.yaml", False)
    assert without.severity == "info"
    assert _rollout(ROLLOUT / "manifests-only" / "pass-defaults.yaml", False) == []


def test_rollout_fix_never_takes_a_single_replica_down(tmp_path: Path) -> None:
    text = (
        (ROLLOUT / "manifests-only" / "fail-explicit.yaml").read_text().replace("replicas: 8", "replicas: 1")
    )
    single = tmp_path / "single.yaml"
    single.write_text(text)
    (finding,) = _rollout(single, False)
    assert finding.patch == ()
    assert "maxUnavailable: 1 would take this single-replica service down" in finding.fix
    (many,) = _rollout(ROLLOUT / "manifests-only" / "fail-explicit.yaml", False)
    assert [op.value for op in many.patch] == [0, 1]
