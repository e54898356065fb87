"""why-pending on the upstream code paths behind the disagreements found by running the real
kube-scheduler (issue 13): preemption dry runs, VolumeBinding / VolumeZone, DRA PreEnqueue and
DRA CEL selectors. Each fixture is written from the Go source cited beside it (kubernetes/
kubernetes, v1.34 unless a test says otherwise); the expected texts are the ones those code
paths assemble, joined as ``FitError.Error()`` (pkg/scheduler/framework/types.go) does.
"""

from __future__ import annotations

from typing import Any

from sched_helpers import message, node, obj, pod, scheduler

from gpuplane.scheduler.plugins import dra_cel
from gpuplane.why_pending.explain import explain

# preemption.go nodesWherePreemptionMightHelp: every node UnschedulableAndUnresolvable.
NOT_HELPFUL = "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
# dynamicresources.go PostFilter (v1.34): no claims, or no cycle state after a PreFilter rejection.
NO_CLAIMS = "no new claims to deallocate, "
BOUND = {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}}


def _explain(docs: list[dict], version: str = "1.34", name: str = "p") -> Any:
    s = scheduler(docs, version)
    return explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == name))


# -- 1. Preemption dry run: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
#       SelectVictimsOnNode removes every lower-priority pod (RunPreFilterExtensionRemovePod), then
#       RunFilterPluginsWithNominatedPods; interpodaffinity/filtering.go satisfyPodAffinity.


def _affinity_to(app: str) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def test_preemption_evicts_the_affinity_target() -> None:
    docs = [
        node("a", gpus=8),
        pod("cache", node_name="a", gpus=8, priority=0, labels={"app": "cache"}),
        pod("p", gpus=8, priority=1000, spec=_affinity_to("cache")),
    ]
    expl = _explain(docs)
    assert expl.message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 node(s) didn't match pod affinity rules."
    )
    assert expl.preemption is not None and expl.preemption.nominated_node is None
    assert expl.cause_texts()[0].startswith("preemption cannot help on 1 node(s): its dry run evicts")
    # v1.33: no DynamicResources PostFilter text before the preemption clause.
    assert _explain(docs, "1.33").message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 node(s) didn't match pod affinity rules."
    )


def test_preemption_keeps_a_higher_priority_affinity_target() -> None:
    docs = [
        node("a", gpus=8),
        pod("cache", node_name="a", gpus=4, priority=2000, labels={"app": "cache"}),
        pod("batch", node_name="a", gpus=4, priority=0),
        pod("p", gpus=4, priority=1000, spec=_affinity_to("cache")),
    ]
    outcome = _explain(docs).preemption
    assert outcome is not None and outcome.nominated_node == "a"
    assert [v.metadata.name for v in outcome.victims] == ["batch"]


def test_preemption_self_affinity_starts_the_group_again() -> None:
    # Removing the only matching pod empties affinityCounts (update drops zero entries), and a
    # pod matching its own terms may then start the group: the dry run fits, "other" is a victim.
    docs = [
        node("a", gpus=8),
        pod("other", node_name="a", gpus=8, priority=0, labels={"app": "ring"}),
        pod("p", gpus=8, priority=1000, labels={"app": "ring"}, spec=_affinity_to("ring")),
    ]
    outcome = _explain(docs).preemption
    assert outcome is not None and outcome.nominated_node == "a"
    assert [v.metadata.name for v in outcome.victims] == ["other"]


# -- 2. VolumeBinding: volumebinding/volume_binding.go PreFilter/Filter, binder.go
#       GetPodVolumeClaims / FindPodVolumes / findMatchingVolumes / checkVolumeProvisions,
#       component-helpers storage/volume pv_helpers.go IsDelayBindingMode / FindMatchingVolume;
#       VolumeZone: volumezone/volume_zone.go getPVbyPod / getErrorAsStatus.

LOCAL = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"}}
LOCAL.update(provisioner="kubernetes.io/no-provisioner", volumeBindingMode="WaitForFirstConsumer")
MOUNT = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}


