"""``simulate -n NS`` submits the workloads as ``kubectl apply -n NS`` would (issue 17 item 1).

cli-runtime ``pkg/resource/visitor.go`` ``RequireNamespace`` (what ``kubectl apply -n`` runs):
a namespaced object without a namespace gets NS, one naming another namespace is refused with
``the namespace from the provided object "X" does not match the namespace "NS". You must pass
'--namespace=X' to perform this operation.``; cluster-scoped objects (a Karpenter NodePool) are
left alone (k8s/scope.py)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.scope import apply_namespace

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.08-py3
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _simulate(tmp_path: Path, text: str, *extra: str):
    path = tmp_path / "inputs.yaml"
    path.write_text(text)
    return CliRunner().invoke(cli, ["simulate", "--cluster", CLUSTER, str(path), "-f", "json", *extra]), path


def test_objects_without_a_namespace_get_the_one_of_n(tmp_path: Path) -> None:
    result, _ = _simulate(tmp_path, JOB, "-n", "team-a")
    assert result.exit_code == 0, result.stderr
    assert [p["pod"].split("/")[0] for p in json.loads(result.stdout)["placements"]] == ["team-a"]
    default, _ = _simulate(tmp_path, JOB)
    assert [p["pod"].split("/")[0] for p in json.loads(default.stdout)["placements"]] == ["default"]


def test_an_object_of_another_namespace_is_refused_with_kubectls_words(tmp_path: Path) -> None:
    other = JOB.replace("  name: train\n", "  name: train\n  namespace: team-b\n")
    result, path = _simulate(tmp_path, JOB + "---\n" + other, "-n", "team-a")
    assert result.exit_code == 2
    assert result.stderr == (
        f'gpuplane: {path}:14: Job train: the namespace from the provided object "team-b" does not match the '
        "namespace \"team-a\". You must pass '--namespace=team-b' to perform this operation.\n"
    )
    assert [p["pod"].split("/")[0] for p in json.loads(result.stdout)["placements"]] == ["team-a"]


def test_cluster_scoped_objects_are_left_alone() -> None:
    pool = Manifest({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"}})
    assert apply_namespace(pool, "team-a") is None
    assert "namespace" not in pool.metadata
    bare = Manifest({"apiVersion": "v1", "kind": "Pod"})
    assert apply_namespace(bare, "team-a") is None
    assert bare.namespace == "team-a"
