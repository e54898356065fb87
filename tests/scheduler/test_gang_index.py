"""why-pending's gang index (issue 14 item 1): PodGroup lookup and member counts gathered in one
pass equal the walk over every PodGroup and every pod that ``pod_group_of`` / ``gang_members`` did
per Pending member, on random clusters (Volcano's ``scheduling.k8s.io/group-name`` annotation,
the coscheduling plugin's pod-group labels, terminal pods, several namespaces, duplicate groups)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import obj, pod, scheduler

from gpuplane.k8s.wellknown import COSCHEDULING_LABELS, VOLCANO_GROUP_ANNOTATION
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.prequeue import TERMINAL, gang_members, pod_group_of

NAMESPACES = ("default", "ml")
GROUPS = ("g1", "g2", "")
API = {"volcano": "scheduling.volcano.sh/v1beta1", "coscheduling": "scheduling.x-k8s.io/v1alpha1"}

member_st = st.fixed_dictionaries(
    {
        "ns": st.sampled_from(NAMESPACES),
        "volcano": st.none() | st.sampled_from(GROUPS),
        "labels": st.dictionaries(st.sampled_from(COSCHEDULING_LABELS), st.sampled_from(GROUPS), max_size=2),
        "bound": st.booleans(),
        "phase": st.sampled_from(("Running", "Pending", "Succeeded", "Failed")),
    }
)
group_st = st.tuples(
    st.sampled_from(("volcano", "coscheduling")), st.sampled_from(NAMESPACES), st.sampled_from(GROUPS[:2])
)


def build(members: list[dict[str, Any]], groups: list[tuple[str, str, str]]) -> Scheduler:
    docs: list[dict] = []
    for i, (kind, ns, name) in enumerate(groups):
        docs.append(obj("PodGroup", name, API[kind], ns=ns, spec={"minMember": i + 1}))
    for i, m in enumerate(members):
        doc = pod(
            f"m{i}", ns=m["ns"], node_name="n0" if m["bound"] else None, labels=m["labels"], phase=m["phase"]
        )
        if m["volcano"] is not None:
            doc["metadata"]["annotations"] = {VOLCANO_GROUP_ANNOTATION: m["volcano"]}
            doc["spec"]["schedulerName"] = "volcano"
        docs.append(doc)
    return scheduler(docs)


def naive_group_of(sched: Scheduler, p: Any) -> tuple[str, Any, str]:
    ns = p.metadata.namespace or "default"
    name = p.metadata.annotations.get(VOLCANO_GROUP_ANNOTATION)
    if name:
        found = [
            pg
            for pg in sched.cluster.by_kind("PodGroup", "scheduling.volcano.sh")
            if pg.name == name and (pg.namespace or "default") == ns
        ]
        return "volcano", found[0] if found else None, name
    for label in COSCHEDULING_LABELS:
        name = p.metadata.labels.get(label)
        if name:
            found = [
                pg
                for pg in sched.cluster.by_kind("PodGroup", "scheduling.x-k8s.io")
                if pg.name == name and (pg.namespace or "default") == ns
            ]
            return "coscheduling", found[0] if found else None, name
    return "", None, ""


def naive_members(sched: Scheduler, mechanism: str, name: str, ns: str) -> tuple[int, int]:
    total = bound = 0
    for other in sched.cluster.pods:
        if (other.metadata.namespace or "default") != ns or other.status.phase in TERMINAL:
            continue
        if mechanism == "volcano":
            member = other.metadata.annotations.get(VOLCANO_GROUP_ANNOTATION) == name
        else:
            member = any(other.metadata.labels.get(label) == name for label in COSCHEDULING_LABELS)
        if member:
            total += 1
            bound += bool(other.spec.node_name)
    return total, bound


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(member_st, max_size=12), st.lists(group_st, max_size=4))
def test_gang_index_equals_naive(members: list[dict[str, Any]], groups: list[tuple[str, str, str]]) -> None:
    sched = build(members, groups)
    for p in sched.cluster.pods:
        mechanism, pg, name = pod_group_of(sched, p)
        assert (mechanism, pg, name) == naive_group_of(sched, p)
        for ns in NAMESPACES:
            for kind in ("volcano", "coscheduling"):
                for group in GROUPS[:2]:
                    assert gang_members(sched, kind, group, ns) == naive_members(sched, kind, group, ns)
