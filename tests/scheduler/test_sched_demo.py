"""The demo cluster (examples/clusters/demo.yaml): each Pending pod's PodScheduled message, as the
cluster recorded it, is what the model reproduces; plus the CLI contract (spec/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.sources import load_paths

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo.yaml"
pytestmark = pytest.mark.skipif(not DEMO.exists(), reason="demo cluster not built yet")


def _demo() -> Scheduler:
    return Scheduler(ClusterState.from_objects(load_paths([str(DEMO)]).objects))


def test_demo_messages_match_recorded_conditions() -> None:
    s = _demo()
    checked = 0
    for pod in s.cluster.pending_pods:
        recorded = [c.message for c in pod.status.conditions if c.type == "PodScheduled" and c.message]
        if not recorded:
            continue
        assert s.explain(pod).message == recorded[0], pod.key
        checked += 1
    assert checked >= 3


def test_demo_gpu_causes() -> None:
    s = _demo()
    causes = {p.key: s.explain(p).causes for p in s.cluster.pending_pods}
    text = "\n".join(c for cs in causes.values() for c in cs)
    assert "fragmentation" in text
    assert "MIG mixed-strategy and exposes only nvidia.com/mig-1g.5gb, nvidia.com/mig-3g.20gb" in text
    assert "add this toleration" in text
    assert "Volcano gang" in text


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplane", "why-pending", *args], capture_output=True, text=True)


def test_cli_json_contract() -> None:
    run = _cli("--cluster", str(DEMO), "-f", "json", "--pod", "team-nlp/qwen-sft-gb55k")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    (item,) = doc["pods"]
    assert item["pod"] == "team-nlp/qwen-sft-gb55k"
    assert item["nodes"]["node-h100-1"] == ["node(s) had untolerated taint {nvidia.com/gpu: present}"]
    assert doc["kubernetesVersion"] == "1.31"
    assert item["causes"] and item["fixes"]


def test_cli_version_override_and_text() -> None:
    run = _cli("--cluster", str(DEMO), "-f", "json", "--pod", "team-nlp/qwen-sft-gb55k", "--kubernetes-version", "1.35")
    assert "2 node(s) had untolerated taint(s)" in json.loads(run.stdout)["pods"][0]["message"]
    text = _cli("--cluster", str(DEMO))
    assert text.returncode == 0 and "team-vision/vit-h-pretrain-86f9g" in text.stdout


def test_cli_bad_input() -> None:
    assert _cli("--cluster", "/nonexistent/snap.yaml").returncode == 2
    run = _cli("--cluster", str(DEMO), "--kubernetes-version", "banana")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    run = _cli("--cluster", str(DEMO), "--pod", "nope/nope")
    assert run.returncode == 2 and "not found" in run.stderr
