"""PodTopologySpread's Score extension: soft (``ScheduleAnyway``) spread and the cluster defaults.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/scoring.go
(``initPreScoreState``, ``PreScore``, ``Score``, ``NormalizeScore``, ``scoreForCount``,
``topologyNormalizingWeight``) and common.go (``buildDefaultConstraints``,
``filterTopologySpreadConstraints``, ``countPodsMatchSelector``). The pod's constraints with
``whenUnsatisfiable: ScheduleAnyway`` are scored; a pod with no constraints at all gets the
system defaults (plugin args ``defaultingType: System``, plugin.go ``systemDefaultConstraints``:
zone maxSkew 5 and hostname maxSkew 3) with the selector deduced from the
Services, ReplicationController, ReplicaSet or StatefulSet it belongs to
(helper/spread.go ``DefaultSelector``); no such selector, no constraints.

Per constraint, PreScore counts the matching pods (same namespace, not terminating) per domain
over *all* nodes that pass the constraint's node inclusion policies, but only for the domains of
the feasible nodes; ``kubernetes.io/hostname`` is counted per node at Score time. A node scores
``round(sum over constraints of count * log(domains + 2) + (maxSkew - 1))`` and NormalizeScore
maps it to ``100 * (max + min - s) / max`` (fewer matching pods, higher score), 100 everywhere
when ``max`` is 0; with the pod's own constraints a feasible node missing a topology key is
ignored (scores 0), with the system defaults it is not (``requireAllTopologies``).

Cost: the matching pods come from the cluster's pod index and each node shape's inclusion is
decided once (see pod_topology_spread.py), so PreScore costs the matching pods, not the cluster.

Not modelled: the stored upstream master counts, for a pod with owner references, the pods
sharing its first owner's UID (``PodsWithOwnerRef``) instead of evaluating the selector; v1.34
evaluates the selector, as here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuplane.k8s.node_shapes import selects_node_identity
from gpuplane.k8s.objects import LabelSelector, Pod
from gpuplane.k8s.selectors import (
    label_selector_matches,
)
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.plugins.selectors_util import NodeInclusion, with_label_keys

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
MAX_NODE_SCORE = 100
# podtopologyspread/plugin.go systemDefaultConstraints (both ScheduleAnyway).
SYSTEM_DEFAULT_CONSTRAINTS = ((ZONE, 5), (HOSTNAME, 3))


@dataclass(frozen=True, slots=True)
class DefaultSelector:
    """``helper.DefaultSelector``: the Services' and ReplicationController's selector maps merged,
    ANDed with the owning ReplicaSet's or StatefulSet's label selector."""

    match_labels: dict[str, str]
    selectors: tuple[Mapping[str, Any], ...]  # raw spec.selector of the owning RS / StatefulSet

    def empty(self) -> bool:
        return not self.match_labels and not any(
            s.get("matchLabels") or s.get("matchExpressions") for s in self.selectors
        )

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(label_selector_matches(s, labels) for s in self.selectors)


class _Selector:
    """A constraint's selector: a LabelSelector (the pod's constraint) or a DefaultSelector."""

    __slots__ = ("default", "selector")

    def __init__(self, selector: LabelSelector | None, default: DefaultSelector | None) -> None:
        self.selector = selector
        self.default = default

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.default is not None:
            return self.default.matches(labels)
        return label_selector_matches(self.selector, labels)


@dataclass(slots=True)
class SoftConstraint:
    key: str
    max_skew: int
    selector: _Selector
    affinity_honor: bool = True
    taints_honor: bool = False


def _controller_of(pod: Pod) -> tuple[str, str, str] | None:
    """``metav1.GetControllerOfNoCopy``: (apiVersion, kind, name) of the controller owner."""
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref.api_version, ref.kind, ref.name
    return None


def default_selector(ctx: PodContext) -> DefaultSelector:
    """helper/spread.go ``DefaultSelector`` over the snapshot's objects (``GetPodServices``:
    Services of the pod's namespace whose non-nil selector matches its labels; then the
    controller owner looked up by name when it is a v1 ReplicationController, apps/v1
    ReplicaSet or apps/v1 StatefulSet)."""
    cluster = ctx.index.cluster
    pod = ctx.pod
    namespace = ctx.namespace
    labels = pod.metadata.labels
    merged: dict[str, str] = {}
    for svc in cluster.by_kind("Service", ""):
        if (svc.namespace or "default") != namespace:
            continue
        selector = (svc.data.get("spec") or {}).get("selector")
        if not isinstance(selector, dict):
            continue  # services with nil selectors match nothing, not everything
        if all(labels.get(k) == v for k, v in selector.items()):
            merged.update({str(k): str(v) for k, v in selector.items()})
    owner = _controller_of(pod)
    extra: list[Mapping[str, Any]] = []
    if owner is not None:
        api_version, kind, name = owner
        wanted = {
            ("v1", "ReplicationController"): "",
            ("apps/v1", "ReplicaSet"): "apps",
            ("apps/v1", "StatefulSet"): "apps",
        }
        group = wanted.get((api_version, kind))
        if group is not None:
            for obj in cluster.by_kind(kind, group):
                if obj.name != name or (obj.namespace or "default") != namespace:
                    continue
                selector = (obj.data.get("spec") or {}).get("selector")
                if kind == "ReplicationController":
                    if isinstance(selector, dict):
                        merged.update({str(k): str(v) for k, v in selector.items()})
                elif isinstance(selector, dict):
                    extra.append(selector)
                break
    return DefaultSelector(merged, tuple(extra))


def soft_constraints(ctx: PodContext) -> tuple[list[SoftConstraint], bool]:
    """``initPreScoreState``'s constraints and ``requireAllTopologies``."""
    pod = ctx.pod
    spec_constraints = pod.spec.topology_spread_constraints
    if spec_constraints:
        out = []
        for c in spec_constraints:
            if c.when_unsatisfiable != "ScheduleAnyway":
                continue
            selector = with_label_keys(c.label_selector, pod, c.match_label_keys)
            out.append(
                SoftConstraint(
                    key=c.topology_key,
                    max_skew=c.max_skew,
                    selector=_Selector(selector, None),
                    affinity_honor=(c.node_affinity_policy or "Honor") == "Honor",
                    taints_honor=(c.node_taints_policy or "Ignore") == "Honor",
                )
            )
        return out, True
    default = default_selector(ctx)
    if default.empty():
        return [], False
    chosen = _Selector(None, default)
    return [SoftConstraint(key, skew, chosen) for key, skew in SYSTEM_DEFAULT_CONSTRAINTS], False


