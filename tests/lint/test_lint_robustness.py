"""Rules never crash on wrongly typed fields (a crash drops the rule's findings for the whole input).

Two layers: the review's repro inputs (tests/fixtures/lint/_mistyped) with their exact findings,
and a fuzz-style pass that lints every rule fixture mutated at its type-sensitive paths (a list
replaced by a number, a string or a bool; a map by a string; a name or key by a list) and
asserts that no rule failed.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.sources import load_paths
from gpuplane.sources.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
MISTYPED = FIXTURES / "_mistyped"
CLUSTER = ROOT / "examples" / "simulate" / "cluster.yaml"


def _cluster():
    from gpuplane.sources.cluster import load_cluster_state

    state, errors = load_cluster_state(str(CLUSTER))
    assert not errors, errors
    return state


# (file, with --cluster) -> exact (rule, line) findings
EXPECTED: dict[tuple[str, bool], list[tuple[str, int]]] = {
    ("r1.yaml", False): [("pod-template-invalid", 7)],
    ("r1.yaml", True): [("pod-template-invalid", 7)],
    ("r2.yaml", False): [("pod-template-invalid", 7)],
    ("r2.yaml", True): [("pod-template-invalid", 7)],
    ("r3.yaml", False): [
        ("gang-scheduling-missing", 3),
        ("training-no-failure-policy", 4),
        ("indexed-job-no-stable-dns", 8),
        ("gpu-taint-not-tolerated", 8),
        ("image-pull-always-large", 12),
        ("pod-template-invalid", 13),
    ],  # command: "torchrun" (a string) is refused by the API
    ("r3.yaml", True): [
        ("gang-scheduling-missing", 3),
        ("training-no-failure-policy", 4),
        ("indexed-job-no-stable-dns", 8),
        ("image-pull-always-large", 12),
        ("pod-template-invalid", 13),
    ],
    # args: 42 (lines 10 / 6 / 26) and command: "..." (line 25) are refused by the API (Container.args/command: []string)
    ("r4.yaml", False): [
        ("gpu-taint-not-tolerated", 6),
        ("pod-template-invalid", 10),
        ("pod-template-invalid", 11),
        ("pod-template-invalid", 17),
    ],
    ("r4.yaml", True): [
        ("pod-template-invalid", 10),
        ("pod-template-invalid", 11),
        ("pod-template-invalid", 17),
    ],
    ("r5.yaml", False): [],
    ("r5.yaml", True): [],
    ("r6.yaml", False): [("gpu-taint-not-tolerated", 4), ("pod-template-invalid", 6)],
    ("r6.yaml", True): [("pod-template-invalid", 6)],
    ("r7.yaml", False): [
        ("gpu-taint-not-tolerated", 4),
        ("model-cache-ephemeral-unbounded", 5),
        ("pod-template-invalid", 6),
    ],
    ("r7.yaml", True): [("model-cache-ephemeral-unbounded", 5), ("pod-template-invalid", 6)],
    ("rules-bad.yaml", False): [
        ("pod-template-invalid", 7),
        ("gang-scheduling-missing", 11),
        ("training-no-failure-policy", 12),
        ("pod-template-invalid", 17),
        ("gpu-taint-not-tolerated", 18),
        ("pod-template-invalid", 20),
        ("image-pull-always-large", 24),
        ("pod-template-invalid", 25),
        ("pod-template-invalid", 26),
        ("pod-template-invalid", 27),
        ("pod-template-invalid", 28),
        ("pod-template-invalid", 34),
    ],
    ("rules-bad.yaml", True): [
        ("pod-template-invalid", 7),
        ("gang-scheduling-missing", 11),
        ("training-no-failure-policy", 12),
        ("pod-template-invalid", 17),
        ("pod-template-invalid", 20),
        ("image-pull-always-large", 24),
        ("pod-template-invalid", 25),
        ("pod-template-invalid", 26),
        ("pod-template-invalid", 27),
        ("pod-template-invalid", 28),
        ("pod-template-invalid", 34),
    ],
}


@pytest.mark.parametrize(("name", "with_cluster"), sorted(EXPECTED), ids=lambda v: str(v))
def test_mistyped_inputs_exact_findings(name: str, with_cluster: bool) -> None:
    loaded = load_paths([str(MISTYPED / name)])
    assert not loaded.errors
    # every rule, the opt-in ones too: the point is that no rule crashes on mistyped input
    config = LintConfig(profile="all")
    result = run_lint(loaded.objects, cluster=_cluster() if with_cluster else None, config=config)
    assert result.failures == []
    assert [(f.rule, f.line) for f in result.findings] == EXPECTED[(name, with_cluster)]


def test_cli_stderr_empty_on_mistyped_input() -> None:
    """The engine reports rule crashes on stderr ("rule X failed on this input"): none here."""
    from click.testing import CliRunner

    from gpuplane.cli.main import cli

    for cluster in ([], ["--cluster", str(CLUSTER)]):
        res = CliRunner().invoke(cli, ["lint", str(MISTYPED / "rules-bad.yaml"), *cluster])
        assert res.exit_code == 1, res.output
        assert res.stderr == ""


def test_pod_template_invalid_message_quotes_the_api() -> None:
    loaded = load_paths([str(MISTYPED / "r4.yaml")])
    found = [f for f in run_lint(loaded.objects).findings if f.rule == "pod-template-invalid"]
    assert [f.message for f in found] == [
        "Deployment a: spec.template.spec.containers[0].args is an integer where the API expects a list: the API "
        'server rejects it: "Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        'number into Go struct field Container.spec.template.spec.containers.args of type []string". '
        "gpuplane's other checks leave this field out.",
        "Deployment a: spec.template.spec.containers[0].env[0].name is a list where the API expects a string: "
        'the API server rejects it: "Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
        'unmarshal array into Go struct field EnvVar.spec.template.spec.containers.env.name of type string". '
        "gpuplane's other checks leave this field out.",
        "Deployment a: spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].key is a map where the API expects a string: the API server "
        'rejects it: "Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal object '
        "into Go struct field NodeSelectorRequirement.spec.template.spec.affinity.nodeAffinity."
        'requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.key of type string". '
        "gpuplane's other checks leave this field out.",
    ]
    assert [f.fix for f in found] == [
        "make spec.template.spec.containers[0].args a list",
        "make spec.template.spec.containers[0].env[0].name a string",
        "make spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].key a string",
    ]


# -- fuzz: every fixture mutated at its type-sensitive paths ------------------------------------

_NAME_KEYS = frozenset({"name", "key", "operator", "image", "mountPath", "schedulerName", "value"})


def _mutations(node: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """``(path, replacement)`` pairs: lists -> 42 / "x" / True (in turn), maps -> "x", names -> a list."""
    out: list[tuple[tuple, Any]] = []
    if isinstance(node, dict):
        if path:
            out.append((path, "x"))
        for key, value in node.items():
            if isinstance(value, str) and key in _NAME_KEYS:
                out.append(((*path, key), [value]))
            out.extend(_mutations(value, (*path, key)))
    elif isinstance(node, list):
        out.append((path, (42, "x", True)[len(path) % 3]))
        for i, value in enumerate(node):
            out.extend(_mutations(value, (*path, i)))
    return out


def _set(doc: Any, path: tuple, value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*.yaml") if p.name != "cluster.yaml")


@pytest.fixture(scope="module")
def cluster_state():
    return _cluster()


@pytest.mark.parametrize("file", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_rule_fails_on_mutated_fixture(file: Path, cluster_state) -> None:
    docs = [d for d in yaml.load_all(file.read_text(), Loader=yaml.CSafeLoader) if isinstance(d, dict)]
    failures = []
    for i, doc in enumerate(docs):
        for path, value in _mutations(doc):
            mutated = copy.deepcopy(docs)
            _set(mutated[i], path, value)
            objects = [Manifest(d, path=str(file)) for d in mutated]
            for cluster in (None, cluster_state):
                result = run_lint(objects, cluster=cluster, config=LintConfig())
                failures += [(i, path, value, f.rule, f.message) for f in result.failures]
    assert failures == []
