"""kube-scheduler alone: every created pod is scheduled on its own, with preemption."""

from __future__ import annotations

from gpuplane.scheduler.framework import ScheduleResult
from gpuplane.scheduler.simulate.layers.base import EngineView, EventPayload
from gpuplane.scheduler.simulate.model import SimJob


class DefaultLayer:
    """No admission step: pods are created on arrival and tried in queue order."""

    def __init__(self, engine: EngineView) -> None:
        self.engine = engine

    def on_arrival(self, job: SimJob) -> None:
        if self.may_create(job):
            self.engine.create_pods(job)

    def may_create(self, job: SimJob) -> bool:
        """Whether the job's controller creates its pods now (Kueue holds them until admission)."""
        return True

    def on_job_finished(self, job: SimJob) -> None:
        return None

    def on_event(self, kind: str, payload: EventPayload) -> None:
        return None

    def schedule_pass(self) -> bool:
        engine = self.engine
        progress = False
        for job in engine.jobs:
            if job.arrival_s <= engine.now and job.finished_s is None and self.may_create(job):
                progress |= engine.create_pods(job)
        for pod in engine.pending_pods():
            if pod.node is not None:
                continue
            if isinstance(engine.try_schedule(pod), ScheduleResult):
                progress = True
        return progress
