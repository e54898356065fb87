"""VolumeBinding's fast paths (issue 14) answer exactly what the plain per-node Filter answers.

- ``filter_nodes`` (one verdict per node shape, unless the pod's volumes read a node's name or
  hostname) gives every node the Status ``filter`` gives it, on random clusters: PVs with and
  without node affinity (zone, hostname, ``matchFields`` on the name), claimRefs to the claim,
  to another claim or none, phases, sizes; WaitForFirstConsumer and Immediate classes with and
  without allowedTopologies and provisioners; CSIStorageCapacity with zone or hostname topology;
  bound, unbound and node-selected claims. VolumeZone's ``filter_nodes`` likewise.
- The PV index (``PvIndex``), built once per ClusterIndex, equals a fresh build after any
  sequence of PV adds, replacements and simulate bindings (``ClusterState.put_pv``), and is not
  rebuilt while the PVs stay the same.
- A claim bound by simulate's WaitForFirstConsumer binding is seen by the next cycle of the same
  Scheduler (no stale index).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import node, obj, pod, scheduler

from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.framework import Status
from gpuplane.scheduler.plugins.pv_matching import PvIndex, pv_index
from gpuplane.scheduler.plugins.volume_binding import BindingState, VolumeBinding
from gpuplane.scheduler.plugins.volume_zone import VolumeZone
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.scheduler.simulate.volumes import bind_claims
from gpuplane.sources.manifest import Manifest

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CLASSES = ("wffc", "local", "imm", "")
CLAIMS = ("c0", "c1", "c2")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Nodes come mostly from pool templates, so that many share a shape and differ only in their name
# and hostname (what a PV's hostname affinity or a selected-node annotation must tell apart).
POOLS = (
    {"zone": "z1", "pool": "gpu", "hostname": True},
    {"zone": "z2", "pool": "gpu", "hostname": True},
    {"zone": "z1", "pool": None, "hostname": True},
)
node_st = st.sampled_from(POOLS) | st.fixed_dictionaries(
    {
        "zone": st.sampled_from((None, "z1", "z2")),
        "pool": st.sampled_from((None, "gpu")),
        "hostname": st.booleans(),
    }
)
affinity_st = st.sampled_from(
    (
        None,
        ("label", ZONE, "z1"),
        ("label", ZONE, "z2"),
        ("label", "pool", "gpu"),
        ("label", HOSTNAME, "n1"),
        ("field", "metadata.name", "n2"),
    )
)
pv_st = st.fixed_dictionaries(
    {
        "class": st.sampled_from(CLASSES),
        "size": st.integers(1, 4),
        "affinity": affinity_st,
        "claim": st.sampled_from((None, None, "c0", "c1", "other")),
        "phase": st.sampled_from((None, "Available", "Available", "Bound", "Released")),
        "filesystem": st.sampled_from((True, True, False)),
        "modes": st.sampled_from((["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"], ["ReadOnlyMany"])),
        "labels": st.sampled_from(({}, {"tier": "fast"})),
    }
)
class_st = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(("WaitForFirstConsumer", "WaitForFirstConsumer", "Immediate", None)),
        "provisioner": st.sampled_from(("csi.example.com", "kubernetes.io/no-provisioner", None)),
        "topology": st.sampled_from((None, (ZONE, ["z1"]), (HOSTNAME, ["n0", "n3"]), ("pool", ["gpu"]))),
    }
)
capacity_st = st.fixed_dictionaries(
    {
        "class": st.sampled_from(("wffc", "local")),
        "size": st.integers(1, 4),
        "topology": st.sampled_from(({ZONE: "z1"}, {ZONE: "z2"}, {HOSTNAME: "n1"}, {})),
    }
)
claim_st = st.fixed_dictionaries(
    {
        "class": st.sampled_from(CLASSES),
        "size": st.integers(1, 4),
        "bound_to": st.sampled_from((None, None, None, 0, 1, 7)),
        "selected": st.sampled_from((None, None, None, "n0", "n2")),
        "selector": st.booleans(),
    }
)
cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.lists(node_st, min_size=1, max_size=8),
        "pvs": st.lists(pv_st, max_size=8),
        "classes": st.lists(class_st, min_size=3, max_size=3),
        "capacity_driver": st.booleans(),
        "capacities": st.lists(capacity_st, max_size=3),
        "claims": st.lists(claim_st, min_size=3, max_size=3),
        "uses": st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=3, unique=True),
    }
)


def _node(i: int, spec: dict[str, Any]) -> dict:
    labels = {k: v for k, v in (("pool", spec["pool"]), (ZONE, spec["zone"])) if v}
    doc = node(f"n{i}", labels=labels)
    if not spec["hostname"]:
        del doc["metadata"]["labels"][HOSTNAME]
    return doc


def _pv(name: str, spec: dict[str, Any]) -> dict:
    body: dict[str, Any] = {
        "capacity": {"storage": f"{spec['size']}Gi"},
        "accessModes": spec["modes"],
        "volumeMode": "Filesystem" if spec["filesystem"] else "Block",
    }
    if spec["class"]:
        body["storageClassName"] = spec["class"]
    if spec["affinity"] is not None:
        where, key, value = spec["affinity"]
        requirement = {"key": key, "operator": "In", "values": [value]}
        term = {"matchExpressions" if where == "label" else "matchFields": [requirement]}
        body["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    if spec["claim"] is not None:
        body["claimRef"] = {"namespace": "default", "name": spec["claim"]}
    doc = obj("PersistentVolume", name, spec=body, metadata={"labels": spec["labels"]})
    if spec["phase"] is not None:
        doc["status"] = {"phase": spec["phase"]}
    return doc


def _class(name: str, spec: dict[str, Any]) -> dict:
    fields: dict[str, Any] = {}
    if spec["mode"] is not None:
        fields["volumeBindingMode"] = spec["mode"]
    if spec["provisioner"] is not None:
        fields["provisioner"] = spec["provisioner"]
    if spec["topology"] is not None:
        key, values = spec["topology"]
        fields["allowedTopologies"] = [{"matchLabelExpressions": [{"key": key, "values": values}]}]
    return obj("StorageClass", name, "storage.k8s.io/v1", **fields)


def _claim(name: str, spec: dict[str, Any]) -> dict:
    annotations: dict[str, str] = {}
    body: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{spec['size']}Gi"}},
        "volumeMode": "Filesystem",
    }
    if spec["class"]:
        body["storageClassName"] = spec["class"]
    if spec["bound_to"] is not None:
        body["volumeName"] = f"pv{spec['bound_to']}"
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if spec["selected"] is not None:
        annotations["volume.kubernetes.io/selected-node"] = spec["selected"]
    if spec["selector"]:
        body["selector"] = {"matchLabels": {"tier": "fast"}}
    return obj(
        "PersistentVolumeClaim",
        name,
        ns="default",
        spec=body,
        metadata={"annotations": annotations, "uid": f"uid-{name}"},
    )


def build(spec: dict[str, Any]) -> tuple[Scheduler, Any]:
    docs: list[dict] = [_node(i, n) for i, n in enumerate(spec["nodes"])]
    docs += [_pv(f"pv{i}", p) for i, p in enumerate(spec["pvs"])]
    docs += [_class(name, c) for name, c in zip(("wffc", "local", "imm"), spec["classes"], strict=True)]
    docs += [_claim(name, c) for name, c in zip(CLAIMS, spec["claims"], strict=True)]
    docs.append(
        obj(
            "CSIDriver",
            "csi.example.com",
            "storage.k8s.io/v1",
            spec={"storageCapacity": spec["capacity_driver"]},
        )
    )
    for i, cap in enumerate(spec["capacities"]):
        docs.append(
            obj(
                "CSIStorageCapacity",
                f"cap{i}",
                "storage.k8s.io/v1",
                ns="default",
                storageClassName=cap["class"],
                capacity=f"{cap['size']}Gi",
                nodeTopology={"matchLabels": cap["topology"]},
            )
        )
    volumes = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(spec["uses"])
    ]
    docs.append(pod("p", spec={"volumes": volumes}))
    sched = scheduler(docs)
    incoming = next(p for p in sched.cluster.pending_pods if p.metadata.name == "p")
    return sched, incoming


def per_node(judge: Any, sched: Scheduler, nodes: list[int]) -> list[tuple[Status, list[int]]]:
    """The framework's per-node loop: each failing Status with its nodes, in first-node order."""
    groups: dict[Status, list[int]] = {}
    for j in nodes:
        status = judge(sched.index.node_infos[j])
        if status is not None:
            groups.setdefault(status, []).append(j)
    return list(groups.items())


