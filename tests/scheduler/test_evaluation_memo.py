"""An explaining session's memo of scheduling cycles (``why_pending.evaluations``, keyed by
``scheduler.equivalence.scheduling_key``) gives every Pending pod the explanation it gets
alone, on random clusters whose Pending pods come in groups of replicas that differ only in
identity (name, uid, owner, creation time, conditions): lower-priority pods to preempt, PDBs,
taints, topology spread, pods nominated to a node, generic ephemeral volumes whose claim
(``<pod>-<volume>``) exists for some replicas and not others or is not theirs, DRA claims made
from a template and named in the pod's status. And it runs one cycle per key, not per pod.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import disruption_budget, node, obj, pod, scheduler

from gpuplane.k8s.objects import pod_from_dict
from gpuplane.report.json_pieces import pieces
from gpuplane.report.why_pending_text import to_json
from gpuplane.scheduler.equivalence import scheduling_key
from gpuplane.why_pending.evaluations import Evaluations
from gpuplane.why_pending.explain import explain, pending

ZONE = "topology.kubernetes.io/zone"
LOCAL = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "local"},
    "provisioner": "kubernetes.io/no-provisioner",
    "volumeBindingMode": "WaitForFirstConsumer",
}
GPU_CLASS = obj(
    "DeviceClass",
    "gpu.nvidia.com",
    "resource.k8s.io/v1",
    spec={"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
)

node_st = st.fixed_dictionaries(
    {
        "gpus": st.integers(0, 8),
        "zone": st.sampled_from(("a", "b")),
        "tainted": st.booleans(),
        "running": st.lists(
            st.fixed_dictionaries(
                {
                    "gpus": st.integers(0, 4),
                    "priority": st.sampled_from((0, 10, 1000)),
                    "app": st.sampled_from(("web", "db")),
                }
            ),
            max_size=3,
        ),
    }
)
workload_st = st.fixed_dictionaries(
    {
        "gpus": st.integers(1, 8),
        "priority": st.sampled_from((5, 100)),
        "app": st.sampled_from(("web", "db", "train")),
        "tolerates": st.booleans(),
        "spread": st.booleans(),
        # none | ephemeral volume | DRA claim from a template | nominated to the first node
        "identity": st.sampled_from(("none", "ephemeral", "dra", "nominated")),
        "replicas": st.integers(1, 4),
        # per replica: its claim (ephemeral or DRA) exists and is the pod's / exists, not its / absent
        "claims": st.lists(st.sampled_from(("owned", "stray", "absent", "absent")), min_size=4, max_size=4),
    }
)


def _pending(w: dict[str, Any], k: int, r: int) -> list[dict]:
    """Replica ``r`` of workload ``k``, and the claim objects made for it."""
    name = f"job{k}-{r:x}{k * 7 + r:03x}"
    spec: dict[str, Any] = {}
    if w["tolerates"]:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if w["spread"]:
        selector = {"matchLabels": {"app": w["app"]}}
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ]
    docs: list[dict] = []
    owned = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"uid-{name}", "controller": True}
    stray = {**owned, "uid": "uid-someone-else"}
    state = w["claims"][r]
    status: dict[str, Any] = {}
    if w["identity"] == "ephemeral":
        spec["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]
        if state != "absent":
            meta = {"ownerReferences": [owned if state == "owned" else stray]}
            claim_spec = {"storageClassName": "local", "accessModes": ["ReadWriteOnce"]}
            docs.append(
                obj("PersistentVolumeClaim", f"{name}-scratch", ns="default", metadata=meta, spec=claim_spec)
            )
    elif w["identity"] == "dra":
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]
        if state != "absent":
            status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu-x1"}]
            meta = {"ownerReferences": [owned if state == "owned" else stray]}
            exactly = {"deviceClassName": "gpu.nvidia.com", "count": 1}
            claim_spec = {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}
            docs.append(
                obj(
                    "ResourceClaim",
                    f"{name}-gpu-x1",
                    "resource.k8s.io/v1",
                    ns="default",
                    metadata=meta,
                    spec=claim_spec,
                )
            )
    elif w["identity"] == "nominated":
        status["nominatedNodeName"] = "n0"
    body = pod(
        name, gpus=w["gpus"], priority=w["priority"], labels={"app": w["app"], "job": f"job{k}"}, spec=spec
    )
    meta = body["metadata"]
    meta["generateName"] = f"job{k}-"
    meta["creationTimestamp"] = f"2026-01-01T00:00:{r:02d}Z"
    meta["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": f"job{k}", "uid": f"uid-job{k}", "controller": True}
    ]
    body["status"].update(status)
    body["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "lastTransitionTime": meta["creationTimestamp"],
        }
    ]
    return [*docs, body]


def build(nodes: list[dict[str, Any]], workloads: list[dict[str, Any]], pdb: bool) -> list[dict]:
    docs: list[dict] = [LOCAL, GPU_CLASS]
    for i, n in enumerate(nodes):
        taints = (
            [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}] if n["tainted"] else None
        )
        docs.append(node(f"n{i}", gpus=n["gpus"], labels={ZONE: n["zone"]}, taints=taints))
        used = 0
        for r, run in enumerate(n["running"]):
            gpus = min(run["gpus"], n["gpus"] - used)
            used += gpus
            docs.append(
                pod(
                    f"run{i}-{r}",
                    node_name=f"n{i}",
                    gpus=gpus or None,
                    priority=run["priority"],
                    labels={"app": run["app"]},
                )
            )
    if pdb:
        docs.append(disruption_budget("web", {"matchLabels": {"app": "web"}}, {"disruptionsAllowed": 0}))
    for k, w in enumerate(workloads):
        for r in range(w["replicas"]):
            docs.extend(_pending(w, k, r))
    return docs


def _view(s: Any, explanations: list[Any]) -> Any:
    """Everything the reports say of the explanations (the JSON contract, the table, the
    preemption's victims and the verdict statuses themselves)."""
    doc = to_json(explanations, s)
    extra = [
        (
            [(status.code, status.reasons, status.plugin, names) for status, names in e.groups],
            None if e.preemption is None else (e.preemption.message, sorted(e.preemption.tried.items())),
        )
        for e in explanations
    ]
    return doc, extra


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(node_st, min_size=1, max_size=4),
    st.lists(workload_st, min_size=1, max_size=3),
    st.booleans(),
    st.sampled_from(("1.29", "1.34")),
)
def test_memo_equals_each_pod_alone(
    nodes: list[dict[str, Any]], workloads: list[dict[str, Any]], pdb: bool, version: str
) -> None:
    docs = build(nodes, workloads, pdb)
    alone = scheduler(docs, version)
    expected = [explain(alone, p) for p in alone.cluster.pending_pods]
    shared = scheduler(docs, version)
    evaluations = Evaluations(shared)
    got = [explain(shared, p, evaluations) for p in shared.cluster.pending_pods]
    assert _view(shared, got) == _view(alone, expected)
    # The JSON as the CLI writes it (each pod's nodes rendered per Status group; a replica
    # next to its twin reuses the bytes rendered for it), byte for byte.
    written = b"".join(pieces(to_json(got, shared, streamed=True), 3))
    assert written == b"".join(pieces(to_json(expected, alone, streamed=True), 3))
    # One cycle per key: replicas without an identity the scheduler reads share theirs.
    keys = {scheduling_key(p) for p in shared.cluster.pending_pods}
    assert evaluations.cycles == len(keys)
    assert evaluations.cause_runs <= evaluations.cycles
    plain = sum(w["replicas"] for w in workloads if w["identity"] == "none")
    shared_groups = sum(1 for w in workloads if w["identity"] == "none")
    assert evaluations.cycles <= len(got) - plain + shared_groups
    # pending(), the session the CLI and MCP run, says the same.
    session = scheduler(docs, version)
    assert _view(session, pending(session)[: len(expected)]) == _view(alone, expected)


