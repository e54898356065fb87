"""Helpers the per-category rule tests share (imported as ``from rulehelpers import ...``;
pytest puts this folder on ``sys.path``): run one rule on a YAML text, apply its fixes.

One copy, so every rule test lints the way the engine does (config defaults, optional
cluster snapshot) and checks the same invariants on the way (no load errors, no rule
failures, every fix applied).
"""

from __future__ import annotations

from typing import Any


def lint_rule(rule_id: str, text: str, cluster_text: str | None = None, path: str = "in.yaml") -> list[Any]:
    """Findings of one rule on a YAML text (and an optional cluster snapshot text)."""
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.lint.config import LintConfig
    from gpuplane.lint.engine import run_lint
    from gpuplane.rule_catalog import get_rule
    from gpuplane.sources.loader import load_text

    loaded = load_text(text, path)
    assert not loaded.errors, loaded.errors
    cluster = None
    if cluster_text is not None:
        cluster = ClusterState.from_objects(load_text(cluster_text, "cluster.yaml").objects)
    result = run_lint(loaded.objects, cluster=cluster, config=LintConfig(), rules=[get_rule(rule_id)])
    assert not result.failures, result.failures
    return result.findings


def fixed_text(rule_id: str, text: str) -> str:
    """The text after applying every patch of the rule's findings (as ``--fix`` does)."""
    from gpuplane.lint.fix import fix_text

    findings = lint_rule(rule_id, text)
    assert findings and all(f.patch for f in findings)
    updated, fixed, problems = fix_text(text, findings)
    assert not problems and len(fixed) == len(findings)
    return updated
