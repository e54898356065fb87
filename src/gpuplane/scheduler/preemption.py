"""The PostFilter stage: DefaultPreemption (and DynamicResources' no-op text, v1.34-v1.36).

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
(``PodEligibleToPreemptOthers``, ``SelectVictimsOnNode``) and
pkg/scheduler/framework/preemption/preemption.go (``Preempt``, ``findCandidates``,
``nodesWherePreemptionMightHelp``, ``pickOneNodeForPreemption``);
``RunPostFilterPlugins`` (runtime/framework.go) joins rejecting plugins' reasons with ``", "``.

Semantics (reference/scheduling.md §1.4, §3.6):
- ``preemptionPolicy: Never`` -> ``preemption: not eligible due to preemptionPolicy=Never.``
- only nodes whose Filter status was Unschedulable are tried; the others count as
  ``Preemption is not helpful for scheduling``;
- on a tried node every pod of *strictly lower* priority is removed; none ->
  ``No preemption victims found for incoming pod``; still no fit -> that filter's reasons;
- if some node fits, preemption succeeds: the pod is nominated there and no clause is
  appended. Victims are then the minimal set (higher-priority victims reprieved first, PDB-
  protected ones before others) and the node is chosen by fewest PDB violations, lowest
  highest-victim priority, smallest priority sum, fewest victims.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import UU, Status, U, build_fit_message
from gpuplane.scheduler.plugins.base import FilterPlugin
from gpuplane.scheduler.plugins.dynamic_resources import postfilter_text
from gpuplane.scheduler.plugins.node_resources_fit import NodeResourcesFit
from gpuplane.scheduler.runtime import Diagnosis, Framework, first_failure
from gpuplane.scheduler.versions import ABSENT_UNRECORDED

NAME = "DefaultPreemption"
# default_preemption.go PodEligibleToPreemptOthers
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
# default_preemption.go SelectVictimsOnNode
NO_VICTIMS = "No preemption victims found for incoming pod"
# preemption.go nodesWherePreemptionMightHelp
NOT_HELPFUL = "Preemption is not helpful for scheduling"
PREFIX = "preemption: "
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass(slots=True)
class PreemptionOutcome:
    """The PostFilter text, and on success the nominated node and its victims."""

    message: str = ""
    nominated_node: str | None = None
    victims: list[Pod] = field(default_factory=list)
    pdb_violations: int = 0
    # per node index, the dry-run Status (None = candidate) for nodes that were tried
    tried: dict[int, Status | None] = field(default_factory=dict)


def run_postfilter(fw: Framework, ctx: PodContext, diag: Diagnosis, active: list[FilterPlugin]) -> PreemptionOutcome:
    """RunPostFilterPlugins of the default profile for a pod that did not fit."""
    parts: list[str] = []
    if fw.wording.dra_postfilter_text:
        text, aborts = postfilter_text(ctx, diag.prefilter_completed)
        if aborts:
            return PreemptionOutcome(message=text)
        parts.append(text)
    outcome = preempt(fw, ctx, diag, active)
    if outcome.nominated_node is not None:
        outcome.message = ""  # a successful PostFilter ends the loop with a Success status
        return outcome
    parts.append(PREFIX + outcome.message)
    outcome.message = ", ".join(parts)
    return outcome


def _terminating_by_preemption(pod: Pod) -> bool:
    if pod.metadata.deletion_timestamp is None:
        return False
    return any(
        c.type == "DisruptionTarget" and c.status == "True" and c.reason == "PreemptionByScheduler"
        for c in pod.status.conditions
    )


def _status_codes(fw: Framework, diag: Diagnosis, num_nodes: int) -> np.ndarray:
    """Per node: U (preemption may help) or UU. Upstream ``nodesWherePreemptionMightHelp``
    skips only UU nodes; before v1.30 the nodes cut by a PreFilterResult had no status at all,
    which reads as Success, so they were tried too (versions.py ABSENT_UNRECORDED)."""
    codes = np.full(num_nodes, int(UU), dtype=np.int8)
    for status, nodes in diag.groups.items():
        if status.code == U:
            codes[nodes] = int(U)
    if diag.absent and fw.wording.prefilter_absent == ABSENT_UNRECORDED:
        codes[diag.absent] = int(U)
    return codes


def preempt(fw: Framework, ctx: PodContext, diag: Diagnosis, active: list[FilterPlugin]) -> PreemptionOutcome:
    index = fw.index
    pod = ctx.pod
    if index.preemption_policy(pod) == "Never":
        return PreemptionOutcome(message=NOT_ELIGIBLE_NEVER)
    codes = _status_codes(fw, diag, index.num_nodes)
    nominated = pod.status.nominated_node_name
    if nominated and nominated in index.by_name:
        j = index.by_name[nominated]
        if codes[j] != int(UU):
            for other in index.node_infos[j].pods:
                if index.priority(other) < ctx.priority and _terminating_by_preemption(other):
                    return PreemptionOutcome(message=NOT_ELIGIBLE_TERMINATING)
    potential = np.nonzero(codes == int(U))[0]
    n = index.num_nodes
    if len(potential) == 0:
        return PreemptionOutcome(message=build_fit_message(n, "", Counter({NOT_HELPFUL: n})))
    unrecorded = diag.absent if fw.wording.prefilter_absent == ABSENT_UNRECORDED else []
    tried = dry_run(fw, ctx, potential, active, unrecorded)
    candidates = [j for j, status in tried.items() if status is None]
    if candidates:
        candidates.sort()
        return _pick(fw, ctx, candidates, active, tried, num_candidates(len(potential)))
    hist: Counter[str] = Counter()
    for status in tried.values():
        assert status is not None
        for reason in status.reasons:
            hist[reason] += 1
    hist[NOT_HELPFUL] += n - len(tried)
    if hist[NOT_HELPFUL] == 0:
        del hist[NOT_HELPFUL]
    return PreemptionOutcome(message=build_fit_message(n, "", hist), tried=tried)


_NO_VICTIMS_STATUS = Status(UU, (NO_VICTIMS,), NAME)


def dry_run(
    fw: Framework, ctx: PodContext, nodes: np.ndarray, active: list[FilterPlugin], unrecorded: list[int] | None = None
) -> dict[int, Status | None]:
    """``SelectVictimsOnNode`` step one on each node: remove every lower-priority pod, re-filter.

    ``unrecorded`` nodes (cut by a PreFilterResult, v1.28-v1.29) never ran the static filters,
    so their dry run re-runs every active plugin, as upstream's full Filter pass would.
    """
    index = fw.index
    if unrecorded:
        out_unrecorded = _dry_run_full(fw, ctx, [j for j in unrecorded], active)
        rest = np.setdiff1d(nodes, np.array(unrecorded, dtype=np.int64))
        out = dry_run(fw, ctx, rest, active) if len(rest) else {}
        out.update(out_unrecorded)
        return out
    levels, cum, counts = index.priority_levels()
    k = int(np.searchsorted(levels, ctx.priority, side="left"))
    victims_count = counts[k]
    out: dict[int, Status | None] = {}
    dynamic = [p for p in active if not p.static]
    only_fit = all(isinstance(p, NodeResourcesFit) for p in dynamic)
    has_victims = nodes[victims_count[nodes] > 0]
    for j in nodes[victims_count[nodes] == 0].tolist():
        out[j] = _NO_VICTIMS_STATUS
    if len(has_victims) == 0:
        return out
    if only_fit:
        fit = next(p for p in dynamic if isinstance(p, NodeResourcesFit))
        freed = cum[k]
        failed = fit.filter_vector(ctx, has_victims, -freed)
        bad: set[int] = set()
        for node_idx, status in failed:
            for j in node_idx.tolist():
                out[j] = status
                bad.add(j)
        for j in has_victims.tolist():
            if j not in bad:
                out[j] = None
        return out
    infos = index.node_infos
    for j in has_victims.tolist():
        info = infos[j]
        ctx.removed = {j: [p for p in info.pods if index.priority(p) < ctx.priority]}
        try:
            out[j] = first_failure(ctx, dynamic, info)
        finally:
            ctx.removed = {}
    return out


def _dry_run_full(fw: Framework, ctx: PodContext, nodes: list[int], active: list[FilterPlugin]) -> dict[int, Status | None]:
    index = fw.index
    out: dict[int, Status | None] = {}
    for j in nodes:
        info = index.node_infos[j]
        lower = [p for p in info.pods if index.priority(p) < ctx.priority]
        if not lower:
            out[j] = _NO_VICTIMS_STATUS
            continue
        ctx.removed = {j: lower}
        try:
            out[j] = first_failure(ctx, active, info)
        finally:
            ctx.removed = {}
    return out


def num_candidates(potential: int) -> int:
    """``calculateNumCandidates`` (defaultpreemption/default_preemption.go): 10% of the
    potential nodes, at least 100, at most all of them (DefaultPreemptionArgs defaults
    ``MinCandidateNodesPercentage: 10``, ``MinCandidateNodesAbsolute: 100``,
    pkg/scheduler/apis/config/v1/defaults.go; reference/scheduling.md §3.6)."""
    n = potential * MIN_CANDIDATE_NODES_PERCENTAGE // 100
    return min(max(n, MIN_CANDIDATE_NODES_ABSOLUTE), potential)


def _pdbs_for(fw: Framework) -> list[tuple[str, object, int]]:
    cached = fw.index.cache.get("pdbs")
    if cached is None:
        import msgspec

        from gpuplane.k8s.objects import LabelSelector

        cached = []
        for obj in fw.index.cluster.pdbs:
            raw = obj.get("spec", "selector")
            try:
                selector = msgspec.convert(raw or {}, LabelSelector, strict=False)
            except msgspec.ValidationError:
                continue
            allowed = obj.get("status", "disruptionsAllowed", default=0)
            cached.append((obj.namespace or "default", selector, int(allowed) if isinstance(allowed, int) else 0))
        fw.index.cache["pdbs"] = cached
    return cached


def _violating(fw: Framework, victims: list[Pod]) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: victims whose eviction would break a PDB, and the rest."""
    pdbs = _pdbs_for(fw)
    allowed = [a for _, _, a in pdbs]
    violating: list[Pod] = []
    safe: list[Pod] = []
    for pod in victims:
        ns = pod.metadata.namespace or "default"
        broke = False
        for i, (pdb_ns, selector, _) in enumerate(pdbs):
            if pdb_ns == ns and label_selector_matches(selector, pod.metadata.labels):
                allowed[i] -= 1
                if allowed[i] < 0:
                    broke = True
        (violating if broke else safe).append(pod)
    return violating, safe


