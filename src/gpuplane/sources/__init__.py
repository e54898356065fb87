"""Load Kubernetes objects, each with its file and line, from files, folders,
stdin, snapshots and live clusters.

The names below are resolved on first use (PEP 562), so importing a submodule such as
``gpuplane.sources.manifest`` does not pull in the cluster reader and msgspec: a one-file
``gpuplane lint`` needs neither (issue 14 item 4).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.k8s.manifest import Manifest
    from gpuplane.sources.cluster import ClusterInput, read_cluster
    from gpuplane.sources.loader import LoadError, LoadResult, load_paths

__all__ = ["ClusterInput", "LoadError", "LoadResult", "Manifest", "load_paths", "read_cluster"]

_HOME = {
    "Manifest": "gpuplane.k8s.manifest",
    "ClusterInput": "gpuplane.sources.cluster",
    "read_cluster": "gpuplane.sources.cluster",
    "LoadError": "gpuplane.sources.loader",
    "LoadResult": "gpuplane.sources.loader",
    "load_paths": "gpuplane.sources.loader",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
