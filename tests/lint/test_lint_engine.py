"""The lint engine: registry, suppression, config file, severity overrides, JSON shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.lint.config import ConfigError, LintConfig, find_config, load_config
from gpuplane.lint.engine import run_lint
from gpuplane.lint.finding import format_field
from gpuplane.rule_catalog import all_rules, get_rule
from gpuplane.ruleset import CATEGORIES
from gpuplane.sources.loader import load_text

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ns
  annotations: {ANN}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def _objects(text: str):
    return load_text(text, "pod.yaml").objects


def _rules(result):
    return sorted({f.rule for f in result.findings})


def test_registry_is_complete_and_ordered() -> None:
    rules = all_rules()
    ids = [m.id for m in rules]
    assert len(ids) == len(set(ids))
    order = [CATEGORIES.index(m.category) for m in rules]
    assert order == sorted(order)
    for meta in rules:
        assert meta.severity in ("error", "warning", "info")
        for section in (
            "## What it catches",
            "## Why it hurts",
            "## How to fix",
            "## Bad",
            "## Good",
            "## References",
        ):
            assert section in meta.docs, (meta.id, section)
    assert get_rule("gpu-request-without-limit").fixable is True
    assert get_rule("nope") is None


def test_finding_json_shape_and_field_line() -> None:
    result = run_lint(
        _objects(POD.replace("{ANN}", "{}")), config=LintConfig(enable={"gpu-request-without-limit"})
    )
    assert result.to_json() == {
        "findings": [
            {
                "rule": "gpu-request-without-limit",
                "severity": "error",
                "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p"},
                "path": "pod.yaml",
                "line": 13,
                "field": "spec.containers[0].resources.requests[nvidia.com/gpu]",
                "message": 'Pod ns/p, container "c" requests nvidia.com/gpu: 1 without a limit; the API server '
                'rejects it ("Limit must be set for non overcommitable resources")',
                "fix": "set resources.limits[nvidia.com/gpu]: 1 (a limit alone is enough: the request defaults to it)",
                "fixable": True,
                "fix_safety": "safe",
            }
        ],
        "skipped": [],
        "summary": {"objects": 1, "findings": 1, "error": 1, "warning": 0, "info": 0},
    }
    assert result.reaches("error") and result.reaches("info") and not result.reaches("never")


def test_annotation_suppresses_listed_rules() -> None:
    text = POD.replace("{ANN}", '{gpuplane.io/ignore: "gpu-request-without-limit, gpu-taint-not-tolerated"}')
    result = run_lint(_objects(text))
    assert "gpu-request-without-limit" not in _rules(result)
    assert "gpu-taint-not-tolerated" not in _rules(result)
    everything = run_lint(_objects(POD.replace("{ANN}", '{gpuplane.io/ignore: "all"}')))
    assert everything.findings == []


def test_disable_enable_and_severity_override() -> None:
    objs = _objects(POD.replace("{ANN}", "{}"))
    assert "gpu-request-without-limit" not in _rules(
        run_lint(objs, config=LintConfig(disable={"gpu-request-without-limit"}))
    )
    only = run_lint(objs, config=LintConfig(enable={"gpu-taint-not-tolerated"}))
    assert _rules(only) == ["gpu-taint-not-tolerated"]
    cfg = LintConfig(enable={"gpu-request-without-limit"}, severity={"gpu-request-without-limit": "warning"})
    assert [f.severity for f in run_lint(objs, config=cfg).findings] == ["warning"]


def test_config_file_found_upward(tmp_path: Path) -> None:
    (tmp_path / ".gpuplane.yaml").write_text(
        "disable: [gpu-type-unpinned]\nseverity: {cpu-pod-on-gpu-nodes: error}\nignore: [vendor/**]\nfail-on: warning\n"
    )
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    path = find_config(str(sub))
    assert path == str(tmp_path / ".gpuplane.yaml")
    cfg = load_config(path)
    assert cfg.disable == {"gpu-type-unpinned"} and cfg.fail_on == "warning"
    assert cfg.severity == {"cpu-pod-on-gpu-nodes": "error"}
    assert cfg.path_ignored(str(tmp_path / "vendor" / "x.yaml"))
    assert not cfg.path_ignored(str(tmp_path / "k8s" / "x.yaml"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n", "expected a mapping at top level"),
        ("disable: []\nfrobnicate: 1\n", "unknown key 'frobnicate'"),
        ("frobnicate: 1\n", "not a gpuplane config: none of its 1 top-level keys is one of disable"),
        ("severity: {x: fatal}\n", "severity of x must be one of error, warning, info"),
        ("disable: [a\n", "invalid YAML"),
    ],
)
def test_bad_config_is_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / ".gpuplane.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_config(str(cfg))


def test_format_field() -> None:
    assert (
        format_field(("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"))
        == "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"
    )
    assert format_field(()) == ""


def test_multi_document_lines_helm_and_list() -> None:
    helm = (
        "---\n# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
        "---\n# Source: chart/templates/pod.yaml\n" + POD.replace("{ANN}", "{}")
    )
    result = run_lint(
        load_text(helm, "helm.yaml").objects, config=LintConfig(enable={"gpu-request-without-limit"})
    )
    assert [f.line for f in result.findings] == [7 + 13]
    as_list = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers:\n    - name: c\n"
        "      resources:\n        requests: {nvidia.com/gpu: 1}\n"
    )
    result = run_lint(
        load_text(as_list, "list.yaml").objects, config=LintConfig(enable={"gpu-request-without-limit"})
    )
    assert [f.line for f in result.findings] == [11]


def test_rules_are_linear_and_survive_garbage() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: 3\n  tolerations: x\n  volumes: [1]\n"
    result = run_lint(_objects(text))
    assert result.failures == []
