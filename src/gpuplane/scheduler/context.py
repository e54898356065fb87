"""Per-pod scheduling context: the pod, its computed requests and priority, the cluster index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.framework import CycleState
from gpuplane.scheduler.versions import Wording

if TYPE_CHECKING:
    from gpuplane.scheduler.index import ClusterIndex
    from gpuplane.scheduler.plugins.base import FilterPlugin


@dataclass(slots=True)
class PodContext:
    """What every plugin reads for one scheduling cycle (upstream: pod + CycleState)."""

    pod: Pod
    requests: dict[str, int]
    priority: int
    wording: Wording
    index: ClusterIndex
    state: CycleState = field(default_factory=CycleState)
    # What the framework's PreFilter pass found: the plugins not skipped for this pod, and the
    # plugins whose PreFilterResult cut the node set (their names, in profile order).
    active_plugins: list[FilterPlugin] = field(default_factory=list)
    prefilter_cut_by: list[str] = field(default_factory=list)
    # Pods removed from / added to nodes for this cycle only (preemption dry runs,
    # nominated pods): node index -> pods.
    removed: dict[int, list[Pod]] = field(default_factory=dict)
    # When ``removed[j]`` is every pod below this pod's priority (DefaultPreemption's first
    # step), the sum of their requests, already known from ClusterIndex.below_priority:
    # node index -> the resources column (NodeResourcesFit then adds nothing up itself).
    freed: dict[int, Any] = field(default_factory=dict)
    # Pods nominated to a node (status.nominatedNodeName) with priority >= this pod's, counted
    # as already on it (RunFilterPluginsWithNominatedPods): node index -> pods.
    added: dict[int, list[Pod]] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.pod.metadata.namespace or "default"
