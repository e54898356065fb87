"""The plugin interface the framework drives (upstream PreFilterPlugin / FilterPlugin).

A plugin answers three questions: does this pod concern me at all (PreFilter ``Skip``),
what do I compute once per pod (PreFilter, may reject the pod outright or cut the node
set), and does this node pass (Filter). ``static`` plugins read only the node's own
spec/labels, so the framework evaluates them once per group of identical nodes.

The runtime and preemption never test a plugin's name or class: they ask for capabilities,
``static``, ``prefilter_on_skip`` and the :class:`VectorFilter` protocol.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status


class PreFilterResult:
    """A node-name set that limits which nodes Filter sees (None would mean all nodes)."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: set[str]) -> None:
        self.node_names = node_names


class FilterPlugin:
    """Base class: a plugin that filters nothing until a subclass says otherwise."""

    name: ClassVar[str] = ""
    # True when Filter depends only on the node object (labels, taints, spec), not on pods.
    static: ClassVar[bool] = False
    # True when PreFilter runs (and writes its cycle state) even for a pod the plugin skips,
    # because another extension point reads that state (upstream DynamicResources writes its
    # state before returning Skip, and its PostFilter reads it).
    prefilter_on_skip: ClassVar[bool] = False

    def relevant(self, ctx: PodContext) -> bool:
        """False = upstream's PreFilter ``Skip``: Filter is not run for this pod."""
        return True

    def pre_enqueue(self, ctx: PodContext) -> Status | None:
        """PreEnqueue: None lets the pod into the scheduling queue; a Status keeps it out (it
        is never tried, so no FailedScheduling event is written)."""
        return None

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        """Per-pod preparation; a rejected Status stops the cycle (see framework)."""
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        """None when the node passes."""
        return None

    def reprieve_neutral(self, ctx: PodContext, pod: Pod) -> bool:
        """True when taking ``pod`` off its node or putting it back cannot change this plugin's
        verdict for ``ctx.pod`` on that node (the pod matches none of what the plugin counts).

        Preemption's reprieve (``SelectVictimsOnNode``) adds victims back one by one from a
        state every plugin passes; a pod neutral to every per-node plugin then only needs the
        resource fit checked. False (always check) unless a plugin knows better."""
        return False

    def reprieve_nodes(self, ctx: PodContext) -> Collection[int] | None:
        """The indexes of the nodes holding a pod for which :meth:`reprieve_neutral` may be False
        (a superset is fine); None when only asking pod by pod can tell.

        Preemption asks once per preemptor, so the pods of a node outside the set cost no
        question each: on a node with pods nothing counts, the reprieve is arithmetic."""
        return None

    def static_key(self, ctx: PodContext) -> bool:
        """For static plugins: True when node labels beyond the shared class key matter
        (the pod names a node by hostname or metadata.name), forcing per-node evaluation."""
        return False


@runtime_checkable
class VectorFilter(Protocol):
    """A Filter whose verdict depends only on the pod's requests and the nodes' requested /
    allocatable matrices, so it can judge many nodes at once.

    ``extra`` (resources x nodes, or None) is added to what the nodes already hold: nominated
    pods' requests; ``freed`` (the same shape, or None) is taken off: a preemption dry run's
    victims. Returns each distinct failing Status with its node indexes. Preemption uses it to
    re-filter every candidate node in one pass when no other plugin's verdict can change.
    """

    def filter_vector(
        self,
        ctx: PodContext,
        nodes: np.ndarray,
        extra: np.ndarray | None = None,
        freed: np.ndarray | None = None,
    ) -> list[tuple[np.ndarray, Status]]: ...


@runtime_checkable
class NodeSetFilter(Protocol):
    """A Filter that judges many nodes at once in the Filter stage proper (no pod removed from a
    node for the cycle), with exactly the verdicts ``filter`` gives node by node: each distinct
    failing Status with its node indexes (ascending), in the order of their first node.

    Why: a per-node Python call for every node and every Pending pod grows with
    pending x nodes; a verdict that depends on a few node labels is a lookup per label value.
    Preemption's dry runs, which remove pods, keep calling ``filter``.
    """

    def filter_nodes(self, ctx: PodContext, nodes: np.ndarray) -> list[tuple[np.ndarray, Status]]: ...
