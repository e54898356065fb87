"""The examples load cleanly, the demo snapshot is reproducible and coherent."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.gpu.nodes import gpu_nodes
from gpuplane.sources import load_paths
from gpuplane.sources.cluster import load_cluster_state

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DEMO = EXAMPLES / "clusters" / "demo.yaml"


def test_demo_snapshot_loads_without_errors() -> None:
    state, errors = load_cluster_state(str(DEMO))
    assert errors == []
    assert (len(state.nodes), len(state.pods)) == (14, 124)
    assert state.kubernetes_version() == "1.31"
    assert len(gpu_nodes(state)) == 12


def test_demo_snapshot_is_what_the_builder_writes(tmp_path: Path) -> None:
    out = tmp_path / "demo.yaml"
    subprocess.run(
        [sys.executable, str(EXAMPLES / "clusters" / "build_demo.py"), str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_text() == DEMO.read_text()


def test_demo_pending_pods_and_their_scheduler_messages() -> None:
    state, _ = load_cluster_state(str(DEMO))
    messages = {}
    for pod in state.pending_pods:
        condition = next(c for c in pod.status.conditions if c.type == "PodScheduled")
        assert (condition.status, condition.reason) == ("False", "Unschedulable")
        messages[pod.key.rsplit("-", 1)[0] if "worker" not in pod.key else pod.key] = condition.message
    assert messages == {
        "team-nlp/llm-finetune-worker-2": "0/14 nodes are unavailable: 14 Insufficient nvidia.com/gpu.",
        "team-nlp/llm-finetune-worker-3": "0/14 nodes are unavailable: 14 Insufficient nvidia.com/gpu.",
        "team-vision/vit-h-pretrain": "0/14 nodes are available: 14 Insufficient nvidia.com/gpu. preemption: "
        "0/14 nodes are available: 14 No preemption victims found for incoming pod.",
        "team-nlp/qwen-sft": "0/14 nodes are available: 12 Insufficient nvidia.com/gpu, 2 node(s) had untolerated "
        "taint {nvidia.com/gpu: present}. preemption: 0/14 nodes are available: 12 No preemption victims found "
        "for incoming pod, 2 Preemption is not helpful for scheduling.",
        # FitError sorts "<count> <reason>" strings (sort.Strings): "12 ..." sorts before "2 ...".
        "team-speech/whisper-finetune": "0/14 nodes are available: 12 node(s) didn't match Pod's node "
        "affinity/selector, 2 Insufficient nvidia.com/gpu. preemption: 0/14 nodes are available: 12 Preemption is "
        "not helpful for scheduling, 2 No preemption victims found for incoming pod.",
    }


def test_demo_recorded_messages_are_what_why_pending_computes() -> None:
    """The builder writes each Pending pod's PodScheduled message with its own model of kube-scheduler;
    gpuplane's scheduler model must compute exactly the same text for the same state."""
    state, _ = load_cluster_state(str(DEMO))
    recorded = {
        pod.key: next(c.message for c in pod.status.conditions if c.type == "PodScheduled")
        for pod in state.pending_pods
    }
    result = CliRunner().invoke(cli, ["why-pending", "--cluster", str(DEMO), "-f", "json"])
    assert result.exit_code == 0, result.output
    computed = {p["pod"]: p["message"] for p in json.loads(result.stdout)["pods"]}
    assert computed == recorded
    assert len(computed) == 5


def test_demo_shows_every_kind_of_cluster_finding() -> None:
    """Issue acceptance: the demo cluster in examples/ shows each kind of cluster finding."""
    from gpuplane.rule_catalog import all_rules

    result = CliRunner().invoke(cli, ["diagnose", "--cluster", str(DEMO), "-f", "json"])
    assert result.exit_code == 0, result.output
    found = Counter(f["rule"] for f in json.loads(result.stdout)["findings"])
    cluster_rules = [r.id for r in all_rules() if r.category == "cluster"]
    assert len(cluster_rules) == 7
    assert {rule: found[rule] for rule in cluster_rules if found[rule] < 1} == {}