@SETTINGS
@given(cluster_st, st.data())
def test_volume_binding_filter_nodes_equals_filter_per_node(
    spec: dict[str, Any], data: st.DataObject
) -> None:
    """``filter_nodes`` and the per-shape memo of ``filter`` against ``FindPodVolumes`` run on
    every node itself (``_judge``), whatever nodes the caller asks about and in whatever order
    (the Filter stage: the nodes still alive; preemption's dry runs: candidates in any order)."""
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = VolumeBinding()
    if not plugin.relevant(ctx):
        return
    _, status = plugin.pre_filter(ctx)
    if status is not None:
        return
    state = ctx.state.require(BindingState)
    n = sched.index.num_nodes
    alive = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    naive = per_node(lambda info: plugin._judge(ctx, state, info), sched, alive)
    found = plugin.filter_nodes(ctx, np.array(alive, dtype=np.int64))
    assert [(s, where.tolist()) for where, s in found] == naive
    fresh = sched.context(incoming)
    plugin.pre_filter(fresh)
    for j in data.draw(st.permutations(range(n))):
        info = sched.index.node_infos[j]
        assert plugin.filter(fresh, info) == plugin._judge(ctx, state, info)


@SETTINGS
@given(cluster_st)
def test_volume_zone_filter_nodes_equals_filter_per_node(spec: dict[str, Any]) -> None:
    for pv in spec["pvs"]:
        pv["labels"] = {ZONE: pv["affinity"][2] if pv["affinity"] else "z1__z2"}
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = VolumeZone()
    _, status = plugin.pre_filter(ctx)
    if status is not None:
        return
    nodes = list(range(sched.index.num_nodes))
    found = plugin.filter_nodes(ctx, np.array(nodes, dtype=np.int64))
    assert [(s, where.tolist()) for where, s in found] == per_node(
        lambda i: plugin.filter(ctx, i), sched, nodes
    )


