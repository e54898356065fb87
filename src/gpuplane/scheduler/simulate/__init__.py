"""``gpuplane simulate``: submit workloads to a model of the cluster and watch them over time.

:func:`simulate` is the entry point the CLI and MCP use; the event loop is ``engine.py``,
the scheduler layers ``gang.py`` (Volcano, coscheduling), ``kueue.py``, ``quota.py``, node
autoscaling ``autoscaler.py`` with ``coldstart.py``; ``state.py`` / ``placer.py`` keep the
kube-scheduler model fast while pods come and go.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources.manifest import Manifest


def simulate(cluster: ClusterState, objects: list[Manifest], **options: Any) -> dict[str, Any]:
    """Run one simulation; ``options`` are :class:`engine.Options` fields. Returns the JSON document."""
    from gpuplane.scheduler.simulate.engine import Engine, Options  # deferred for start-up time
    from gpuplane.scheduler.simulate.result import to_document

    return to_document(Engine(cluster, objects, Options(**options)).run())