def _claim(spec: dict, metadata: dict | None = None) -> dict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}, **spec}
    return obj("PersistentVolumeClaim", "data", ns="default", metadata=metadata or {}, spec=body)


def _pv(name: str = "pv1", labels: dict | None = None, **spec: Any) -> dict:
    body = {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce"], **spec}
    meta = {"labels": labels or {}}
    return obj("PersistentVolume", name, metadata=meta, spec=body, status={"phase": "Available"})


def test_pvc_selector_must_match_the_pv() -> None:
    claim = _claim({"storageClassName": "local", "selector": {"matchLabels": {"tier": "fast"}}})
    docs = [node("a"), LOCAL, claim, pod("p", spec=MOUNT)]
    assert message([*docs, _pv(labels={"tier": "slow"}, storageClassName="local")], version="1.34") == (
        f"0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind. "
        f"{NO_CLAIMS}{NOT_HELPFUL}"
    )
    fast = _pv(labels={"tier": "fast"}, storageClassName="local")
    assert _explain([*docs, fast]).stage == "schedulable"


def test_pv_of_another_class_or_claimed_elsewhere_is_no_match() -> None:
    claim = _claim({"storageClassName": "local"})
    other_class = _pv("pv1", storageClassName="other")
    claimed = _pv("pv2", storageClassName="local", claimRef={"name": "x", "namespace": "default"})
    docs = [node("a"), LOCAL, claim, other_class, claimed, pod("p", spec=MOUNT)]
    assert message(docs, version="1.34").startswith(
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind."
    )


def test_selected_node_annotation_for_another_node() -> None:
    # binder.go FindPodVolumes: a claim already handed to a provisioner for node "b" fails on "a"
    # at once; provisioned on "b" it may bind there.
    sc = {**LOCAL, "provisioner": "ebs.csi.aws.com"}
    claim = _claim(
        {"storageClassName": "local"}, {"annotations": {"volume.kubernetes.io/selected-node": "b"}}
    )
    s = scheduler([node("a"), node("b"), sc, claim, pod("p", spec=MOUNT)], "1.34")
    expl = explain(s, s.cluster.pending_pods[0])
    assert (expl.stage, expl.feasible_nodes) == ("schedulable", ["b"])


def test_missing_storage_class_is_immediate_binding() -> None:
    # IsDelayBindingMode: a class the lister does not find is not delayed -> unboundClaimsImmediate.
    docs = [node("a"), _claim({"storageClassName": "gone"}), pod("p", spec=MOUNT)]
    assert message(docs, version="1.34") == (
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )
    assert message(docs, version="1.33") == (
        f"0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. {NOT_HELPFUL}"
    )


def test_prebound_claim_without_bind_completed_is_immediate() -> None:
    # isPVCFullyBound needs spec.volumeName and pv.kubernetes.io/bind-completed.
    docs = [node("a"), _pv(storageClassName="local"), LOCAL, pod("p", spec=MOUNT)]
    claim = _claim({"storageClassName": "local", "volumeName": "pv1"})
    assert message([*docs, claim], version="1.34") == (
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )
    bound = _claim({"storageClassName": "local", "volumeName": "pv1"}, BOUND)
    assert _explain([*docs, bound]).stage == "schedulable"


def test_bound_claim_whose_pv_is_gone() -> None:
    # VolumeZone PreFilter after VolumeBinding's: the PV lister's NotFound text, UU; DRA's
    # PreFilter never ran, so its PostFilter reads no state ("not found", an Error).
    claim = _claim({"storageClassName": "local", "volumeName": "pv-gone"}, BOUND)
    docs = [node("a"), LOCAL, claim, pod("p", spec=MOUNT)]
    assert message(docs, version="1.34") == (
        '0/1 nodes are available: persistentvolume "pv-gone" not found. not found'
    )
    assert message(docs, version="1.31") == (
        f'0/1 nodes are available: persistentvolume "pv-gone" not found. {NOT_HELPFUL}'
    )


def test_ephemeral_claim_not_owned_by_the_pod() -> None:
    # volume_binding.go podHasPVCs -> ephemeral.VolumeIsForPod.
    vol = {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]}
    claim = obj("PersistentVolumeClaim", "p-scratch", ns="default", spec={"storageClassName": "local"})
    assert message([node("a"), LOCAL, claim, pod("p", spec=vol)], version="1.33") == (
        "0/1 nodes are available: PVC default/p-scratch was not created for pod default/p (pod is not owner). "
        f"{NOT_HELPFUL}"
    )


