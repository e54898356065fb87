"""Each cluster rule against its failing and passing snapshot (tests/fixtures/diagnose/<rule>/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.diagnose.engine import cluster_rules, run_cluster_rules
from gpuplane.sources.cluster import load_cluster_state

DIR = Path(__file__).resolve().parent.parent / "fixtures" / "diagnose"

EXPECTED: dict[str, list[tuple[str, str, str, str]]] = {
    "gpu-node-not-advertising": [
        (
            "error",
            "Node",
            "gpu-a",
            "node gpu-a is a GPU node (nvidia.com/gpu.present=true) but advertises no GPU in status.allocatable; broken "
            "link: device-plugin: pod gpu-operator/nvidia-device-plugin-daemonset-ax is CrashLoopBackOff (container main): "
            "12 restarts, last exit code 1, Error",
        ),
        (
            "error",
            "Node",
            "gpu-b",
            "node gpu-b is a GPU node (nvidia.com/gpu.present=true) but advertises no GPU in status.allocatable; broken "
            "link: driver: pod gpu-operator/nvidia-driver-daemonset-bx is CrashLoopBackOff (container main): 9 restarts, "
            "last exit code 1, Error; container-toolkit, operator-validator, device-plugin wait for it",
        ),
        (
            "error",
            "Node",
            "gpu-c",
            "node gpu-c is a GPU node (nvidia.com/gpu.present=true) but advertises no GPU in status.allocatable; broken "
            "link: device plugin disabled: nvidia.com/gpu.deploy.device-plugin=false: the operator does not run the "
            "device plugin here",
        ),
        (
            "error",
            "Node",
            "g6e-typed",
            "node g6e-typed is a GPU node (instance type g6e.12xlarge has 4 GPUs) but advertises no GPU in "
            "status.allocatable; broken link: device plugin: no device-plugin pod runs on this node although 3 run "
            "elsewhere",
        ),
    ],
    "gpu-unhealthy-devices": [
        (
            "warning",
            "Node",
            "gpu-a",
            "node gpu-a: 2 of 8 A100-40GB nvidia.com/gpu unhealthy (allocatable 6 < capacity 8); the node can no longer "
            "host an 8-device pod",
        ),
    ],
    "gpu-operator-pods-failing": [
        (
            "error",
            "DaemonSet",
            "nvidia-driver-daemonset",
            "driver nvidia-driver-daemonset in gpu-operator: 2 pods failing (gpu-a: CrashLoopBackOff (container main): "
            "30 restarts, last exit code 1, Error; gpu-b: ImagePullBackOff (container main): Back-off pulling image)",
        ),
        (
            "error",
            "Pod",
            "gpu-feature-discovery-ax",
            "gpu-feature-discovery gpu-feature-discovery in gpu-operator: 1 pod failing (gpu-a: Restarting (container "
            "main): 7 restarts, last exit code 1, Error)",
        ),
    ],
    "mig-config-failed": [
        (
            "error",
            "Node",
            "gpu-a",
            "node gpu-a: the MIG manager failed to apply nvidia.com/mig.config='all-3g.20gb' "
            "(nvidia.com/mig.config.state=failed); entry 'all-3g.20gb' does not exist in the mig-parted config "
            "gpu-operator/custom-mig-config; its GPUs keep the previous layout or none",
        ),
        (
            "error",
            "Node",
            "gpu-b",
            "node gpu-b: MIG change to 'all-1g.5gb' is stuck (nvidia.com/mig.config.state=pending): the MIG manager pod "
            "is CrashLoopBackOff (container main): 6 restarts, last exit code 1, Error; the device plugin stays paused, "
            "the node advertises no GPUs",
        ),
        (
            "error",
            "Node",
            "gpu-c",
            "node gpu-c: GPU Feature Discovery reports NVIDIA-A100-SXM4-40GB-MIG-INVALID: with MIG strategy single every "
            "GPU must be MIG-enabled with one and the same profile",
        ),
    ],
    "gang-partially-running": [
        (
            "error",
            "PyTorchJob",
            "bert",
            "PyTorchJob ml/bert (no gang scheduler): 2 of 3 pods placed and 1 Pending; the placed pods hold 8 "
            "nvidia.com/gpu while the job cannot start",
        ),
    ],
    "gpu-fragmentation": [
        (
            "warning",
            "Pod",
            "big-0",
            "pod ml/big-0 needs 4 nvidia.com/gpu on one node: 4 are free on the 2 nodes it may use (gpu-a 2, gpu-b 2), "
            "at most 2 on any one",
        ),
    ],
    "pending-gpu-pod": [
        (
            "error",
            "Pod",
            "infer-0",
            "pod ml/infer-0 asks for 1 nvidia.com/gpu and is Pending: 0/1 nodes are available: 1 node(s) had untolerated "
            "taint {nvidia.com/gpu: present}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
            "scheduling; 1 GPU node(s) carry the taint nvidia.com/gpu=present:NoSchedule (the usual taint on dedicated "
            "GPU nodes: key = the GPU resource name) and the pod does not tolerate it: add this toleration",
        ),
    ],
}


def _run(rule_id: str, case: str) -> list:
    state, errors = load_cluster_state(str(DIR / rule_id / f"{case}.yaml"))
    assert errors == []
    findings, failures = run_cluster_rules(state)
    assert failures == []
    return findings


def test_every_cluster_rule_has_fixtures_and_expectations() -> None:
    ids = {meta.id for meta in cluster_rules()}
    assert ids == set(EXPECTED)
    assert ids == {
        "gpu-node-not-advertising",
        "gpu-unhealthy-devices",
        "gpu-operator-pods-failing",
        "mig-config-failed",
        "gang-partially-running",
        "gpu-fragmentation",
        "pending-gpu-pod",
    }
    for rule_id in ids:
        assert (DIR / rule_id / "fail.yaml").is_file() and (DIR / rule_id / "pass.yaml").is_file()


@pytest.mark.parametrize("rule_id", sorted(EXPECTED))
def test_failing_snapshot(rule_id: str) -> None:
    found = [
        (f.severity, f.object.kind, f.object.name, f.message)
        for f in _run(rule_id, "fail")
        if f.rule == rule_id
    ]
    assert found == EXPECTED[rule_id]


@pytest.mark.parametrize("rule_id", sorted(EXPECTED))
def test_passing_snapshot_is_clean(rule_id: str) -> None:
    assert [(f.rule, f.message) for f in _run(rule_id, "pass")] == []


def test_findings_carry_evidence_and_fix() -> None:
    for rule_id in EXPECTED:
        for finding in _run(rule_id, "fail"):
            document = finding.to_json()
            assert document["evidence"], finding.rule
            assert document["fix"], finding.rule
            assert set(document) >= {
                "rule",
                "severity",
                "object",
                "path",
                "line",
                "message",
                "fix",
                "evidence",
            }
            for item in document["evidence"]:
                assert set(item) == {"kind", "object", "field", "value", "note"}


def test_not_advertising_evidence_names_the_crashing_plugin() -> None:
    finding = next(f for f in _run("gpu-node-not-advertising", "fail") if f.object.name == "gpu-a")
    assert [e.text() for e in finding.evidence] == [
        "Node gpu-a metadata.labels[nvidia.com/gpu.present] = true (marks a GPU node)",
        "Node gpu-a status.allocatable = no GPU resource (the kubelet has no GPU device plugin registration)",
        "Pod gpu-operator/nvidia-device-plugin-daemonset-ax status = CrashLoopBackOff (device-plugin pod on the node: "
        "CrashLoopBackOff (container main): 12 restarts, last exit code 1, Error)",
    ]
    assert finding.fix == (
        "kubectl logs -n gpu-operator nvidia-device-plugin-daemonset-ax --all-containers --previous"
        "  # check the driver on the host and the nvidia.com/device-plugin.config entry"
    )
    assert finding.to_json()["path"].endswith("gpu-node-not-advertising/fail.yaml")
    assert (
        finding.line == 24
    )  # status.allocatable of gpu-a in the fixture (was 0: typed objects had no lines)


def test_pending_finding_carries_the_scheduler_explanation() -> None:
    (finding,) = [f for f in _run("pending-gpu-pod", "fail") if f.rule == "pending-gpu-pod"]
    expl = finding.to_json()["explanation"]
    assert expl["message"] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/1 nodes "
        "are available: 1 Preemption is not helpful for scheduling."
    )
    assert expl["observed"] == expl["message"]
    assert expl["source"] == "scheduler-model"
    assert expl["causes"] and expl["fixes"]


def test_rules_registered_for_rules_and_explain() -> None:
    from gpuplane.knowledge import section_for_rule
    from gpuplane.rule_catalog import render_page

    metas = {meta.id: meta for meta in cluster_rules()}
    for meta in metas.values():
        assert meta.category == "cluster" and meta.context == "required"
        page = render_page(meta)  # what docs/rules/<id>.md and `gpuplane explain` show
        for heading in (
            "## What it catches",
            "## Why it hurts",
            "## How to fix",
            "## Bad",
            "## Good",
            "## Background",
            "## References",
        ):
            assert heading in page, (meta.id, heading)
        # Background links the rule's knowledge-base section (the same one `gpuplane ask` cites);
        # render_page adds it for every rule, so the rule's own docs must not repeat it.
        assert "## Background" not in meta.docs, meta.id
        section = section_for_rule(meta.id)
        assert section is not None, meta.id
        assert f"`src/gpuplane/knowledge/sections/{section.id}.md` in the gpuplane repository" in page, (
            meta.id
        )
        assert section.title in page, meta.id
    assert metas["gpu-unhealthy-devices"].severity == "warning"
    assert metas["pending-gpu-pod"].severity == "error"


def test_lint_does_not_run_cluster_rules() -> None:
    from gpuplane.lint.config import LintConfig
    from gpuplane.lint.engine import select_rules

    cluster_rules()
    chosen = {meta.id for meta in select_rules(LintConfig(), with_cluster=True)}
    assert not chosen & set(EXPECTED)
