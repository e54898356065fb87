"""Score plugins of the default profile, to say which feasible node the pod would land on.

Upstream weights (pkg/scheduler/apis/config/v1/default_plugins.go): TaintToleration 3,
NodeAffinity 2, NodeResourcesFit 1 (LeastAllocated on cpu and memory, weight 1 each,
noderesources/least_allocated.go), NodeResourcesBalancedAllocation 1
(noderesources/balanced_allocation.go: ``(1 - std of usage fractions) * 100``),
PodTopologySpread 2, InterPodAffinity 2, ImageLocality 1. Scoring uses the *non-zero*
requests (0 cpu counts as 100m, 0 memory as 200Mi: pkg/scheduler/util/pod_resources.go).
ImageLocality (imagelocality/image_locality.go) is scored from the nodes' ``status.images``;
InterPodAffinity (interpodaffinity/scoring.go) from the incoming pod's preferred pod affinity
and anti-affinity terms over the existing pods; PodTopologySpread (podtopologyspread/scoring.go)
from the pod's ScheduleAnyway constraints or the system default constraints
(``scheduler/spread_scoring.py``). Not scored yet: the existing pods' own terms towards the
incoming pod (upstream's ``processExistingPod`` also adds them, with ``hardPodAffinityWeight``
1 for their required affinity).

Ties: upstream ``selectHost`` (pkg/scheduler/schedule_one.go) picks uniformly at random among
the nodes with the top score (reservoir sampling), so two runs may place a pod differently;
gpuplane picks the first of them in node order, so its answer is stable and repeatable.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from gpuplane.k8s.objects import Pod, PodAffinityTerm
from gpuplane.k8s.requests import pod_nonzero_requests
from gpuplane.k8s.selectors import preferred_node_affinity_score
from gpuplane.k8s.tolerations import count_intolerable_prefer_no_schedule
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.spread_scoring import topology_spread_scores

MAX_NODE_SCORE = 100
WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
    "InterPodAffinity": 2,
    "PodTopologySpread": 2,
}


def resource_score(
    cpu_alloc: int,
    cpu_used: int,
    mem_alloc: int,
    mem_used: int,
    cpu_balanced: int | None = None,
    mem_balanced: int | None = None,
    balanced: bool = True,
) -> int:
    """NodeResourcesFit (LeastAllocated) x its weight + NodeResourcesBalancedAllocation x its
    weight, for one node; ``*_used`` include the incoming pod's non-zero requests.

    Both upstream scorers skip a resource whose allocatable is 0 and divide by the weights
    of the resources left (noderesources/least_allocated.go ``leastResourceScorer``: ``if
    allocable[i] == 0 { continue }`` before ``weightSum += weight``; balanced_allocation.go
    ``balancedResourceScorer`` likewise builds its fractions only from those). Integer
    arithmetic as in Go: ``(alloc - used) * 100 / alloc`` truncated, ``nodeScore /
    weightSum`` truncated, ``int64((1 - std) * 100)`` truncated. :func:`resource_scores` is
    the vectorised twin (simulate's fast path), equal bit for bit.

    BalancedAllocation is built with ``useRequested: true`` (balanced_allocation.go
    ``NewBalancedAllocation``): its fractions use the pod's *actual* requests, without the
    100m / 200Mi defaults that LeastAllocated adds (resource_allocation.go
    ``calculatePodResourceRequest``: ``NonMissingContainerRequests`` only when
    ``!useRequested``); ``*_balanced`` carry those (default: the ``*_used`` values). A pod
    requesting neither cpu nor memory makes its PreScore return Skip (``isBestEffortPod``):
    ``balanced=False``, the plugin adds nothing.
    """
    cpu_bal = cpu_used if cpu_balanced is None else cpu_balanced
    mem_bal = mem_used if mem_balanced is None else mem_balanced
    least = weight_sum = 0
    fractions: list[float] = []
    for alloc, used, bal in ((cpu_alloc, cpu_used, cpu_bal), (mem_alloc, mem_used, mem_bal)):
        if alloc <= 0:
            continue
        least += (alloc - used) * MAX_NODE_SCORE // alloc if used <= alloc else 0
        weight_sum += 1
        fractions.append(min(bal / alloc, 1.0))
    least = least // weight_sum if weight_sum else 0
    if not balanced:
        score = 0
    elif len(fractions) == 2:
        score = int((1 - abs(fractions[0] - fractions[1]) / 2) * MAX_NODE_SCORE)
    else:  # one fraction or none: std 0
        score = MAX_NODE_SCORE
    return least * WEIGHTS["NodeResourcesFit"] + score * WEIGHTS["NodeResourcesBalancedAllocation"]


def resource_scores(
    cpu_alloc: Any,
    cpu_used: Any,
    mem_alloc: Any,
    mem_used: Any,
    cpu_balanced: Any = None,
    mem_balanced: Any = None,
    balanced: bool = True,
) -> Any:
    """:func:`resource_score` over int64 arrays (one entry per node or node class)."""
    least = np.zeros(len(cpu_alloc), dtype=np.int64)
    weight_sum = np.zeros(len(cpu_alloc), dtype=np.int64)
    fractions = []
    cpu_bal = cpu_used if cpu_balanced is None else cpu_balanced
    mem_bal = mem_used if mem_balanced is None else mem_balanced
    for alloc, used, bal in ((cpu_alloc, cpu_used, cpu_bal), (mem_alloc, mem_used, mem_bal)):
        has = alloc > 0
        safe = np.where(has, alloc, 1)
        least += np.where(has & (used <= alloc), (alloc - used) * MAX_NODE_SCORE // safe, 0)
        weight_sum += has
        fractions.append((has, np.minimum(bal / safe, 1.0)))
    least = least // np.maximum(weight_sum, 1)
    both = fractions[0][0] & fractions[1][0]
    score = np.where(
        both,
        ((1 - np.abs(fractions[0][1] - fractions[1][1]) / 2) * MAX_NODE_SCORE).astype(np.int64),
        MAX_NODE_SCORE,
    )
    if not balanced:
        score = np.zeros(len(cpu_alloc), dtype=np.int64)
    return least * WEIGHTS["NodeResourcesFit"] + score * WEIGHTS["NodeResourcesBalancedAllocation"]


# image_locality.go: image sizes below 23 MiB score 0, 1000 MiB per container scores the maximum.
_MB = 1024 * 1024
IMAGE_MIN_THRESHOLD = 23 * _MB
IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * _MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: ``:latest`` appended when the name has no tag."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def _image_states(ctx: PodContext) -> dict[str, tuple[dict[int, int], int]]:
    """Image name -> ({node index: size in bytes}, number of nodes holding it): the snapshot's
    ``ImageStateSummary`` per node (memoized per node count: simulate adds nodes)."""
    index = ctx.index
    key = ("scoring/images", index.num_nodes)
    cached = index.cache.get(key)
    if cached is None:
        sizes: dict[str, dict[int, int]] = {}
        for info in index.node_infos:
            for image in info.node.status.images:
                for name in image.names:
                    sizes.setdefault(name, {})[info.index] = int(image.size_bytes or 0)
        cached = index.cache[key] = {name: (by_node, len(by_node)) for name, by_node in sizes.items()}
    return cached


def pod_images(ctx: PodContext) -> list[str]:
    spec = ctx.pod.spec
    return [normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers) if c.image]


def image_locality_score(ctx: PodContext, j: int, images: list[str]) -> int:
    """``ImageLocality.Score``: the sizes of the pod's (init) container images already on the
    node, each scaled by the share of nodes holding it, mapped onto 0..100 between 23 MiB and
    1000 MiB per container (``calculatePriority``)."""
    states = _image_states(ctx)
    total_nodes = ctx.index.num_nodes
    total = 0
    for name in images:
        state = states.get(name)
        if state is not None and j in state[0]:
            total += int(state[0][j] * (state[1] / total_nodes))
    spec = ctx.pod.spec
    high = IMAGE_MAX_CONTAINER_THRESHOLD * (len(spec.init_containers) + len(spec.containers))
    total = min(max(total, IMAGE_MIN_THRESHOLD), high)
    return MAX_NODE_SCORE * (total - IMAGE_MIN_THRESHOLD) // (high - IMAGE_MIN_THRESHOLD)


def has_local_images(ctx: PodContext) -> bool:
    """Whether any node holds one of the pod's images (else ImageLocality scores 0 everywhere)."""
    states = _image_states(ctx)
    return any(name in states for name in pod_images(ctx))


def preferred_pod_terms(pod: Pod) -> list[tuple[PodAffinityTerm, int]]:
    """The pod's preferred pod affinity terms with their weight (anti-affinity: negative)."""
    affinity = pod.spec.affinity
    if affinity is None:
        return []
    out: list[tuple[PodAffinityTerm, int]] = []
    if affinity.pod_affinity is not None:
        out += [
            (w.pod_affinity_term, w.weight)
            for w in affinity.pod_affinity.preferred_during_scheduling_ignored_during_execution
        ]
    if affinity.pod_anti_affinity is not None:
        out += [
            (w.pod_affinity_term, -w.weight)
            for w in affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
        ]
    return out


def pod_affinity_scores(ctx: PodContext, nodes: list[int]) -> dict[int, int] | None:
    """InterPodAffinity's Score + NormalizeScore for the incoming pod's preferred terms: every
    existing pod a term matches adds the term's weight to the (topology key, value) of its node;
    a node scores the sum over the pairs it has, then ``100 * (s - min) / (max - min)`` over the
    feasible nodes (0 everywhere when all are equal). None when nothing matched (PreScore Skip)."""
    # deferred for start-up time
    from gpuplane.scheduler.plugins.inter_pod_affinity import Term  # one matching rule for Filter and Score

    terms = [(Term(raw, ctx.pod), weight) for raw, weight in preferred_pod_terms(ctx.pod)]
    if not terms:
        return None
    index = ctx.index
    infos = index.node_infos
    topology: Counter[tuple[str, str]] = Counter()
    for term, weight in terms:  # each term's matching pods, from the cluster's pod index
        for _, j in term.matching(index):
            labels = infos[j].labels
            if term.key in labels:
                topology[(term.key, labels[term.key])] += weight
    topology = Counter({k: v for k, v in topology.items() if v})
    if not topology:
        return None
    raw = {
        j: sum(v for (key, value), v in topology.items() if index.node_infos[j].labels.get(key) == value)
        for j in nodes
    }
    low, high = min(raw.values()), max(raw.values())
    if high == low:
        return dict.fromkeys(raw, 0)
    return {j: int(MAX_NODE_SCORE * ((v - low) / (high - low))) for j, v in raw.items()}


def _normalize(raw: dict[int, int], reverse: bool) -> dict[int, int]:
    """``helper.DefaultNormalizeScore``: scale to 0..100 by the max (reverse: 100 - that)."""
    top = max(raw.values(), default=0)
    if top == 0:
        return {j: (MAX_NODE_SCORE if reverse else 0) for j in raw}
    out = {}
    for j, v in raw.items():
        score = v * MAX_NODE_SCORE // top
        out[j] = MAX_NODE_SCORE - score if reverse else score
    return out


def score_nodes(ctx: PodContext, nodes: list[int]) -> dict[int, int]:
    """Total weighted score per feasible node index."""
    index = ctx.index
    try:
        want = pod_nonzero_requests(ctx.pod)
    except (ValueError, TypeError):
        want = {}
    pod = ctx.pod
    affinity_raw: dict[int, int] = {}
    taint_raw: dict[int, int] = {}
    totals: dict[int, int] = {}
    want_cpu, want_mem = want.get("cpu", 0), want.get("memory", 0)
    real_cpu, real_mem = ctx.requests.get("cpu", 0), ctx.requests.get("memory", 0)
    balanced = bool(real_cpu or real_mem)  # BalancedAllocation PreScore: isBestEffortPod -> Skip
    images = pod_images(ctx) if has_local_images(ctx) else []
    for j in nodes:
        info = index.node_infos[j]
        alloc, requested = info.allocatable, info.requested
        totals[j] = resource_score(
            alloc.get("cpu", 0),
            requested.get("cpu", 0) + want_cpu,
            alloc.get("memory", 0),
            requested.get("memory", 0) + want_mem,
            requested.get("cpu", 0) + real_cpu,
            requested.get("memory", 0) + real_mem,
            balanced,
        )
        affinity_raw[j] = preferred_node_affinity_score(pod, info.node)
        taint_raw[j] = count_intolerable_prefer_no_schedule(info.node.spec.taints, pod.spec.tolerations)
        if images:
            totals[j] += image_locality_score(ctx, j, images) * WEIGHTS["ImageLocality"]
    spread = topology_spread_scores(ctx, nodes)
    if spread is not None:
        for j, score in spread.items():
            totals[j] += score * WEIGHTS["PodTopologySpread"]
    pod_affinity = pod_affinity_scores(ctx, nodes)
    if pod_affinity is not None:
        for j, score in pod_affinity.items():
            totals[j] += score * WEIGHTS["InterPodAffinity"]
    for j, s in _normalize(affinity_raw, False).items():
        totals[j] += s * WEIGHTS["NodeAffinity"]
    for j, s in _normalize(taint_raw, True).items():
        totals[j] += s * WEIGHTS["TaintToleration"]
    return totals
