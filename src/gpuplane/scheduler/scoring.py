"""Score plugins of the default profile, to say which feasible node the pod would land on.

Upstream weights (pkg/scheduler/apis/config/v1/default_plugins.go): TaintToleration 3,
NodeAffinity 2, NodeResourcesFit 1 (LeastAllocated on cpu and memory, weight 1 each,
noderesources/least_allocated.go), NodeResourcesBalancedAllocation 1
(noderesources/balanced_allocation.go: ``(1 - std of usage fractions) * 100``),
PodTopologySpread 2, InterPodAffinity 2, ImageLocality 1. Scoring uses the *non-zero*
requests (0 cpu counts as 100m, 0 memory as 200Mi: pkg/scheduler/util/pod_resources.go).
Soft topology spread, preferred pod affinity and image locality are not scored here (they
only break ties between feasible nodes; simulate documents this).
"""

from __future__ import annotations

from gpuplane.k8s.requests import pod_nonzero_requests
from gpuplane.k8s.selectors import preferred_node_affinity_score
from gpuplane.k8s.tolerations import count_intolerable_prefer_no_schedule
from gpuplane.scheduler.context import PodContext

MAX_NODE_SCORE = 100
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}
_RESOURCES = ("cpu", "memory")


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
    for j in nodes:
        info = index.node_infos[j]
        least = 0
        fractions = []
        for name in _RESOURCES:
            alloc = info.allocatable.get(name, 0)
            used = info.requested.get(name, 0) + want.get(name, 0)
            if alloc > 0:
                least += (alloc - used) * MAX_NODE_SCORE // alloc if used <= alloc else 0
                fractions.append(min(used / alloc, 1.0))
        least //= len(_RESOURCES)
        if len(fractions) == 2:
            balanced = int((1 - abs(fractions[0] - fractions[1]) / 2) * MAX_NODE_SCORE)
        else:
            balanced = MAX_NODE_SCORE
        totals[j] = least * WEIGHTS["NodeResourcesFit"] + balanced * WEIGHTS["NodeResourcesBalancedAllocation"]
        affinity_raw[j] = preferred_node_affinity_score(pod, info.node)
        taint_raw[j] = count_intolerable_prefer_no_schedule(info.node.spec.taints, pod.spec.tolerations)
    for j, s in _normalize(affinity_raw, False).items():
        totals[j] += s * WEIGHTS["NodeAffinity"]
    for j, s in _normalize(taint_raw, True).items():
        totals[j] += s * WEIGHTS["TaintToleration"]
    return totals
