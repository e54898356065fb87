"""The one PV matching function (``scheduler/plugins/pv_matching.py``) of VolumeBinding's Filter
and simulate's binder, held to upstream.

- Cases of upstream's own tests: staging/src/k8s.io/component-helpers/storage/volume/
  pv_helpers_test.go ``TestFindMatchVolumeWithNode`` (its PV set and scenarios by name),
  pkg/scheduler/framework/plugins/volumebinding/binder_test.go
  ``TestFindPodVolumesWithoutProvisioning`` (``unbound-pvc,pv-same-node``, ``two-unbound-pvcs``,
  ``two-unbound-pvcs,order-by-size``, ``two-unbound-pvcs,partial-match``), the beta class
  annotation of helpers.go ``GetPersistentVolumeClass`` / ``GetPersistentVolumeClaimClass``,
  and pkg/controller/volume/persistentvolume/index_test.go ``TestFilteringVolumeModes``.
- A hypothesis test: :func:`find_matching_volumes` over the :class:`PvIndex` equals a plain
  transcription of upstream's loops (``findMatchingVolumes`` over ``ListPVs(class)`` in the
  cluster's order, ``FindMatchingVolume``'s checks in upstream's order) on random PV sets.
- ``simulate`` binds the PVs the Filter found: exact placements and PV names end to end.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import node, obj, pod

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.scheduler.plugins.pv_matching import PvIndex, find_matching_volume, find_matching_volumes
from gpuplane.scheduler.simulate.engine import Engine, Options
from gpuplane.sources.manifest import Manifest

BETA = "volume.beta.kubernetes.io/storage-class"
HOSTNAME = "kubernetes.io/hostname"


def typed_node(name: str, labels: dict[str, str]) -> Node:
    return ClusterState.from_objects([Manifest(node(name, labels=labels))]).nodes[0]


def affinity(key: str, value: str) -> dict:
    """pv_helpers_test.go ``makeNodeAffinity``: one required term, ``key In [value]``."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {"required": {"nodeSelectorTerms": [term]}}


def pv(
    name: str,
    size: str,
    *,
    cls: str | None = None,
    available: bool = True,
    node_affinity: dict | None = None,
    claim_ref: dict | None = None,
    mode: str = "Filesystem",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    modes: list[str] | None = None,
) -> Manifest:
    """pv_helpers_test.go ``makeTestVolume``: ReadWriteOnce + ReadOnlyMany, Filesystem;
    ``available`` False leaves the status out (upstream: phase ""), written here as ``Pending``
    since gpuplane reads a PV without status as Available (pv_matching's docstring)."""
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": modes or ["ReadWriteOnce", "ReadOnlyMany"],
        "volumeMode": mode,
    }
    if cls is not None:
        spec["storageClassName"] = cls
    if node_affinity is not None:
        spec["nodeAffinity"] = node_affinity
    if claim_ref is not None:
        spec["claimRef"] = claim_ref
    meta = {"labels": labels or {}, "annotations": annotations or {}}
    return Manifest(
        obj(
            "PersistentVolume",
            name,
            spec=spec,
            metadata=meta,
            status={"phase": "Available" if available else "Pending"},
        )
    )


