"""Progress of long work (loading N objects, explaining M pods, running rules), reported by the
engines without knowing who shows it (issue 14 item 5).

An engine wraps a long loop in :func:`task` and calls the returned ``advance(n)``; nothing is
shown unless the command installed a reporter with :func:`reporting` (the CLI does so only when
stderr is a terminal and ``-q`` is not given: :mod:`gpuplane.report.progress` draws rich's
progress bars there). Without one, :func:`task` costs a context-variable lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Reporter(Protocol):
    """What shows progress: one bar (or counter, without ``total``) per running task."""

    def start(self, label: str, total: int | None) -> int: ...

    def advance(self, task: int, amount: int) -> None: ...

    def finish(self, task: int) -> None: ...


_REPORTER: ContextVar[Reporter | None] = ContextVar("gpuplane_progress", default=None)


def _ignore(amount: int = 1) -> None:
    return None


@contextmanager
def task(label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """A unit of long work, e.g. ``with task("explaining 2,000 Pending pods", 2000) as advance``;
    ``advance(n)`` after each ``n`` done."""
    reporter = _REPORTER.get()
    if reporter is None:
        yield _ignore
        return
    handle = reporter.start(label, total)

    def advance(amount: int = 1) -> None:
        reporter.advance(handle, amount)

    try:
        yield advance
    finally:
        reporter.finish(handle)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Show the progress of the work done inside on ``reporter`` (None: nowhere)."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)
