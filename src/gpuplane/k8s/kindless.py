"""Documents without ``kind`` that are still worth reading: the hook and the pseudo-object.

Some configuration files that matter to a cluster are plain YAML with no ``kind`` (NVIDIA's
device-plugin and mig-parted configs). The loader turns a kindless document into a pseudo-object
(``apiVersion: gpuplane.io/v1``, the recognised kind, ``metadata.name`` = the file's base name,
``data`` = the document) when a registered recogniser names its kind; otherwise it stays the
error "object has no kind". The model layer holds the registry so that the layer that knows such
files (``gpuplane.gpu.config_files``) registers without the loader importing it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

PSEUDO_API_VERSION = "gpuplane.io/v1"
PSEUDO_GROUP = PSEUDO_API_VERSION.split("/", 1)[0]

# document -> its pseudo-kind, or None when the recogniser does not know it
Recogniser = Callable[[dict[str, Any]], str | None]

_RECOGNISERS: list[Recogniser] = []


def register(recogniser: Recogniser) -> None:
    """Add a recogniser (idempotent: registering the same function twice keeps one)."""
    if recogniser not in _RECOGNISERS:
        _RECOGNISERS.append(recogniser)


def registered() -> tuple[Recogniser, ...]:
    return tuple(_RECOGNISERS)


def pseudo_kind(data: dict[str, Any]) -> str | None:
    """The kind the first registered recogniser gives a kindless document, or None."""
    for recognise in _RECOGNISERS:
        kind = recognise(data)
        if kind:
            return kind
    return None


def wrap(data: dict[str, Any], path: str) -> dict[str, Any] | None:
    """A kindless document as a pseudo-object, or None when no recogniser knows it.

    The name is the file's base name, so findings read ``DevicePluginConfig dp.yaml``.
    """
    kind = pseudo_kind(data)
    if kind is None:
        return None
    name = os.path.basename(path) or path
    return {"apiVersion": PSEUDO_API_VERSION, "kind": kind, "metadata": {"name": name}, "data": data}
