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
from gpuplane.why_pending.explain import explain, pending

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
        assert explain(s, pod).message == recorded[0], pod.key
        checked += 1
    assert checked >= 3


def test_demo_gpu_causes() -> None:
    s = _demo()
    causes = {p.key: explain(s, p).cause_texts() for p in s.cluster.pending_pods}
    text = "\n".join(c for cs in causes.values() for c in cs)
    assert "fragmentation" in text
    assert "add this toleration" in text
    assert "Volcano gang" in text


def test_demo_mig_cause_only_when_a_slice_can_serve() -> None:
    """8 whole GPUs cannot run on MIG slices (2 free 3g.20gb; one MIG device per CUDA process):
    one short cause, no bogus `nvidia.com/mig-3g.20gb: 8` fix. A 1-GPU pod can use a slice."""
    s = _demo()
    expls = {e.pod.key: e for e in pending(s)}
    vit = expls["team-vision/vit-h-pretrain-86f9g"]
    assert vit.cause_texts()[0] == (
        "node node-a100-mig-1 has its GPUs MIG-partitioned (nvidia.com/mig-1g.5gb, nvidia.com/mig-3g.20gb) "
        "and advertises no nvidia.com/gpu"
    )
    assert not any("mig-" in f for f in vit.fixes)
    whisper = expls["team-speech/whisper-finetune-2d4v4"]
    assert whisper.cause_texts()[:2] == [
        "12 node(s) do not match the pod's nodeSelector/affinity (karpenter.sh/nodepool=a100-40gb-mig)",
        "the pod asks nvidia.com/gpu but node node-a100-mig-1 is MIG mixed-strategy and exposes only "
        "nvidia.com/mig-1g.5gb, nvidia.com/mig-3g.20gb; 1 free nvidia.com/mig-3g.20gb would serve it",
    ]
    assert whisper.fixes[0].startswith("resources:\n  limits:\n    nvidia.com/mig-3g.20gb: 1   #")
    # Most decisive first: the untolerated GPU-pool taint before fragmentation.
    qwen = expls["team-nlp/qwen-sft-gb55k"]
    assert qwen.cause_texts()[0].startswith("2 GPU node(s) carry the taint nvidia.com/gpu=present:NoSchedule")
    assert "fragmentation" in qwen.cause_texts()[2]


def test_demo_gang_explained_once() -> None:
    s = _demo()
    expls = {e.pod.key: e for e in pending(s)}
    gang = (
        "Volcano gang team-nlp/llm-finetune-f71dc84e-649b-47e3-afed-7ffe5b1314d2: 2 of 4 placed; "
        "the other 2 need 8 nvidia.com/gpu each on one node; max free on any node is 4"
    )
    lead = expls["team-nlp/llm-finetune-worker-2"]
    assert lead.cause_texts()[0] == gang
    assert lead.fixes[0] == (
        "to unblock the gang, 2 node(s) with 8 free nvidia.com/gpu are needed at once (0 now): free "
        "nvidia.com/gpu on 2 more node(s) (drain or wait for jobs there), or let the autoscaler add them"
    )
    other = expls["team-nlp/llm-finetune-worker-3"]
    assert other.cause_texts() == [
        gang,
        "same filter verdicts as team-nlp/llm-finetune-worker-2 (explained there)",
    ]
    assert other.fixes == []


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuplane", "why-pending", *args], capture_output=True, text=True
    )


def test_cli_json_contract() -> None:
    run = _cli("--cluster", str(DEMO), "-f", "json", "--pod", "team-nlp/qwen-sft-gb55k")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    (item,) = doc["pods"]
    assert item["pod"] == "team-nlp/qwen-sft-gb55k"
    assert item["nodes"]["node-h100-1"] == ["node(s) had untolerated taint {nvidia.com/gpu: present}"]
    assert doc["kubernetes_version"] == "1.31"
    assert item["causes"] and item["fixes"]


def test_cli_version_override_and_text() -> None:
    run = _cli(
        "--cluster",
        str(DEMO),
        "-f",
        "json",
        "--pod",
        "team-nlp/qwen-sft-gb55k",
        "--kubernetes-version",
        "1.35",
    )
    assert "2 node(s) had untolerated taint(s)" in json.loads(run.stdout)["pods"][0]["message"]
    text = _cli("--cluster", str(DEMO))
    assert text.returncode == 0 and "team-vision/vit-h-pretrain-86f9g" in text.stdout


def test_cli_bad_input() -> None:
    assert _cli("--cluster", "/nonexistent/snap.yaml").returncode == 2
    run = _cli("--cluster", str(DEMO), "--kubernetes-version", "banana")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    run = _cli("--cluster", str(DEMO), "--pod", "nope/nope")
    assert run.returncode == 2 and "not found" in run.stderr


def test_versions_outside_the_known_wordings_are_noted() -> None:
    """spec/cli.md: wording per supported minor; outside that range the nearest is used, said on stderr."""
    newer = _cli("--cluster", str(DEMO), "--kubernetes-version", "1.40", "-f", "json")
    assert newer.returncode == 0
    assert json.loads(newer.stdout)["kubernetes_version"] == "1.36"
    assert newer.stderr == (
        "gpuplane: note: kube-scheduler 1.40 wording is not modelled; using 1.36 "
        "(the newest gpuplane knows)\n"
    )
    older = _cli("--cluster", str(DEMO), "--kubernetes-version", "1.27", "-f", "json")
    assert older.stderr == (
        "gpuplane: note: kube-scheduler 1.27 wording is not modelled; using 1.28 "
        "(the oldest gpuplane knows)\n"
    )
    assert _cli("--cluster", str(DEMO), "--kubernetes-version", "1.31", "-f", "json").stderr == ""