def test_identity_fields_are_not_in_the_key() -> None:
    shape = {
        "gpus": 1,
        "priority": 5,
        "app": "web",
        "tolerates": True,
        "spread": True,
        "identity": "none",
        "claims": ["absent"] * 4,
    }
    base = _pending(shape, 0, 0)[-1]
    other = _pending(shape, 0, 1)[-1]
    assert base["metadata"]["name"] != other["metadata"]["name"]
    assert scheduling_key(pod_from_dict(base)) == scheduling_key(pod_from_dict(other))
    relabelled = {**other, "metadata": {**other["metadata"], "labels": {"app": "db", "job": "job0"}}}
    assert scheduling_key(pod_from_dict(base)) != scheduling_key(pod_from_dict(relabelled))
    for identity in ("ephemeral", "dra", "nominated"):
        w = {
            "gpus": 1,
            "priority": 5,
            "app": "web",
            "tolerates": True,
            "spread": False,
            "identity": identity,
            "claims": ["owned"] * 4,
        }
        a, b = _pending(w, 0, 0)[-1], _pending(w, 0, 1)[-1]
        assert scheduling_key(pod_from_dict(a)) != scheduling_key(pod_from_dict(b)), identity


def test_memo_forgets_when_the_cluster_changes() -> None:
    w = {
        "gpus": 2,
        "priority": 5,
        "app": "web",
        "tolerates": True,
        "spread": False,
        "identity": "none",
        "claims": ["absent"] * 4,
    }
    docs = [
        node("n0", gpus=2),
        pod("run", node_name="n0", gpus=2, priority=0),
        *_pending(w, 0, 0),
        *_pending(w, 0, 1),
    ]
    s = scheduler(docs)
    first, second = s.cluster.pending_pods
    evaluations = Evaluations(s)
    before = evaluations.evaluate(first)
    assert evaluations.evaluate(second) is before and evaluations.cycles == 1
    running = s.index.node_infos[0].pods[0]
    assert s.forget(running, "n0")
    after = evaluations.evaluate(second)
    assert evaluations.cycles == 2 and after.stage == "schedulable" and before.stage != "schedulable"
