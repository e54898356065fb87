"""One scheduling cycle per scheduling-equivalent Pending pod, for one explaining session.

Why: why-pending explains every Pending pod against the same, unchanging cluster, and the
replicas of one workload are the same pod to kube-scheduler (``scheduler.equivalence``): their
filter verdicts, FitError and PostFilter outcome are equal, so the cycle runs once per key. The
memo lives in the session (``explain.pending``, diagnose's facts), not in the Scheduler, whose
``schedule``/``assume``/``forget`` change the state; it still checks the index's ``generation``
and the PVs' version before answering, so a change made meanwhile empties it instead of
answering from the old state. The :class:`Evaluation` is shared by the pods of a key: nothing
downstream writes to it. The causes of a pod nothing stops before the queue read only that
cycle, the pod's spec and the cluster (none names the pod: a nominated pod's reservations skip
the pod itself, and a nominated pod keys on its identity), so they are kept per cycle as well
and each pod gets lists of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.scheduler.equivalence import scheduling_key

if TYPE_CHECKING:
    from gpuplane.k8s.objects import Pod
    from gpuplane.scheduler.scheduler import Evaluation, Scheduler
    from gpuplane.why_pending.model import Cause

_Causes = tuple[tuple["Cause", ...], tuple[str, ...]]


class Evaluations:
    """``Scheduler.evaluate`` memoized per scheduling-equivalent pod (module docstring)."""

    __slots__ = ("_causes", "_found", "_sched", "_version", "cause_runs", "cycles")

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched
        self._found: dict[bytes, Evaluation] = {}
        # id of an Evaluation of ``_found`` -> (it, its causes and fixes)
        self._causes: dict[int, tuple[Evaluation, _Causes]] = {}
        self._version = self._state_version()
        # counts of work for the tests: scheduling cycles run, causes worked out
        self.cycles = 0
        self.cause_runs = 0

    def _state_version(self) -> tuple[int, int]:
        return self._sched.index.generation, self._sched.cluster.pvs_version

    def evaluate(self, pod: Pod) -> Evaluation:
        """What ``Scheduler.evaluate(pod)`` returns now, from the memo when an equivalent pod ran."""
        version = self._state_version()
        if version != self._version:
            self._found.clear()
            self._causes.clear()
            self._version = version
        key = scheduling_key(pod)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self._sched.evaluate(pod)
            self.cycles += 1
        return found

    def causes(self, found: Evaluation) -> _Causes | None:
        """The causes and fixes kept for the cycle ``found`` (None: not worked out yet)."""
        kept = self._causes.get(id(found))
        return kept[1] if kept is not None and kept[0] is found else None

    def keep_causes(self, found: Evaluation, causes: list[Cause], fixes: list[str]) -> None:
        """Remember the causes and fixes worked out for the cycle ``found`` (copied)."""
        self._causes[id(found)] = (found, (tuple(causes), tuple(fixes)))
        self.cause_runs += 1