def _same_index(cached: PvIndex, fresh: PvIndex) -> None:
    def names(pvs: list[Manifest]) -> list[tuple[str, int]]:
        return [(pv.name, id(pv)) for pv in pvs]

    assert {k: names(v) for k, v in cached.free.items()} == {k: names(v) for k, v in fresh.free.items()}
    assert {c: {k: names(v) for k, v in by.items()} for c, by in cached.claimed.items()} == {
        c: {k: names(v) for k, v in by.items()} for c, by in fresh.claimed.items()
    }
    assert cached.free_identity == fresh.free_identity


op_st = st.one_of(
    st.tuples(st.just("add"), pv_st),
    st.tuples(st.just("replace"), st.integers(0, 20), pv_st),
    st.tuples(st.just("bind"), st.sampled_from(CLAIMS), st.integers(0, 7)),
    st.tuples(st.just("read")),
)


@SETTINGS
@given(cluster_st, st.lists(op_st, max_size=8))
def test_pv_index_equals_a_fresh_build_after_changes(spec: dict[str, Any], ops: list[tuple]) -> None:
    sched, incoming = build(spec)
    state = sched.cluster
    ctx = sched.context(incoming)
    first = pv_index(ctx.index)
    assert pv_index(sched.context(incoming).index) is first  # once per index, not per cycle
    added = 0
    for op in ops:
        before = state.pvs_version
        if op[0] == "add":
            state.put_pv(Manifest(_pv(f"added{added}", op[1])))
            added += 1
        elif op[0] == "replace":
            names = list(state.pvs)
            if names:
                state.put_pv(Manifest(_pv(names[op[1] % len(names)], op[2])))
        elif op[0] == "bind":
            claimer = pod(
                "b", spec={"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": op[1]}}]}
            )
            node_obj = sched.index.node_infos[op[2] % sched.index.num_nodes].node
            bind_claims(state, ClusterState.from_objects([Manifest(claimer)]).pending_pods[0], node_obj)
        cached = pv_index(sched.context(incoming).index)
        if state.pvs_version == before:
            assert cached is pv_index(ctx.index)
        fresh = PvIndex(state.pvs.values(), state.pvs_version)
        _same_index(cached, fresh)
        for pv in state.pvs.values():  # the parsed node affinities follow replaced PVs
            assert cached.node_affinity(pv) == fresh.node_affinity(pv) == first.node_affinity(pv)


