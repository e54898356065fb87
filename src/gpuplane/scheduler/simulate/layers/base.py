"""The contract between the simulate engine and its admission layers.

An admission layer decides when a job's pods are created and which pods are tried in a
scheduling pass (kube-scheduler alone, a Volcano or coscheduling gang, Kueue quota). It sees
the engine only through :class:`EngineView`: the clock, the jobs, the input objects, pod
creation (ResourceQuota admission), one scheduling cycle, bind / confirm / unplace, and the
event queue and log. The engine holds one layer behind :class:`AdmissionLayer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.simulate.model import SimJob, SimPod

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.scenario import Scenario
    from gpuplane.sources.manifest import Manifest

# What an event carries; each kind has its own payload (see Engine.push), narrowed by whoever
# handles that kind.
EventPayload = object


class EngineView(Protocol):
    """The part of the engine a layer may use."""

    @property
    def now(self) -> float:
        """The simulated time of the current instant, in seconds."""
        ...

    @property
    def jobs(self) -> list[SimJob]:
        """Every job of the run, in submission order."""
        ...

    @property
    def scenario(self) -> Scenario | None: ...

    @property
    def num_nodes(self) -> int: ...

    def objects_of(self, kind: str, group: str) -> list[Manifest]:
        """Input and cluster objects of one kind (Queues, PodGroups, ClusterQueues ...)."""
        ...

    def create_pods(self, job: SimJob) -> bool:
        """ResourceQuota admission of the job's pods not created yet; True when any was."""
        ...

    def track_pods(self, pods: list[SimPod]) -> None:
        """The job's pods were made anew (Kueue requeue): evictions must find them."""
        ...

    def release_quota(self, pod: SimPod) -> None: ...

    def pending_pods(self) -> list[SimPod]:
        """Created, unplaced pods in scheduling-queue order."""
        ...

    def schedule(self, pod: SimPod) -> ScheduleResult | FitError:
        """One scheduling cycle without preemption; places nothing."""
        ...

    def try_schedule(self, pod: SimPod, *, preempt: bool = True) -> ScheduleResult | FitError:
        """One cycle that binds on success (evicting preemption victims when ``preempt``)."""
        ...

    def bind(self, pod: SimPod, node: str, *, waiting: bool = False) -> None: ...

    def confirm(self, pod: SimPod) -> None: ...

    def unplace(self, pod: SimPod) -> None: ...

    def gpu_counts(self) -> tuple[int, int]:
        """(GPUs in the cluster, GPUs allocated)."""
        ...

    def push(self, time_s: float, kind: str, payload: EventPayload) -> None:
        """Queue an event; kinds the engine does not handle go to the layer's ``on_event``."""
        ...

    def log(self, kind: str, **fields: object) -> None:
        """Record an event of the current instant in the timeline."""
        ...


class AdmissionLayer(Protocol):
    """What the engine asks of a layer."""

    def on_arrival(self, job: SimJob) -> None: ...

    def on_job_finished(self, job: SimJob) -> None: ...

    def on_event(self, kind: str, payload: EventPayload) -> None: ...

    def schedule_pass(self) -> bool:
        """Try the pods this layer lets through; True when anything changed."""
        ...
