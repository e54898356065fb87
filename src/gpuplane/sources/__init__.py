"""Load Kubernetes objects, each with its file and line, from files, folders,
stdin, snapshots and live clusters."""

from gpuplane.sources.loader import LoadError, LoadResult, load_paths
from gpuplane.sources.manifest import Manifest

__all__ = ["LoadError", "LoadResult", "Manifest", "load_paths"]
