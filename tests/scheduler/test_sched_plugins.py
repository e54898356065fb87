"""One scenario per Filter plugin; expected texts are upstream's reason strings
(files under kubernetes/kubernetes pkg/scheduler/framework/plugins/, cited in each plugin module)."""

from __future__ import annotations

from sched_helpers import message, node, obj, pod, scheduler

from gpuplane.why_pending.explain import explain

# A claim the PV controller finished binding (binder.go isPVCFullyBound needs the annotation).
BOUND = {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}}

NOT_HELPFUL_1 = "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."


def test_node_unschedulable() -> None:
    docs = [node("a", unschedulable=True), pod("p")]
    assert message(docs) == f"0/1 nodes are available: 1 node(s) were unschedulable. {NOT_HELPFUL_1}"


def test_node_unschedulable_tolerated() -> None:
    tol = {
        "tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
        ]
    }
    s = scheduler([node("a", unschedulable=True), pod("p", spec=tol)])
    assert explain(s, s.cluster.pending_pods[0]).stage == "schedulable"


def test_node_affinity_selector() -> None:
    docs = [node("a", labels={"pool": "cpu"}), pod("p", spec={"nodeSelector": {"pool": "gpu"}})]
    assert (
        message(docs)
        == f"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. {NOT_HELPFUL_1}"
    )


def test_node_affinity_match_fields_prefilter_conflict() -> None:
    aff = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["x"]},
                                {"key": "metadata.name", "operator": "In", "values": ["y"]},
                            ]
                        }
                    ]
                }
            }
        }
    }
    docs = [node("a"), node("b"), pod("p", spec=aff)]
    assert message(docs) == (
        "0/2 nodes are available: pod affinity terms conflict. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_node_affinity_prefilter_result_absent_nodes_by_version() -> None:
    aff = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        }
    }
    docs = [node("a", gpus=0), node("b"), node("c"), pod("p", gpus=1, spec=aff)]
    assert message(docs, version="1.31") == (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node is filtered out by the prefilter result. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert message(docs, version="1.32") == (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )


def test_node_name() -> None:
    s = scheduler([node("a"), node("b")])
    from gpuplane.k8s.objects import pod_from_dict

    p = pod_from_dict(pod("p", spec={"nodeName": "b"}))
    ctx = s.context(p)
    diag = s.framework.run(ctx)
    assert [s.index.node_infos[j].name for j in diag.feasible.tolist()] == ["b"]
    assert [st.reasons for st in diag.groups] == [("node(s) didn't match the requested node name",)]


def test_node_ports() -> None:
    ports = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    docs = [
        node("a"),
        pod("web", node_name="a", spec=ports, cpu=None, priority=5),
        pod("p", spec=ports, cpu=None, priority=5),
    ]
    assert message(docs) == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_resources_multi_reason_and_pod_count() -> None:
    docs = [
        node("a", cpu="1", pods=1),
        pod("x", node_name="a", cpu="1"),
        pod("p", cpu="2", gpus=1, priority=10),
    ]
    assert message(docs, version="1.33") == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu, 1 Too many pods. "
        "preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu."
    )


def test_resources_init_and_sidecar() -> None:
    spec = {
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            {"name": "init", "resources": {"requests": {"cpu": "3"}}},
        ],
    }
    docs = [node("a", cpu="3500m"), pod("p", cpu="2", spec=spec)]
    # request = max(2 + 1 sidecar, 3 + 1 sidecar running) = 4 cpu > 3.5
    assert message(docs, version="1.33").startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert message(docs, version="1.28") == (
        "0/1 nodes are available: Pod has a restartable init container and the SidecarContainers feature is disabled. "
        f"{NOT_HELPFUL_1}."  # v1.28: the PostFilter text ends in `..` (versions.py)
    )


def test_volume_binding_missing_and_unbound() -> None:
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    docs = [node("a"), node("b"), node("c"), pod("p", spec=vol)]
    assert message(docs) == (
        '0/3 nodes are available: persistentvolumeclaim "data" not found. '
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    pvc = obj("PersistentVolumeClaim", "data", ns="default", spec={"accessModes": ["ReadWriteOnce"]})
    assert message([*docs, pvc]) == (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    # v1.34-v1.36: DynamicResources' PostFilter has no cycle state after a PreFilter rejection.
    assert message([*docs, pvc], version="1.35") == (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )


def test_volume_binding_pv_node_affinity_by_version() -> None:
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    pvc = obj("PersistentVolumeClaim", "data", ns="default", metadata=BOUND, spec={"volumeName": "pv1"})
    pv = obj(
        "PersistentVolume",
        "pv1",
        spec={
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["z"]}
                            ]
                        }
                    ]
                }
            }
        },
    )
    docs = [node("a"), pvc, pv, pod("p", spec=vol)]
    assert message(docs, version="1.32").startswith(
        "0/1 nodes are available: 1 node(s) had volume node affinity conflict."
    )
    assert message(docs, version="1.33").startswith(
        "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity."
    )


