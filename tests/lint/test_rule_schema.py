"""Rule ``manifest-unknown-field``: unknown fields of GPU built-in workloads, strict schemas."""

from __future__ import annotations

import subprocess
import sys

from rulehelpers import lint_rule

RULE = "manifest-unknown-field"

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources:
    limits: {cpu: "4"}
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: 1}
    securityContext:
      allowPrivilegedEscalation: false
"""


def _cluster(kubelet: str) -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status:
  nodeInfo: {{kubeletVersion: {kubelet}}}
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}}
"""


def test_kubectl_strict_wording_line_and_suggestion() -> None:
    (finding,) = [f for f in lint_rule(RULE, GPU_POD) if "allowPriv" in f.message]
    assert finding.line == 13
    assert finding.severity == "error"
    assert (
        '"Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
        '"spec.containers[0].securityContext.allowPrivilegedEscalation""'
    ) in finding.message
    assert "Kubernetes 1.36 API" in finding.message
    assert "drop it silently" in finding.message
    assert (
        finding.fix
        == "rename spec.containers[0].securityContext.allowPrivilegedEscalation to allowPrivilegeEscalation"
    )


def test_target_version_follows_the_cluster() -> None:
    # pod-level resources (spec.resources) are in the 1.36 schema, not in 1.30's
    assert [f.line for f in lint_rule(RULE, GPU_POD)] == [13]
    old = lint_rule(RULE, GPU_POD, cluster_text=_cluster("v1.30.2"))
    assert sorted(f.line for f in old) == [5, 13]
    assert all("Kubernetes 1.30 API" in f.message for f in old)
    # older than any bundled schema: the oldest bundled one
    assert all(
        "Kubernetes 1.25 API" in f.message for f in lint_rule(RULE, GPU_POD, cluster_text=_cluster("v1.20.0"))
    )


def test_one_finding_per_unknown_field_and_no_type_errors() -> None:
    text = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, labls: {a: b}}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: x
            foo: 1
            bar: 2
            ports: [{containerPort: "not-a-number"}]
            resources: {limits: {nvidia.com/gpu: 1}}
"""
    findings = lint_rule(RULE, text)
    assert sorted(f.line for f in findings) == [3, 14, 15]
    assert any(
        'unknown field "spec.jobTemplate.spec.template.spec.containers[0].foo"' in f.message for f in findings
    )
    assert any(f.fix == "rename metadata.labls to labels" for f in findings)


def test_cpu_workloads_custom_resources_and_odd_values_are_skipped() -> None:
    cpu = GPU_POD.replace("nvidia.com/gpu: 1", "cpu: 1")
    assert lint_rule(RULE, cpu) == []
    crd = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j}
spec:
  whatever: 1
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    assert lint_rule(RULE, crd) == []
    # a YAML date where a string belongs is not an unknown field; the rule must not fail on it
    dated = GPU_POD.replace("metadata: {name: p}", "metadata: {name: p, annotations: {built: 2024-01-01}}")
    assert [f.line for f in lint_rule(RULE, dated)] == [13]


def test_help_does_not_import_the_schema_libraries() -> None:
    code = (
        "import sys\n"
        "from gpuplane.cli.entry import main\n"
        "sys.argv = ['gpuplane', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('jsonschema_rs', 'kubernetes_validate') if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in proc.stderr


# -- the schema walk finds exactly what a compiled validator's AdditionalProperties errors find --

SCHEMA_VERSION = "1.33"


def _validator_unknowns(kind: str, api_version: str, data: dict) -> list[tuple[tuple, list[str]]]:
    import jsonschema_rs

    from gpuplane.generate.validate import _core_validator

    validator = _core_validator(SCHEMA_VERSION, kind, api_version)
    additional = jsonschema_rs.ValidationErrorKind.AdditionalProperties
    found = [
        (tuple(e.instance_path), sorted(e.kind.unexpected))
        for e in validator.iter_errors(data)
        if isinstance(e.kind, additional)
    ]
    return sorted(found)


def _walk_unknowns(
    kind: str, api_version: str, data: dict, memo: dict | None = None
) -> list[tuple[tuple, list[str]]]:
    from gpuplane.lint.rules.gpu.manifest_schema import _skeleton, unknown_fields

    schema, defs = _skeleton(SCHEMA_VERSION, kind, api_version)  # the stripped schema the rule walks
    found = unknown_fields(data, schema, defs, memo=memo)
    return sorted((p, sorted(names)) for p, names in found)


_FIELD_NAMES = [
    "spec",
    "template",
    "containers",
    "resources",
    "limits",
    "securityContext",
    "foo",
    "metadata",
    "labels",
    "name",
    "image",
    "volumes",
    "emptyDir",
    "tolerations",
    "bar",
    "affinity",
    "nodeAffinity",
    "env",
    "value",
    "ports",
    "containerPort",
    "initContainers",
]


def test_walk_matches_jsonschema_rs_on_random_documents() -> None:
    """Random nestings of real and bogus field names under a Deployment: the same unknown fields."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "1Gi"]))
    tree = st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_FIELD_NAMES), inner, max_size=4)
        ),
        max_leaves=25,
    )

    @settings(max_examples=150, deadline=None)
    @given(spec=st.dictionaries(st.sampled_from(_FIELD_NAMES), tree, max_size=4))
    def check(spec: dict) -> None:
        data = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}
        expected = _validator_unknowns("Deployment", "apps/v1", data)
        assert _walk_unknowns("Deployment", "apps/v1", data) == expected
        # the rule keeps one memo of resolved schema nodes for the whole run: never a stale answer
        assert _walk_unknowns("Deployment", "apps/v1", data, shared) == expected

    shared: dict = {}
    check()


def test_walk_matches_jsonschema_rs_on_the_realworld_corpus() -> None:
    import os

    import pytest
    import yaml

    corpus = os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "realworld", "lint", "corpus"
    )
    if not os.path.isdir(corpus):
        pytest.skip("../shared/realworld/lint/corpus is not present")
    kinds = {
        ("v1", "Pod"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
    }
    compared = 0
    for directory, _, names in os.walk(corpus):
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml")):
                continue
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    docs = list(yaml.load_all(handle, Loader=yaml.CSafeLoader))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for doc in docs:
                if not isinstance(doc, dict) or (doc.get("apiVersion"), doc.get("kind")) not in kinds:
                    continue
                try:
                    expected = _validator_unknowns(doc["kind"], doc["apiVersion"], doc)
                except (ValueError, TypeError):
                    continue  # not JSON (a YAML date): the validator cannot take it
                assert _walk_unknowns(doc["kind"], doc["apiVersion"], doc) == expected, name
                compared += 1
    assert compared > 100
