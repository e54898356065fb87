"""Free GPUs that no pending pod can use, and pending GPU pods with their causes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.diagnose.evidence import ClusterFinding, Evidence, node_ref
from gpuplane.diagnose.facts import ClusterFacts
from gpuplane.diagnose.rules._shared import _finding, _plural, _pod_ref, _requests_text, cluster_rule
from gpuplane.gpu.sharing import UnitCount, replication, unit_word
from gpuplane.k8s.objects import Pod

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# -- gpu-fragmentation --------------------------------------------------------------------------


@cluster_rule(
    id="gpu-fragmentation",
    severity="warning",
    summary="free GPUs exist, but no node can host the pending pods' per-pod GPU count",
)
def gpu_fragmentation(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for pod in facts.pending_gpu_pods():
        for resource, want in sorted(facts.gpu_requests(pod).items()):
            frees = fragment_frees(facts, pod, resource)
            total = sum(frees.values())
            best = max(frees.values(), default=0)
            if not frees or total < want or best >= want:
                continue
            ranked = sorted(frees.items(), key=lambda item: (-item[1], item[0]))
            evidence = [Evidence("pod", _pod_ref(pod), f"requests[{resource}]", want, "needed on one node")]
            for node_name, free in ranked[:8]:
                evidence.append(
                    Evidence(
                        "node", node_ref(node_name), f"free[{resource}]", free, _node_model(facts, node_name)
                    )
                )
            # Time-sliced / MPS replicas are counted apart from whole GPUs (gpu/sharing.py).
            shared = {
                name: replication(facts.state.node_by_name[name].metadata.labels, resource) for name in frees
            }
            units = UnitCount()
            for name, free in frees.items():
                units.add(name, free, shared[name])
            listed = ", ".join(
                f"{n} {f}{' replica' + ('' if f == 1 else 's') if shared[n] else ''}" for n, f in ranked[:4]
            ) + (", ..." if len(ranked) > 4 else "")
            amount = units.text(
                unit_word(resource, (facts.state.node_by_name[name].metadata.labels for name in frees))
            )
            message = (
                f"pod {pod.key} needs {want} {resource} on one node: {amount} "
                f"{'is' if units.total == 1 else 'are'} free on the "
                f"{_plural(len(frees), 'node')} it may use ({listed}), at most {best} on any one"
            )
            drain = ranked[0][0]
            fix = (
                f"bin-pack GPU jobs (NodeResourcesFit scoringStrategy MostAllocated on {resource}); to start "
                f"it now: kubectl cordon {drain} and move its GPU pods, or split it into pods of at most {best}"
            )
            yield _finding(ctx, facts.manifest(pod), ("spec", "containers"), message, fix, evidence)


def fragment_frees(facts: ClusterFacts, pod: Pod, resource: str) -> dict[str, int]:
    """Free ``resource`` per node the pod may use apart from that resource (only nodes with some free).

    The node set is the scheduler model's, as why-pending counts it: nodes whose only failing
    reason is ``Insufficient <resource>`` (a node that also lacks memory or cpu is no room).
    Without the model (or when it has no per-node verdicts for the pod), the nodes are Ready,
    uncordoned, with taints tolerated and required node affinity matched."""
    nodes = _only_short_nodes(facts, pod, resource)
    if nodes is not None:
        room = facts.free_by_node(resource)
        return {name: room[name] for name in nodes if name in room}
    from gpuplane.k8s.selectors import pod_matches_required_node_affinity  # deferred for start-up time
    from gpuplane.k8s.tolerations import find_untolerated_taint

    state = facts.state
    frees: dict[str, int] = {}
    for node, free in facts.free_nodes(resource):  # only nodes with room are GPU nodes worth checking
        name = node.metadata.name
        if node.spec.unschedulable or state.node_ready(name) is False:
            continue
        if find_untolerated_taint(node.spec.taints, pod.spec.tolerations) is not None:
            continue
        if not pod_matches_required_node_affinity(pod, node):
            continue
        frees[name] = free
    return frees


def _only_short_nodes(facts: ClusterFacts, pod: Pod, resource: str) -> list[str] | None:
    """Nodes the scheduler model rejects for ``pod`` only for lack of ``resource``; None when
    the model is unavailable or did not filter nodes for this pod (gated, queued, ...)."""
    from gpuplane.why_pending.gpu_causes import only_short_of  # deferred for start-up time

    expl, _ = facts.explained(pod)  # the model failing on one pod keeps the fallback node set
    return None if expl is None or not expl.groups else only_short_of(expl, resource)


def _node_model(facts: ClusterFacts, name: str) -> str:
    node_inv = facts.node_inventory(name)
    if node_inv is None:
        return ""
    parts = [node_inv.model or node_inv.product or "unknown model"]
    if node_inv.sharing is not None:
        parts.append(f"{node_inv.sharing.strategy} x{node_inv.sharing.replicas}")
    return ", ".join(parts)


# -- pending-gpu-pod ----------------------------------------------------------------------------


@cluster_rule(
    id="pending-gpu-pod",
    severity="error",
    summary="a GPU pod is Pending: the finding carries the scheduler-style explanation and the fix",
)
def pending_gpu_pod(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for pod in facts.pending_gpu_pods():
        expl = facts.explanation(pod)
        requests = facts.gpu_requests(pod)
        evidence = [Evidence("pod", _pod_ref(pod), "requests", requests, "accelerators asked for")]
        observed = expl.get("observed") or ""
        if observed:
            evidence.append(
                Evidence(
                    "condition",
                    _pod_ref(pod),
                    "status.conditions[PodScheduled]",
                    observed,
                    f"written by {pod.spec.scheduler_name or 'default-scheduler'}",
                )
            )
        for row in expl.get("table", [])[:6]:
            sample = ", ".join(row["sample"][:3]) + (", ..." if row["nodes"] > 3 else "")
            evidence.append(
                Evidence(
                    "scheduler",
                    _pod_ref(pod),
                    f"filter[{row['plugin']}]",
                    "; ".join(row["reasons"]),
                    f"{_plural(row['nodes'], 'node')}: {sample}",
                )
            )
        message = expl.get("message") or observed or "no scheduling message recorded"
        causes = expl.get("causes") or []
        summary = f"; {causes[0]}" if causes else ""
        text = f"pod {pod.key} asks for {_requests_text(requests)} and is Pending: {message.rstrip('.')}{summary}"
        fixes = expl.get("fixes") or []
        if len(fixes) == 1:
            fix = fixes[0]
        elif fixes:
            fix = "\n".join(f"{i}) {item}" for i, item in enumerate(fixes, 1))
        else:
            fix = (
                f"gpuplane why-pending --cluster {facts.state.source or 'SOURCE'} --pod {pod.key}  "
                "# per-node reasons"
            )
        yield _finding(ctx, facts.manifest(pod), ("spec",), text, fix, evidence, explanation=expl)