# -- 3. DRA PreEnqueue: dynamicresources/dynamicresources.go PreEnqueue ->
#       foreachPodResourceClaim; k8s.io/dynamic-resource-allocation/resourceclaim Name / IsForPod.

GPU_CLASS = obj(
    "DeviceClass",
    "gpu.nvidia.com",
    "resource.k8s.io/v1",
    spec={"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
)


def _gpu_claim(name: str = "c", selectors: list[str] | None = None, count: int = 1, **meta: Any) -> dict:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.nvidia.com", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}
    return obj("ResourceClaim", name, "resource.k8s.io/v1", ns="default", metadata=meta, spec=spec)


def _slice(devices: list[dict]) -> dict:
    spec = {"nodeName": "a", "driver": "gpu.nvidia.com", "pool": {"name": "a"}, "devices": devices}
    return obj("ResourceSlice", "a-gpus", "resource.k8s.io/v1", spec=spec)


def _claim_pod(ref: dict, statuses: list[dict] | None = None) -> dict:
    body = pod("p", spec={"resourceClaims": [ref]})
    if statuses is not None:
        body["status"]["resourceClaimStatuses"] = statuses
    return body


TEMPLATE = {"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}
OWNED = {
    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}]
}


def test_pre_enqueue_missing_claim() -> None:
    expl = _explain([node("a"), GPU_CLASS, _claim_pod({"name": "gpu", "resourceClaimName": "nope"})])
    assert (expl.stage, expl.message) == ("claims-pending", "")
    assert expl.cause_texts() == [
        'DynamicResources PreEnqueue keeps the pod out of the scheduling queue: resourceclaim.resource.k8s.io "nope" '
        "not found; kube-scheduler never tries it (no FailedScheduling event) until that changes"
    ]


def test_pre_enqueue_template_claim_not_created_yet() -> None:
    expl = _explain([node("a"), GPU_CLASS, _claim_pod(TEMPLATE)])
    assert (expl.stage, expl.message) == ("claims-pending", "")
    assert 'pod "default/p": ResourceClaim not created yet' in expl.cause_texts()[0]
    assert "ResourceClaimTemplate gpu-tmpl" in expl.fixes[0]


def test_pre_enqueue_template_claim_must_be_controlled_by_the_pod() -> None:
    status = [{"name": "gpu", "resourceClaimName": "p-gpu-x1"}]
    stray = _gpu_claim("p-gpu-x1")
    expl = _explain([node("a"), GPU_CLASS, stray, _claim_pod(TEMPLATE, status)])
    assert expl.stage == "claims-pending"
    assert "ResourceClaim default/p-gpu-x1 was not created for pod default/p" in expl.cause_texts()[0]
    owned = _gpu_claim("p-gpu-x1", **OWNED)
    docs = [node("a"), GPU_CLASS, owned, _slice([{"name": "gpu-0"}]), _claim_pod(TEMPLATE, status)]
    assert _explain(docs).stage == "schedulable"


def test_template_claim_that_needs_no_claim() -> None:
    # resourceclaim.Name: a status entry without resourceClaimName means no claim is needed.
    docs = [node("a"), GPU_CLASS, _claim_pod(TEMPLATE, [{"name": "gpu"}])]
    assert _explain(docs).stage == "schedulable"


# -- 4. DRA CEL: k8s.io/dynamic-resource-allocation/cel/compile.go DeviceMatches; the allocator
#       (structured/.../allocator*.go selectorsMatch) needs every class and request selector true.

H100 = {
    "name": "gpu-0",
    "attributes": {"productName": {"string": "NVIDIA H100"}, "driverVersion": {"version": "570.86.15"}},
    "capacity": {"memory": {"value": "80Gi"}},
}
CANNOT = f"0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, {NOT_HELPFUL}"


