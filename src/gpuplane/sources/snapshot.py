"""Write a cluster's state as one ``kind: List`` that every command reads back with ``--cluster FILE``.

The file is what ``kubectl get ... -o json|yaml`` would print for all the
resources of :mod:`gpuplane.sources.catalog`, redacted (:mod:`gpuplane.sources.redact`),
plus two annotations on the List: ``gpuplane.io/kubernetes-version`` (the
server's minor version, which picks the scheduler's message wording) and
``gpuplane.io/snapshot-time``.

Layouts are chosen for the readers' fast paths: JSON is compact with one item
per line (msgspec fast path, and errors still get a useful line); YAML is
kubectl's layout (``items:`` then ``- `` at column 0), which the loader splits
into per-item documents.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from gpuplane.sources.cluster import SOURCE_ANNOTATION, TIME_ANNOTATION, VERSION_ANNOTATION
from gpuplane.sources.loader import LoadError, load_paths
from gpuplane.sources.redact import keep

try:
    _Dumper: type = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML wheels ship LibYAML
    _Dumper = yaml.SafeDumper

_ANY = msgspec.json.Decoder()


@dataclass(slots=True)
class Snapshot:
    """Objects ready to write (already redacted), and where they came from."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""
    server_version: str | None = None
    errors: list[LoadError] = field(default_factory=list)
    taken_at: str = ""
    dropped: int = 0  # objects of kinds outside the allow-list (Secrets, kubeconfigs, ...) left out

    def document(self) -> dict[str, Any]:
        """The ``kind: List`` to write."""
        annotations = {TIME_ANNOTATION: self.taken_at, SOURCE_ANNOTATION: self.source}
        if self.server_version:
            annotations[VERSION_ANNOTATION] = self.server_version
        return {
            "apiVersion": "v1",
            "items": self.objects,
            "kind": "List",
            "metadata": {"annotations": annotations, "resourceVersion": ""},
        }

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for obj in self.objects:
            kind = str(obj.get("kind") or "")
            counts[kind] = counts.get(kind, 0) + 1
        return counts


def _now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def redact_all(objects: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The allow-listed, redacted objects (:func:`gpuplane.sources.redact.keep`) and how many were dropped."""
    return keep(objects)


def snapshot_live(
    context: str | None = None, kubeconfig: str | None = None, progress: bool = False
) -> Snapshot:
    """Read a live cluster into a redacted :class:`Snapshot` (list calls only, never Secrets)."""
    from gpuplane.sources.live import LiveReader, Progress  # deferred for start-up time

    reader = LiveReader(context, kubeconfig, Progress(enabled=progress))
    snap = Snapshot(taken_at=_now())
    for page in reader.pages():
        head = {"apiVersion": page.api_version, "kind": page.resource.kind}
        for raw in page.items:
            item = _ANY.decode(raw)
            if isinstance(item, dict):
                snap.objects.append({**head, **item})
    snap.source = reader.session.source
    snap.server_version = reader.session.server_version
    snap.errors.extend(reader.session.errors)
    snap.objects, snap.dropped = redact_all(snap.objects)
    return snap


def snapshot_files(paths: Iterable[str]) -> Snapshot:
    """Merge and re-redact existing dumps (``kubectl get -o yaml|json``, earlier snapshots).

    Nested Lists are flattened; kinds outside the allow-list (Secrets, kubeconfigs, ...) are left out.
    """
    path_list = list(paths)
    loaded = load_paths(path_list)
    snap = Snapshot(taken_at=_now(), source=",".join(path_list))
    snap.errors.extend(loaded.errors)
    for meta in loaded.list_metadata:
        version = (meta.get("annotations") or {}).get(VERSION_ANNOTATION)
        if isinstance(version, str) and version and snap.server_version is None:
            snap.server_version = version
    snap.objects, snap.dropped = redact_all([manifest.data for manifest in loaded.objects])
    return snap


def write_snapshot(snap: Snapshot, path: str) -> None:
    """Write atomically (temp file + rename): YAML for ``.yaml``/``.yml``, JSON otherwise."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, tmp_path = tempfile.mkstemp(prefix=".gpuplane-snapshot-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            if path.endswith((".yaml", ".yml")):
                _write_yaml(snap.document(), out)
            else:
                _write_json(snap.document(), out)
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)
        raise


def _write_json(document: dict[str, Any], out: Any) -> None:
    encode = msgspec.json.encode
    out.write(b'{"apiVersion":"v1","items":[')
    for index, item in enumerate(document["items"]):
        out.write(b"\n" if index == 0 else b",\n")
        out.write(encode(item))
    out.write(b'\n],"kind":"List","metadata":')
    out.write(encode(document["metadata"]))
    out.write(b"}\n")


def _write_yaml(document: dict[str, Any], out: Any) -> None:
    out.write(b"apiVersion: v1\nitems:\n" if document["items"] else b"apiVersion: v1\nitems: []\n")
    for item in document["items"]:
        text = yaml.dump(
            [item], Dumper=_Dumper, default_flow_style=False, sort_keys=False, allow_unicode=True
        )
        out.write(text.encode())
    tail = {"kind": "List", "metadata": document["metadata"]}
    out.write(yaml.dump(tail, Dumper=_Dumper, default_flow_style=False, sort_keys=False).encode())
