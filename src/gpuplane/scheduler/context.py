"""Per-pod scheduling context: the pod, its computed requests and priority, the cluster index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.versions import Wording

if TYPE_CHECKING:
    from gpuplane.scheduler.index import ClusterIndex


@dataclass(slots=True)
class PodContext:
    """What every plugin reads for one scheduling cycle (upstream: pod + CycleState)."""

    pod: Pod
    requests: dict[str, int]
    priority: int
    wording: Wording
    index: ClusterIndex
    state: dict[str, Any] = field(default_factory=dict)
    # Pods removed from / added to nodes for this cycle only (preemption dry runs,
    # nominated pods): node index -> pods.
    removed: dict[int, list[Pod]] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.pod.metadata.namespace or "default"
