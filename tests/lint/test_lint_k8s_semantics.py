"""Lint rules use the project's one implementation of each Kubernetes semantic
(gpuplane.k8s.quantity / selectors / tolerations): upstream's answers, edge cases included."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from gpuplane.lint import kinds
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.lint.rules._common import as_int
from gpuplane.rule_catalog import all_rules
from gpuplane.sources.cluster import load_cluster_state
from gpuplane.sources.loader import load_text

CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8"}
spec:
  taints:
  - {key: dedicated, value: gpu, effect: NoSchedule}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
"""


@pytest.mark.parametrize(
    ("value", "exact", "count"),
    [
        ("500m", Fraction(1, 2), None),
        ("1000m", Fraction(1), 1),
        ("2", Fraction(2), 2),
        (3, Fraction(3), 3),
        (0.5, Fraction(1, 2), None),
        ("1e3", Fraction(1000), 1000),
        ("1Ki", Fraction(1024), 1024),
        (" 1", None, None),  # ParseQuantity refuses surrounding whitespace
        ("1K", None, None),  # "K" is not a suffix (only "k" and "Ki")
        ("abc", None, None),
        (True, None, None),
        (None, None, None),
        ({"a": 1}, None, None),
    ],
)
def test_quantities_follow_parse_quantity(value: object, exact: Fraction | None, count: int | None) -> None:
    assert kinds.quantity_value(value) == exact
    assert kinds.quantity_count(value) == count


def test_as_int_reads_counts_as_the_api_server_decodes_them() -> None:
    """One contract with workload expansion (gpuplane.k8s.fields): a string is no count, because
    the API server refuses ``replicas: "3"`` (sigs.k8s.io/json: cannot unmarshal string into an
    int32 field); YAML's ``3.0`` is 3 (kubectl marshals the float to JSON as ``3``)."""
    assert [as_int(v, None) for v in (3, 3.0, "4", " 5 ", True, "x", 1.5, None)] == [
        3,
        3,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    assert as_int("nope", 1) == 1


def _run(
    rule_id: str, manifests: str, tmp_path: Path, cluster: str | None = CLUSTER
) -> list[tuple[int, str]]:
    state = None
    if cluster is not None:
        file = tmp_path / "cluster.yaml"
        file.write_text(cluster)
        state, errors = load_cluster_state(str(file))
        assert not errors
    loaded = load_text(manifests, "pod.yaml")
    assert not loaded.errors
    meta = next(m for m in all_rules() if m.id == rule_id)
    result = run_lint(loaded.objects, cluster=state, config=LintConfig(), rules=[meta])
    assert not result.failures
    return [(f.line, f.severity) for f in result.findings]


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - %s
  tolerations: [{key: dedicated, operator: Exists}]
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (
            "{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A100-SXM4-80GB]}]}",
            [],
        ),
        ("{matchExpressions: [{key: nvidia.com/gpu.count, operator: Gt, values: ['07']}]}", []),
        # matchFields count: the GPU node is not named cpu-1 (nodeaffinity.go, field selector)
        (
            "{matchExpressions: [{key: nvidia.com/gpu.product, operator: Exists}], "
            "matchFields: [{key: metadata.name, operator: In, values: [cpu-1]}]}",
            [(7, "error")],
        ),
        # Exists with values: NewRequirement refuses it, so the term matches no node
        (
            "{matchExpressions: [{key: nvidia.com/gpu.product, operator: Exists, values: [x]}]}",
            [(7, "error")],
        ),
        # Gt needs an integer on both sides (strconv.ParseInt)
        ("{matchExpressions: [{key: nvidia.com/gpu.count, operator: Gt, values: ['7.5']}]}", [(7, "error")]),
    ],
)
def test_selector_matching_is_the_schedulers(tmp_path: Path, term: str, expected: list) -> None:
    assert _run("gpu-selector-matches-no-node", POD % term, tmp_path) == expected


TOLERATING = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: %s
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ("[{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]", []),
        ("[{key: dedicated, value: gpu}]", []),  # "" operator = Equal, "" effect = every effect
        ("[{operator: Exists}]", []),  # empty key + Exists tolerates everything
        ("[{key: dedicated, operator: Equal, value: cpu}]", [(5, "error")]),
        ("[{key: dedicated, operator: Exists, effect: NoExecute}]", [(5, "error")]),
    ],
)
def test_toleration_matching_is_the_apis(tmp_path: Path, tolerations: str, expected: list) -> None:
    assert _run("gpu-taint-not-tolerated", TOLERATING % tolerations, tmp_path) == expected


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ("[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", []),
        ("[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]", []),
        ("[{operator: Exists}]", []),
        ("[{key: nvidia.com/gpu, operator: Equal, value: other}]", [(5, "info")]),
    ],
)
def test_conventional_gpu_taint_without_cluster(tmp_path: Path, tolerations: str, expected: list) -> None:
    assert _run("gpu-taint-not-tolerated", TOLERATING % tolerations, tmp_path, cluster=None) == expected
