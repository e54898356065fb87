"""Whether this process may freeze a big cluster out of the cyclic GC (``gc.freeze``).

A process that reads one cluster, answers and exits (the console script) gains from freezing
the loaded objects: later collections no longer rescan millions of long-lived containers. A
long-lived process (``gpuplane mcp``, a test run, an embedding) must not: an object frozen
while it was still garbage, or that becomes garbage inside a reference cycle, is never
collected, and the MCP server grew ~250 MB per ``diagnose`` of a 12,000-object snapshot. Off by
default; :func:`gpuplane.cli.main.main` turns it on, ``gpuplane mcp`` off again.

Its own module so that the console script can set it without importing the loader (start-up).
"""

from __future__ import annotations

_STATE = {"freeze": False}


def allow_freeze(enabled: bool = True) -> None:
    """Let :func:`gpuplane.sources.cluster.read_cluster` freeze a big cluster it read."""
    _STATE["freeze"] = enabled


def freeze_allowed() -> bool:
    return _STATE["freeze"]