def may_score_spread(pod: Pod) -> bool:
    """Cheap pre-check for simulate's fast path: whether PodTopologySpread may score this pod
    (it has a ScheduleAnyway constraint, or none at all, so the system defaults may apply)."""
    constraints = pod.spec.topology_spread_constraints
    return not constraints or any(c.when_unsatisfiable == "ScheduleAnyway" for c in constraints)


def _matching(ctx: PodContext, selector: _Selector) -> list[tuple[Pod, int]]:
    """``countPodsMatchSelector`` over the cluster: the pods of the pod's namespace the selector
    matches, terminating pods left out, each with its node (from the cluster's pod index)."""
    if selector.default is not None:
        default = selector.default
        selectors: tuple[Any, ...] = ({"matchLabels": default.match_labels}, *default.selectors)
    elif selector.selector is None:
        return []
    else:
        selectors = (selector.selector,)
    found = ctx.index.pods.select((ctx.namespace,), selectors)
    return [entry for entry in found if entry[0].metadata.deletion_timestamp is None]


def topology_spread_scores(ctx: PodContext, nodes: list[int]) -> dict[int, int] | None:
    """PodTopologySpread's PreScore + Score + NormalizeScore over the feasible ``nodes``; None
    when PreScore returns Skip (no soft constraints)."""
    index = ctx.index
    if index.num_nodes == 0:
        return None
    constraints, require_all = soft_constraints(ctx)
    if not constraints:
        return None
    infos = index.node_infos
    pod = ctx.pod
    keys = [c.key for c in constraints]
    ignored: set[int] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for j in nodes:
        labels = infos[j].labels
        if require_all and any(k not in labels for k in keys):
            ignored.add(j)
            continue
        for i, c in enumerate(constraints):
            if c.key != HOSTNAME:
                counts[i].setdefault(labels.get(c.key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(nodes) - len(ignored) if c.key == HOSTNAME else len(counts[i])
        weights.append(math.log(size + 2))
    # Per constraint, the matching pods per node; domains sum them over the nodes that count
    # (processAllNode over every node of the snapshot: every key when required, the node
    # inclusion policies), decided once per node shape unless the pod's node selection names nodes.
    per_node: list[Counter[int]] = [Counter(j for _, j in _matching(ctx, c.selector)) for c in constraints]
    if any(c.key != HOSTNAME for c in constraints):
        shape_of = index.shapes.shape_of
        identity = selects_node_identity(pod)
        verdicts: dict[int, NodeInclusion | None] = {}
        for i, c in enumerate(constraints):
            if c.key == HOSTNAME:
                continue
            for j, n in per_node[i].items():
                labels = infos[j].labels
                value = labels.get(c.key, "")
                if value not in counts[i]:
                    continue
                judge = j if identity else index.shapes.reps[shape_of[j]]
                if judge not in verdicts:
                    node_labels = infos[judge].labels
                    verdicts[judge] = (
                        None
                        if require_all and any(k not in node_labels for k in keys)
                        else NodeInclusion(pod, infos[judge].node)
                    )
                inclusion = verdicts[judge]
                if inclusion is None or not inclusion.admits(c.affinity_honor, c.taints_honor):
                    continue
                counts[i][value] += n
    raw: dict[int, int] = {}
    for j in nodes:
        if j in ignored:
            continue
        labels = infos[j].labels
        score = 0.0
        for i, c in enumerate(constraints):
            if c.key not in labels:
                continue
            if c.key == HOSTNAME:
                cnt = per_node[i].get(j, 0)
            else:
                cnt = counts[i][labels[c.key]]
            score += cnt * weights[i] + (c.max_skew - 1)
        raw[j] = _go_round(score)
    low = min(raw.values(), default=0)
    high = max(raw.values(), default=0)
    out = dict.fromkeys(ignored, 0)
    for j, s in raw.items():
        out[j] = MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high
    return out


def _go_round(x: float) -> int:
    """``math.Round`` for the non-negative sums here: half away from zero (Python's ``round``
    rounds half to even)."""
    return math.floor(x + 0.5)