def test_demo_is_coherent() -> None:
    state, _ = load_cluster_state(str(DEMO))
    for node in state.nodes:
        free = state.free(node.name)
        assert all(v >= 0 for v in free.values()), (node.name, free)
    # Fragmentation: 9 whole GPUs free, at most 4 on one node.
    whole = {n.name: state.free(n.name).get("nvidia.com/gpu", 0) for n in state.nodes}
    assert sum(whole.values()) == 9 + 6  # + 6 free time-sliced L4 replicas
    assert max(v for n, v in whole.items() if not n.startswith("node-l4")) == 4
    # Quota status.used matches the pods (requests.nvidia.com/gpu of non-terminal pods).
    quota = next(q for q in state.quotas if q.namespace == "team-nlp")
    gpus = sum(
        int(c.resources.limits.get("nvidia.com/gpu", 0))
        for p in state.pods
        if p.metadata.namespace == "team-nlp" and p.status.phase not in ("Succeeded", "Failed")
        for c in p.spec.containers
    )
    assert (
        quota.get("status", "used", "requests.nvidia.com/gpu") == str(gpus) == "37"
    )  # 32 Volcano + 4 qwen-sft (Pending pods count) + 1 bert-eval
    assert Counter(o.kind for o in state.objects)["ResourceQuota"] == 2


def test_example_manifests_load_without_errors() -> None:
    loaded = load_paths([str(EXAMPLES / "manifests")])
    assert loaded.errors == []
    assert len(loaded.objects) == 14  # 13 + the ResourceQuota of the corrected vLLM example


def test_inventory_on_demo_exits_0() -> None:
    result = CliRunner().invoke(cli, ["inventory", "--cluster", str(DEMO)])
    assert result.exit_code == 0, result.stderr


# Each example at the top of examples/manifests/ shows one mistake; its name announces the rule.
ANNOUNCED_RULE = {
    "fractional-gpu.yaml": "gpu-fractional-quantity",
    "gpu-request-without-limit.yaml": "gpu-request-without-limit",
    "karpenter-gpu-nodepool-untainted.yaml": "karpenter-gpu-nodepool-untainted",
    "pytorchjob-no-gang.yaml": "gang-scheduling-missing",
    "quota-limits-key.yaml": "quota-gpu-invalid-key",
    "rwo-pvc-shared-by-workers.yaml": "rwo-volume-shared",
    "vllm-no-startup-probe.yaml": "inference-no-startup-probe",
}


def test_good_manifests_lint_clean() -> None:
    """manifests/good/ holds the corrected versions: not even an info finding (QA: it had 5 warnings)."""
    result = CliRunner().invoke(cli, ["lint", str(EXAMPLES / "manifests" / "good"), "--fail-on", "info"])
    assert result.exit_code == 0, result.stdout
    assert result.stdout == "No findings in 6 objects.\n"


def test_each_bad_manifest_shows_the_rule_its_name_announces() -> None:
    import json

    files = sorted(p.name for p in (EXAMPLES / "manifests").glob("*.yaml"))
    assert files == sorted(ANNOUNCED_RULE)  # a new example must say which rule it demonstrates
    for name, rule in ANNOUNCED_RULE.items():
        result = CliRunner().invoke(cli, ["lint", str(EXAMPLES / "manifests" / name), "-f", "json"])
        rules = {finding["rule"] for finding in json.loads(result.stdout)["findings"]}
        assert rule in rules, f"{name}: {sorted(rules)}"


HELP_COMMANDS = [
    ["diagnose"],
    ["advise"],
    ["advise", "mig"],
    ["advise", "sharing"],
    ["advise", "capacity"],
    ["ask"],
    ["generate"],
    ["inventory"],
    ["snapshot"],
    ["mcp"],
    ["lint"],
    ["rules"],
    ["explain"],
    ["why-pending"],
    ["simulate"],
]


def test_help_texts_teach_with_runnable_examples() -> None:
    """Each --help: a description paragraph, a blank line, then an Examples: block kept line by line,
    whose bundled example files exist (QA: "Exit codes:" ran into the examples)."""
    import re

    for command in HELP_COMMANDS:
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0
        text = result.stdout
        label = " ".join(command)
        assert "\n\n  Examples:\n    gpuplane " in text, label
        block = text.split("\n\n  Examples:\n", 1)[1].split("\n\n", 1)[0]
        assert all(line.startswith("    ") for line in block.splitlines()), label
        if "Exit codes:" in text:
            assert "\n\n  Exit codes:" in text, label
        for path in re.findall(r"examples/[\w./-]+\.yaml", block):
            assert (ROOT / path).is_file(), f"{label}: {path}"
