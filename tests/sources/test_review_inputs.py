"""Review findings on input handling: bad cluster sources give one-line errors, never tracebacks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources import cluster as cluster_module
from gpuplane.sources import load_paths
from gpuplane.sources.cluster import load_cluster_state, read_cluster
from gpuplane.sources.manifest import Manifest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

REVIEW = FIXTURES / "sources" / "review"


@pytest.fixture(autouse=True)
def _in_review_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REVIEW)  # errors name the file as given: keep paths short and exact


def _errors(source: str) -> list[str]:
    return [str(e) for e in read_cluster(source).errors]


def test_list_items_not_a_list_is_a_load_error() -> None:
    assert _errors("items-not-list.yaml") == ["items-not-list.yaml:3: items is not a list"]
    assert _errors("items-not-list.json") == ["items-not-list.json:1: items is not a list"]
    assert [str(e) for e in load_paths(["items-not-list.yaml"]).errors] == [
        "items-not-list.yaml:3: items is not a list"
    ]
    assert [str(e) for e in load_paths(["items-not-list.json"]).errors] == [
        "items-not-list.json:1: items is not a list"
    ]


def test_json_item_with_non_string_kind_names_its_item() -> None:
    # was: UnboundLocalError on the first item, a stale kind ("Node x") on later ones
    assert _errors("j1.json") == ["j1.json:1: items[0]: kind is not a string (a number)"]
    data = read_cluster("j2.json")
    assert [str(e) for e in data.errors] == ["j2.json:1: items[1]: kind is not a string (a number)"]
    assert [n.metadata.name for n in data.nodes] == ["n"]


def test_list_annotations_not_a_map_are_ignored() -> None:
    data = read_cluster("y1.yaml")
    assert data.errors == [] and data.server_version is None
    assert [n.metadata.name for n in data.nodes] == ["n"]


def test_non_string_api_version_is_a_load_error() -> None:
    assert _errors("apiversion-number.yaml") == [
        "apiversion-number.yaml:1: apiVersion is not a string (a number)"
    ]
    assert [str(e) for e in load_paths(["apiversion-number.yaml"]).errors] == [
        "apiversion-number.yaml:1: apiVersion is not a string (a number)"
    ]


def test_read_cluster_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str, cluster: object) -> None:
        raise RuntimeError("reader bug\nsecond line")

    monkeypatch.setattr(cluster_module, "_read_file", broken)
    data = read_cluster("y1.yaml")
    assert [str(e) for e in data.errors] == ["y1.yaml: cannot read (RuntimeError: reader bug)"]
    state, errors = load_cluster_state("y1.yaml")
    assert state.empty and len(errors) == 1


@pytest.mark.parametrize(
    "command",
    [
        ["inventory"],
        ["why-pending"],
        ["diagnose"],
        ["simulate", os.fspath(FIXTURES / "simulate" / "review" / "huge-pod.yaml")],
        ["lint", os.fspath(FIXTURES / "simulate" / "review" / "huge-pod.yaml")],
    ],
)
def test_every_command_reports_an_unusable_cluster_the_same_way(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [command[0], "--cluster", "items-not-list.yaml", *command[1:]])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "gpuplane: items-not-list.yaml:3: items is not a list\n"
        "gpuplane: nothing usable in cluster source 'items-not-list.yaml'\n"
    )


def test_partial_cluster_prints_errors_then_exits_2() -> None:
    result = CliRunner().invoke(cli, ["inventory", "--cluster", "j2.json", "-f", "json"])
    assert result.exit_code == 2
    assert result.stderr == "gpuplane: j2.json:1: items[1]: kind is not a string (a number)\n"
    assert '"nodes"' in result.stdout


def test_unusable_version_warns_and_is_not_shown() -> None:
    result = CliRunner().invoke(cli, ["inventory", "--cluster", "j3.json"])
    assert result.exit_code == 0
    assert result.stderr == (
        "gpuplane: warning: cluster version 'v2.99.1' is not a Kubernetes version like v1.31; "
        "using the newest wording gpuplane knows\n"
    )
    assert "Kubernetes 2.99" not in result.stdout
    result = CliRunner().invoke(cli, ["why-pending", "--cluster", "y2.yaml"])
    assert result.stderr == (
        "gpuplane: warning: cluster version 'banana' is not a Kubernetes version like v1.31; "
        "using the newest wording gpuplane knows\n"
    )
    # an explicit --kubernetes-version makes the cluster's value moot: no warning
    result = CliRunner().invoke(cli, ["why-pending", "--cluster", "y2.yaml", "--kubernetes-version", "1.30"])
    assert result.stderr == ""


def test_typed_pod_and_node_decided_the_same_way_everywhere() -> None:
    # a Node of another group/version is no core Node for read_cluster nor for from_objects
    odd = Manifest({"apiVersion": "example.com/v1", "kind": "Node", "metadata": {"name": "x"}})
    core = Manifest(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": {"a": 1}}}, "f.yaml", 4
    )
    state = ClusterState.from_objects([odd, core])
    assert state.nodes == [] and state.objects == [odd]
    assert [str(e) for e in state.errors] == [
        "f.yaml:4: Node n: Expected `str`, got `int` - at `$.metadata.labels[...]`"
    ]
