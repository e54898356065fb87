"""Evidence: the nodes, pods, labels and conditions that prove a cluster finding.

A lint finding points at a line the user can open; a cluster finding points at
live state, so it has to carry its proof with it: "node-l40s-1 has label
``nvidia.com/gpu.present=true``, allocatable has no ``nvidia.com/gpu``, pod
``nvidia-device-plugin-daemonset-x`` is in CrashLoopBackOff". The k8sgpt model
(design.md): structured facts first, prose after.

:class:`ClusterFinding` is a :class:`gpuplane.lint.finding.Finding` (same JSON
shape as lint, so one renderer and one ``--fail-on`` logic serve both) plus
``evidence`` and, for Pending pods, the scheduler's ``explanation``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from gpuplane.k8s.manifest import object_ref
from gpuplane.lint.finding import Finding
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.diagnose.positions import Position


@dataclass(frozen=True, slots=True)
class Evidence:
    """One observed fact.

    ``kind``: what sort of fact (``node``, ``pod``, ``label``, ``resource``,
    ``condition``, ``container``, ``podgroup``, ``scheduler``); ``object``: the
    object reference it was read from; ``field``: where in that object
    (kubectl-style path, "" when the fact is about the whole object); ``value``:
    what was seen there; ``note``: why it matters, in one short sentence.
    """

    kind: str
    object: dict[str, Any]
    field: str
    value: Any
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "object": self.object,
            "field": self.field,
            "value": self.value,
            "note": self.note,
        }

    def text(self) -> str:
        """One line for text and HTML reports: ``Node node-1 metadata.labels[...] = true (note)``."""
        ref = self.object
        who = f"{ref.get('kind', '')} {ref['namespace'] + '/' if ref.get('namespace') else ''}{ref.get('name', '')}"
        where = f" {self.field}" if self.field else ""
        value = "" if self.value is None or self.value == "" else f" = {_short_value(self.value)}"
        note = f" ({self.note})" if self.note else ""
        return f"{who.strip()}{where}{value}{note}"


def _short_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


@dataclass(slots=True)
class ClusterFinding(Finding):
    """A finding on live cluster state: a lint :class:`Finding` plus its evidence."""

    evidence: list[Evidence] = field(default_factory=list)
    explanation: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        document = Finding.to_json(self)
        document["evidence"] = [item.to_json() for item in self.evidence]
        if self.explanation is not None:
            document["explanation"] = self.explanation
        return document


def ref(api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
    """An object reference in the spec/cli.md shape (an empty namespace is a cluster-scoped None)."""
    return object_ref(api_version, kind, namespace or None, name)


def node_ref(name: str) -> dict[str, Any]:
    return ref("v1", "Node", None, name)


def pod_ref(namespace: str | None, name: str) -> dict[str, Any]:
    return ref("v1", "Pod", namespace or "default", name)


def label_path(key: str) -> str:
    """``metadata.labels[nvidia.com/gpu.present]`` (the API server's bracket form for dotted keys)."""
    return f"metadata.labels[{key}]"


def manifest_of(obj: msgspec.Struct, source: str, position: Position | None = None) -> Manifest:
    """A typed Pod/Node back as a :class:`Manifest` so findings can reference it.

    The snapshot decoder keeps no line numbers for typed objects (they are decoded
    in bulk, design.md "Two object representations"); ``position`` (from
    :mod:`gpuplane.diagnose.positions`) puts them back when the snapshot is a file.
    Without it the line stays 0, which reports show as unknown.
    """
    from gpuplane.k8s.objects import to_dict  # deferred for start-up time

    if position is None:
        return Manifest(to_dict(obj), path=source, line=0)
    return Manifest(to_dict(obj), path=position.path, line=position.line, locator=position.locator())
