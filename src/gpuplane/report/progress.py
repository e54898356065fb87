"""rich's progress display for :mod:`gpuplane.progress` tasks, on stderr.

A task appears only once it has run for :data:`DELAY` seconds (most commands finish before:
nothing flickers), as a bar with a count when its total is known, a spinner and count
otherwise; the display is transient (erased when the work ends) so the report that follows
stands alone. rich is imported when the first task starts, never at start-up.
"""

from __future__ import annotations

import time
from typing import Any, TextIO

# Seconds a task runs before it is shown ("more than about a second", issue 14 item 5).
DELAY = 1.0


class RichReporter:
    """A :class:`gpuplane.progress.Reporter` drawing on ``stream`` (a terminal)."""

    def __init__(self, stream: TextIO, *, force_terminal: bool | None = None, delay: float = DELAY) -> None:
        self._stream = stream
        self._force_terminal = force_terminal
        self._delay = delay
        self._display: Any = None
        self._tasks: dict[int, tuple[str, int | None, float, int]] = {}  # label, total, start, done
        self._shown: dict[int, Any] = {}
        self._next = 0

    def start(self, label: str, total: int | None) -> int:
        self._next += 1
        self._tasks[self._next] = (label, total, time.monotonic(), 0)
        return self._next

    def advance(self, task: int, amount: int) -> None:
        label, total, started, done = self._tasks[task]
        done += amount
        self._tasks[task] = (label, total, started, done)
        shown = self._shown.get(task)
        if shown is None:
            if time.monotonic() - started < self._delay:
                return
            shown = self._shown[task] = self._show(label, total)
        self._display.update(shown, completed=done)

    def finish(self, task: int) -> None:
        self._tasks.pop(task, None)
        shown = self._shown.pop(task, None)
        if shown is not None:
            self._display.remove_task(shown)
        if not self._shown and self._display is not None:
            self._display.stop()
            self._display = None

    def _show(self, label: str, total: int | None) -> Any:
        if self._display is None:
            # for start-up time: rich only once some work has run for a second
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(file=self._stream, force_terminal=self._force_terminal, stderr=True)
            self._display = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._display.start()
        return self._display.add_task(label, total=total)