def _pick(
    fw: Framework,
    ctx: PodContext,
    candidates: list[int],
    active: list[FilterPlugin],
    tried: dict[int, Status | None],
    limit: int,
) -> PreemptionOutcome:
    """Victims per candidate (``SelectVictimsOnNode`` reprieve) and ``pickOneNodeForPreemption``.

    ``dryRunPreemption`` (preemption/preemption.go) stops once it holds at least one
    PDB-respecting candidate and ``limit`` candidates in all (``num_candidates``); upstream
    starts at a random node offset, gpuplane at the first node, so the answer is stable.
    Candidates are walked in node order and compared with upstream's keys: fewest PDB
    violations, lowest highest-victim priority, smallest priority sum, fewest victims.

    Speed: the lower-priority pods of a node, sorted, split by PDB, depend only on the node
    and the preemptor's priority, and the resource-only reprieve only on those pods, the
    node's free resources and the preemptor's requests: both are memoized in the index
    cache, so identical preemptors (replicas of one job) and repeated nodes cost a lookup.
    """
    index = fw.index
    dynamic = [p for p in active if not p.static]
    only_fit = all(isinstance(p, NodeResourcesFit) for p in dynamic)
    levels, _, _ = index.priority_levels()
    level = int(np.searchsorted(levels, ctx.priority, side="left"))
    victims_cache: dict[tuple, tuple[list[Pod], int]] = index.cache.setdefault("preemption/victims", {})
    names = tuple(sorted(n for n, v in ctx.requests.items() if v > 0))
    want = tuple(ctx.requests[n] for n in names)
    best: tuple | None = None
    best_out: PreemptionOutcome | None = None
    non_violating = violating_count = 0
    for j in candidates:
        info = index.node_infos[j]
        lower, violating, safe = _lower_pods(fw, j, level, ctx.priority)
        if only_fit:
            key = (j, level, names, want)
            hit = victims_cache.get(key)
            if hit is None:
                hit = victims_cache[key] = _reprieve_resources(ctx, info, lower, violating, safe)
            victims, violations = hit
        else:
            victims, violations = _reprieve_filters(ctx, dynamic, info, lower, violating, safe)
        prios = [index.priority(p) for p in victims]
        rank = (violations, max(prios, default=-(2**31)), sum(prios), len(victims))
        if best is None or rank < best:
            best = rank
            best_out = PreemptionOutcome(
                nominated_node=info.name, victims=victims, pdb_violations=violations, tried=tried
            )
        if violations:
            violating_count += 1
        else:
            non_violating += 1
        if non_violating > 0 and non_violating + violating_count >= limit:
            break
    assert best_out is not None
    return best_out


