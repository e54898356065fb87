"""`gpuplane policy export`: every exported ValidatingAdmissionPolicy rejects exactly what its lint
rule flags. The CEL is evaluated (tests/policy/k8s_cel.py) against every fixture of every rule
(tests/fixtures/lint/*/), not only the rule's own: the other rules' fixtures are extra cases the
policy must also agree on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import k8s_cel
import pytest
import yaml

from gpuplane.k8s.workloads import expand
from gpuplane.lint.engine import run_lint
from gpuplane.policy import cel as policy_cel
from gpuplane.policy.catalog import EXPORTED, NOT_EXPORTED, reason_not_exported
from gpuplane.policy.export import action_of, export_objects, policies_for, to_yaml
from gpuplane.rule_catalog import all_rules
from gpuplane.sources import load_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
# Kinds whose pod specs are not in the object itself (a referenced runtime, operator-synthesised
# pods): lint reports them, the policies do not see their pods (docs/policy.md says so).
UNCOVERED_KINDS = {
    "TrainJob",
    "InferenceService",
    "SparkApplication",
    "ClusterTrainingRuntime",
    "TrainingRuntime",
}


# Objects the API server refuses to decode or validate before admission runs (``containers: 1.5``):
# no policy ever sees them.
NEVER_ADMITTED = {"pod-template-invalid"}


def _fixture_files() -> list[Path]:
    return sorted(
        f
        for folder in FIXTURES.iterdir()
        if folder.is_dir() and not folder.name.startswith("_") and folder.name not in NEVER_ADMITTED
        for f in folder.glob("*.yaml")
        if f.name != "cluster.yaml"
    )


def _policies() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """rule id -> [(action, policy)]."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for rule in EXPORTED.values():
        for policy, binding in policies_for(rule):
            out.setdefault(rule.id, []).append((binding["spec"]["validationActions"][0], policy))
    return out


POLICIES = _policies()
METAS = {m.id: m for m in all_rules()}


def _flagged(objects, rule_ids) -> set[tuple[str, str, int]]:
    """(rule, action, object index) of every finding of the exported rules."""
    index = {id(o): i for i, o in enumerate(objects)}
    result = run_lint(objects, rules=[METAS[r] for r in rule_ids])
    assert not result.failures
    return {(f.rule, action_of(f.severity), index[id(f.object)]) for f in result.findings}


