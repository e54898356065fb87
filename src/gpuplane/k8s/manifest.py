"""One Kubernetes object read from input, with where it came from, and an unusable piece of input.

The bottom of the model: every layer (sources that read, engines that compute, reports) speaks
in :class:`Manifest` and :class:`LoadError`, so they live here and import nothing of gpuplane but
the field readers (``k8s/fields.py``, whose :func:`~gpuplane.k8s.fields.dig` is ``Manifest.get``'s walk)
and the bottom layer's records (start-up time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuplane.k8s.fields import dig
from gpuplane.records import Record

# A field path inside an object, e.g. ("spec", "template", "spec", "containers", 0, "resources").
FieldPath = tuple[str | int, ...]


def object_ref(api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
    """The object reference every JSON output uses (spec/cli.md), whatever holds the object:
    a manifest, a usage report's workload owner, a diagnose finding's evidence."""
    return {"apiVersion": api_version, "kind": kind, "namespace": namespace, "name": name}


class Manifest:
    """A Kubernetes object as a plain dict plus its origin.

    ``line`` is the 1-based line where the object starts (0 when unknown, e.g. a
    live object). ``locator`` resolves the line of a field inside the object on
    demand: line maps are only built for the few objects that get findings,
    which keeps bulk loading on PyYAML's fast C loader.
    """

    __slots__ = ("data", "doc", "line", "locator", "path")

    def __init__(
        self,
        data: dict[str, Any],
        path: str = "",
        line: int = 0,
        doc: int = 0,
        locator: Callable[[FieldPath], int | None] | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.line = line
        self.doc = doc
        self.locator = locator

    @property
    def kind(self) -> str:
        return str(self.data.get("kind") or "")

    @property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion") or "")

    @property
    def group(self) -> str:
        """API group: ``batch`` for ``batch/v1``, ``""`` for core ``v1``."""
        av = self.api_version
        return av.split("/", 1)[0] if "/" in av else ""

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or self.metadata.get("generateName") or "")

    @property
    def namespace(self) -> str | None:
        ns = self.metadata.get("namespace")
        return str(ns) if ns else None

    @property
    def labels(self) -> dict[str, str]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> dict[str, str]:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}

    def ref(self) -> dict[str, Any]:
        """The object reference used in every JSON output (spec/cli.md)."""
        return object_ref(self.api_version, self.kind, self.namespace, self.name)

    def get(self, *path: str | int, default: Any = None) -> Any:
        """Walk ``data`` along ``path`` (:func:`~gpuplane.k8s.fields.dig`); ``default`` when any
        step is missing or mistyped, or the field is null."""
        found = dig(self.data, *path)
        return default if found is None else found

    def field_line(self, path: FieldPath) -> int:
        """Line of the field at ``path`` (its nearest existing ancestor), else the object's line."""
        if self.locator is not None:
            found = self.locator(path)
            if found:
                return found
        return self.line

    def __repr__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else "<memory>"
        return f"<Manifest {self.kind} {self.namespace or '-'}/{self.name} at {where}>"


class LoadError(Record):
    """One unusable piece of input: reported as ``path:line: message``."""

    __slots__ = ("line", "message", "path")
    path: str
    line: int
    message: str

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"
