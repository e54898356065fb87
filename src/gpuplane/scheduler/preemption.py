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
- every dry-run Filter pass counts the pods nominated to the node with priority >= the
  preemptor's as already there (``RunFilterPluginsWithNominatedPods``, runtime/framework.go,
  called from ``SelectVictimsOnNode``); nominated pods of lower priority are not counted;
- a node where the pod fits with every lower-priority pod kept (zero victims) is not a
  candidate: ``DryRunPreemption`` turns it into an Error status
  ``expected at least one victim pod on node "<node>"``; when no candidate is left, ``Preempt``
  returns those errors (``utilerrors.NewAggregate``: one error as is, several as ``[e1, e2]``),
  ``DefaultPreemption.PostFilter`` prefixes ``preemption: `` and ``RunPostFilterPlugins``
  returns that Error alone (earlier plugins' reasons dropped); ``FitError.Error()`` appends it
  after ``" "`` (framework/types.go), so the condition message ends without a period;
- if some node fits, preemption succeeds: the pod is nominated there and no clause is
  appended. Victims are then the minimal set (higher-priority victims reprieved first, PDB-
  protected ones before others) and the node is chosen by fewest PDB violations, lowest
  highest-victim priority, smallest priority sum (each offset by MaxInt32+1), fewest victims,
  latest start of the highest-priority victims, then the first node.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplane.k8s.objects import LabelSelector, Pod
from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.k8s.timestamps import rfc3339_seconds
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import UU, Code, NodeInfo, Status, U, build_fit_message
from gpuplane.scheduler.plugins.base import FilterPlugin, NodeSetFilter, VectorFilter
from gpuplane.scheduler.plugins.dynamic_resources import postfilter_text
from gpuplane.scheduler.plugins.node_resources_fit import PODS
from gpuplane.scheduler.reprieve import LowerPack, cached_pack, lower_pack, reprieve_many
from gpuplane.scheduler.runtime import Diagnosis, Framework
from gpuplane.scheduler.versions import ABSENT_UNRECORDED

if TYPE_CHECKING:
    from gpuplane.scheduler.index import ClusterIndex

NAME = "DefaultPreemption"
# default_preemption.go PodEligibleToPreemptOthers
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
# default_preemption.go SelectVictimsOnNode
NO_VICTIMS = "No preemption victims found for incoming pod"
# preemption.go nodesWherePreemptionMightHelp
NOT_HELPFUL = "Preemption is not helpful for scheduling"
# preemption.go DryRunPreemption: a successful dry run that needs no victim
NO_VICTIM_ERROR = 'expected at least one victim pod on node "{node}"'
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
    # True when PostFilter ended with an Error status (``message`` is that error)
    error: bool = False


def run_postfilter(
    fw: Framework, ctx: PodContext, diag: Diagnosis, active: list[FilterPlugin]
) -> PreemptionOutcome:
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
    if outcome.error:
        # RunPostFilterPlugins returns an Error status at once, without earlier reasons.
        outcome.message = PREFIX + outcome.message
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
    extra = nominated_extra(index, ctx)
    tried = dry_run(fw, ctx, potential, active, unrecorded, extra)
    # C-level walks of the dry-run map, which holds every potential node: the candidates (no
    # Status), and the failing Statuses counted per object (a few distinct ones are shared).
    candidates = list(compress(tried, map(partial(operator.is_, None), tried.values())))
    if candidates:
        candidates.sort()
        picked = _pick(fw, ctx, candidates, active, tried, num_candidates(len(potential)), extra)
        if picked.nominated_node is not None:
            return picked
        errors = [s.message for j, s in sorted(tried.items()) if s is not None and s.code == Code.ERROR]
        # utilerrors.NewAggregate(errs).Error(): one error as is, several bracketed.
        text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return PreemptionOutcome(message=text, tried=tried, error=True)
    hist: Counter[str] = Counter()
    per_status = Counter(map(id, tried.values()))
    by_id = dict(zip(map(id, tried.values()), tried.values(), strict=True))
    for key, count in per_status.items():
        status = by_id[key]
        assert status is not None
        for reason in status.reasons:
            hist[reason] += count
    hist[NOT_HELPFUL] += n - len(tried)
    if hist[NOT_HELPFUL] == 0:
        del hist[NOT_HELPFUL]
    return PreemptionOutcome(message=build_fit_message(n, "", hist), tried=tried)


_NO_VICTIMS_STATUS = Status(UU, (NO_VICTIMS,), NAME)


def nominated_extra(index: ClusterIndex, ctx: PodContext) -> np.ndarray | None:
    """Requests (resources x nodes, plus one ``pods`` each) of the other pods nominated to a
    node with priority >= the preemptor's: ``addGEPriorityNominatedPods`` (runtime/framework.go)
    adds exactly those before each Filter pass of ``RunFilterPluginsWithNominatedPods``, which
    both the Filter stage and ``SelectVictimsOnNode`` (defaultpreemption/default_preemption.go)
    call. None when there is none."""
    extra: np.ndarray | None = None
    for other, j in index.nominated:
        if other is ctx.pod or index.priority(other) < ctx.priority:
            continue
        requests = index.pod_requests(other)
        if extra is None:
            extra = np.zeros_like(index.req)
        for name, amount in requests.items():
            row = index.resource_index.get(name)
            if row is not None:
                extra[row, j] += amount
        extra[index.resource_index[PODS], j] += 1
    return extra


def _filter_node(
    ctx: PodContext,
    plugins: list[FilterPlugin],
    info: NodeInfo,
    removed: list[Pod],
    extra: np.ndarray | None,
    freed: np.ndarray | list[int] | None = None,
) -> Status | None:
    """The first failing plugin on one node with ``removed`` pods taken off and the nominated
    pods of ``extra`` added (NodeResourcesFit is the plugin that counts their requests).
    ``freed``: the requests of ``removed`` and their count (a resources column, the ``pods``
    row included) when already summed."""
    j = info.index
    held = extra is not None and bool(extra[:, j].any())
    ctx.removed = {j: removed}
    if freed is not None:
        ctx.freed = {j: freed}
    try:
        for plugin in plugins:
            if held and isinstance(plugin, VectorFilter):
                status = _fit_with_nominated(ctx, plugin, j, removed, extra, freed)
            else:
                status = plugin.filter(ctx, info)
            if status is not None:
                return status
        return None
    finally:
        ctx.removed = {}
        ctx.freed = {}


def _fit_with_nominated(
    ctx: PodContext,
    fit: VectorFilter,
    j: int,
    removed: list[Pod],
    extra: np.ndarray | None,
    freed: np.ndarray | list[int] | None = None,
) -> Status | None:
    """NodeResourcesFit on node ``j`` through its vector path: the node's requests plus the
    nominated pods' minus the removed pods' (a scratch matrix, one column touched); ``freed``:
    the removed pods' requests and count (a resources column), when already summed."""
    index = ctx.index
    scratch: np.ndarray | None = index.cache.get("preemption/scratch")
    if scratch is None or scratch.shape != index.req.shape:
        scratch = index.cache["preemption/scratch"] = np.zeros_like(index.req)
    assert extra is not None
    if freed is not None:
        column = extra[:, j] - np.asarray(freed, dtype=np.int64)
    else:
        column = extra[:, j].copy()
        pods_row = index.resource_index[PODS]
        for pod in removed:
            for name, amount in index.pod_requests(pod).items():
                row = index.resource_index.get(name)
                if row is not None:
                    column[row] -= amount
            column[pods_row] -= 1
    scratch[:, j] = column
    try:
        failed = fit.filter_vector(ctx, np.array([j], dtype=np.int64), scratch)
    finally:
        scratch[:, j] = 0
    return failed[0][1] if failed else None


def dry_run(
    fw: Framework,
    ctx: PodContext,
    nodes: np.ndarray,
    active: list[FilterPlugin],
    unrecorded: list[int] | None = None,
    extra: np.ndarray | None = None,
) -> dict[int, Status | None]:
    """``SelectVictimsOnNode`` step one on each node: remove every lower-priority pod, re-filter
    with the nominated pods of >= priority (``extra``, see :func:`nominated_extra`) added.

    ``unrecorded`` nodes (cut by a PreFilterResult, v1.28-v1.29) never ran the static filters,
    so their dry run re-runs every active plugin, as upstream's full Filter pass would.
    """
    index = fw.index
    if unrecorded:
        out_unrecorded = _dry_run_full(fw, ctx, [j for j in unrecorded], active, extra)
        rest = np.setdiff1d(nodes, np.array(unrecorded, dtype=np.int64))
        combined = dry_run(fw, ctx, rest, active, None, extra) if len(rest) else {}
        combined.update(out_unrecorded)
        return combined
    k, below, victims_count = index.below_priority(ctx.priority)
    # Filled in one order (no victims, then each failing Status, then the candidates: the
    # why-pending causes read it in that order), with bulk dict updates: it holds every node.
    dynamic = [p for p in active if not p.static]
    only_fit = all(isinstance(p, VectorFilter) for p in dynamic)
    has_victims = nodes[victims_count[nodes] > 0]
    out: dict[int, Status | None] = dict.fromkeys(
        nodes[victims_count[nodes] == 0].tolist(), _NO_VICTIMS_STATUS
    )
    if len(has_victims) == 0:
        return out
    if only_fit:
        fit = next(p for p in dynamic if isinstance(p, VectorFilter))
        failed = fit.filter_vector(ctx, has_victims, extra, below)
        for node_idx, status in failed:
            out.update(dict.fromkeys(node_idx.tolist(), status))
        out.update(dict.fromkeys([j for j in has_victims.tolist() if j not in out]))
        return out
    # Plugin by plugin over the nodes still passing, as the Filter stage runs: a node's Status
    # is its first failing plugin either way, and NodeResourcesFit judges every node at once
    # (the freed requests are ``below``), so the per-node plugins see only the nodes where
    # the pod fits once every lower-priority pod is gone; a node-set plugin judges at once the
    # nodes where it counts none of the pods (``reprieve_nodes``), whose removal changes nothing.
    infos = index.node_infos
    found: dict[int, Status] = {}
    remaining = has_victims
    for plugin in dynamic:
        if len(remaining) == 0:
            break
        if isinstance(plugin, VectorFilter):
            failed = plugin.filter_vector(ctx, remaining, extra, below)
            remaining = _drop_failed(index.num_nodes, remaining, failed, found)
            continue
        per_node, judged = remaining, remaining[:0]
        quiet: list[int] = []  # nodes judged one by one with nothing removed
        watched = plugin.reprieve_nodes(ctx)
        if watched is not None:
            # A node holding no pod the plugin counts keeps the verdict it has with all its
            # pods there (``reprieve_neutral``): a node-set plugin judges those nodes at once,
            # any other without the removed pods to walk.
            loud = np.zeros(index.num_nodes, dtype=bool)
            loud[np.fromiter(watched, dtype=np.int64, count=len(watched))] = True
            per_node = remaining[loud[remaining]]
            rest = remaining[~loud[remaining]]
            if isinstance(plugin, NodeSetFilter):
                failed = plugin.filter_nodes(ctx, rest) if len(rest) else []
                judged = _drop_failed(index.num_nodes, rest, failed, found)
            else:
                quiet = rest.tolist()
        keep: list[int] = []
        for j in quiet:
            verdict = plugin.filter(ctx, infos[j])
            if verdict is None:
                keep.append(j)
            else:
                found[j] = verdict
        for j in per_node.tolist():
            info = infos[j]
            ctx.removed = {j: _lower_set(index, j, k, ctx.priority)}
            ctx.freed = {j: below[:, j]}
            try:
                verdict = plugin.filter(ctx, info)
            finally:
                ctx.removed = {}
                ctx.freed = {}
            if verdict is None:
                keep.append(j)
            else:
                found[j] = verdict
        remaining = np.union1d(judged, np.array(keep, dtype=np.int64))  # ascending, as before
    listed = has_victims.tolist()
    out.update(zip(listed, map(found.get, listed), strict=True))
    return out


def _drop_failed(
    num_nodes: int, nodes: np.ndarray, failed: list[tuple[np.ndarray, Status]], found: dict[int, Status]
) -> np.ndarray:
    """Record the failing Status of each node of ``failed`` in ``found``; the others of ``nodes``."""
    if not failed:
        return nodes
    drop = np.zeros(num_nodes, dtype=bool)
    for node_idx, status in failed:
        found.update(dict.fromkeys(node_idx.tolist(), status))
        drop[node_idx] = True
    return nodes[~drop[nodes]]


def _dry_run_full(
    fw: Framework, ctx: PodContext, nodes: list[int], active: list[FilterPlugin], extra: np.ndarray | None
) -> dict[int, Status | None]:
    index = fw.index
    out: dict[int, Status | None] = {}
    for j in nodes:
        info = index.node_infos[j]
        lower = [p for p in info.pods if index.priority(p) < ctx.priority]
        if not lower:
            out[j] = _NO_VICTIMS_STATUS
            continue
        out[j] = _filter_node(ctx, active, info, lower, extra)
    return out


def num_candidates(potential: int) -> int:
    """``calculateNumCandidates`` (defaultpreemption/default_preemption.go): 10% of the
    potential nodes, at least 100, at most all of them (DefaultPreemptionArgs defaults
    ``MinCandidateNodesPercentage: 10``, ``MinCandidateNodesAbsolute: 100``,
    pkg/scheduler/apis/config/v1/defaults.go; reference/scheduling.md §3.6)."""
    n = potential * MIN_CANDIDATE_NODES_PERCENTAGE // 100
    return min(max(n, MIN_CANDIDATE_NODES_ABSOLUTE), potential)


# One PDB as ``filterPodsWithPDBViolation`` reads it: namespace, selector,
# ``status.disruptionsAllowed`` and the pod names of ``status.disruptedPods``.
_Budget = tuple[str, LabelSelector, int, frozenset[str]]


def _pdbs_for(fw: Framework) -> tuple[list[_Budget], dict[str, list[int]]]:
    """The cluster's PDBs that can match a pod and, per namespace, their positions: a victim is
    checked only against the budgets of its own namespace (upstream skips the others first,
    ``filterPodsWithPDBViolation``, defaultpreemption/default_preemption.go). A PDB with a nil
    or empty selector matches nothing there (``selector.Empty()``; ``LabelSelectorAsSelector``
    gives ``labels.Nothing()`` for nil), nor does one whose selector does not convert."""
    cached = fw.index.cache.get("pdbs")
    if cached is None:
        import msgspec  # deferred for start-up time

        pdbs: list[_Budget] = []
        for obj in fw.index.cluster.pdbs:
            raw = obj.get("spec", "selector")
            if not isinstance(raw, dict):
                continue
            try:
                selector = msgspec.convert(raw, LabelSelector, strict=False)
            except msgspec.ValidationError:
                continue
            if not selector.match_labels and not selector.match_expressions:
                continue
            allowed = obj.get("status", "disruptionsAllowed", default=0)
            disrupted = obj.get("status", "disruptedPods", default=None)
            pdbs.append(
                (
                    obj.namespace or "default",
                    selector,
                    int(allowed) if isinstance(allowed, int) else 0,
                    frozenset(disrupted) if isinstance(disrupted, dict) else frozenset(),
                )
            )
        by_namespace: dict[str, list[int]] = {}
        for i, (namespace, _, _, _) in enumerate(pdbs):
            by_namespace.setdefault(namespace, []).append(i)
        cached = fw.index.cache["pdbs"] = (pdbs, by_namespace)
    return cached


def _violating(fw: Framework, victims: list[Pod]) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: victims whose eviction would break a PDB, and the rest,
    each in the order given. A pod without labels matches no PDB; a pod already listed in a
    PDB's ``status.disruptedPods`` (its eviction was admitted by the API server) neither
    counts against that budget nor violates it."""
    pdbs, by_namespace = _pdbs_for(fw)
    allowed = [a for _, _, a, _ in pdbs]
    violating: list[Pod] = []
    safe: list[Pod] = []
    for pod in victims:
        broke = False
        labels = pod.metadata.labels
        for i in by_namespace.get(pod.metadata.namespace or "default", ()) if labels else ():
            _, selector, _, disrupted = pdbs[i]
            if not label_selector_matches(selector, labels) or pod.metadata.name in disrupted:
                continue
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
    extra: np.ndarray | None = None,
) -> PreemptionOutcome:
    """Victims per candidate (``SelectVictimsOnNode`` reprieve) and ``pickOneNodeForPreemption``.

    ``dryRunPreemption`` (preemption/preemption.go) stops once it holds at least one
    PDB-respecting candidate and ``limit`` candidates in all (``num_candidates``); upstream
    starts at a random node offset, gpuplane at the first node, so the answer is stable.
    Candidates are walked in node order and compared with upstream's keys, in its order
    (preemption.go ``pickOneNodeForPreemption``): fewest PDB violations, lowest highest-victim
    priority, smallest sum of victim priorities each offset by MaxInt32+1, fewest victims,
    latest earliest start of the highest-priority victims (``GetEarliestPodStartTime``); still
    tied, the first node (upstream's first of a Go map walk, gpuplane's first in node order).
    A candidate whose reprieve keeps every pod (zero victims) gets ``DryRunPreemption``'s Error
    status in ``tried`` instead; when none is left the outcome has no nominated node.
    ``extra`` holds the nominated pods of >= priority, counted in every reprieve Filter pass.

    Speed: the candidates are judged ``limit`` at a time (the walk then stops within the first
    batch unless candidates without victims or only PDB-violating ones are met). The lower-
    priority pods of a node, sorted, split by PDB and packed as arrays, depend only on the node
    and the preemptor's priority level (memoized in the index cache, :func:`reprieve.lower_pack`).
    The resource-only reprieve, exact on a node where no lower pod can change a per-node plugin's
    verdict (:func:`_sensitive_plugins`), runs for the whole batch at once
    (:func:`reprieve.reprieve_many`), with the four keys and the start times per candidate; only
    the other nodes are reprieved one by one with those plugins, and only the chosen node's
    victims become a list.
    """
    index = fw.index
    dynamic = [p for p in active if not p.static]
    vector: list[FilterPlugin] = [p for p in dynamic if isinstance(p, VectorFilter)]
    level, freed, freed_count = index.below_priority(ctx.priority)
    per_node = [p for p in dynamic if p not in vector]
    # Per per-node plugin, the nodes where some pod may not be neutral to it (None: any node).
    watched = [p.reprieve_nodes(ctx) for p in per_node]
    best: tuple[int, int, int, int] | None = None
    best_start = math.nan
    chosen: tuple[int, Callable[[], list[Pod]], int] | None = None  # node, its victims, violations
    non_violating = violating_count = 0
    for first in range(0, len(candidates), limit):
        batch = candidates[first : first + limit]
        (violations, top, total, count, earliest), victims_of = _judge(
            fw, ctx, batch, level, freed, freed_count, per_node, watched, extra
        )
        # The walk in order, at once: where it stops (the first candidate with victims after
        # which a PDB-respecting one is held and ``limit`` in all), which candidates before
        # that have no victim (an Error each), and the least of the others by the five keys
        # (the latest start wins, so it sorts negated; lexsort is stable: the first on a tie).
        has = count > 0
        held_ok = np.cumsum(has & (violations == 0)) + non_violating
        held_all = held_ok + np.cumsum(has & (violations > 0)) + violating_count
        stops = np.flatnonzero(has & (held_ok > 0) & (held_all >= limit))
        end = int(stops[0]) + 1 if len(stops) else len(batch)
        for pos in np.flatnonzero(~has[:end]).tolist():
            j = batch[pos]
            tried[j] = Status(Code.ERROR, (NO_VICTIM_ERROR.format(node=index.node_infos[j].name),), NAME)
        live = np.flatnonzero(has[:end])
        if len(live):
            pos = int(
                live[np.lexsort((-earliest[live], count[live], total[live], top[live], violations[live]))[0]]
            )
            rank = (int(violations[pos]), int(top[pos]), int(total[pos]), int(count[pos]))
            start = float(earliest[pos])
            if best is None or rank < best or (rank == best and start > best_start):
                best, best_start = rank, start
                chosen = (batch[pos], partial(victims_of, pos), rank[0])
        non_violating = int(held_ok[end - 1])
        violating_count = int(held_all[end - 1]) - non_violating
        if len(stops):
            break
    return _outcome(index, chosen, tried)


_Keys = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _outcome(
    index: ClusterIndex,
    chosen: tuple[int, Callable[[], list[Pod]], int] | None,
    tried: dict[int, Status | None],
) -> PreemptionOutcome:
    if chosen is None:
        return PreemptionOutcome(tried=tried)
    j, victims_of, violations = chosen
    return PreemptionOutcome(
        nominated_node=index.node_infos[j].name, victims=victims_of(), pdb_violations=violations, tried=tried
    )


def _pack(fw: Framework, j: int, level: int, priority: int) -> LowerPack:
    """Node ``j``'s pods below ``priority`` (at ``level``) as :class:`reprieve.LowerPack`."""
    hit = cached_pack(fw.index, j, level)
    if hit is not None:
        return hit
    _, violating, safe = _lower_pods(fw, j, level, priority)
    return lower_pack(fw.index, j, level, violating, safe, start_time)


def _judge(
    fw: Framework,
    ctx: PodContext,
    batch: list[int],
    level: int,
    freed: np.ndarray,
    freed_count: np.ndarray,
    per_node: list[FilterPlugin],
    watched: list[Collection[int] | None],
    extra: np.ndarray | None,
) -> tuple[_Keys, Callable[[int], list[Pod]]]:
    """Per candidate of ``batch`` (arrays in its order): PDB violations, highest victim priority,
    offset priority sum, victims and the earliest start of the highest-priority victims; and a
    function giving a candidate's victims (by its position, ``SelectVictimsOnNode``'s order)."""
    index = fw.index
    packs = [_pack(fw, j, level, ctx.priority) for j in batch]
    checks_of: dict[int, list[list[FilterPlugin]]] = {}
    if per_node:
        for pos, (j, pack) in enumerate(zip(batch, packs, strict=True)):
            ask = [p for p, nodes in zip(per_node, watched, strict=True) if nodes is None or j in nodes]
            if ask:
                head = pack.violating
                checks = _sensitive_plugins(ctx, ask, pack.order[:head], pack.order[head:])
                if checks is not None:
                    checks_of[pos] = checks
    plain = [pos for pos in range(len(batch)) if pos not in checks_of]
    found = None
    if plain:
        found = reprieve_many(
            ctx,
            [batch[pos] for pos in plain],
            [packs[pos] for pos in plain],
            freed,
            freed_count,
            extra,
            _PRIORITY_OFFSET,
        )
    if found is not None and not checks_of:
        keys: _Keys = (found.violations, found.top, found.total, found.count, found.earliest)

        def victims_of(pos: int) -> list[Pod]:
            assert found is not None
            return _victims_in(index, packs[pos], found.victims[pos])

        return keys, victims_of
    size = len(batch)
    ints = [np.zeros(size, dtype=np.int64) for _ in range(4)]
    earliest = np.full(size, np.nan)
    lists: dict[int, list[Pod]] = {}
    row_of = {pos: row for row, pos in enumerate(plain)} if found is not None else {}
    for pos, j in enumerate(batch):
        row = row_of.get(pos)
        values: tuple[Any, ...]
        if row is not None:
            assert found is not None
            values = (
                found.violations[row],
                found.top[row],
                found.total[row],
                found.count[row],
                found.earliest[row],
            )
        else:
            violations, top, total, count, start, lists[pos] = _judge_one(
                fw, ctx, j, level, checks_of.get(pos), extra
            )
            values = (violations, top, total, count, start)
        for array, value in zip((*ints, earliest), values, strict=True):
            array[pos] = value

    def victims_listed(pos: int) -> list[Pod]:
        if pos in lists:
            return lists[pos]
        assert found is not None
        return _victims_in(index, packs[pos], found.victims[row_of[pos]])

    return (ints[0], ints[1], ints[2], ints[3], earliest), victims_listed


def _victims_in(index: ClusterIndex, pack: LowerPack, mask: np.ndarray) -> list[Pod]:
    """The victims a batch reprieve marked on one node, in ``SelectVictimsOnNode``'s order."""
    victims = [pack.order[k] for k in np.flatnonzero(mask[: len(pack.order)]).tolist()]
    head = pack.violating
    return _importance_ordered((victims, 0), pack.order[:head], pack.order[head:], index)[0]


def _judge_one(
    fw: Framework,
    ctx: PodContext,
    j: int,
    level: int,
    checks: list[list[FilterPlugin]] | None,
    extra: np.ndarray | None,
) -> tuple[int, int, int, int, float, list[Pod]]:
    """One candidate reprieved on its own (per-node plugins to ask, or amounts too large for
    the batch's int64 arithmetic): its five keys and its victims."""
    index = fw.index
    info = index.node_infos[j]
    lower, violating, safe = _lower_pods(fw, j, level, ctx.priority)
    held: tuple[int, ...] = ()
    if extra is not None and extra[:, j].any():
        names = sorted(n for n, v in ctx.requests.items() if v > 0)
        rows = [index.resource_index.get(n) for n in names]
        held = (
            *(0 if r is None else int(extra[r, j]) for r in rows),
            int(extra[index.resource_index[PODS], j]),
        )
    victims, violations = _importance_ordered(
        _reprieve_resources(ctx, info, lower, violating, safe, held, checks), violating, safe, index
    )
    if not victims:
        return violations, 0, 0, 0, math.nan, victims
    prios = [index.priority(p) for p in victims]
    # minSumPrioritiesScoreFunc offsets each priority by MaxInt32+1, so that more victims
    # always cost more, negative priorities included.
    total = sum(prios) + len(prios) * _PRIORITY_OFFSET
    return violations, max(prios), total, len(victims), _earliest_top_start(victims, index), victims


# preemption.go pickOneNodeForPreemption, minSumPrioritiesScoreFunc: ``math.MaxInt32 + 1``.
_PRIORITY_OFFSET = 2**31


def start_time(pod: Pod) -> float:
    """``util.GetPodStartTime`` (pkg/scheduler/util/utils.go) in seconds: ``status.startTime``,
    or "now" (later than any recorded start, here +inf) for a pod that has not started.
    A value the API would not have written reads as not started."""
    value = pod.status.start_time
    seconds = rfc3339_seconds(value) if value else None
    return math.inf if seconds is None else seconds


def _earliest_top_start(victims: list[Pod], index: ClusterIndex) -> float:
    """``util.GetEarliestPodStartTime``: the earliest start among the highest-priority victims.
    ``latestStartTimeScoreFunc``, the fifth key of ``pickOneNodeForPreemption``, prefers the
    node where it is latest (evicting younger pods loses less work); still tied, the first."""
    top = max(index.priority(p) for p in victims)
    return min(start_time(p) for p in victims if index.priority(p) == top)


def _lower_set(index: ClusterIndex, j: int, level: int, priority: int) -> list[Pod]:
    """The pods of node ``j`` below ``priority`` (node order), memoized per (node, priority
    level): every preemptor of that level removes exactly these in step one."""
    cache: dict[tuple[int, int], list[Pod]] = index.cache.setdefault("preemption/lower-set", {})
    hit = cache.get((j, level))
    if hit is None:
        hit = cache[(j, level)] = [p for p in index.node_infos[j].pods if index.priority(p) < priority]
    return hit


def _importance(index: ClusterIndex, pod: Pod) -> tuple[int, float]:
    """Sort key of ``util.MoreImportantPod`` (pkg/scheduler/util/utils.go), most important
    first: higher priority, then the earlier start (``GetPodStartTime``). Upstream's
    ``sort.Slice`` leaves full ties in no set order; Python's stable sort keeps node order."""
    return (-index.priority(pod), start_time(pod))


def _importance_ordered(
    found: tuple[list[Pod], int], violating: list[Pod], safe: list[Pod], index: ClusterIndex
) -> tuple[list[Pod], int]:
    """``SelectVictimsOnNode`` sorts the victims by importance again when both the PDB-violating
    and the other pods were tried (the reprieve appended them group by group)."""
    victims, violations = found
    if violating and safe:
        victims = sorted(victims, key=lambda p: _importance(index, p))
    return victims, violations


def _lower_pods(fw: Framework, j: int, level: int, priority: int) -> tuple[list[Pod], list[Pod], list[Pod]]:
    """The pods of node ``j`` below ``priority``, most important first (``SelectVictimsOnNode``
    sorts its potential victims with ``MoreImportantPod``: priority, then start time, so of two
    equal-priority pods the older is reprieved first), split into PDB-violating and safe ones;
    memoized per (node, priority level)."""
    index = fw.index
    cache: dict[tuple[int, int], tuple[list[Pod], list[Pod], list[Pod]]] = index.cache.setdefault(
        "preemption/lower", {}
    )
    hit = cache.get((j, level))
    if hit is None:
        lower = [p for p in index.node_infos[j].pods if index.priority(p) < priority]
        lower.sort(key=lambda p: _importance(index, p))
        violating, safe = _violating(fw, lower)
        hit = cache[(j, level)] = (lower, violating, safe)
    return hit


def _reprieve_resources(
    ctx: PodContext,
    info: NodeInfo,
    lower: list[Pod],
    violating: list[Pod],
    safe: list[Pod],
    held: tuple[int, ...] = (),
    checks: list[list[FilterPlugin]] | None = None,
) -> tuple[list[Pod], int]:
    """``SelectVictimsOnNode``'s reprieve loop: add each pod back (PDB-violating ones first, most
    important first) and keep it when the preemptor still passes.

    The node passes every plugin with all of ``lower`` removed (the dry run said so), so at each
    step only the plugins whose verdict that pod's return can change need asking: the resource
    fit (NodeResourcesFit, here arithmetic on the node's free requests, as upstream's AddPod
    keeps NodeInfo) and, from ``checks`` (per pod in reprieve order, :func:`_sensitive_plugins`;
    None: none for any pod), the per-node plugins the pod is not neutral to, run with the pods
    still removed. Only whether the node passes matters, not which plugin fails first.

    ``held``: what nominated pods of >= priority hold on the node, per requested resource in
    sorted-name order, then their pod count (empty: none)."""
    index = ctx.index
    names = [n for n, v in ctx.requests.items() if v > 0]
    free = {n: info.allocatable.get(n, 0) - info.requested.get(n, 0) for n in names}
    free_pods = info.allocatable.get("pods", 0) - info.requested.get("pods", 0) + len(lower)
    if held:
        for n, amount in zip(sorted(names), held, strict=False):
            free[n] -= amount
        free_pods -= held[-1]
    for pod in lower:
        req = index.pod_requests(pod)
        for n in names:
            free[n] += req.get(n, 0)
    victims: list[Pod] = []
    violations = 0
    back: set[int] = set()  # ids of the pods put back so far (only tracked for ``checks``)
    step = 0
    for group, is_violating in ((violating, True), (safe, False)):
        for pod in group:
            req = index.pod_requests(pod)
            fits = free_pods - 1 >= 1 and all(free[n] - req.get(n, 0) >= ctx.requests[n] for n in names)
            if fits and checks is not None and checks[step]:
                trial = [p for p in lower if p is not pod and id(p) not in back]
                fits = _filter_node(ctx, checks[step], info, trial, None) is None
            step += 1
            if fits:
                for n in names:
                    free[n] -= req.get(n, 0)
                free_pods -= 1
                back.add(id(pod))
            else:
                victims.append(pod)
                violations += is_violating
    return victims, violations


def _sensitive_plugins(
    ctx: PodContext, per_node: list[FilterPlugin], violating: list[Pod], safe: list[Pod]
) -> list[list[FilterPlugin]] | None:
    """Per potential victim in reprieve order (``violating`` then ``safe``), the per-node plugins
    whose verdict putting it back may change (not :meth:`FilterPlugin.reprieve_neutral`); None
    when there is none for any victim: the reprieve is then on resources alone."""
    checks: list[list[FilterPlugin]] = []
    any_sensitive = False
    for pod in (*violating, *safe):
        sensitive = [p for p in per_node if not p.reprieve_neutral(ctx, pod)]
        any_sensitive = any_sensitive or bool(sensitive)
        checks.append(sensitive)
    return checks if any_sensitive else None
