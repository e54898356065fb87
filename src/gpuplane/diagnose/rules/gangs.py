"""Gangs running in part on the live cluster."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.diagnose.evidence import ClusterFinding, Evidence
from gpuplane.diagnose.facts import ClusterFacts, pod_scheduled_message
from gpuplane.diagnose.gangs import LiveGang, live_gangs
from gpuplane.diagnose.rules._shared import MAX_LISTED, _finding, _pod_ref, _requests_text, cluster_rule
from gpuplane.k8s.objects import Pod

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# -- gang-partially-running ---------------------------------------------------------------------


@cluster_rule(
    id="gang-partially-running",
    severity="error",
    summary="a gang (PodGroup / job) has some pods running and others Pending: GPUs held, job stalled",
)
def gang_partially_running(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for gang in live_gangs(facts.state.pods):
        bound, waiting = gang.bound, gang.waiting
        if not bound or not waiting:
            continue
        if gang.min_member is None and gang.group_kind == "PodGroup":
            gang.min_member = _podgroup_min(facts, gang)
        if gang.min_member is not None and len(bound) >= gang.min_member:
            continue  # the gang started with its minimum; extra (elastic) pods may wait
        held: dict[str, int] = {}
        for pod in bound:
            for resource, amount in facts.gpu_requests(pod).items():
                held[resource] = held.get(resource, 0) + amount
        wanted = sum(sum(facts.gpu_requests(pod).values()) for pod in waiting)
        if not held and not wanted:
            continue
        yield _gang_finding(ctx, facts, gang, bound, waiting, held)


def _podgroup_min(facts: ClusterFacts, gang: LiveGang) -> int | None:
    pg = facts.find_object("PodGroup", gang.namespace, gang.name)
    value = pg.get("spec", "minMember") if pg is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gang_finding(
    ctx: LintContext,
    facts: ClusterFacts,
    gang: LiveGang,
    bound: list[Pod],
    waiting: list[Pod],
    held: dict[str, int],
) -> ClusterFinding:
    pg = facts.find_object("PodGroup", gang.namespace, gang.name) if gang.group_kind == "PodGroup" else None
    owner = None
    if pg is None:
        owner = facts.find_object(gang.group_kind, gang.namespace, gang.name)
        if owner is None:
            for controller in bound[0].metadata.owner_references:
                if controller.controller:
                    owner = facts.find_object(controller.kind, gang.namespace, controller.name)
    obj = pg or owner or facts.manifest(waiting[0])
    evidence: list[Evidence] = []
    if pg is not None:
        evidence.append(
            Evidence(
                "podgroup",
                pg.ref(),
                "spec.minMember",
                pg.get("spec", "minMember"),
                "pods that must be placed together",
            )
        )
        for condition in pg.get("status", "conditions", default=[]):
            if isinstance(condition, dict) and condition.get("status") == "True" and condition.get("message"):
                evidence.append(
                    Evidence(
                        "condition",
                        pg.ref(),
                        f"status.conditions[{condition.get('type')}]",
                        condition.get("message"),
                        str(condition.get("reason") or ""),
                    )
                )
    for pod in bound:
        evidence.append(
            Evidence(
                "pod",
                _pod_ref(pod),
                "spec.nodeName",
                pod.spec.node_name,
                f"{pod.status.phase}, holds {_requests_text(facts.gpu_requests(pod))}",
            )
        )
    for pod in waiting:
        evidence.append(
            Evidence(
                "pod",
                _pod_ref(pod),
                "status.conditions[PodScheduled]",
                pod_scheduled_message(pod) or "Pending",
                f"waits for {_requests_text(facts.gpu_requests(pod))}",
            )
        )
    minimum = f", minMember {gang.min_member}" if gang.min_member is not None else ""
    mechanism = (
        f" (gang scheduler: {gang.mechanism})"
        if gang.group_kind == "PodGroup" or gang.mechanism == "kueue"
        else " (no gang scheduler)"
    )
    message = (
        f"{gang.label}{mechanism}: {len(bound)} of {len(gang.pods)} pods placed and {len(waiting)} Pending"
        f"{minimum}; the placed pods hold {_requests_text(held)} while the job cannot start"
    )
    names = " ".join(p.metadata.name for p in bound[:MAX_LISTED]) + (
        " ..." if len(bound) > MAX_LISTED else ""
    )
    if gang.group_kind == "PodGroup":
        fix = (
            f"kubectl delete pod -n {gang.namespace} {names}  # release the held GPUs; the gang restarts whole "
            f"once {len(gang.pods)} pods fit (minMember must equal the ranks the job needs)"
        )
    else:
        fix = (
            f"kubectl delete pod -n {gang.namespace} {names}  # release the held GPUs; then schedule the job "
            "as a gang: Volcano (schedulerName: volcano + minAvailable), a coscheduling PodGroup, or a Kueue "
            "queue with waitForPodsReady"
        )
    return _finding(ctx, obj, (), message, fix, evidence)