def _cel_docs(selectors: list[str], count: int = 1, devices: list[dict] | None = None) -> list[dict]:
    ref = {"name": "gpu", "resourceClaimName": "c"}
    return [
        node("a"),
        GPU_CLASS,
        _gpu_claim(selectors=selectors, count=count),
        _slice(devices or [H100]),
        _claim_pod(ref),
    ]


def test_cel_attribute_selector() -> None:
    no = _cel_docs(["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"])
    assert message(no, version="1.34") == CANNOT
    yes = _cel_docs(["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'"])
    assert _explain(yes).stage == "schedulable"


def test_cel_capacity_quantity() -> None:
    enough = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    assert _explain(_cel_docs([enough])).stage == "schedulable"
    too_much = "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('96Gi'))"
    assert message(_cel_docs([too_much]), version="1.34") == CANNOT


def test_cel_semver_attribute() -> None:
    newer = "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))"
    assert _explain(_cel_docs([newer])).stage == "schedulable"
    older = "device.attributes['gpu.nvidia.com'].driverVersion.isLessThan(semver('550.0.0'))"
    assert message(_cel_docs([older]), version="1.34") == CANNOT


def test_cel_count_needs_that_many_matching_devices() -> None:
    b200 = {"name": "gpu-1", "attributes": {"productName": {"string": "NVIDIA B200"}}}
    selector = ["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'"]
    assert message(_cel_docs(selector, count=2, devices=[H100, b200]), version="1.34") == CANNOT
    assert _explain(_cel_docs(selector, count=1, devices=[b200, H100])).stage == "schedulable"


def test_cel_runtime_error_is_a_filter_error() -> None:
    # A missing attribute is a CEL runtime error; RunFilterPlugins wraps it ("running %q filter
    # plugin: %w") and the cycle aborts with that error.
    expl = _explain(_cel_docs(["device.attributes['gpu.nvidia.com'].missing == 'x'"]))
    assert expl.stage == "scheduler-error"
    assert expl.message.startswith(
        'running "DynamicResources" filter plugin: claim default/c: selector #0: CEL runtime error: '
    )


def test_cel_helpers() -> None:
    assert dra_cel.semver("1.2.3-rc1") < dra_cel.semver("1.2.3") < dra_cel.semver("1.10.0")
    assert dra_cel.quantity("1Gi") == 1024**3 * 1000
    device = dra_cel.device_variable("gpu.nvidia.com", {"attributes": {"example.com/x": {"int": 3}}})
    assert device["attributes"] == {"example.com": {"x": 3}}
    assert dra_cel.matches("device.attributes['example.com'].x > 2", device) is True
    assert dra_cel.matches("device.attributes['example.com'].?x.orValue(0) > 2", device) is None


# -- 6. Nominated pods: pkg/scheduler/framework/runtime/framework.go
#       RunFilterPluginsWithNominatedPods / addGEPriorityNominatedPods (AddPod extensions of
#       InterPodAffinity; NodeInfo.AddPod for ports), two passes when nominated pods were added.


def _nominated(name: str, priority: int, labels: dict | None = None, spec: dict | None = None) -> dict:
    body = pod(name, priority=priority, labels=labels, spec=spec)
    body["status"]["nominatedNodeName"] = "a"
    return body


def _anti(app: str) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def test_nominated_pod_anti_affinity_counts_for_lower_priority() -> None:
    guard = _nominated("guard", 100, spec=_anti("web"))
    low = [node("a"), guard, pod("p", priority=50, labels={"app": "web"})]
    assert message(low, version="1.34") == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for "
        "incoming pod."
    )
    # Nominated pods of lower priority are not added: the node is free for a higher-priority pod.
    high = [node("a"), guard, pod("p", priority=200, labels={"app": "web"})]
    assert _explain(high).stage == "schedulable"


def test_affinity_satisfied_only_by_a_nominated_pod_fails_the_second_pass() -> None:
    cache = _nominated("cache", 100, labels={"app": "cache"})
    docs = [node("a"), cache, pod("p", priority=50, spec=_affinity_to("cache"))]
    assert message(docs, version="1.34") == (
        f"0/1 nodes are available: 1 node(s) didn't match pod affinity rules. {NO_CLAIMS}{NOT_HELPFUL}"
    )


