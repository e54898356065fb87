"""The simulate JSON document (spec/cli.md ``simulate``) from a finished :class:`Engine` run.

``placements`` (every bind, in time order), ``pending`` (pods unplaced at the end, with the
last message the scheduler / gang / queue / quota layer gave), ``timeline`` (one step per
instant with events: the events, GPUs allocated / total / held idle, utilization), ``summary``
(``scheduled``, ``pending``, ``gpu_utilization`` = GPU-seconds doing work / GPU-seconds
available over [0, makespan], ``gpu_allocation`` = GPU-seconds allocated / available — both
taken from the final state when no time elapses —, ``makespan_s``), plus ``deadlock``,
``jobs`` and ``cold_start``. GPUs held by a partly placed gang are allocated but do no work:
they count in ``gpu_allocation`` and not in ``gpu_utilization``, which is what a deadlock costs.
``gpu_seconds_preempted`` is work thrown away by evictions (a preempted pod, or every pod of a
gang whose clock restarts, had worked that long): it was allocated and busy, but the job must
redo it, so it is excluded from ``gpu_utilization`` too. ``jobs[].started_s`` is when the job's
work began (first pod running; a distributed job: its gang running); ``jobs[].message`` is the
job's current blocking message, else a pending pod's, else the last one it had while it waited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.engine import Engine
    from gpuplane.scheduler.simulate.model import SimJob


def _ratio(a: float, b: float) -> float:
    return round(a / b, 4) if b else 0.0


def _pending_message(job: SimJob) -> str:
    return next((p.message for p in job.pods if p.node is None and p.finished_s is None and p.message), "")


def to_document(engine: Engine) -> dict[str, Any]:
    steps = engine.steps
    pending = []
    seen: set[str] = set()
    for job in engine.jobs:
        for pod in job.pods:
            if pod.node is None and pod.finished_s is None and pod.key not in seen:
                seen.add(pod.key)
                pending.append({"pod": pod.key, "message": pod.message or job.message, "job": job.key})
    done_times = [j.finished_s for j in engine.jobs if j.finished_s is not None]
    bound_times = [p["time_s"] for p in engine.placements]
    makespan = None
    if not pending and not engine.stopped_at_horizon:
        makespan = max([*done_times, *bound_times], default=0.0)
    end = makespan if makespan is not None else (steps[-1].time_s if steps else 0.0)
    used = avail = 0.0
    idle = 0.0
    for i, step in enumerate(steps):
        nxt = steps[i + 1].time_s if i + 1 < len(steps) else end
        span = max(0.0, min(nxt, end) - step.time_s)
        used += step.gpus_allocated * span
        avail += step.gpus_total * span
        idle += step.gpus_idle_held * span
    if avail == 0 and steps:
        # No time elapsed (everything happened at one instant, e.g. servers bound at t=0):
        # the figures are those of the state the run ended with.
        last = steps[-1]
        used, avail, idle_now = float(last.gpus_allocated), float(last.gpus_total), float(last.gpus_idle_held)
    else:
        idle_now = None
    preempted = round(engine.preempted_gpu_s, 3)
    timeline = [
        {
            "time_s": s.time_s,
            "events": s.events,
            "gpus_allocated": s.gpus_allocated,
            "gpus_total": s.gpus_total,
            "gpus_idle_held": s.gpus_idle_held,
            "gpu_utilization": _ratio(s.gpus_allocated - s.gpus_idle_held, s.gpus_total),
            "gpu_allocation": _ratio(s.gpus_allocated, s.gpus_total),
        }
        for s in steps
    ]
    jobs = [
        {
            "job": j.key,
            "arrival_s": j.arrival_s,
            "duration_s": j.duration_s,
            "started_s": j.started_s,
            "finished_s": j.finished_s,
            "pods": len(j.pods),
            "min_member": j.min_member,
            "message": j.message or _pending_message(j) or j.waited,
            "evictions": j.evictions,
        }
        for j in engine.jobs
    ]
    doc: dict[str, Any] = {
        "placements": engine.placements,
        "pending": pending,
        "timeline": timeline,
        "summary": {
            "scheduled": len({p["pod"] for p in engine.placements}),
            "pending": len(pending),
            "gpu_utilization": _ratio(
                max(0.0, used - (idle if idle_now is None else idle_now) - preempted), avail
            ),
            "gpu_allocation": _ratio(used, avail),
            "makespan_s": makespan,
            "gpu_seconds_idle_held": idle,
            "gpu_seconds_preempted": preempted,
            "scheduler": engine.options.scheduler,
            "autoscaler": engine.autoscaler_name(),
        },
        "deadlock": engine.deadlock(),
        "jobs": jobs,
        "nodes_added": engine.nodes_added,
        "cold_start": engine.cold.to_json() if engine.nodes_added else None,
        "notes": engine.notes,
    }
    if engine.stopped_at_horizon:
        doc["notes"].append(f"stopped at the horizon of {engine.options.horizon_s:.0f} s")
    return doc
