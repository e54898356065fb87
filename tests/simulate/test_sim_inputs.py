"""QA regressions for simulate: input objects join the cluster, API validation refuses pods,
autoscalers only scale for pods a new node helps, same-name objects replace each other, the
public Scheduler API simulate uses, and the CLI's help examples.

Cluster: tests/fixtures/simulate/cluster-2x8.yaml (gpu-1, gpu-2: 8 GPUs each, empty).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import node_from_dict, pod_from_dict
from gpuplane.k8s.validation import extended_resource_errors, invalid_message
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.index import ClusterIndex
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.scheduler.simulate.engine import Engine, Options
from gpuplane.scheduler.simulate.run import run_simulation
from gpuplane.sources import load_paths

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "simulate"


def cluster() -> ClusterState:
    return ClusterState.from_objects(list(load_paths([str(FIX / "cluster-2x8.yaml")]).objects))


def run(*names: str, **options: Any) -> Any:
    objects = list(load_paths([str(FIX / n) for n in names]).objects)
    return run_simulation(cluster(), objects, **options)


def refused(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (e["pod"], e["message"])
        for s in doc["timeline"]
        for e in s["events"]
        if e["type"] == "create-refused"
    ]


# -- 1. input objects join the cluster --------------------------------------------------------


def test_wait_for_first_consumer_claim_in_the_input_binds_at_placement():
    objects = list(load_paths([str(FIX / "pvc-wffc.yaml")]).objects)
    engine = Engine(cluster(), objects, Options()).run()
    placed = [(p["pod"], p["node"]) for p in engine.placements]
    assert placed == [("default/train-0", "gpu-1"), ("default/train-1", "gpu-1")]
    pvc = engine.sim.state.pvcs[("default", "ckpt")]
    assert pvc.get("spec", "volumeName") == "pvc-sim-default-ckpt"
    assert pvc.get("status", "phase") == "Bound"
    assert pvc.annotations["volume.kubernetes.io/selected-node"] == "gpu-1"
    assert engine.sim.state.pvs["pvc-sim-default-ckpt"].get("spec", "claimRef") == {
        "namespace": "default",
        "name": "ckpt",
    }


def test_immediate_claim_without_volume_stays_unbound_and_triggers_no_scale_up():
    result = run("pvc-immediate.yaml")
    doc = result.document
    assert doc["pending"] == [
        {
            "pod": "default/reader",
            "message": "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            "job": "Pod/default/reader",
        }
    ]
    assert doc["nodes_added"] == []
    assert doc["notes"] == [
        "karpenter: no NodePool helps default/reader (Pod/default/reader): "
        "pod has unbound immediate PersistentVolumeClaims"
    ]


def test_resource_quota_in_the_input_admits_pods():
    doc = run("quota-refused-karpenter.yaml").document
    assert doc["placements"] == [{"pod": "team-a/big-0", "node": "gpu-1", "time_s": 0.0}]
    quota = (
        'pods "big-{}" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=8, '
        "used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
    )
    assert [(p["pod"], p["message"]) for p in doc["pending"]] == [
        ("team-a/big-1", quota.format(1)),
        ("team-a/big-2", quota.format(2)),
    ]
    # 3. never-created pods do not make the NodePool launch anything
    assert doc["nodes_added"] == []


# -- 2. API validation --------------------------------------------------------------------------

HALF = (
    'Pod "half" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": '
    'must be an integer, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": '
    "must be an integer]"
)
TAGGER = (
    'Deployment.apps "tagger" is invalid: spec.template.spec.containers[0].resources.limits: '
    "Required value: Limit must be set for non overcommitable resources"
)
MISMATCH = (
    'Pod "mismatch-master-0" is invalid: spec.containers[0].resources.requests: Invalid value: "1": '
    "must be equal to nvidia.com/gpu limit of 2"
)


def test_pods_the_api_server_rejects_are_create_refused():
    doc = run("invalid-gpu.yaml").document
    assert doc["placements"] == [{"pod": "default/whole", "node": "gpu-1", "time_s": 0.0}]
    expected = [
        ("default/half", HALF),
        ("default/tagger-0", TAGGER),
        ("default/tagger-1", TAGGER),
        ("default/mismatch-master-0", MISMATCH),
    ]
    assert [(p["pod"], p["message"]) for p in doc["pending"]] == expected
    assert refused(doc) == expected
    # no time elapses: utilization is the final allocation, 1 of 16 GPUs
    assert doc["summary"]["gpu_utilization"] == 0.0625
    assert doc["timeline"][-1]["gpus_allocated"] == 1


def test_validation_messages():
    assert (
        extended_resource_errors({"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}) == []
    )
    assert extended_resource_errors({"containers": [{"resources": {"requests": {"cpu": "500m"}}}]}) == []
    errors = extended_resource_errors(
        {
            "initContainers": [{"resources": {"limits": {"amd.com/gpu": "1.5"}}}],
            "containers": [{"resources": {"requests": {"nvidia.com/gpu": 1, "example.com/nic": 2}}}],
        },
        "spec.template.spec",
    )
    assert errors == [
        "spec.template.spec.containers[0].resources.limits: Required value: "
        "Limit must be set for non overcommitable resources",
        'spec.template.spec.initContainers[0].resources.limits[amd.com/gpu]: Invalid value: "1500m": '
        "must be an integer",
        'spec.template.spec.initContainers[0].resources.requests[amd.com/gpu]: Invalid value: "1500m": '
        "must be an integer",
    ]
    assert invalid_message("Job", "batch", "j", errors[:1]) == (
        'Job.batch "j" is invalid: spec.template.spec.containers[0].resources.limits: Required value: '
        "Limit must be set for non overcommitable resources"
    )


# -- 4. same-name objects -------------------------------------------------------------------------


def test_later_object_with_the_same_name_replaces_the_earlier():
    result = run("duplicate-a.yaml", "duplicate-b.yaml")
    assert result.notes == [
        f"Deployment serve ({FIX / 'duplicate-b.yaml'}:2) replaces the one in {FIX / 'duplicate-a.yaml'}:2: "
        "same kind, namespace and name (kubectl apply updates the object)"
    ]
    doc = result.document
    assert [j["job"] for j in doc["jobs"]] == ["Deployment/default/serve"]
    assert [(p["pod"], p["node"]) for p in doc["placements"]] == [
        ("default/serve-0", "gpu-1"),
        ("default/serve-1", "gpu-2"),
    ]
    assert [p["pod"] for p in doc["pending"]] == ["default/serve-2"]


def test_cli_prints_replacement_notes_on_stderr():
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "--cluster",
            str(FIX / "cluster-2x8.yaml"),
            str(FIX / "duplicate-a.yaml"),
            str(FIX / "duplicate-b.yaml"),
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 0
    assert result.stderr.startswith("gpuplane: note: Deployment serve (")
    assert result.stderr.count("\n") == 1


# -- 5. the public Scheduler API ------------------------------------------------------------------

NEW_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-3", "labels": {"kubernetes.io/hostname": "gpu-3", "pool": "new"}},
    "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110", "example.com/fpga": "2"}},
}


def _pod(name: str, gpus: int, priority: int = 0) -> Any:
    return pod_from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "priority": priority,
                "containers": [
                    {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
                ],
            },
        }
    )


def _same_index(a: ClusterIndex, b: ClusterIndex) -> None:
    names = sorted(set(a.resource_index) | set(b.resource_index))
    for name in names:
        ra, rb = a.resource_index.get(name), b.resource_index.get(name)
        alloc_a = a.alloc[ra].tolist() if ra is not None else [0] * a.num_nodes
        alloc_b = b.alloc[rb].tolist() if rb is not None else [0] * b.num_nodes
        req_a = a.req[ra].tolist() if ra is not None else [0] * a.num_nodes
        req_b = b.req[rb].tolist() if rb is not None else [0] * b.num_nodes
        assert (name, alloc_a, req_a) == (name, alloc_b, req_b)
    assert [i.name for i in a.node_infos] == [i.name for i in b.node_infos]
    assert [len(i.pods) for i in a.node_infos] == [len(i.pods) for i in b.node_infos]
    assert a.class_ids.tolist() == b.class_ids.tolist()
    assert a.shapes.shape_of == b.shapes.shape_of
    everyone = ({},)  # the empty selector: every pod of the namespaces, from the pod index
    assert sorted((p.key, j) for p, j in a.pods.select(a.pods.namespaces(), everyone)) == sorted(
        (p.key, j) for p, j in b.pods.select(b.pods.namespaces(), everyone)
    )


def test_assume_forget_add_node_keep_the_index_exact():
    state = cluster()
    sched = Scheduler(state)
    a, b = _pod("a", 4), _pod("b", 2)
    sched.assume(a, "gpu-1")
    sched.assume(b, "gpu-1")
    assert sched.forget(a, "gpu-1") is True
    assert sched.forget(a, "gpu-1") is False
    assert sched.add_node(node_from_dict(NEW_NODE)) == 2
    fresh = Scheduler(
        ClusterState(
            [*cluster().nodes, node_from_dict(NEW_NODE)],
            [
                pod_from_dict(
                    {
                        **{"apiVersion": "v1", "kind": "Pod"},
                        "metadata": {"name": "b", "namespace": "default"},
                        "spec": {
                            "nodeName": "gpu-1",
                            "containers": [
                                {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 2}}}
                            ],
                        },
                    }
                )
            ],
            [],
        )
    )
    _same_index(sched.index, fresh.index)
    assert [n.metadata.name for n in state.nodes] == ["gpu-1", "gpu-2", "gpu-3"]


def test_schedule_or_preempt_returns_the_victims():
    sched = Scheduler(cluster())
    low = [_pod(f"low-{i}", 8) for i in range(2)]
    for pod, node in zip(low, ("gpu-1", "gpu-2"), strict=True):
        sched.assume(pod, node)
    result, outcome = sched.schedule_or_preempt(_pod("high", 8, priority=100))
    assert isinstance(result, FitError)
    assert outcome is not None and outcome.nominated_node == "gpu-1"
    assert outcome.victims == [low[0]]
    fits, none = sched.schedule_or_preempt(_pod("cpu", 0))
    assert isinstance(fits, ScheduleResult) and none is None


def test_check_new_node_runs_the_filters_on_a_template():
    sched = Scheduler(cluster())
    node = node_from_dict(
        {**NEW_NODE, "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}
    )
    assert sched.check_new_node(_pod("p", 0), node) == (False, "node(s) had untolerated taint {k: v}")
    gpu = node_from_dict(
        {**NEW_NODE, "status": {"allocatable": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"}}}
    )
    assert sched.check_new_node(_pod("p", 8), gpu) == (True, "")
    assert sched.check_new_node(_pod("p", 8), gpu, {"pods": 1, "nvidia.com/gpu": 4}) == (
        False,
        "Insufficient nvidia.com/gpu",
    )


# -- 8. CLI help ----------------------------------------------------------------------------------


def test_help_examples_point_at_existing_files():
    result = CliRunner().invoke(cli, ["simulate", "--help"], prog_name="gpuplane")
    assert result.exit_code == 0
    assert "  Examples:\n    gpuplane simulate --cluster" in result.stdout
    paths = re.findall(r"(examples/\S+)", result.stdout)
    assert "examples/simulate/deadlock-jobs.yaml" in paths
    for path in paths:
        assert (ROOT / path).exists(), path


# -- the QA commands on the demo cluster ----------------------------------------------------------

DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
MANIFESTS = ROOT / "examples" / "manifests"


def _demo(*paths: Path, **options: Any) -> Any:
    from gpuplane.sources.cluster import load_cluster_state

    state, _ = load_cluster_state(DEMO)
    return run_simulation(state, list(load_paths([str(p) for p in paths]).objects), **options)


def test_demo_pvc_from_the_same_file_is_found():
    """The demo cluster is shared with other areas and grows: the exact text is asserted on the
    fixture cluster (tests above); here, the claim is found and the pods reach the filters."""
    doc = _demo(MANIFESTS / "rwo-pvc-shared-by-workers.yaml", autoscaler="none").document
    messages = {p["pod"]: p["message"] for p in doc["pending"]}
    assert sorted(messages) == [f"team-research/ddp-finetune-{i}" for i in range(4)]
    for message in messages.values():
        assert "persistentvolumeclaim" not in message
        assert re.fullmatch(r"0/\d+ nodes are available: \d+ Insufficient nvidia\.com/gpu, .*", message), (
            message
        )


def test_demo_invalid_pods_are_refused():
    doc = _demo(
        MANIFESTS / "fractional-gpu.yaml", MANIFESTS / "gpu-request-without-limit.yaml", autoscaler="none"
    ).document
    assert doc["placements"] == []
    assert [pod for pod, _ in refused(doc)] == [
        "team-nlp/half-a-gpu",
        "team-vision/image-tagger-0",
        "team-vision/image-tagger-1",
    ]
    last = doc["timeline"][-1]
    assert last["gpus_allocated"] > 0
    assert doc["summary"]["gpu_utilization"] == round(last["gpus_allocated"] / last["gpus_total"], 4)


def test_demo_all_manifests_launch_no_useless_nodes_and_list_each_pod_once():
    result = _demo(MANIFESTS)
    doc = result.document
    assert doc["nodes_added"] == []
    keys = [p["pod"] for p in doc["pending"]]
    assert len(keys) == len(set(keys))
    assert keys.count("inference/llama-70b-0") == 1
    assert len(result.notes) == 5