def test_nominated_pod_host_port() -> None:
    ports = {
        "containers": [{"name": "main", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    }
    docs = [node("a"), _nominated("first", 100, spec=ports), pod("p", priority=50, spec=ports)]
    assert message(docs, version="1.34") == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for "
        "incoming pod."
    )
    # equal priority counts too (addGEPriorityNominatedPods: >=)
    same = [node("a"), _nominated("first", 50, spec=ports), pod("p", priority=50, spec=ports)]
    assert _explain(same).stage == "scheduler"


# -- 5. Scoring: imagelocality/image_locality.go (Score, sumImageScores, scaledImageScore,
#       calculatePriority, normalizedImageName); ties as schedule_one.go selectHost (random among
#       the top scores upstream; the first in node order here).


def _with_image(name: str, image: str, size: int) -> dict:
    body = node(name)
    body["status"]["images"] = [{"names": [image], "sizeBytes": size}]
    return body


def _placed(docs: list[dict]) -> str:
    from gpuplane.scheduler.framework import ScheduleResult

    s = scheduler(docs, "1.34")
    result = s.schedule_one(s.cluster.pending_pods[0])
    assert isinstance(result, ScheduleResult)
    return result.node


def test_image_locality_prefers_the_node_with_the_image() -> None:
    from gpuplane.scheduler.context import PodContext
    from gpuplane.scheduler.scoring import image_locality_score, pod_images

    mib = 1024 * 1024
    p = pod("p")  # image busybox -> busybox:latest (normalizedImageName)
    docs = [node("a"), node("b"), _with_image("c", "busybox:latest", 500 * mib), p]
    assert _placed(docs) == "c"
    s = scheduler(docs, "1.34")
    ctx: PodContext = s.context(s.cluster.pending_pods[0])
    # 500 MiB x 1/3 of the nodes, mapped between 23 MiB and 1000 MiB: 100 * 150645418 // 1024458752
    assert image_locality_score(ctx, 2, pod_images(ctx)) == 14
    assert image_locality_score(ctx, 0, pod_images(ctx)) == 0


def test_small_images_and_ties_keep_node_order() -> None:
    # below minThreshold (23 MiB) every node scores 0: a tie, broken by node order here.
    docs = [node("a"), node("b"), _with_image("c", "busybox:latest", 5 * 1024 * 1024), pod("p")]
    assert _placed(docs) == "a"
    assert _placed([node("a"), node("b"), pod("p")]) == "a"


def _preferred(kind: str, app: str, weight: int) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {
        "affinity": {
            kind: {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": weight, "podAffinityTerm": term}
                ]
            }
        }
    }


def test_preferred_pod_affinity_scores() -> None:
    # interpodaffinity/scoring.go: +weight per matching existing pod on the pair of its node,
    # NormalizeScore to 0..100 over the feasible nodes, x the plugin weight 2.
    from gpuplane.scheduler.framework import ScheduleResult

    cache = pod("cache", node_name="b", labels={"app": "cache"})
    docs = [node("a"), node("b"), cache, pod("p", spec=_preferred("podAffinity", "cache", 100))]
    s = scheduler(docs, "1.34")
    result = s.schedule_one(s.cluster.pending_pods[0])
    assert isinstance(result, ScheduleResult) and result.node == "b"
    base = scheduler([node("a"), node("b"), cache, pod("p")], "1.34")
    plain = base.schedule_one(base.cluster.pending_pods[0])
    assert isinstance(plain, ScheduleResult) and plain.node == "a"  # less allocated, first in order
    assert result.scores["b"] - plain.scores["b"] == 200


def test_preferred_pod_anti_affinity_scores() -> None:
    noisy = pod("noisy", node_name="a", labels={"app": "noisy"})
    docs = [node("a"), node("b"), noisy, pod("p", spec=_preferred("podAntiAffinity", "noisy", 50))]
    assert _placed(docs) == "b"
