"""Read a cluster's state (snapshot file/folder, kubectl dumps, or ``live``) into :class:`ClusterInput`.

Pods and Nodes become typed structs (``k8s/objects.py``); every other object
stays a :class:`Manifest` dict. The paths, fastest first (reference/python-stack.md §1):

- JSON ``List`` (``kubectl get -o json``, ``gpuplane snapshot``): the top level
  is decoded with ``items`` as ``msgspec.Raw``; each item's kind is peeked
  with a two-field struct and Pods/Nodes are decoded straight into the typed
  structs, others into dicts. No dict per pod is ever built.
- YAML: the loader (per-item documents for kubectl Lists, C loader), then
  ``pod_from_dict`` / ``node_from_dict``.
- live: :mod:`gpuplane.sources.live` pages, decoded like the JSON path.

The cyclic GC is off during the read (3-4x on big inputs) and, for big
clusters in a one-shot process, the loaded objects are frozen out of it
afterwards (``gc.freeze``) so later collections do not rescan millions of
long-lived containers. Only a process that reads one cluster and exits may
freeze (:mod:`gpuplane.sources.gc_policy`, turned on by the console script): a frozen
object that becomes garbage inside a reference cycle is never collected, so a
long-lived caller (the MCP server, tests, an embedding) that read a
12,000-object snapshot per call grew ~250 MB per call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import msgspec

from gpuplane.k8s.cluster import ClusterState, describe_object, file_manifest
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.objects import Node, Pod, is_typed_kind
from gpuplane.progress import task
from gpuplane.sources import limits
from gpuplane.sources.gc_policy import freeze_big_cluster, paused_gc
from gpuplane.sources.loader import (
    STDIN,
    STDIN_NAME,
    LoadError,
    RawLines,
    complete_item,
    item_problem,
    iter_manifest_files,
    list_item_kind,
    load_bytes,
    read_bytes,
)

LIVE = "live"
VERSION_ANNOTATION = "gpuplane.io/kubernetes-version"
TIME_ANNOTATION = "gpuplane.io/snapshot-time"
SOURCE_ANNOTATION = "gpuplane.io/source"
FREEZE_ABOVE = 10_000  # objects; below this the GC costs nothing worth a freeze


@dataclass(slots=True)
class ClusterInput:
    """A cluster's state as the engines read it."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    objects: list[Manifest] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    source: str = ""
    server_version: str | None = None