@pytest.mark.parametrize("file", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_policies_reject_exactly_what_the_rules_flag(file: Path) -> None:
    loaded = load_paths([str(file)])
    assert not loaded.errors
    objects = loaded.objects
    flagged = _flagged(objects, list(POLICIES))
    rejected: set[tuple[str, str, int]] = set()
    for i, obj in enumerate(objects):
        for rule_id, pairs in POLICIES.items():
            for action, policy in pairs:
                decision = k8s_cel.evaluate(policy, obj.data)
                if decision.rejected:
                    assert all(v.startswith(f"{rule_id}: {obj.kind} ") for v in decision.violations)
                    assert all(f"(gpuplane explain {rule_id})" in v for v in decision.violations)
                    rejected.add((rule_id, action, i))
    uncovered = {f for f in flagged if objects[f[2]].kind in UNCOVERED_KINDS}
    assert rejected == flagged - uncovered


def test_every_own_fixture_of_an_exported_rule_is_decided() -> None:
    """Each exported rule's failing fixtures are rejected at least once (the agreement test above
    would also pass if a policy matched nothing)."""
    for rule_id, pairs in POLICIES.items():
        hits = 0
        for file in sorted((FIXTURES / rule_id).glob("fail*.yaml")):
            for obj in load_paths([str(file)]).objects:
                hits += any(k8s_cel.evaluate(p, obj.data).rejected for _a, p in pairs)
        assert hits, rule_id


def _expanded_specs(obj) -> list[Any]:
    specs = []
    for ps in expand(obj):
        if ps.synthetic or not isinstance(ps.template, dict):
            continue
        specs.append(ps.template.get("spec"))
    return specs


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def test_pod_specs_variable_matches_the_workload_expanders() -> None:
    """The CEL that finds pod specs agrees with gpuplane.k8s.workloads on every fixture object."""
    kinds = list(policy_cel.POD_SPEC_PATHS)
    expr = policy_cel.pod_specs(kinds)
    checked = 0
    for file in _fixture_files():
        for obj in load_paths([str(file)]).objects:
            if (obj.group, obj.kind) not in policy_cel.POD_SPEC_PATHS:
                continue
            ctx = k8s_cel.context()
            ctx.add_variable("object", obj.data)
            got = k8s_cel.run(expr, ctx)
            want = [s for s in _expanded_specs(obj) if isinstance(s, dict)]
            # map iteration order is not defined in CEL (cel-go iterates Go maps): compare as multisets
            assert sorted(map(_canonical, got)) == sorted(map(_canonical, want)), (
                f"{file}: {obj.kind} {obj.name}"
            )
            checked += 1
    assert checked > 100


# (value, the API accepts it as an integer extended-resource quantity): the MilliValue()%1000 check
# of ValidateResourceQuantityValue, computed by gpuplane.k8s.validation.
@pytest.mark.parametrize(
    "value",
    [
        1,
        2,
        0,
        "1",
        "8",
        "1000m",
        "2000m",
        "1.0",
        "1.000",
        "0.5",
        "500m",
        "1.5",
        "1500m",
        "0.9999",
        "0.9991",
        "0.999",
        "1.0005",
        "1.001",
        "2k",
        "1.5k",
        "1Ki",
        "1.5Ki",
        "1e3",
        "1e-3",
        "1E2",
        "-1",
        "-0.5",
        "-1.0005",
        0.5,
        2.0,
        1.25,
        "999999999",
        "12345678901234",
        "10u",
        "1000000u",
        "1000000000n",
        "0.0001",
    ],
)
def test_whole_number_check_equals_the_api_server(value: Any) -> None:
    from gpuplane.k8s.validation import NOT_INTEGER, container_resource_errors

    container = {"name": "c", "resources": {"limits": {"nvidia.com/gpu": value}}}
    api_rejects = any(e.check == NOT_INTEGER for e in container_resource_errors(container))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}}
    ((_action, policy),) = POLICIES["gpu-fractional-quantity"]
    assert k8s_cel.evaluate(policy, pod).rejected is api_rejects


def test_update_that_keeps_the_spec_is_not_judged() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "500m"}}}]},
    }
    ((_a, policy),) = POLICIES["gpu-fractional-quantity"]
    assert k8s_cel.evaluate(policy, pod, operation="UPDATE", old=pod).matched is False
    changed = {
        **pod,
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1500m"}}}]},
    }
    assert k8s_cel.evaluate(policy, changed, operation="UPDATE", old=pod).rejected
    owned = {
        **pod,
        "metadata": {"name": "p", "ownerReferences": [{"kind": "Job", "name": "j", "controller": True}]},
    }
    assert k8s_cel.evaluate(policy, owned).matched is False


