"""Where each typed Pod and Node of a cluster snapshot sits in its file.

The snapshot reader decodes Pods and Nodes in bulk into msgspec structs and
keeps no positions for them (architecture.md, "Two object representations"),
so a finding on a pod would otherwise say ``line 0``. Lines are 1-based and 0
means nothing, so diagnose finds them again here, and only when a finding or a
workload object needs one: a text scan of the snapshot for the ``kind`` and
``metadata.name``/``namespace`` of each item, no YAML parsing. A field's exact
line is then composed from that one item's text on demand (the same lazy
:class:`~gpuplane.sources.locate.DocumentLocator` the loader uses for manifests).

Live clusters and stdin have no file to point at: their objects stay without a
position (``line: null`` in JSON, no ``:line`` in text).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from gpuplane.sources.manifest import FieldPath

# Scanning is linear in the file, but a snapshot bigger than this is not worth re-reading
# for line numbers (the YAML loader refuses files above 64 MiB anyway: sources/limits.py).
MAX_SCAN_BYTES = 64 * 1024 * 1024
TYPED_KINDS = frozenset({"Pod", "Node"})

# Column-0 keys of one (de-indented) item or document, as kubectl and the API server write them.
_KIND = re.compile(r"""^kind:[ \t]*["']?(Pod|Node)["']?[ \t]*(?:#.*)?$""", re.MULTILINE)
_API_V1 = re.compile(r"""^apiVersion:[ \t]*["']?v1["']?[ \t]*(?:#.*)?$""", re.MULTILINE)
_METADATA = re.compile(r"^metadata:[ \t]*(?:#.*)?\n", re.MULTILINE)
_INDENTED = re.compile(r"([ \t]+)\S")
_SCALAR = re.compile(r"""^(?:"([^"]*)"|'([^']*)'|([^#\s][^#]*?))[ \t]*(?:#.*)?$""")

Key = tuple[str, str, str]  # (kind, namespace or "", name)


@dataclass(frozen=True, slots=True)
class Position:
    """One object's file, 1-based first line and, for YAML, its own text (to locate fields).

    ``base`` is the file line of the text's first line (before any leading comments, so
    it can differ from ``line``).
    """

    path: str
    line: int
    text: str | None = None
    base: int = 0

    def locator(self) -> Callable[[FieldPath], int | None]:
        """Field path -> line, composing the object's text only when a field line is asked for."""
        if self.text is None:
            line = self.line
            return lambda _path: line
        from gpuplane.sources.locate import DocumentLocator  # deferred for start-up time

        return DocumentLocator(self.text, self.base).line_of


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""


class _Item(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""
    metadata: _Meta | None = None


class _List(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""
    items: list[msgspec.Raw] | None = None


def snapshot_files(source: str) -> list[str]:
    """The files a file or folder cluster source was read from ([] for live and stdin)."""
    if not source or source == "-":
        return []
    if os.path.isdir(source):
        from gpuplane.sources.loader import iter_manifest_files  # deferred for start-up time

        return list(iter_manifest_files(source))
    return [source] if os.path.isfile(source) else []


def index_positions(source: str) -> dict[Key, Position]:
    """``(kind, namespace, name) -> Position`` for every v1 Pod and Node of the snapshot files.

    Unreadable or oversized files are skipped: a missing line is never worth an error.
    """
    found: dict[Key, Position] = {}
    for path in snapshot_files(source):
        try:
            if os.path.getsize(path) > MAX_SCAN_BYTES:
                continue
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        head = raw[:4096].lstrip()
        if head[:1] in (b"{", b"["):
            _index_json(raw, path, found)
        else:
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                continue
            _index_yaml(text, path, found)
    return found


def _index_yaml(text: str, path: str, found: dict[Key, Position]) -> None:
    from gpuplane.sources.loader import split_documents, split_list_items  # deferred for start-up time

    for first_line, body in split_documents(text):
        split = split_list_items(body)
        if split is not None:
            for offset, item in split[1]:
                _note_yaml(item, path, first_line + offset, first_line + offset, found)
        else:
            _note_yaml(body, path, first_line + _leading_lines(body), first_line, found)


def _note_yaml(text: str, path: str, line: int, base: int, found: dict[Key, Position]) -> None:
    kind = _KIND.search(text)
    if kind is None or _API_V1.search(text) is None:
        return
    meta = _metadata_fields(text)
    name = meta.get("name", "")
    if name:
        found.setdefault((kind.group(1), meta.get("namespace", ""), name), Position(path, line, text, base))


def _metadata_fields(text: str) -> dict[str, str]:
    """``name``/``namespace`` of the block-style ``metadata:`` mapping at column 0."""
    start = _METADATA.search(text)
    if start is None:
        return {}
    fields: dict[str, str] = {}
    indent = ""
    for line in text[start.end() :].split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lead = _INDENTED.match(line)
        if lead is None:
            break  # back at column 0: the metadata block is over
        if not indent:
            indent = lead.group(1)
        if lead.group(1) != indent:
            continue  # deeper: labels, annotations, ownerReferences ...
        key, sep, value = line[len(indent) :].partition(":")
        if sep and key in ("name", "namespace"):
            scalar = _SCALAR.match(value.strip())
            if scalar is not None:
                fields[key] = next(group for group in scalar.groups() if group is not None)
            if len(fields) == 2:
                break
    return fields


def _leading_lines(body: str) -> int:
    """Blank and comment lines before a document's first key (the object starts after them)."""
    count = 0
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        count += 1
    return count


def _index_json(raw: bytes, path: str, found: dict[Key, Position]) -> None:
    from gpuplane.sources.loader import RawLines, list_item_kind  # deferred for start-up time

    try:
        top = msgspec.json.decode(raw, type=_List)
    except (msgspec.DecodeError, RecursionError):
        return
    if top.items is None:
        _note_json(raw, path, 1, found)
        return
    # Items of a typed list (PodList, NodeList) may omit their kind: it is the list's.
    list_kind = list_item_kind(top.kind) or ""
    lines = RawLines(raw)
    for item in top.items:
        _note_json(item, path, lines.line_of(item), found, list_kind)


def _note_json(
    raw: bytes | msgspec.Raw, path: str, line: int, found: dict[Key, Position], list_kind: str = ""
) -> None:
    try:
        item = msgspec.json.decode(raw, type=_Item)
    except (msgspec.DecodeError, RecursionError):
        return
    kind = item.kind or list_kind
    if (
        kind in TYPED_KINDS
        and item.apiVersion in ("v1", "")
        and item.metadata
        and item.metadata.name
        and line
    ):
        found.setdefault((kind, item.metadata.namespace, item.metadata.name), Position(path, line))