def test_pvs_change_only_through_put_pv() -> None:
    state = ClusterState.from_objects([Manifest(obj("PersistentVolume", "pv-1", spec={}))])
    with pytest.raises(TypeError):
        state.pvs["pv-2"] = state.pvs["pv-1"]  # type: ignore[index]
    replacement = Manifest(obj("PersistentVolume", "pv-1", spec={"storageClassName": "x"}))
    state.put_pv(Manifest(obj("PersistentVolume", "pv-0", spec={})))
    state.put_pv(replacement)
    assert list(state.pvs) == ["pv-1", "pv-0"]  # a replaced PV keeps its place
    assert state.pvs["pv-1"] is replacement
    assert state.pvs_version == 2


def _local_cluster() -> list[dict]:
    """One Available local PV on n1 of a no-provisioner WaitForFirstConsumer class, two claims of it."""
    affinity = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["n1"]}]}
            ]
        }
    }
    claims = [
        obj(
            "PersistentVolumeClaim",
            name,
            ns="default",
            spec={
                "storageClassName": "local",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "10Gi"}},
            },
        )
        for name in ("a", "b")
    ]
    return [
        node("n0", labels={ZONE: "z1"}),
        node("n1", labels={ZONE: "z1"}),
        obj(
            "StorageClass",
            "local",
            "storage.k8s.io/v1",
            provisioner="kubernetes.io/no-provisioner",
            volumeBindingMode="WaitForFirstConsumer",
        ),
        obj(
            "PersistentVolume",
            "local-1",
            spec={
                "storageClassName": "local",
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "nodeAffinity": affinity,
            },
        ),
        *claims,
        pod("pa", spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "a"}}]}),
        pod("pb", spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "b"}}]}),
    ]


def test_a_volume_bound_by_simulate_is_seen_by_the_next_cycle() -> None:
    sched = scheduler(_local_cluster())
    pa, pb = sorted(sched.cluster.pending_pods, key=lambda p: p.metadata.name)
    conflict = "node(s) didn't find available persistent volumes to bind"
    before = sched.evaluate(pb)
    assert [(s.reasons, nodes) for s, nodes in before.groups] == [((conflict,), ["n0"])]  # n1 has the PV
    assert bind_claims(sched.cluster, pa, sched.index.node_infos[1].node)
    after = sched.evaluate(pb)
    assert [(s.reasons, nodes) for s, nodes in after.groups] == [((conflict,), ["n0", "n1"])]  # now a's


def test_filter_runs_once_per_node_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound PV with zone affinity: 6 nodes of 2 shapes cost 2 verdicts, in the Filter stage
    and in the preemption dry runs after it; a PV with hostname affinity makes every node answer
    for itself."""
    calls: list[str] = []
    original = VolumeBinding._judge

    def counting(self: VolumeBinding, ctx: Any, state: Any, info: Any) -> Status | None:
        calls.append(info.name)
        return original(self, ctx, state, info)

    monkeypatch.setattr(VolumeBinding, "_judge", counting)
    claim = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}
    for key, value, full, expected in (
        (ZONE, "z1", False, 2),
        (HOSTNAME, "n1", False, 6),
        (ZONE, "z1", True, 2),  # NodeResourcesFit fails every node: preemption's dry runs judge them
        (HOSTNAME, "n1", True, 6),
    ):
        affinity = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
                ]
            }
        }
        docs = [node(f"n{i}", cpu="1", labels={ZONE: f"z{i % 2}"}) for i in range(6)]
        if full:
            docs += [pod(f"v{i}", node_name=f"n{i}", cpu="1", priority=0) for i in range(6)]
        docs += [
            obj(
                "PersistentVolume",
                "pv",
                spec={"nodeAffinity": affinity, "claimRef": {"namespace": "default", "name": "c"}},
            ),
            obj(
                "PersistentVolumeClaim",
                "c",
                ns="default",
                spec={"volumeName": "pv"},
                metadata={"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            ),
            pod("p", cpu="500m", priority=100, spec=claim),
        ]
        sched = scheduler(docs)
        calls.clear()
        found = sched.evaluate(sched.cluster.pending_pods[0])
        assert len(calls) == expected
        if full:
            assert found.stage == "scheduler"