def test_exported_objects_shape() -> None:
    objects = export_objects()
    kinds = [o["kind"] for o in objects]
    assert kinds == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] * (len(objects) // 2)
    assert {o["apiVersion"] for o in objects} == {"admissionregistration.k8s.io/v1"}
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert names == [
        "gpuplane-gpu-request-without-limit",
        "gpuplane-gpu-request-limit-mismatch",
        "gpuplane-gpu-fractional-quantity",
        "gpuplane-quota-gpu-invalid-key",
        "gpuplane-pytorchjob-master-replicas",
        "gpuplane-pytorchjob-master-replicas-warn",
    ]
    actions = {
        o["metadata"]["name"]: o["spec"]["validationActions"]
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    assert actions["gpuplane-gpu-request-without-limit"] == ["Deny"]
    assert actions["gpuplane-pytorchjob-master-replicas-warn"] == ["Warn"]
    for o in objects:
        if o["kind"] == "ValidatingAdmissionPolicyBinding":
            assert o["spec"]["policyName"] == o["metadata"]["name"]
    quota = next(o for o in objects if o["metadata"]["name"] == "gpuplane-quota-gpu-invalid-key")
    assert quota["spec"]["matchConstraints"]["resourceRules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["resourcequotas"],
        }
    ]
    # round-trips as YAML: what kubectl apply reads
    assert list(yaml.safe_load_all(to_yaml(objects))) == objects


def test_every_rule_is_exported_or_says_why_not() -> None:
    for meta in all_rules():
        if meta.id in EXPORTED:
            assert meta.id not in NOT_EXPORTED
            continue
        assert reason_not_exported(meta.id, meta.category, meta.context)
    assert set(NOT_EXPORTED) <= set(METAS), set(NOT_EXPORTED) - set(METAS)
    assert set(EXPORTED) <= set(METAS)


def test_corpus_agreement(shared_dir: Path) -> None:
    """On the real-world corpus (read only, never tuned on), each policy rejects the objects its
    rule flags there, and never errors."""
    corpus = shared_dir / "realworld" / "lint" / "corpus"
    if not corpus.is_dir():
        pytest.skip("realworld lint corpus absent")
    disagreements = []
    for file in sorted(corpus.rglob("*.yaml")):
        loaded = load_paths([str(file)])
        objects = loaded.objects
        flagged = _flagged(objects, list(POLICIES))
        for i, obj in enumerate(objects):
            for rule_id, pairs in POLICIES.items():
                for action, policy in pairs:
                    rejected = k8s_cel.evaluate(policy, obj.data).rejected
                    if rejected != ((rule_id, action, i) in flagged) and obj.kind not in UNCOVERED_KINDS:
                        disagreements.append((file.name, obj.kind, obj.name, rule_id))
    assert disagreements == []


@pytest.mark.parametrize("version", ["1.30", "1.33"])
def test_exported_objects_validate_against_the_kubernetes_schema(version: str) -> None:
    """admissionregistration.k8s.io/v1 is served from 1.30 (strict schemas: no unknown field)."""
    from gpuplane.generate.validate import validate_objects

    errors, unchecked = validate_objects(export_objects(), version)
    assert errors == []
    assert unchecked == []


def test_cli_export_and_list(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gpuplane.cli.main import cli

    runner = CliRunner()
    out = runner.invoke(cli, ["policy", "export", "--rules", "quota-gpu-invalid-key"])
    assert out.exit_code == 0
    docs = list(yaml.safe_load_all(out.output))
    assert [d["metadata"]["name"] for d in docs] == ["gpuplane-quota-gpu-invalid-key"] * 2
    target = tmp_path / "vap.yaml"
    out = runner.invoke(cli, ["policy", "export", "-o", str(target)])
    assert out.exit_code == 0
    assert len(list(yaml.safe_load_all(target.read_text()))) == 12
    bad = runner.invoke(cli, ["policy", "export", "--rules", "gpu-type-unpinned,no-such-rule"])
    assert bad.exit_code == 2
    assert bad.output == (
        "gpuplane: --rules: gpu-type-unpinned cannot be exported: needs cluster state (nodes, their labels, "
        "taints, allocatable or what is installed); no-such-rule is not a rule id (see gpuplane rules)\n"
    )
    listing = runner.invoke(cli, ["policy", "list", "-f", "json"])
    rows = {r["rule"]: r for r in __import__("json").loads(listing.output)}
    assert rows["pytorchjob-master-replicas"]["actions"] == ["Deny", "Warn"]
    assert rows["gpu-taint-not-tolerated"]["exported"] is False


def test_docs_name_every_rule() -> None:
    """docs/policy.md says, for each manifest rule, whether it is exported or why not."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "policy.md").read_text()
    missing = [m.id for m in all_rules() if m.category != "cluster" and f"`{m.id}`" not in text]
    assert missing == []