def claim(
    name: str,
    size: str,
    *,
    ns: str = "myns",
    cls: str | None = "wait",
    access: list[str] | None = None,
    mode: str | None = "Filesystem",
    selector: dict | None = None,
    annotations: dict[str, str] | None = None,
) -> Manifest:
    """pv_helpers_test.go ``makeTestPersistentVolumeClaim``: namespace myns, class wait."""
    spec: dict[str, Any] = {
        "accessModes": access or ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if cls is not None:
        spec["storageClassName"] = cls
    if mode is not None:
        spec["volumeMode"] = mode
    if selector is not None:
        spec["selector"] = selector
    return Manifest(
        obj("PersistentVolumeClaim", name, ns=ns, spec=spec, metadata={"annotations": annotations or {}})
    )


# -- pv_helpers_test.go TestFindMatchVolumeWithNode -------------------------------------------

# Named by upstream's UIDs (its expectations compare UIDs); the names are the PVs' own.
UPSTREAM_PVS = [
    pv("local-small", "5G"),
    pv("local-pd-very-large", "200E", cls="large"),
    pv("affinity-pv", "100G", cls="wait", node_affinity=affinity("key1", "value1")),
    pv("affinity-pv2", "150G", cls="wait", node_affinity=affinity("key1", "value1")),
    pv(
        "affinity-prebound",
        "100G",
        cls="wait",
        claim_ref={"name": "claim02", "namespace": "myns"},
        node_affinity=affinity("key1", "value1"),
    ),
    pv("affinity-pv3", "200G", cls="wait", node_affinity=affinity("key1", "value3")),
    pv("affinity-pv4", "200G", cls="wait", available=False, node_affinity=affinity("key1", "value4")),
]
NODES = {f"node{i}": typed_node(f"node{i}", {"key1": f"value{i}"}) for i in (1, 2, 3, 4)}


def match(
    pvc: Manifest, node_name: str, excluded: frozenset[str] = frozenset(), pvs: list[Manifest] = UPSTREAM_PVS
) -> str | None:
    found = find_matching_volume(PvIndex(pvs, 0), pvc, NODES[node_name], set(excluded))
    return found.name if found is not None else None


def test_upstream_success_match() -> None:
    assert match(claim("claim01", "100G"), "node1") == "affinity-pv"


def test_upstream_success_prebound() -> None:
    assert match(claim("claim02", "100G"), "node1") == "affinity-prebound"


def test_upstream_success_exclusion() -> None:
    assert match(claim("claim01", "100G"), "node1", frozenset({"affinity-pv"})) == "affinity-pv2"


def test_upstream_fail_exclusion() -> None:
    assert match(claim("claim01", "100G"), "node1", frozenset({"affinity-pv", "affinity-pv2"})) is None


def test_upstream_fail_accessmode() -> None:
    assert match(claim("claim01", "100G", access=["ReadWriteMany"]), "node1") is None


def test_upstream_fail_nodeaffinity() -> None:
    assert match(claim("claim01", "100G"), "node2") is None


def test_upstream_fail_prebound_node_affinity() -> None:
    """The PV pre-bound to claim02 misses node3: no match at all, though affinity-pv3 fits."""
    assert match(claim("claim02", "100G"), "node3") is None


def test_upstream_fail_nonavailable() -> None:
    assert match(claim("claim04", "100G"), "node4") is None


def test_upstream_success_bad_and_good_node_affinity() -> None:
    assert match(claim("claim03", "100G"), "node3") == "affinity-pv3"


# -- binder_test.go TestFindPodVolumesWithoutProvisioning -------------------------------------

BINDER_NODE1 = typed_node("node1", {"nodeKey": "node1"})
PV_NODE1A = pv("pv-node1a", "5G", cls="waitClass", node_affinity=affinity("nodeKey", "node1"))
PV_NODE1B = pv("pv-node1b", "10G", cls="waitClass", node_affinity=affinity("nodeKey", "node1"))
PV_NODE2 = pv("pv-node2", "1G", cls="waitClass", node_affinity=affinity("nodeKey", "node2"))
UNBOUND = claim("unbound-pvc", "1G", ns="testns", cls="waitClass")
UNBOUND2 = claim("unbound-pvc2", "5G", ns="testns", cls="waitClass")


def bindings(claims: list[Manifest], pvs: list[Manifest]) -> list[tuple[str, str | None]]:
    found = find_matching_volumes(PvIndex(pvs, 0), claims, BINDER_NODE1)
    return [(claims[i].name, p.name if p is not None else None) for i, p in found]


def test_binder_unbound_pvc_pv_same_node() -> None:
    assert bindings([UNBOUND], [PV_NODE2, PV_NODE1A, PV_NODE1B]) == [("unbound-pvc", "pv-node1a")]


def test_binder_unbound_pvc_pv_different_node() -> None:
    assert bindings([UNBOUND], [PV_NODE2]) == [("unbound-pvc", None)]


def test_binder_two_unbound_pvcs_get_two_pvs() -> None:
    """The chosen set: the second claim may not take the PV the first one took."""
    expected = [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]
    assert bindings([UNBOUND, UNBOUND2], [PV_NODE1A, PV_NODE1B]) == expected


def test_binder_two_unbound_pvcs_order_by_size() -> None:
    expected = [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]
    assert bindings([UNBOUND2, UNBOUND], [PV_NODE1A, PV_NODE1B]) == expected


def test_binder_two_unbound_pvcs_partial_match() -> None:
    assert bindings([UNBOUND, UNBOUND2], [PV_NODE1A]) == [
        ("unbound-pvc", "pv-node1a"),
        ("unbound-pvc2", None),
    ]


# -- class, volumeMode, selector, smallest fit ------------------------------------------------


def test_beta_annotation_gives_the_class_of_claim_and_volume() -> None:
    """helpers.go: the beta annotation is read before spec.storageClassName, on both sides."""
    annotated = pv("annotated", "10G", cls="other", annotations={BETA: "wait"})
    spec_only = pv("spec-only", "10G", cls="wait")
    by_annotation = claim("c", "1G", cls=None, annotations={BETA: "wait"})
    assert match(by_annotation, "node1", pvs=[spec_only, annotated]) == "spec-only"
    assert match(by_annotation, "node1", pvs=[annotated]) == "annotated"
    assert match(claim("c", "1G", cls="other"), "node1", pvs=[annotated]) is None


def test_volume_mode_mismatch_in_both_directions() -> None:
    """index_test.go TestFilteringVolumeModes 1-1 (pvc block, pv filesystem) and 1-2 (pvc
    filesystem, pv block) do not match; an absent volumeMode is Filesystem (TestVolumeModeCheck)."""
    block = pv("block", "10G", cls="wait", mode="Block")
    filesystem = pv("fs", "10G", cls="wait")
    assert match(claim("c", "8G", mode="Block"), "node1", pvs=[filesystem]) is None
    assert match(claim("c", "8G"), "node1", pvs=[block]) is None
    assert match(claim("c", "8G", mode=None), "node1", pvs=[block, filesystem]) == "fs"
    assert match(claim("c", "8G", mode="Block"), "node1", pvs=[filesystem, block]) == "block"


def test_claim_selector_filters_on_the_volume_labels() -> None:
    fast = pv("fast", "20G", cls="wait", labels={"tier": "fast"})
    plain = pv("plain", "10G", cls="wait")
    selector = {"matchLabels": {"tier": "fast"}}
    assert match(claim("c", "5G", selector=selector), "node1", pvs=[plain, fast]) == "fast"
    assert match(claim("c", "5G"), "node1", pvs=[plain, fast]) == "plain"
    expr = {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    assert match(claim("c", "5G", selector=expr), "node1", pvs=[fast, plain]) == "plain"


def test_smallest_fit_keeps_the_first_of_equal_sizes() -> None:
    """The first smallest in the list's order, not by name (upstream ``Cmp(volumeQty) > 0``)."""
    pvs = [pv("z-large", "50G", cls="wait"), pv("y-10", "10G", cls="wait"), pv("a-10", "10Gi", cls="wait")]
    assert match(claim("c", "5G"), "node1", pvs=pvs) == "y-10"
    pvs = [pv("z-10", "10G", cls="wait"), pv("a-10", "10G", cls="wait")]
    assert match(claim("c", "5G"), "node1", pvs=pvs) == "z-10"


def test_prebound_claimref_wins_over_a_smaller_free_volume() -> None:
    """A PV whose claimRef names the claim is returned as soon as it is reached; a uid in the
    claimRef must equal the claim's (``IsVolumeBoundToClaim``)."""
    small = pv("small", "5G", cls="wait")
    mine = pv("mine", "50G", cls="wait", claim_ref={"namespace": "myns", "name": "c"})
    other_uid = pv("other-uid", "6G", cls="wait", claim_ref={"namespace": "myns", "name": "c", "uid": "x"})
    assert match(claim("c", "5G"), "node1", pvs=[small, mine]) == "mine"
    assert match(claim("c", "5G"), "node1", pvs=[small, other_uid]) == "small"


# -- hypothesis: the shared function equals a plain transcription of upstream's loops ---------

CLASSES = ("wait", "other", "")
pv_st = st.fixed_dictionaries(
    {
        "size": st.integers(1, 5),
        "class": st.sampled_from(CLASSES),
        "beta": st.sampled_from((None, None, "wait", "other")),
        "mode": st.sampled_from((None, "Filesystem", "Block")),
        "claim": st.sampled_from((None, None, None, "c0", "c1", "gone")),
        "uid": st.sampled_from((None, None, "uid-c0", "nope")),
        "phase": st.sampled_from((None, "Available", "Available", "Bound", "Released", "Pending")),
        "deleting": st.sampled_from((False, False, True)),
        "zone": st.sampled_from((None, None, "z1", "z2")),
        "tier": st.sampled_from((None, "fast", "slow")),
        "modes": st.sampled_from((("ReadWriteOnce",), ("ReadWriteOnce", "ReadOnlyMany"), ("ReadOnlyMany",))),
    }
)
claim_st = st.fixed_dictionaries(
    {
        "size": st.integers(0, 5),
        "class": st.sampled_from(CLASSES),
        "beta": st.sampled_from((None, None, "wait")),
        "mode": st.sampled_from((None, "Filesystem", "Block")),
        "tier": st.sampled_from((None, None, "fast")),
        "modes": st.sampled_from((("ReadWriteOnce",), ("ReadOnlyMany",), ())),
    }
)


def _random_pv(i: int, s: dict[str, Any]) -> Manifest:
    spec: dict[str, Any] = {"capacity": {"storage": f"{s['size']}Gi"}, "accessModes": list(s["modes"])}
    if s["class"]:
        spec["storageClassName"] = s["class"]
    if s["mode"]:
        spec["volumeMode"] = s["mode"]
    if s["claim"]:
        spec["claimRef"] = {
            "namespace": "default",
            "name": s["claim"],
            **({"uid": s["uid"]} if s["uid"] else {}),
        }
    if s["zone"]:
        spec["nodeAffinity"] = affinity("zone", s["zone"])
    meta: dict[str, Any] = {"labels": {"tier": s["tier"]} if s["tier"] else {}}
    if s["beta"]:
        meta["annotations"] = {BETA: s["beta"]}
    if s["deleting"]:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    doc = obj("PersistentVolume", f"pv{i}", spec=spec, metadata=meta)
    if s["phase"]:
        doc["status"] = {"phase": s["phase"]}
    return Manifest(doc)


def _random_claim(i: int, s: dict[str, Any]) -> Manifest:
    spec: dict[str, Any] = {
        "accessModes": list(s["modes"]),
        "resources": {"requests": {"storage": f"{s['size']}Gi"}},
    }
    if s["class"]:
        spec["storageClassName"] = s["class"]
    if s["mode"]:
        spec["volumeMode"] = s["mode"]
    if s["tier"]:
        spec["selector"] = {"matchLabels": {"tier": s["tier"]}}
    meta: dict[str, Any] = {"uid": f"uid-c{i}", "annotations": {BETA: s["beta"]} if s["beta"] else {}}
    return Manifest(obj("PersistentVolumeClaim", f"c{i}", ns="default", spec=spec, metadata=meta))


def _plain_class(o: Manifest) -> str:
    annotations = o.metadata.get("annotations") or {}
    return annotations[BETA] if BETA in annotations else (o.data["spec"].get("storageClassName") or "")


def _plain_find_matching_volume(
    claim: Manifest, volumes: list[Manifest], labels: dict[str, str], excluded: set[str]
) -> Manifest | None:
    """pv_helpers.go FindMatchingVolume, line by line (node set, delayBinding true)."""
    spec = claim.data["spec"]
    requested = quantity_value(spec["resources"]["requests"]["storage"])
    requested_class = _plain_class(claim)
    selector = spec.get("selector")
    smallest: Manifest | None = None
    smallest_qty = 0
    for volume in volumes:
        vspec = volume.data["spec"]
        if volume.name in excluded:
            continue
        ref = vspec.get("claimRef")
        bound_to_claim = (
            ref is not None
            and ref["name"] == claim.name
            and ref["namespace"] == claim.namespace
            and (not ref.get("uid") or ref["uid"] == claim.metadata.get("uid"))
        )
        if ref is not None and not bound_to_claim:
            continue
        qty = quantity_value(vspec["capacity"]["storage"])
        if qty < requested:
            continue
        if (spec.get("volumeMode") or "Filesystem") != (vspec.get("volumeMode") or "Filesystem"):
            continue
        if volume.metadata.get("deletionTimestamp") is not None:
            continue
        terms = (vspec.get("nodeAffinity") or {}).get("required", {}).get("nodeSelectorTerms")
        affinity_valid = terms is None or any(
            all(labels.get(e["key"]) in e["values"] for e in t["matchExpressions"]) for t in terms
        )
        if bound_to_claim:
            return volume if affinity_valid else None
        phase = (volume.data.get("status") or {}).get("phase") or "Available"  # gpuplane: absent = Available
        if phase != "Available":
            continue
        if selector is not None and any(
            (volume.metadata.get("labels") or {}).get(k) != v for k, v in selector["matchLabels"].items()
        ):
            continue
        if _plain_class(volume) != requested_class:
            continue
        if not affinity_valid:
            continue
        if not set(spec["accessModes"]) <= set(vspec["accessModes"]):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = volume, qty
    return smallest


def _plain_find_matching_volumes(
    claims: list[Manifest], pvs: list[Manifest], labels: dict[str, str]
) -> list[tuple[int, str | None]]:
    """binder.go findMatchingVolumes: sort by request, ListPVs(class), a chosenPVs map."""
    order = sorted(
        range(len(claims)),
        key=lambda i: quantity_value(claims[i].data["spec"]["resources"]["requests"]["storage"]),
    )
    chosen: set[str] = set()
    out: list[tuple[int, str | None]] = []
    for i in order:
        listed = [p for p in pvs if _plain_class(p) == _plain_class(claims[i])]
        found = _plain_find_matching_volume(claims[i], listed, labels, chosen)
        if found is not None:
            chosen.add(found.name)
        out.append((i, found.name if found is not None else None))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(pv_st, max_size=10),
    st.lists(claim_st, min_size=1, max_size=3),
    st.sampled_from(({}, {"zone": "z1"}, {"zone": "z2"})),
)
def test_shared_function_equals_upstream_transcription(
    pv_specs: list[dict[str, Any]], claim_specs: list[dict[str, Any]], labels: dict[str, str]
) -> None:
    pvs = [_random_pv(i, s) for i, s in enumerate(pv_specs)]
    claims = [_random_claim(i, s) for i, s in enumerate(claim_specs)]
    found = find_matching_volumes(PvIndex(pvs, 0), claims, typed_node("n", labels))
    assert [(i, p.name if p is not None else None) for i, p in found] == _plain_find_matching_volumes(
        claims, pvs, labels
    )


# -- simulate binds the PVs the Filter found ----------------------------------------------------


def _local(name: str, size: str, host: str, **extra: Any) -> dict:
    spec: dict[str, Any] = {
        "storageClassName": "local",
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteOnce"],
        "nodeAffinity": affinity(HOSTNAME, host),
        **extra.pop("spec", {}),
    }
    return obj("PersistentVolume", name, spec=spec, **extra)


def _pvc(name: str, size: str, **spec: Any) -> dict:
    annotations = spec.pop("annotations", {})
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}
    return obj("PersistentVolumeClaim", name, ns="default", spec=body, metadata={"annotations": annotations})