def test_volume_binding_wait_for_first_consumer_no_provisioner() -> None:
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    sc = obj(
        "StorageClass",
        "local",
        "storage.k8s.io/v1",
        provisioner="kubernetes.io/no-provisioner",
        volumeBindingMode="WaitForFirstConsumer",
    )
    pvc = obj(
        "PersistentVolumeClaim",
        "data",
        ns="default",
        spec={"storageClassName": "local", "resources": {"requests": {"storage": "1Gi"}}},
    )
    assert message([node("a"), sc, pvc, pod("p", spec=vol)]).startswith(
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind."
    )


def test_volume_zone() -> None:
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    pvc = obj("PersistentVolumeClaim", "data", ns="default", metadata=BOUND, spec={"volumeName": "pv1"})
    pv = obj("PersistentVolume", "pv1", metadata={"labels": {"topology.kubernetes.io/zone": "us-a"}})
    docs = [node("a", labels={"topology.kubernetes.io/zone": "us-b"}), pvc, pv, pod("p", spec=vol)]
    assert message(docs).startswith("0/1 nodes are available: 1 node(s) had no available volume zone.")


def test_volume_restrictions_rwop() -> None:
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    pvc = obj(
        "PersistentVolumeClaim",
        "data",
        ns="default",
        metadata=BOUND,
        spec={"volumeName": "pv1", "accessModes": ["ReadWriteOncePod"]},
    )
    pv = obj("PersistentVolume", "pv1")
    docs = [
        node("a"),
        node("b"),
        pvc,
        pv,
        pod("holder", node_name="a", spec=vol, priority=1),
        pod("p", spec=vol, priority=1),
    ]
    assert message(docs) == (
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    # A lower-priority holder can be preempted: PostFilter succeeds, so no clause is appended.
    docs[4] = pod("holder", node_name="a", spec=vol, priority=0)
    s = scheduler(docs)
    expl = explain(s, s.cluster.pending_pods[0])
    assert expl.message == (
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod."
    )
    assert expl.preemption is not None and expl.preemption.nominated_node == "a"
    assert [v.metadata.name for v in expl.preemption.victims] == ["holder"]


def test_pod_topology_spread() -> None:
    tsc = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "w"}},
            }
        ]
    }
    docs = [
        node("a", labels={"zone": "z1"}),
        node("b", labels={"zone": "z2"}),
        node("c"),
        pod("w1", node_name="a", labels={"app": "w"}, priority=1),
        pod("filler", node_name="b", cpu="8", priority=1),
        pod("p", labels={"app": "w"}, spec=tsc, priority=1),
    ]
    assert message(docs) == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label). "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_inter_pod_affinity_and_anti_affinity() -> None:
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}
                ]
            }
        }
    }
    aff = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "cache"}},
                    }
                ]
            }
        }
    }
    docs = [
        node("a"),
        node("b"),
        pod("db1", node_name="a", labels={"app": "db"}, priority=1),
        pod("cache", node_name="b", labels={"app": "other"}, priority=1),
        pod("p", labels={"app": "db"}, spec=anti, priority=1),
        pod("q", labels={"app": "web"}, spec=aff, priority=1),
        pod("r", labels={"app": "x"}, priority=1, spec={"nodeSelector": {"kubernetes.io/hostname": "a"}}),
    ]
    s = scheduler(docs)
    by_name = {p.metadata.name: p for p in s.cluster.pending_pods}
    assert explain(s, by_name["p"]).nodes() == {"a": ["node(s) didn't match pod anti-affinity rules"]}
    assert explain(s, by_name["q"]).message == (
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    # existing pod db1 has no anti-affinity; give one to a running pod and check the third reason
    docs2 = [
        node("a"),
        pod("guard", node_name="a", labels={"app": "guard"}, spec=anti, priority=1),
        pod("p", labels={"app": "db"}, priority=1),
    ]
    assert message(docs2) == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_dynamic_resources_missing_claim_and_class() -> None:
    claims = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "my-gpu"}]}
    docs = [node("a"), pod("p", spec=claims)]
    # dynamicresources.go PreEnqueue: a missing claim keeps the pod out of the queue (never tried).
    s = scheduler(docs, version="1.34")
    held = explain(s, s.cluster.pending_pods[0])
    assert (held.stage, held.message) == ("claims-pending", "")
    assert 'resourceclaim.resource.k8s.io "my-gpu" not found' in held.cause_texts()[0]
    claim = obj(
        "ResourceClaim",
        "my-gpu",
        "resource.k8s.io/v1",
        ns="default",
        spec={
            "devices": {
                "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}]
            }
        },
    )
    assert message([*docs, claim], version="1.34") == (
        "0/1 nodes are available: request g: device class gpu.nvidia.com does not exist. "
        f"no new claims to deallocate, {NOT_HELPFUL_1}"
    )
    dc = obj(
        "DeviceClass",
        "gpu.nvidia.com",
        "resource.k8s.io/v1",
        spec={"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
    )
    assert message([*docs, claim, dc], version="1.34") == (
        f"0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, {NOT_HELPFUL_1}"
    )
    slice_ = obj(
        "ResourceSlice",
        "a-gpus",
        "resource.k8s.io/v1",
        spec={
            "nodeName": "a",
            "driver": "gpu.nvidia.com",
            "pool": {"name": "a"},
            "devices": [{"name": "gpu-0"}],
        },
    )
    s = scheduler([*docs, claim, dc, slice_], version="1.34")
    assert explain(s, s.cluster.pending_pods[0]).stage == "schedulable"
