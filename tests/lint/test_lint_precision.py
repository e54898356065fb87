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
