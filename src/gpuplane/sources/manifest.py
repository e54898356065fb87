"""Re-export of the model's :class:`~gpuplane.k8s.manifest.Manifest` for readers of ``sources``."""

from gpuplane.k8s.manifest import FieldPath, Manifest

__all__ = ["FieldPath", "Manifest"]