class _Kinded(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""


class _ListMeta(msgspec.Struct):
    annotations: dict[str, str] | None = None


class _SnapshotList(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""
    metadata: _ListMeta | None = None
    items: list[msgspec.Raw] | None = None


class _NamedMeta(msgspec.Struct):
    name: str = ""
    namespace: str = ""


class _Named(msgspec.Struct):
    metadata: _NamedMeta | None = None


# kubectl (keys sorted) and `gpuplane snapshot` both start each item with apiVersion then kind:
# recognise typed kinds from the first bytes, without a second parse of the whole item.
_TYPED_PREFIX = re.compile(rb'\{\s*"apiVersion"\s*:\s*"v1"\s*,\s*"kind"\s*:\s*"(Pod|Node)"')
_KIND = msgspec.json.Decoder(_Kinded)
_POD = msgspec.json.Decoder(Pod)
_NODE = msgspec.json.Decoder(Node)
_NAMED = msgspec.json.Decoder(_Named)
_ANY = msgspec.json.Decoder()


def read_cluster(
    source: str,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    progress: bool = False,
) -> ClusterInput:
    """The state of the cluster at ``source``: a file, a folder, ``-`` (stdin) or ``live``.

    Never raises: unusable files or objects, an unreachable API server and missing
    permissions become :attr:`ClusterInput.errors`; so does any unexpected failure
    while reading one file (named in the error; the other files are still read).
    """
    with paused_gc():
        if source == LIVE:
            try:
                cluster = _read_live(context, kubeconfig, progress)
            except Exception as exc:  # the live reader's own errors are LoadErrors already
                cluster = ClusterInput(source=LIVE, errors=[unexpected_error(LIVE, exc)])
        else:
            cluster = ClusterInput(source=source)
            for path in _source_files(source, cluster):
                try:
                    _read_file(path, cluster)
                except Exception as exc:
                    # A reader bug must cost one file, never the command: the objects read
                    # before it stay, the file is named, the rest is still read.
                    cluster.errors.append(unexpected_error(STDIN_NAME if path == STDIN else path, exc))
    if len(cluster.pods) + len(cluster.objects) + len(cluster.nodes) > FREEZE_ABOVE:
        freeze_big_cluster()  # when allowed (the CLI's one command)
    return cluster


def unexpected_error(path: str, exc: BaseException) -> LoadError:
    """A :class:`LoadError` for an exception no reader anticipated (one line, names the file)."""
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return LoadError(path, 0, f"cannot read ({type(exc).__name__}{': ' + detail if detail else ''})")


def _source_files(source: str, cluster: ClusterInput) -> Iterable[str]:
    if source == STDIN:
        return [STDIN]
    if os.path.isdir(source):
        return list(iter_manifest_files(source))
    if os.path.exists(source):
        return [source]
    cluster.errors.append(LoadError(source, 0, "no such file or directory"))
    return []


def _read_file(path: str, cluster: ClusterInput) -> None:
    raw, error = read_bytes(path)
    name = STDIN_NAME if path == STDIN else path
    if error is not None:
        cluster.errors.append(error)
        return
    assert raw is not None
    head = raw[:4096].lstrip()
    if head[:1] == b"{" and b"\x00" not in head and _read_json_list(raw, name, cluster):
        return
    loaded = load_bytes(raw, name)
    cluster.errors.extend(loaded.errors)
    for manifest in loaded.objects:
        add_manifest(cluster, manifest)
    if cluster.server_version is None:
        for meta in loaded.list_metadata:
            annotations = meta.get("annotations")
            version = annotations.get(VERSION_ANNOTATION) if isinstance(annotations, dict) else None
            if isinstance(version, str) and version:
                cluster.server_version = version
                break


def add_manifest(cluster: ClusterInput, manifest: Manifest) -> None:
    """File a loaded object: Pods and Nodes as typed structs, everything else as is."""
    file_manifest(manifest, cluster.pods, cluster.nodes, cluster.objects, cluster.errors)


def _read_json_list(buf: bytes, path: str, cluster: ClusterInput) -> bool:
    """The fast path for a JSON List; False when the file is something else (use the loader)."""
    try:
        top = msgspec.json.decode(buf, type=_SnapshotList)
    except (msgspec.DecodeError, RecursionError):
        return False
    item_kind = list_item_kind(top.kind)
    if top.items is None or item_kind is None:
        return False
    if len(buf) > limits.max_file_bytes(True):
        cluster.errors.append(LoadError(path, 0, limits.size_error(len(buf), True)))
        return True
    annotations = (top.metadata.annotations if top.metadata else None) or {}
    if cluster.server_version is None and annotations.get(VERSION_ANNOTATION):
        cluster.server_version = annotations[VERSION_ANNOTATION]
    list_version = top.apiVersion or "v1"
    lines = RawLines(buf)
    decode_items(top.items, item_kind, list_version, path, cluster, lines)
    return True


def decode_items(
    items: list[msgspec.Raw],
    item_kind: str,
    list_version: str,
    path: str,
    cluster: ClusterInput,
    lines: RawLines | None = None,
) -> None:
    """Decode List items (JSON ``Raw``) into the cluster: typed Pods/Nodes, dicts for the rest.

    ``item_kind``/``list_version`` fill in items without ``kind``/``apiVersion``
    (a ``PodList`` from the API). ``lines`` (when the items come from a file)
    gives errors and manifests their line.
    """
    pods, nodes, objects, errors = cluster.pods, cluster.nodes, cluster.objects, cluster.errors
    with task(f"loading {len(items):,} objects from {path}", len(items)) as advance:
        for index, raw in enumerate(items):
            if not index & 4095:  # the progress display, every 4,096 objects
                advance(min(4096, len(items) - index))
            kind = item_kind
            try:
                hint = _TYPED_PREFIX.match(bytes(memoryview(raw)[:96]))
                if hint is not None:
                    kind, api_version = ("Pod" if hint.group(1) == b"Pod" else "Node"), "v1"
                else:
                    try:
                        peek = _KIND.decode(raw)
                    except msgspec.ValidationError:
                        # kind/apiVersion of the wrong type (or not an object): the generic path
                        # below names the problem like the loader does.
                        peek = None
                    if peek is not None:
                        kind = peek.kind or item_kind
                        api_version = peek.apiVersion or list_version
                    else:
                        api_version = ""
                if is_typed_kind(kind, api_version):
                    if kind == "Pod":
                        pods.append(_POD.decode(raw))
                    else:
                        nodes.append(_NODE.decode(raw))
                    continue
                data = _ANY.decode(raw)
            except msgspec.ValidationError as exc:
                line = lines.line_of(raw) if lines else 0
                errors.append(LoadError(path, line, f"{_raw_name(raw, kind)}: {exc}"))
                continue
            except (msgspec.DecodeError, RecursionError) as exc:
                line = lines.line_of(raw) if lines else 0
                reason = limits.TOO_DEEP if isinstance(exc, RecursionError) else str(exc)
                errors.append(LoadError(path, line, f"items[{index}]: invalid JSON: {reason}"))
                continue
            line = lines.line_of(raw) if lines else 0
            if not isinstance(data, dict):
                errors.append(LoadError(path, line, f"items[{index}] is not an object"))
                continue
            problem = limits.check_tree(data, shared=False)
            if problem:
                errors.append(LoadError(path, line, f"items[{index}]: invalid JSON: {problem}"))
                continue
            problem = item_problem(data, index, item_kind, list_version)
            if problem:
                errors.append(LoadError(path, line, problem))
                continue
            completed = complete_item(data, item_kind, list_version)
            assert completed is not None  # item_problem said it has a kind
            objects.append(Manifest(completed, path, line, index))


def _raw_name(raw: msgspec.Raw, kind: str) -> str:
    try:
        meta = _NAMED.decode(raw).metadata or _NamedMeta()
    except msgspec.DecodeError:
        meta = _NamedMeta()
    return describe_object(kind or "object", meta.namespace or None, meta.name)


def _read_live(context: str | None, kubeconfig: str | None, progress: bool) -> ClusterInput:
    from gpuplane.sources.live import LiveReader, Progress  # deferred for start-up time

    reader = LiveReader(context, kubeconfig, Progress(enabled=progress))
    cluster = ClusterInput(source="live")
    for page in reader.pages():
        cluster.source = reader.session.source
        decode_items(page.items, page.resource.kind, page.api_version, reader.session.source, cluster)
    cluster.source = reader.session.source
    cluster.server_version = reader.session.server_version
    cluster.errors.extend(reader.session.errors)
    return cluster


def load_cluster_state(
    source: str,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    progress: bool = False,
) -> tuple[ClusterState, list[LoadError]]:
    """Read ``source`` (snapshot file/folder or ``live``) and index it.

    Returns the state and the load errors (bad files, bad objects): callers
    report them and still use what loaded (exit 2 per spec/cli.md). Never raises
    (:func:`read_cluster` turns every failure into an error), so every command
    handles a bad source the same way: print each error, stop with
    ``nothing usable in cluster source ...`` when :attr:`ClusterState.empty`.
    """
    data = read_cluster(source, context=context, kubeconfig=kubeconfig, progress=progress)
    state = ClusterState(
        data.nodes,
        data.pods,
        data.objects,
        server_version=data.server_version,
        source=data.source,
        errors=data.errors,
    )
    return state, state.errors
