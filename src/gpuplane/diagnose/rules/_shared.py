"""Helpers shared by the cluster rule modules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.diagnose import inventory as inv
from gpuplane.diagnose.components import pod_problem
from gpuplane.diagnose.evidence import ClusterFinding, Evidence, label_path, node_ref, pod_ref
from gpuplane.diagnose.facts import ClusterFacts, facts_for
from gpuplane.k8s.objects import Node, Pod
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

DEPLOY_DRIVER = "nvidia.com/gpu.deploy.driver"
PAUSED = "paused-for-mig-change"
MAX_LISTED = 3


ClusterCheck = Callable[["LintContext", ClusterFacts], Iterator[ClusterFinding]]


def cluster_rule(*, id: str, severity: str, summary: str) -> Callable[[ClusterCheck], ClusterCheck]:
    """``@rule`` for the ``cluster`` category: every cluster rule needs the cluster
    (``context="required"``) and reads the shared :class:`ClusterFacts`, so the check is
    called as ``check(ctx, facts)`` and never runs without a cluster."""

    def decorate(check: ClusterCheck) -> ClusterCheck:
        @functools.wraps(check)
        def run(ctx: LintContext) -> Iterator[ClusterFinding]:
            if ctx.cluster is None:
                return iter(())
            return check(ctx, facts_for(ctx.cluster))

        rule(id=id, severity=severity, category="cluster", context="required", summary=summary)(run)
        return check

    return decorate


def _finding(
    ctx: LintContext,
    obj: Manifest,
    path: FieldPath,
    message: str,
    fix: str,
    evidence: list[Evidence],
    *,
    severity: str | None = None,
    explanation: dict[str, Any] | None = None,
) -> ClusterFinding:
    meta = ctx.rule
    if meta is None:
        raise RuntimeError("a cluster rule ran outside the engine")
    return ClusterFinding(
        meta.id,
        severity or meta.severity,
        obj,
        tuple(path),
        message,
        fix,
        evidence=evidence,
        explanation=explanation,
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _pod_ref(pod: Pod) -> dict[str, Any]:
    return pod_ref(pod.metadata.namespace, pod.metadata.name)


def _label_evidence(node_name: str, key: str, value: Any, note: str) -> Evidence:
    """Evidence that node ``node_name`` carries label ``key`` = ``value`` (what it proves: ``note``)."""
    return Evidence("label", node_ref(node_name), label_path(key), value, note)


def _flagged_nodes(
    facts: ClusterFacts, wanted: set[str]
) -> Iterator[tuple[inv.NodeInventory, Node, set[str]]]:
    """``(inventory, node, flags)`` of each node the inventory flagged with any of ``wanted``:
    the inventory computes the per-node facts once, the rules only explain them."""
    for node_inv in facts.inventory.nodes:
        flags = {flag.flag for flag in node_inv.flags}
        if not flags & wanted:
            continue
        node = facts.state.node_by_name.get(node_inv.name)
        if node is not None:
            yield node_inv, node, flags


def _pod_evidence(pod: Pod, note: str, status: str | None = None) -> Evidence:
    problem = pod_problem(pod)
    value = status or (problem.status if problem else pod.status.phase or "Pending")
    return Evidence("pod", _pod_ref(pod), "status", value, note)


def _problem_text(pod: Pod) -> str:
    problem = pod_problem(pod)
    if problem is None:
        return pod.status.phase or "Pending"
    parts = [problem.status]
    if problem.restarts:
        parts.append(f"{problem.restarts} restarts")
    if problem.detail:
        parts.append(problem.detail)
    where = f" (container {problem.container})" if problem.container else ""
    return f"{parts[0]}{where}" + (f": {', '.join(parts[1:])}" if len(parts) > 1 else "")


def _requests_text(requests: dict[str, int]) -> str:
    if not requests:
        return "no GPUs"
    return ", ".join(f"{amount} {name}" for name, amount in sorted(requests.items()))
