"""Read manifests from files, folders and stdin into :class:`Manifest` objects.

Design notes (reference/python-stack.md):
- YAML goes through PyYAML's C loader (``CSafeLoader``), one document at a time;
  the text is cut at document markers first so each object knows its start line
  without building a node graph for the whole file.
- Field line numbers are resolved lazily (:mod:`gpuplane.sources.locate`): only
  objects that get findings pay for a composed node tree.
- JSON goes through msgspec.
- Bad input never raises: each problem becomes a :class:`LoadError` with file
  and line, and the rest of the input is still read.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuplane.sources.locate import DocumentLocator
from gpuplane.sources.manifest import Manifest

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"

_DOC_MARKER = re.compile(r"^---(?:[ \t].*)?$|^\.\.\.[ \t]*$", re.MULTILINE)

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML wheels ship LibYAML
    _Loader = yaml.SafeLoader


@dataclass(slots=True)
class LoadError:
    """One unusable piece of input: reported as ``path:line: message``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass(slots=True)
class LoadResult:
    objects: list[Manifest] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    files: int = 0

    def extend(self, other: LoadResult) -> None:
        self.objects.extend(other.objects)
        self.errors.extend(other.errors)
        self.files += other.files


def iter_manifest_files(path: str) -> Iterator[str]:
    """Every manifest file under ``path`` (recursively, sorted for stable output)."""
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(MANIFEST_SUFFIXES):
                yield os.path.join(root, name)


def load_paths(paths: Iterable[str]) -> LoadResult:
    """Load every object from ``paths`` (files, folders or ``-`` for stdin)."""
    result = LoadResult()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # bulk loads build millions of containers: 3-4x faster without the cyclic GC
    try:
        for path in paths:
            if path == STDIN:
                result.extend(load_text(sys.stdin.read(), "<stdin>"))
            elif os.path.isdir(path):
                for file_path in iter_manifest_files(path):
                    result.extend(load_file(file_path))
            elif os.path.exists(path):
                result.extend(load_file(path))
            else:
                result.errors.append(LoadError(path, 0, "no such file or directory"))
    finally:
        if gc_was_enabled:
            gc.enable()
    return result


def load_file(path: str) -> LoadResult:
    """Load one file; unreadable or binary files become a :class:`LoadError`."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        return LoadResult(errors=[LoadError(path, 0, f"cannot read: {exc.strerror or exc}")])
    if b"\x00" in raw[:8192]:
        return LoadResult(errors=[LoadError(path, 0, "binary file, not YAML or JSON")], files=1)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return LoadResult(errors=[LoadError(path, 0, f"not UTF-8 text: {exc.reason} at byte {exc.start}")], files=1)
    result = load_text(text, path)
    result.files = 1
    return result


def load_text(text: str, path: str) -> LoadResult:
    """Load every object of a YAML (multi-document) or JSON text."""
    stripped = text.lstrip()
    if path.endswith(".json") or (stripped.startswith(("{", "[")) and _looks_like_json(stripped)):
        return _load_json(text, path)
    return _load_yaml(text, path)


def _looks_like_json(text: str) -> bool:
    import msgspec

    try:
        msgspec.json.decode(text.encode())
    except msgspec.DecodeError:
        return False
    return True


def _load_json(text: str, path: str) -> LoadResult:
    import msgspec

    result = LoadResult()
    try:
        data = msgspec.json.decode(text.encode())
    except msgspec.DecodeError as exc:
        result.errors.append(LoadError(path, _json_error_line(text, str(exc)), f"invalid JSON: {exc}"))
        return result
    documents = data if isinstance(data, list) else [data]
    for index, document in enumerate(documents):
        _collect(document, path, 1, index, None, result)
    return result


def _json_error_line(text: str, message: str) -> int:
    match = re.search(r"byte (\d+)", message)
    if not match:
        return 0
    return text.encode()[: int(match.group(1))].count(b"\n") + 1


def split_documents(text: str) -> list[tuple[int, str]]:
    """Cut a YAML stream at ``---``/``...`` markers: ``[(first_line, document_text)]``.

    A marker line that carries content (``--- {kind: Pod}``) keeps that content.
    """
    pieces: list[tuple[int, str]] = []
    start, line = 0, 1
    for match in _DOC_MARKER.finditer(text):
        pieces.append((line, text[start : match.start()]))
        line += text.count("\n", start, match.end())
        marker = match.group(0)
        rest = marker[3:] if marker.startswith("---") else ""
        start = match.end() - len(rest)
    pieces.append((line, text[start:]))
    return [(first, body) for first, body in pieces if body.strip()]


def _load_yaml(text: str, path: str) -> LoadResult:
    result = LoadResult()
    for doc_index, (first_line, body) in enumerate(split_documents(text)):
        try:
            data = yaml.load(body, Loader=_Loader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = first_line + mark.line if mark is not None else first_line
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            result.errors.append(LoadError(path, line, f"invalid YAML: {problem}"))
            continue
        if data is None:
            continue
        locator = DocumentLocator(body, first_line)
        _collect(data, path, first_line + _leading_blank_lines(body), doc_index, locator, result)
    return result


def _leading_blank_lines(body: str) -> int:
    count = 0
    for line in body.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        count += 1
    return count


def _collect(
    data: Any,
    path: str,
    line: int,
    doc: int,
    locator: DocumentLocator | None,
    result: LoadResult,
) -> None:
    """Turn one decoded document into manifests, unpacking ``List`` kinds."""
    if not isinstance(data, dict):
        result.errors.append(LoadError(path, line, f"not a Kubernetes object (a {_type_name(data)} at top level)"))
        return
    kind = data.get("kind")
    if not kind or not isinstance(kind, str):
        result.errors.append(LoadError(path, line, "object has no kind"))
        return
    items = data.get("items")
    if kind == "List" or (kind.endswith("List") and isinstance(items, list)):
        for index, item in enumerate(items or []):
            prefix = ("items", index)
            item_line = locator.line_of(prefix) if locator else line
            if not isinstance(item, dict) or not item.get("kind"):
                result.errors.append(LoadError(path, item_line or line, f"items[{index}] has no kind"))
                continue
            if "apiVersion" not in item and kind != "List":
                item = {**item, "apiVersion": data.get("apiVersion", "v1")}
            sub = locator.scoped(prefix) if locator else None
            result.objects.append(Manifest(item, path, item_line or line, doc, sub))
        return
    result.objects.append(Manifest(data, path, line, doc, locator.scoped(()) if locator else None))


def _type_name(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
