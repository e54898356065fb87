"""How gpuplane uses the cyclic GC: paused during bulk work, and whether this process may freeze
a big cluster out of it (``gc.freeze``).

Bulk work (loading, linting, diagnosing) builds millions of short-lived containers and no
cycles worth collecting: the cyclic GC only costs time there (3-4x on 20,000 objects).
:func:`paused_gc` pauses it and restores what it found, never leaves it off: a process that
runs gpuplane in-process (tests, the fuzz harness, the MCP server) must collect cycles again.

A process that reads one cluster, answers and exits (the console script) gains from freezing
the loaded objects: later collections no longer rescan millions of long-lived containers. A
long-lived process (``gpuplane mcp``, a test run, an embedding) must not: an object frozen
while it was still garbage, or that becomes garbage inside a reference cycle, is never
collected, and the MCP server grew ~250 MB per ``diagnose`` of a 12,000-object snapshot. Off by
default; :func:`gpuplane.cli.main.main` turns it on, ``gpuplane mcp`` off again.

Its own module so that the console script can set it without importing the loader (start-up).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_STATE = {"freeze": False, "fast_exit": False, "big": False}


def allow_freeze(enabled: bool = True) -> None:
    """Let :func:`gpuplane.sources.cluster.read_cluster` freeze a big cluster it read."""
    _STATE["freeze"] = enabled


def freeze_allowed() -> bool:
    return _STATE["freeze"]


def freeze_big_cluster() -> None:
    """Freeze what a big cluster read left alive (:func:`allow_freeze` given), and remember that
    this process holds one: :func:`exit_at_once` may then skip freeing it."""
    if freeze_allowed():
        gc.freeze()
        _STATE["big"] = True


def allow_fast_exit(enabled: bool = True) -> None:
    """The console script (``gpuplane.cli.entry.main``) only: one command, then the process ends."""
    _STATE["fast_exit"] = enabled


def exit_at_once(exc: SystemExit) -> None:
    """End the process now with ``exc``'s code, without freeing what the command built, when the
    console script read a big cluster; otherwise return (the caller re-raises ``exc``).

    Why: after the last byte of a 5,000-node report the interpreter spent ~2 s of CPU freeing
    millions of objects (the command's locals as its frames unwound, then the modules' at
    shutdown) only for the process to end. ``exc`` is caught while it propagates, so the frames
    it passed through still hold their locals: nothing is freed. Nothing is lost: stdout and
    stderr are flushed first (a closed pipe then ends the process by SIGPIPE as before, or, with
    SIGPIPE ignored, the flush's error returns to the ordinary exit), and the atexit handlers
    run (gpuplane registers none; a library might). An exit code that is not an int (a message
    for Python to print) takes the ordinary path."""
    code = 0 if exc.code is None else exc.code
    if not (_STATE["fast_exit"] and _STATE["big"]) or not isinstance(code, int) or isinstance(code, bool):
        return
    import os
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    import atexit

    atexit._run_exitfuncs()
    os._exit(code & 0xFF)


@contextmanager
def paused_gc(*, then_freeze: bool = False) -> Iterator[None]:
    """The cyclic GC off for the block (or, as ``@paused_gc()``, the function), then back to
    what it was: nested pauses leave it off until the outermost one ends.

    ``then_freeze``: the block is a whole console command (load to output) in a process that
    froze the big cluster it read (:func:`allow_freeze`, ``gc.get_freeze_count()``): what the
    block leaves alive is frozen too before the GC comes back. Otherwise the first allocation
    after it starts a full collection over every finding, manifest and explanation the command
    built (0.6 s of a 10 s ``diagnose`` of 1,000 nodes), only for the process to exit."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if then_freeze and freeze_allowed() and gc.get_freeze_count():
            gc.freeze()
        if was_enabled:
            gc.enable()


@contextmanager
def until_exit() -> Iterator[None]:
    """The rest of a console command after which the process exits: the cyclic GC off for it
    and what it built frozen (``gc.freeze``) when it ends, before the GC is back as it was. Then
    neither the first allocation after the command's pauses nor the interpreter's collection
    at exit scans the modules, documents and findings of the run only for the process to end
    (7% of the instructions of a one-file ``gpuplane lint``). For the console script's
    one-command paths (:func:`gpuplane.cli.lint_run.run_paths`, under ``run_guarded`` as
    ``then_freeze`` is); a test that calls the entry point in-process finds the GC enabled or
    not as it left it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
