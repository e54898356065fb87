"""The simulation's objects: a job (one submitted workload) and its pods, with their times.

Why separate from the engine: the scheduler layers (gang, Kueue, quota, autoscaler) and the
report all read and update the same few fields; keeping them in plain slotted dataclasses
makes the hot loop cheap and the state easy to assert on in tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.k8s.objects import Pod


@dataclass(slots=True, eq=False)
class SimPod:
    """One pod the controller of a job creates."""

    key: str  # namespace/name
    pod: Pod
    job: SimJob
    gpus: int  # GPU devices requested (all GPU resource names)
    seq: int = 0  # creation order within its job
    node: str | None = None
    bound_s: float | None = None
    running_s: float | None = None  # containers started (after any image pull)
    finished_s: float | None = None
    created: bool = False  # passed ResourceQuota admission
    message: str = ""
    waiting_permit: bool = False  # coscheduling: assumed, held at Permit
    refusal: str = ""  # the API server's validation error: the pod can never be created

    @property
    def name(self) -> str:
        return self.pod.metadata.name


@dataclass(slots=True, eq=False)
class SimJob:
    """One workload: its pods, arrival and run duration, and how it is gated."""

    key: str  # Kind/namespace/name
    kind: str
    namespace: str
    name: str
    arrival_s: float
    duration_s: float | None
    image_gib: float | None
    distributed: bool
    min_member: int
    queue: str | None
    kueue_queue: str | None
    priority: int
    order: int  # submission order (creation timestamp tie-break)
    group: str = ""  # API group of the workload object (Kueue pod set names depend on it)
    pods: list[SimPod] = field(default_factory=list)
    podsets: list[tuple[str, int, Pod]] = field(default_factory=list)  # (name, count, template pod)
    started_s: float | None = None  # duration clock start
    finished_s: float | None = None
    admitted_s: float | None = None  # Kueue: quota reserved
    flavor: dict[str, str] = field(default_factory=dict)  # Kueue: resource -> flavor
    message: str = ""
    waited: str = ""  # the last blocking message the job or one of its pods had (kept after it ran)
    notes: list[str] = field(default_factory=list)
    evictions: int = 0
    # pod set name -> (kind, group, object name or None for each pod's own name, field errors):
    # pod templates the API server rejects (k8s/validation.py)
    invalid: dict[str, tuple[str, str, str | None, list[str]]] = field(default_factory=dict)

    def remember(self, message: str) -> None:
        """Keep ``message`` as why the job waited (called where a blocking message is cleared)."""
        if message:
            self.waited = message

    @property
    def gang_of_all(self) -> bool:
        """A distributed job whose every pod must run for it to progress (``min_member`` is all
        its pods); False for a gang smaller than the job (Volcano ``minAvailable < replicas``)."""
        return self.min_member >= len(self.pods)

    @property
    def placed(self) -> list[SimPod]:
        return [p for p in self.pods if p.node is not None]

    @property
    def gpus(self) -> int:
        return sum(p.gpus for p in self.pods)