def _lower_pods(fw: Framework, j: int, level: int, priority: int) -> tuple[list[Pod], list[Pod], list[Pod]]:
    """The pods of node ``j`` below ``priority`` (most important first, as upstream's
    ``MoreImportantPod`` sort by priority), split into PDB-violating and safe ones; memoized
    per (node, priority level)."""
    index = fw.index
    cache: dict[tuple[int, int], tuple[list[Pod], list[Pod], list[Pod]]] = index.cache.setdefault(
        "preemption/lower", {}
    )
    hit = cache.get((j, level))
    if hit is None:
        lower = [p for p in index.node_infos[j].pods if index.priority(p) < priority]
        lower.sort(key=lambda p: -index.priority(p))
        violating, safe = _violating(fw, lower)
        hit = cache[(j, level)] = (lower, violating, safe)
    return hit


def _reprieve_resources(ctx: PodContext, info, lower: list[Pod], violating: list[Pod], safe: list[Pod]) -> tuple[list[Pod], int]:
    """Reprieve on resources only: add each pod back while the preemptor still fits."""
    index = ctx.index
    names = [n for n, v in ctx.requests.items() if v > 0]
    free = {n: info.allocatable.get(n, 0) - info.requested.get(n, 0) for n in names}
    free_pods = info.allocatable.get("pods", 0) - info.requested.get("pods", 0) + len(lower)
    for pod in lower:
        req = index.pod_requests(pod)
        for n in names:
            free[n] += req.get(n, 0)
    victims: list[Pod] = []
    violations = 0
    for group, is_violating in ((violating, True), (safe, False)):
        for pod in group:
            req = index.pod_requests(pod)
            if free_pods - 1 >= 1 and all(free[n] - req.get(n, 0) >= ctx.requests[n] for n in names):
                for n in names:
                    free[n] -= req.get(n, 0)
                free_pods -= 1
            else:
                victims.append(pod)
                violations += is_violating
    return victims, violations


def _reprieve_filters(
    ctx: PodContext, dynamic: list[FilterPlugin], info, lower: list[Pod], violating: list[Pod], safe: list[Pod]
) -> tuple[list[Pod], int]:
    j = info.index
    removed = list(lower)
    victims: list[Pod] = []
    violations = 0
    for group, is_violating in ((violating, True), (safe, False)):
        for pod in group:
            trial = [p for p in removed if p is not pod]
            ctx.removed = {j: trial}
            fits = first_failure(ctx, dynamic, info) is None
            ctx.removed = {}
            if fits:
                removed = trial
            else:
                victims.append(pod)
                violations += is_violating
    return victims, violations
