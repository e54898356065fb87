"""Which StorageClass is the cluster's default: the one place gpuplane decides it.

Mirrors kubernetes/kubernetes ``pkg/volume/util/storageclass.go``:

* ``IsDefaultAnnotation``: a class is a default when its annotation
  ``storageclass.kubernetes.io/is-default-class`` or the beta
  ``storageclass.beta.kubernetes.io/is-default-class`` is exactly ``"true"`` (case-sensitive:
  ``"True"`` marks nothing);
* ``GetDefaultClass`` (used by the DefaultStorageClass admission plugin,
  ``plugin/pkg/admission/storage/storageclass/setdefault/admission.go``, and the PV controller's
  retroactive defaulting): with several defaults, the newest by ``metadata.creationTimestamp``
  wins, ties broken by name in ascending order. Since Kubernetes 1.26 this is no error any more
  (older releases refused the PVC with ``%d default StorageClasses were found``).

The PVC defaulting, the scheduler model and the storage lint rules all call
:func:`default_storage_class`, so they can never disagree about the default.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.timestamps import rfc3339_seconds

IS_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"

# A missing or unreadable creationTimestamp is Go's zero time: older than any real one.
_ZERO_TIME = float("-inf")


def is_default_class(storage_class: Manifest) -> bool:
    """``IsDefaultAnnotation``: either annotation set to exactly ``"true"``."""
    annotations = storage_class.annotations
    return (
        annotations.get(IS_DEFAULT_CLASS_ANNOTATION) == "true"
        or annotations.get(BETA_IS_DEFAULT_CLASS_ANNOTATION) == "true"
    )


def default_storage_class(classes: Iterable[Manifest]) -> Manifest | None:
    """``GetDefaultClass``: the default StorageClass among ``classes``, or None.

    Several defaults: the newest ``creationTimestamp`` first, then the lowest name.
    """
    best: Manifest | None = None
    best_key: tuple[float, str] | None = None
    for storage_class in classes:
        if not is_default_class(storage_class):
            continue
        key = (_created(storage_class), storage_class.name)
        # newest first; on equal time the name that sorts first
        if best_key is None or key[0] > best_key[0] or (key[0] == best_key[0] and key[1] < best_key[1]):
            best, best_key = storage_class, key
    return best


def _created(storage_class: Manifest) -> float:
    """``creationTimestamp`` (RFC 3339, as the API serialises ``metav1.Time``) in seconds."""
    value = storage_class.metadata.get("creationTimestamp")
    seconds = rfc3339_seconds(value) if isinstance(value, str) and value else None
    return _ZERO_TIME if seconds is None else seconds
