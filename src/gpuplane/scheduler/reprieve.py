"""``SelectVictimsOnNode``'s reprieve on resources alone, for many candidate nodes at once.

Why: ``dryRunPreemption`` (pkg/scheduler/framework/preemption/preemption.go) tries candidates
until it holds ``GetOffsetAndNumCandidates``' count (defaultpreemption/default_preemption.go:
10% of the potential nodes, at least ``minCandidateNodesAbsolute`` = 100), so a preemptor's
work grows with the cluster: 100 candidates on 1,000 nodes, 500 on 5,000. Walked one candidate
at a time in Python, each costs a loop over its lower-priority pods and their requests; here
the same greedy runs once per pod *position* over every candidate at once (numpy), and what it
reads of a node (its lower pods in reprieve order: their requests, priorities and start times)
is packed once per node and priority level (:func:`lower_pack`), shared by every preemptor of
that level within one cluster state.

The answer is exactly the one-node walk's (``preemption._reprieve_resources`` without
``checks``): put each lower pod back, PDB-violating ones first, most important first, and keep
it when the preemptor still fits (``free_pods - 1 >= 1`` and every requested resource's free
amount minus the pod's request >= the ask); the rest are victims. Int64 arithmetic is exact
while every amount stays below 2**60 (checked: otherwise None, and the caller walks the nodes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gpuplane.k8s.objects import Pod
    from gpuplane.scheduler.context import PodContext
    from gpuplane.scheduler.index import ClusterIndex

# Amounts are compared and summed in int64 (at most five terms): exact while each stays below this.
_EXACT = 1 << 60
LOWER_PACKS = "preemption/lower-pack"


@dataclass(slots=True)
class LowerPack:
    """The pods of one node below a priority level, in reprieve order (the PDB-violating ones,
    then the others, each most important first), with what the reprieve and the node choice
    read of them as arrays."""

    order: list[Pod]
    violating: int  # how many of ``order`` (its head) would violate a PDB
    requests: np.ndarray  # resources (the index's rows) x pods, int64
    priorities: np.ndarray  # per pod, int64
    starts: np.ndarray  # per pod, ``start_time`` (seconds, +inf when not started), float64


def lower_pack(
    index: ClusterIndex,
    j: int,
    level: int,
    violating: list[Pod],
    safe: list[Pod],
    start_of: Callable[[Pod], float],
) -> LowerPack:
    """The :class:`LowerPack` of node ``j`` at priority ``level`` (``violating`` and ``safe`` as
    ``preemption._lower_pods`` splits them), built and kept in the index cache (which
    ``pods_changed`` empties) for :func:`cached_pack`. ``start_of``: ``preemption.start_time``."""
    rows = len(index.resource_index)
    order = [*violating, *safe]
    requests = np.zeros((rows, len(order)), dtype=np.int64)
    resource_index = index.resource_index
    pods_row = resource_index["pods"]
    big = False
    for k, pod in enumerate(order):
        for name, amount in index.pod_requests(pod).items():
            row = resource_index.get(name)
            if row is None or row == pods_row:
                continue
            if not -_EXACT < amount < _EXACT:
                big = True
                continue
            requests[row, k] = amount
    pack = LowerPack(
        order,
        len(violating),
        requests,
        np.array([index.priority(p) for p in order], dtype=np.int64),
        np.array([start_of(p) for p in order], dtype=np.float64),
    )
    if big:
        pack.violating = -1  # marks a pack the int64 path cannot judge
    index.cache.setdefault(LOWER_PACKS, {})[_pack_key(index, j, level)] = pack
    return pack


def cached_pack(index: ClusterIndex, j: int, level: int) -> LowerPack | None:
    """The pack :func:`lower_pack` built for node ``j`` at ``level`` in this state, if any."""
    cache: dict[tuple[int, int, int], LowerPack] | None = index.cache.get(LOWER_PACKS)
    return cache.get(_pack_key(index, j, level)) if cache is not None else None


def _pack_key(index: ClusterIndex, j: int, level: int) -> tuple[int, int, int]:
    # the resource count too: a resource added to the index (a new node's) widens every pack
    return (j, level, len(index.resource_index))


@dataclass(slots=True)
class Reprieved:
    """Per candidate (in the order given): its victims (a mask over its pack's ``order``), how
    many, how many violate a PDB, the highest victim priority, the sum of victim priorities each
    offset by ``offset``, and the earliest start among the highest-priority victims."""

    victims: np.ndarray  # candidates x longest pack, bool
    count: np.ndarray
    violations: np.ndarray
    top: np.ndarray
    total: np.ndarray
    earliest: np.ndarray


def reprieve_many(
    ctx: PodContext,
    nodes: list[int],
    packs: list[LowerPack],
    freed: np.ndarray,
    freed_count: np.ndarray,
    extra: np.ndarray | None,
    offset: int,
) -> Reprieved | None:
    """The resource-only reprieve on every node of ``nodes`` (each with its pack) at once.

    ``freed``/``freed_count``: ``ClusterIndex.below_priority``'s sums of the lower pods' requests
    and their number per node; ``extra``: the nominated pods of >= priority (resources x nodes,
    or None). None when some amount is too large for exact int64 arithmetic."""
    index = ctx.index
    names = [n for n, v in ctx.requests.items() if v > 0]
    resource_index = index.resource_index
    rows = [resource_index.get(n) for n in names]
    if "pods" in names or any(r is None for r in rows) or any(p.violating < 0 for p in packs) or not nodes:
        return None
    want = np.array([ctx.requests[n] for n in names], dtype=np.int64)
    if want.size and not int(np.abs(want).max()) < _EXACT:
        return None
    pods_row = resource_index["pods"]
    cols = np.array(nodes, dtype=np.intp)
    row_ids = np.array(rows, dtype=np.intp)
    cells = np.ix_(row_ids, cols)
    parts = [index.alloc[cells], index.req[cells], freed[cells]]
    pod_parts = [index.alloc[pods_row, cols], index.req[pods_row, cols], freed_count[cols]]
    if extra is not None:
        parts.append(extra[cells])
        pod_parts.append(extra[pods_row, cols])
    for part in (*parts, *pod_parts):
        if part.size and not int(np.abs(part).max()) < _EXACT:
            return None
    free = parts[0] - parts[1] + parts[2]
    free_pods = pod_parts[0] - pod_parts[1] + pod_parts[2]
    if extra is not None:
        free = free - parts[3]
        free_pods = free_pods - pod_parts[3]
    sizes = np.array([len(p.order) for p in packs], dtype=np.intp)
    width = int(sizes.max())
    count = len(nodes)
    # Longest pack first, so that at position k only the first ``alive[k]`` candidates (those
    # with more than k lower pods) take part: the work is the packs' total, not count x width.
    ranked = np.argsort(-sizes, kind="stable")
    place = np.empty(count, dtype=np.intp)
    place[ranked] = np.arange(count)
    alive = (sizes[ranked][:, None] > np.arange(width)[None, :]).sum(axis=0).tolist()
    # The packs' pods side by side, padded to the longest: requests (positions x asked
    # resources, then one pod each, x ranked candidates), priorities and starts (candidates x
    # positions). ``slack`` is what each candidate has beyond the preemptor's ask, the last
    # row its pod slots beyond the preemptor's own (``free_pods - 1 >= 1``): a pod fits back
    # when it asks no more than the slack of every row.
    asked = np.zeros((width, len(rows) + 1, count), dtype=np.int64)
    priorities = np.zeros((count, width), dtype=np.int64)
    starts = np.full((count, width), np.inf)
    if width:
        at_row = np.repeat(np.arange(count), sizes)
        at_col = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        asked[at_col, :-1, place[at_row]] = np.concatenate([p.requests[row_ids] for p in packs], axis=1).T
        asked[at_col, -1, place[at_row]] = 1
        priorities[at_row, at_col] = np.concatenate([p.priorities for p in packs])
        starts[at_row, at_col] = np.concatenate([p.starts for p in packs])
    slack = np.vstack([free - want[:, None], (free_pods - 1)[None, :]])[:, ranked]
    kept = np.zeros((width, count), dtype=bool)  # positions x ranked candidates: put back
    for k in range(width):
        n = alive[k]
        back = asked[k, :, :n]
        room = slack[:, :n]
        fits = (room >= back).all(axis=0)
        room -= back * fits
        kept[k, :n] = fits
    valid = np.arange(width)[None, :] < sizes[:, None]
    victims = valid & ~kept.T[place]
    heads = np.array([p.violating for p in packs], dtype=np.intp)
    violations = (victims & (np.arange(width)[None, :] < heads[:, None])).sum(axis=1)
    number = victims.sum(axis=1)
    top = np.where(victims, priorities, np.iinfo(np.int64).min).max(axis=1, initial=np.iinfo(np.int64).min)
    total = np.where(victims, priorities, 0).sum(axis=1) + number * np.int64(offset)
    on_top = victims & (priorities == top[:, None])
    earliest = np.where(on_top, starts, np.inf).min(axis=1, initial=np.inf)
    return Reprieved(victims, number, violations, top, total, earliest)
