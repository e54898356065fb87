"""Load Kubernetes objects, each with its file and line, from files, folders,
stdin, snapshots and live clusters."""

from gpuplane.k8s.manifest import Manifest
from gpuplane.sources.cluster import ClusterInput, read_cluster
from gpuplane.sources.loader import LoadError, LoadResult, load_paths

__all__ = ["ClusterInput", "LoadError", "LoadResult", "Manifest", "load_paths", "read_cluster"]