def _mounting(name: str, *claims: str) -> Manifest:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    doc = pod(name, spec={"volumes": volumes})
    del doc["status"]
    return Manifest(doc)


def test_simulate_binds_the_pvs_upstream_binds() -> None:
    """Two claims of one pod on local PVs of n1: the smaller claim first takes the smallest PV of
    its volumeMode (not the smaller Block one), the larger claim the next; a claim with a PV
    pre-bound to it takes that one on n0, not the smaller free one; a claim whose class comes
    from the beta annotation, with a selector, takes the one labelled PV."""
    docs = [
        node("n0"),
        node("n1"),
        obj(
            "StorageClass",
            "local",
            "storage.k8s.io/v1",
            provisioner="kubernetes.io/no-provisioner",
            volumeBindingMode="WaitForFirstConsumer",
        ),
        _local("pv-big", "100Gi", "n1"),
        _local("pv-block", "10Gi", "n1", spec={"volumeMode": "Block"}),
        _local("pv-small", "20Gi", "n1"),
        _local("pv-tiny", "5Gi", "n0"),
        _local("pv-reserved", "30Gi", "n0", spec={"claimRef": {"namespace": "default", "name": "logs"}}),
        _local(
            "pv-scratch",
            "40Gi",
            "n0",
            spec={"storageClassName": "ignored"},
            metadata={"annotations": {BETA: "local"}, "labels": {"tier": "scratch"}},
        ),
        _pvc("data", "50Gi", storageClassName="local"),
        _pvc("ckpt", "10Gi", storageClassName="local"),
        _pvc("logs", "5Gi", storageClassName="local"),
        _pvc("scratch", "5Gi", annotations={BETA: "local"}, selector={"matchLabels": {"tier": "scratch"}}),
    ]
    cluster = ClusterState.from_objects([Manifest(d) for d in docs])
    inputs = [
        _mounting("train", "data", "ckpt"),
        _mounting("logger", "logs"),
        _mounting("scratcher", "scratch"),
    ]
    engine = Engine(cluster, inputs, Options()).run()
    assert sorted((p["pod"], p["node"]) for p in engine.placements) == [
        ("default/logger", "n0"),
        ("default/scratcher", "n0"),
        ("default/train", "n1"),
    ]
    state = engine.sim.state
    bound = {
        name: state.pvcs[("default", name)].get("spec", "volumeName")
        for name in ("data", "ckpt", "logs", "scratch")
    }
    assert bound == {"ckpt": "pv-small", "data": "pv-big", "logs": "pv-reserved", "scratch": "pv-scratch"}
    for name, volume in bound.items():
        assert state.pvs[volume].get("spec", "claimRef") == {"namespace": "default", "name": name}
        assert state.pvs[volume].get("status", "phase") == "Bound"
        assert "volume.kubernetes.io/selected-node" not in state.pvcs[("default", name)].annotations
    assert state.pvs["pv-block"].get("spec", "claimRef") is None
    assert state.pvs["pv-tiny"].get("spec", "claimRef") is None
