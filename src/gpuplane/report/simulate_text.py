"""Text report for ``gpuplane simulate``: summary, a compact timeline, pending pods, deadlock.

The timeline prints one line per instant with what happened and a GPU bar (allocated of
total, idle-held marked), so a run of hours reads in a screenful.
"""

from __future__ import annotations

from typing import Any

import click

BAR = 20


def _clock(seconds: float) -> str:
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:>3}:{minutes:02d}:{secs:02d}"


def _bar(allocated: int, idle: int, total: int) -> str:
    if total <= 0:
        return "[" + " " * BAR + "]"
    busy = round((allocated - idle) * BAR / total)
    held = round(idle * BAR / total)
    return "[" + "#" * busy + "!" * held + "." * max(0, BAR - busy - held) + "]"


def _event(ev: dict[str, Any]) -> str | None:
    kind = ev["type"]
    if kind == "bound":
        return f"{ev['pod']} -> {ev['node']}"
    if kind in ("job-started", "job-completed", "arrived", "admitted", "requeued"):
        return f"{kind} {ev['job']}"
    if kind in ("node-launched", "node-ready"):
        return f"{kind} {ev['node']} ({ev['pool']})"
    if kind == "preempted":
        return f"preempted {ev['pod']} on {ev['node']}"
    if kind in (
        "permit-timeout",
        "pods-ready-timeout",
        "kueue-preempted",
        "quota-pending",
        "podgroup-pending",
    ):
        return f"{kind} {ev['job']}"
    if kind == "running":
        return f"{ev['pod']} running (image pulled)"
    if kind == "create-refused":
        return f"create refused {ev['pod']}"
    return None


def render_text(doc: dict[str, Any]) -> None:
    from gpuplane.report.console import wrap_hanging, wrap_width  # deferred for start-up time

    summary = doc["summary"]
    width = wrap_width()

    def echo(line: str) -> None:
        """One logical line, wrapped at word boundaries to the terminal ($COLUMNS) with a
        hanging indent; unwrapped when piped without $COLUMNS."""
        for part in wrap_hanging(line, width, 4):
            click.echo(part)

    makespan = summary["makespan_s"]
    echo(
        f"scheduler: {summary['scheduler']}   autoscaler: {summary['autoscaler'] or 'none'}   "
        f"scheduled: {summary['scheduled']}   pending: {summary['pending']}   "
        f"GPU utilization: {summary['gpu_utilization'] * 100:.1f}%"
        f"{_allocation_note(summary)}   "
        f"makespan: {_clock(makespan).strip() if makespan is not None else 'never (pods left pending)'}"
    )
    echo("")
    echo("timeline  (# busy GPUs, ! GPUs held idle by jobs that cannot start, . free)")
    for step in doc["timeline"]:
        parts = [text for text in map(_event, step["events"]) if text]
        bar = _bar(step["gpus_allocated"], step["gpus_idle_held"], step["gpus_total"])
        head = f"{_clock(step['time_s'])} {bar} {step['gpus_allocated']}/{step['gpus_total']}"
        shown = parts[:4]
        more = f" (+{len(parts) - 4} more)" if len(parts) > 4 else ""
        echo(f"{head}  {'; '.join(shown)}{more}")
    if doc["pending"]:
        echo("")
        echo("pending")
        for item in doc["pending"]:
            echo(f"  {item['pod']}: {item['message']}")
    deadlock = doc.get("deadlock")
    if deadlock:
        echo("")
        echo(deadlock["message"])
        for job in deadlock["jobs"]:
            echo(
                f"  {job['job']}: holds {job['gpus_held']} GPU(s) on {', '.join(job['pods_placed'])}; "
                f"waiting: {', '.join(job['pods_pending'])}"
            )
    preempted = summary.get("gpu_seconds_preempted") or 0.0
    if preempted:
        echo(f"preemption threw away {preempted / 3600:.2f} GPU-hours of work (not counted as utilization)")
    for note in doc.get("notes") or ():
        echo(f"note: {note}")


def _allocation_note(summary: dict[str, Any]) -> str:
    """`` (allocated 100.0%)`` when GPUs were held without doing work (a partly placed gang)."""
    allocation = summary.get("gpu_allocation", summary["gpu_utilization"])
    if allocation - summary["gpu_utilization"] < 0.0005:
        return ""
    return f" (allocated {allocation * 100:.1f}%)"
