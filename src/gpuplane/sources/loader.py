"""Read manifests from files, folders and stdin into :class:`Manifest` objects.

Design notes (reference/python-stack.md):
- YAML goes through PyYAML's C loader (``CSafeLoader``), one document at a time;
  the text is cut at document markers first so each object knows its start line
  without building a node graph for the whole file.
- A kubectl ``kind: List`` in YAML (``items:`` followed by ``- `` items at
  column 0) is split into one document per item before loading (python-stack.md
  footnote 2): ~4x less memory than one huge document, same result. A List that
  may use anchors and aliases (an alias can point into an earlier item) is
  loaded whole instead.
- Field line numbers are resolved lazily (:mod:`gpuplane.sources.locate`): only
  objects that get findings pay for a composed node tree.
- JSON goes through msgspec; the items of a List stay ``msgspec.Raw`` until
  decoded one by one, which also gives each item its line.
- Bad input never raises: each problem becomes a :class:`LoadError` with file
  and line, and the rest of the input is still read. Hostile input is bounded
  (:mod:`gpuplane.sources.limits`: size, depth, alias expansion).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.k8s import kindless
from gpuplane.k8s.manifest import FieldPath, LoadError, Manifest
from gpuplane.lazy_pattern import LazyPattern
from gpuplane.pyyaml import yaml  # PyYAML with its costly pattern pre-compiled
from gpuplane.records import Record
from gpuplane.sources import limits
from gpuplane.sources.gc_policy import paused_gc
from gpuplane.sources.locate import _ROOT, DocumentLocator, LineIndex

if TYPE_CHECKING:
    import msgspec

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_NAME = "<stdin>"

_DOC_MARKER = re.compile(r"^---(?:[ \t].*)?$|^\.\.\.[ \t]*$", re.MULTILINE)
# kubectl / Go YAML List layout: a top-level ``items:`` key whose sequence starts at column 0.
_ITEMS_KEY = re.compile(r"^items:[ \t]*\n(?=-[ \n])", re.MULTILINE)
_ITEM_START = LazyPattern(r"^-(?: |$)", re.MULTILINE)
_TOP_LEVEL_KEY = LazyPattern(r"^[^\s#-]", re.MULTILINE)
# A YAML alias (``*name``) can only follow whitespace or a flow indicator.
_MAYBE_ALIAS = LazyPattern(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]")
# Likewise an anchor (``&name``). A false hit (``a && b`` in a command) only costs the
# List split's speed, never correctness.
_MAYBE_ANCHOR = LazyPattern(r"(?:^|[\s\[{,])&[^\s,\[\]{}]")

try:
    _CLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML wheels ship LibYAML
    _CLoader = yaml.SafeLoader

_Resolver = yaml.resolver.Resolver
_STR_TAG = _Resolver.DEFAULT_SCALAR_TAG
_SEQ_TAG = _Resolver.DEFAULT_SEQUENCE_TAG
_MAP_TAG = _Resolver.DEFAULT_MAPPING_TAG
_WILDCARD = tuple(_Resolver.yaml_implicit_resolvers.get(None, ()))
# SafeLoader's implicit resolvers by first character, the wildcard ones appended (their order
# is upstream's: first-character list first, then wildcards).
_IMPLICIT = {
    first: (*resolvers, *_WILDCARD)
    for first, resolvers in _Resolver.yaml_implicit_resolvers.items()
    if first is not None
}


_RESOLVED: dict[str, str] = {}  # plain scalar text -> implicit tag (bounded, see FastSafeLoader.resolve)
_RESOLVED_MAX = 1 << 16


class FastSafeLoader(_CLoader):
    """``CSafeLoader`` with the same tags, resolved with less Python per node.

    PyYAML's ``Resolver.resolve`` rebuilds the candidate list (``resolvers +
    wildcard_resolvers``) for every scalar and runs the path-resolver stack
    (``descend_resolver``/``ascend_resolver``) for every node, although SafeLoader
    registers no path resolvers. The table above is built once; results are identical
    (tested against ``CSafeLoader`` in tests/sources), ~10% off a bulk load.
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                # a plain scalar's tag depends on its text alone: keys and common values
                # ("name", "nvidia.com/gpu", "1") repeat across a bulk load, resolve them once
                found = _RESOLVED.get(value)
                if found is None:
                    found = _STR_TAG
                    for tag, regexp in _IMPLICIT.get(value[:1], _WILDCARD):
                        if regexp.match(value):
                            found = tag
                            break
                    if len(_RESOLVED) < _RESOLVED_MAX and len(value) <= 64:
                        _RESOLVED[value] = found
                return found
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


# Only valid while nobody registers path resolvers (PyYAML's add_path_resolver is global).
_Loader: type = FastSafeLoader if not _Resolver.yaml_path_resolvers else _CLoader

_SCALAR_CONSTRUCTORS = {
    tag: yaml.constructor.SafeConstructor.yaml_constructors[tag]
    for tag in (
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:timestamp",
    )
}


class _TooDeep(Exception):
    """Raised by :func:`_build` past :data:`limits.MAX_DEPTH` nested containers."""


class DuplicateKeyError(yaml.YAMLError):
    """A mapping that names the same key twice: kubectl and the API server refuse the object.

    PyYAML keeps the last value silently; Kubernetes decodes manifests strictly
    (kubernetes-sigs/yaml ``YAMLToJSONStrict`` -> go-yaml v2 ``UnmarshalStrict``, whose
    ``decoder.setMapIndex`` in goyaml.v2/decode.go reports ``line N: key "limits" already
    set in map``, wrapped as ``error converting YAML to JSON: yaml: unmarshal errors:``; go-yaml
    v3 says ``mapping key "limits" already defined at line M``). So gpuplane refuses it too,
    instead of linting a value the cluster would never see. Lines are 0-based in the document.
    """

    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(f"duplicate key {_go_repr(key)}")
        self.key = key
        self.line = line
        self.first_line = first_line

    def load_error(self, path: str, doc_line: int) -> LoadError:
        """The ``path:line`` error of this duplicate in a document starting at file line ``doc_line``."""
        return LoadError(
            path,
            doc_line + self.line,
            f"duplicate key {_go_repr(self.key)} (first at line {doc_line + self.first_line}): "
            "kubectl and the API server reject the object",
        )


def _go_repr(key: Any) -> str:
    """A key as go-yaml's ``%#v`` prints it: strings quoted, numbers and booleans bare."""
    import msgspec  # deferred for start-up time: YAML input never needs it

    if isinstance(key, str):
        return msgspec.json.encode(key).decode()
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _duplicate_in(pairs: list[tuple[yaml.Node, yaml.Node]], loader: Any) -> DuplicateKeyError | None:
    """The first repeated key of a mapping whose dict came out shorter than its pairs, or None
    when the keys only collide in Python (``1`` and ``true``: ``1 == True``) but differ in YAML.

    Only runs on that failure path, so the keys are simply built again to compare them.
    """
    seen: dict[tuple[type, Any], int] = {}
    for key_node, _ in pairs:
        key = _build(key_node, loader, {}, 1)
        ident = (type(key), key)
        line = key_node.start_mark.line
        if ident in seen:
            return DuplicateKeyError(key, line, seen[ident])
        seen[ident] = line
    return None


def _json_keys(pairs: list[tuple[yaml.Node, yaml.Node]], loader: Any, lines: LineIndex, depth: int) -> dict:
    """A mapping whose distinct keys collide in Python (``{1: a, true: b}``), keyed as the
    API server sees it: kubectl converts YAML to JSON (sigs.k8s.io/yaml), which writes every
    key as a string (``"1"``, ``"true"``); keys still equal then are a real duplicate."""
    out: dict[Any, Any] = {}
    first: dict[Any, int] = {}
    for key_node, value_node in pairs:
        key = _build(key_node, loader, lines, depth)
        key = key if isinstance(key, str) else _go_repr(key)
        if key in out:
            raise DuplicateKeyError(key, key_node.start_mark.line, first[key])
        first[key] = key_node.start_mark.line
        out[key] = _build(value_node, loader, lines, depth)
    return out


def _check_unique_keys(root: yaml.Node | None) -> None:
    """Raise :class:`DuplicateKeyError` for a mapping node that names an explicit key twice.

    For documents that skip :func:`_build` (aliases, merge keys, tags). Scalar keys compare
    by their resolved tag and text; keys brought in by a merge (``<<``) do not count, as in
    go-yaml. Shared (aliased) nodes are visited once, so hostile aliasing stays linear.
    """
    if root is None:
        return
    stack = [root]
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                stack.append(value_node)
                if not isinstance(key_node, yaml.ScalarNode):
                    stack.append(key_node)
                    continue
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                ident = (key_node.tag, key_node.value)
                line = key_node.start_mark.line
                if ident in seen:
                    raise DuplicateKeyError(key_node.value, line, seen[ident])
                seen[ident] = line
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _build(node: yaml.Node, loader: Any, lines: LineIndex, depth: int = 1) -> Any:
    """Python data of a composed node, without SafeConstructor's generic machinery.

    ``construct_document`` handles what plain manifests never contain (aliases shared by
    several parents, recursive structures, merge keys, explicit tags) through per-node
    memo tables and generators; that costs about half of a bulk load. Callers only use
    this walk for documents with none of those (see :func:`load_yaml_document`); the
    result is the same data (tested against ``CSafeLoader`` in tests/sources).
    Scalars keep SafeLoader's constructors, so ints, floats, bools, nulls and timestamps
    come out exactly as ``yaml.safe_load`` makes them.

    The marks of the composed nodes are at hand here, so each container's entry lines
    go into ``lines`` (see :class:`~gpuplane.sources.locate.LineIndex`): findings get
    their lines without composing the document a second time. The nesting bound of
    :mod:`~gpuplane.sources.limits` is checked on the way down (``depth`` counts
    containers, the root is 1, as :func:`limits.check_tree` counts), so plain documents
    need no second walk.
    """
    tag = node.tag
    if tag == _STR_TAG:
        return node.value
    if tag == _MAP_TAG:
        if depth > limits.MAX_DEPTH:
            raise _TooDeep
        out = {}
        pairs = node.value
        depth += 1
        for key_node, value_node in pairs:
            out[_build(key_node, loader, lines, depth)] = _build(
                value_node, loader, lines, depth
            )  # unhashable key: TypeError
        if len(out) != len(pairs):  # a key given twice: refused, as kubectl refuses it
            duplicate = _duplicate_in(pairs, loader)
            if duplicate is not None:
                raise duplicate
            out = _json_keys(pairs, loader, lines, depth)
        lines[id(out)] = (out, [key_node.start_mark.line for key_node, _ in pairs])
        return out
    if tag == _SEQ_TAG:
        if depth > limits.MAX_DEPTH:
            raise _TooDeep
        items = node.value
        depth += 1
        seq = [_build(item, loader, lines, depth) for item in items]
        lines[id(seq)] = (seq, [item.start_mark.line for item in items])
        return seq
    construct = _SCALAR_CONSTRUCTORS.get(tag)
    if construct is not None:
        return construct(loader, node)
    return loader.construct_object(node, deep=True)


def _load_plain(body: str) -> tuple[Any, LineIndex | None]:
    """One document without aliases, merge keys or explicit tags (see :func:`_build`),
    with its line index (None for odd keys: unhashable ones go through SafeConstructor).

    Raises :class:`yaml.YAMLError` for YAML errors and for nesting past the limit, and
    :class:`DuplicateKeyError` for a key given twice in one mapping (detected for free:
    the dict :func:`_build` makes comes out shorter than the node's pairs).
    """
    loader = _Loader(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        lines: LineIndex = {}
        try:
            data = _build(node, loader, lines)
        except TypeError:  # an unhashable key: let SafeConstructor raise its own error
            data = loader.construct_document(node)
            problem = limits.check_tree(data, shared=False)
            if problem:
                raise yaml.YAMLError(problem) from None
            return data, None
        except _TooDeep:
            raise yaml.YAMLError(limits.TOO_DEEP) from None
        lines[_ROOT] = (data, node.start_mark.line)
        return data, lines
    finally:
        loader.dispose()


class LoadResult(Record):
    """What was read: the objects, the errors, how many files; ``list_metadata``: the
    ``metadata`` of each unpacked List (a snapshot records the server version there);
    ``skipped``: files a folder walk skipped on purpose, each ``<path> (<why>)``: not errors,
    the caller notes them on stderr (``gpuplane: skipped <path> (<why>)``)."""

    __slots__ = ("errors", "files", "list_metadata", "objects", "skipped")
    objects: list[Manifest]
    errors: list[LoadError]
    files: int
    list_metadata: list[dict[str, Any]]
    skipped: list[str]

    def __init__(
        self,
        objects: list[Manifest] | None = None,
        errors: list[LoadError] | None = None,
        files: int = 0,
        list_metadata: list[dict[str, Any]] | None = None,
        skipped: list[str] | None = None,
    ) -> None:
        self.objects = [] if objects is None else objects
        self.errors = [] if errors is None else errors
        self.files = files
        self.list_metadata = [] if list_metadata is None else list_metadata
        self.skipped = [] if skipped is None else skipped

    def extend(self, other: LoadResult) -> None:
        self.objects.extend(other.objects)
        self.errors.extend(other.errors)
        self.files += other.files
        self.list_metadata.extend(other.list_metadata)
        self.skipped.extend(other.skipped)


# Helm chart files that are not Kubernetes manifests (helm.sh/docs/topics/charts: the chart file
# structure): a folder walk over a chart skips them instead of failing on them.
_HELM_METADATA = frozenset(
    {"Chart.yaml", "Chart.lock", "values.schema.json", "requirements.yaml", "requirements.lock"}
)
_HELM_SKIP = "Helm chart metadata, not a manifest"


def helm_metadata(name: str) -> bool:
    """``Chart.yaml``, ``Chart.lock``, ``values*.yaml`` / ``.yml`` / ``.json``, ``values.schema.json``."""
    return name in _HELM_METADATA or (name.startswith("values") and name.endswith(MANIFEST_SUFFIXES))


# gpuplane's own config file (docs/lint.md): found by folder walks, never a manifest.
CONFIG_FILE_NAMES = frozenset({".gpuplane.yaml", ".gpuplane.yml"})


def _skip_reason(part: LoadResult) -> str | None:
    """Why a file holds nothing to lint (empty, only comments, no Kubernetes object), or None."""
    if not part.objects and len(part.errors) == 1 and part.errors[0].message in _NOTHING_THERE:
        return "empty file" if part.errors[0].message == _EMPTY_FILE else "only comments, no objects"
    if _not_kubernetes(part):
        return "no Kubernetes object: no kind"
    return None


def _load_walked(file_path: str) -> LoadResult:
    """One file found by a folder walk: Helm chart metadata, gpuplane's own config, files with
    no object at all (empty, or only comments) and files holding no Kubernetes object (a CI
    workflow, a docker-compose file) are skipped with a note, not errors (a chart or a
    repository is a normal thing to point at). Files named on the command line keep the errors."""
    name = os.path.basename(file_path)
    if name in CONFIG_FILE_NAMES:
        return LoadResult(skipped=[f"{file_path} (gpuplane config, not a manifest)"])
    if helm_metadata(name):
        return LoadResult(skipped=[f"{file_path} ({_HELM_SKIP})"])
    return _load_lenient(file_path)


_NO_KIND = "object has no kind"


def _not_kubernetes(part: LoadResult) -> bool:
    """A file with no Kubernetes object at all: every problem is a document without ``kind``
    (or not a mapping), e.g. a CI workflow, a pre-commit config or docker-compose file."""
    return (
        not part.objects
        and bool(part.errors)
        and all(e.message == _NO_KIND or e.message.startswith("not a Kubernetes object") for e in part.errors)
    )


def _load_lenient(file_path: str) -> LoadResult:
    """A file loaded leniently (walked, or named with ``--skip-non-manifests``): a file holding
    nothing to lint is skipped with a note (a file mixing objects and kindless documents still
    reports)."""
    part = load_file(file_path)
    reason = _skip_reason(part)
    if reason is not None:
        return LoadResult(files=part.files, skipped=[f"{file_path} ({reason})"])
    return part


# Folders a walk refuses unless asked (``allow_system_walk``): the filesystem root and the
# kernel's pseudo-filesystems hold no manifests, and walking them reads without end.
SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
SYSTEM_ROOT_PROBLEM = (
    "a system folder, not a folder of manifests: not walked (name the files or a project folder)"
)


def system_root(path: str) -> bool:
    """``/``, ``/proc``, ``/sys``, ``/dev`` or a folder inside the last three (symlinks resolved)."""
    real = os.path.realpath(path)
    return real == "/" or any(real == root or real.startswith(root + "/") for root in SYSTEM_ROOTS)


def walk_manifest_files(path: str) -> Iterator[tuple[str, str | None]]:
    """``(file, None)`` for every manifest file under ``path``; ``(file, why)`` for one skipped.

    Recursively, sorted for stable output, hidden folders left out. Symlinked folders are not
    entered (``os.walk`` default); a symlinked file is read only when it resolves inside the
    walked tree, and only regular files are read (a FIFO named ``x.yaml`` would block).
    """
    top = os.path.realpath(path)
    inside = top.rstrip("/") + "/"
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(MANIFEST_SUFFIXES):
                continue
            file_path = os.path.join(root, name)
            if os.path.islink(file_path) and not os.path.realpath(file_path).startswith(inside):
                yield file_path, "a symlink out of the walked folder"
                continue
            try:
                mode = os.stat(file_path).st_mode
            except OSError:
                yield file_path, None  # a dangling link: load_file reports it
                continue
            if not stat.S_ISREG(mode):
                yield file_path, f"{special_file_kind(mode)}, not a regular file"
                continue
            yield file_path, None


def iter_manifest_files(path: str) -> Iterator[str]:
    """Every manifest file a walk of ``path`` reads (see :func:`walk_manifest_files`)."""
    for file_path, skipped in walk_manifest_files(path):
        if skipped is None:
            yield file_path


def load_paths(
    paths: Iterable[str], *, skip_non_manifests: bool = False, allow_system_walk: bool = False
) -> LoadResult:
    """Load every object from ``paths`` (files, folders or ``-`` for stdin).

    Files named explicitly are strict (a file with no object is an error); files met while
    walking a folder skip Helm metadata, gpuplane's config, empty files and files holding no
    Kubernetes object. ``skip_non_manifests`` makes named files skip those too, with a note
    (pre-commit passes every YAML file of a repository by name). A folder that is a system
    root (:func:`system_root`) is refused unless ``allow_system_walk``."""
    result = LoadResult()
    with paused_gc():  # bulk loads build millions of containers
        for path in paths:
            if path == STDIN:
                result.extend(load_stdin())
            elif os.path.isdir(path):
                if system_root(path) and not allow_system_walk:
                    result.errors.append(LoadError(path, 0, SYSTEM_ROOT_PROBLEM))
                    continue
                for file_path, skipped in walk_manifest_files(path):
                    if skipped is not None:
                        result.skipped.append(f"{file_path} ({skipped})")
                    else:
                        result.extend(_load_walked(file_path))
            elif os.path.lexists(path):
                result.extend(_load_lenient(path) if skip_non_manifests else load_file(path))
            else:
                result.errors.append(LoadError(path, 0, "no such file or directory"))
    return result


def read_bytes(path: str) -> tuple[bytes | None, LoadError | None]:
    """The bytes of one input file (``-`` = stdin), or the reason it cannot be used.

    The one bounded way gpuplane reads a file. Only regular files are read (``-`` reads stdin
    when given explicitly): a device (``/dev/zero``), a FIFO (whose ``open`` would block until a
    writer comes), a socket or a directory is refused from ``stat``, before anything is opened.
    The size limit is checked on ``stat`` too, and the read itself is bounded to the limit plus
    one byte, so a file that grows, or reports no size (``/proc``), still cannot exhaust memory.
    """
    if path == STDIN:
        cap = max(limits.max_file_bytes(True), limits.max_file_bytes(False))
        raw = sys.stdin.buffer.read(cap + 1)
        if len(raw) > cap:
            return None, LoadError(STDIN_NAME, 0, limits.size_error(len(raw), True))
        return raw, None
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, LoadError(path, 0, _os_problem(exc))
    if not stat.S_ISREG(info.st_mode):
        return None, LoadError(path, 0, special_file_problem(info.st_mode))
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
            is_json = path.endswith(".json") or head.lstrip()[:1] in (b"{", b"[")
            cap = limits.max_file_bytes(is_json)
            size = max(os.fstat(handle.fileno()).st_size, len(head))
            if size > cap:
                return None, LoadError(path, 0, limits.size_error(size, is_json))
            handle.seek(0)
            raw = handle.read(cap + 1)  # one buffer, no concatenation: snapshots can be GBs
    except OSError as exc:
        return None, LoadError(path, 0, _os_problem(exc))
    if len(raw) > cap:
        return None, LoadError(path, 0, limits.size_error(len(raw), is_json))
    return raw, None


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    return f"cannot read: {exc.strerror or exc}"


def special_file_kind(mode: int) -> str:
    """``a FIFO``, ``a character device`` ...: what a path that is not a regular file is."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def special_file_problem(mode: int) -> str:
    """Why a path that is not a regular file is not read."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    return (
        f"not a regular file ({special_file_kind(mode)}); gpuplane reads regular files, or stdin given as -"
    )


def decode_text(raw: bytes, path: str) -> tuple[str | None, LoadError | None]:
    """UTF-8 text of a file, or why it is not a manifest (binary, not UTF-8)."""
    if b"\x00" in raw[:8192]:
        return None, LoadError(path, 0, "binary file, not YAML or JSON")
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, LoadError(path, 0, f"not UTF-8 text: {exc.reason} at byte {exc.start}")


def load_file(path: str) -> LoadResult:
    """Load one file; unreadable, binary, empty or oversized files become a :class:`LoadError`."""
    raw, error = read_bytes(path)
    if error is not None:
        return LoadResult(errors=[error], files=1)
    return load_bytes(raw or b"", path)


def load_stdin() -> LoadResult:
    """Load every object piped to standard input.

    Empty input (or only comments and ``---``) is no error here: ``helm template`` of a chart
    whose templates all render empty prints nothing, like a folder with no manifests. The
    caller sees no objects and no errors and can say so (``gpuplane lint`` notes it on stderr).
    """
    raw, error = read_bytes(STDIN)
    if error is not None:
        return LoadResult(errors=[error], files=1)
    result = load_bytes(raw or b"", STDIN_NAME)
    if not result.objects and len(result.errors) == 1 and result.errors[0].message in _NOTHING_THERE:
        return LoadResult(files=1)
    return result


_EMPTY_FILE = "empty file: no Kubernetes objects"
_ONLY_COMMENTS = "no Kubernetes objects (only comments or empty documents)"
_NOTHING_THERE = (_EMPTY_FILE, _ONLY_COMMENTS)


def load_bytes(raw: bytes, path: str) -> LoadResult:
    """Load the objects of one file's bytes (YAML or JSON)."""
    text, error = decode_text(raw, path)
    if error is not None:
        return LoadResult(errors=[error], files=1)
    assert text is not None
    if not text.strip():
        return LoadResult(errors=[LoadError(path, 0, _EMPTY_FILE)], files=1)
    if len(raw) > limits.max_file_bytes(False) and not _is_json_text(text, path):
        return LoadResult(errors=[LoadError(path, 0, limits.size_error(len(raw), False))], files=1)
    result = load_text(text, path)
    result.files = 1
    if not result.objects and not result.errors:
        result.errors.append(LoadError(path, 0, _ONLY_COMMENTS))
    return result


def _is_json_text(text: str, path: str) -> bool:
    return path.endswith(".json") or text.lstrip()[:1] in ("{", "[")


def load_text(text: str, path: str) -> LoadResult:
    """Load every object of a YAML (multi-document) or JSON text.

    ``.json`` files are JSON; other text that starts with ``{``/``[`` is tried
    as JSON first and read as YAML (a superset) when that fails.
    """
    if "\r\n" in text:
        # YAML normalises line breaks to LF (YAML 1.2 §5.4) and JSON allows CR only as
        # whitespace, so this is exact; without it a ``---`` line ending in CR is no marker.
        text = text.replace("\r\n", "\n")
    if path.endswith(".json"):
        return _load_json(text, path, strict=True) or LoadResult()
    if text.lstrip()[:1] in ("{", "["):
        result = _load_json(text, path, strict=False)
        if result is not None:
            return result
    return _load_yaml(text, path)


# -- JSON ------------------------------------------------------------------------------------


class RawLines:
    """Line numbers of ``msgspec.Raw`` values cut from one buffer, found in order.

    msgspec keeps no positions; the items of a List appear in the buffer in
    order, so each one is found by searching its bytes from the end of the
    previous one and the newlines in between are counted (both in C). Items
    may be skipped (typed pods need no line): the search is for the whole
    item, so a skipped item with the same first bytes is not mistaken for it.
    """

    __slots__ = ("_buf", "_line", "_pos", "last_start")

    def __init__(self, buf: bytes) -> None:
        self._buf = buf
        self._pos = 0
        self._line = 1
        self.last_start = -1  # where the last item found starts (-1: not found)

    def depth_bounded(self) -> bool:
        """:func:`limits.json_depth_bounded` for the last item found, counted in place (no copy)."""
        if self.last_start < 0:
            return False
        buf, start, end = self._buf, self.last_start, self._pos
        return buf.count(b"[", start, end) + buf.count(b"{", start, end) < limits.MAX_DEPTH

    def line_of(self, raw: msgspec.Raw) -> int:
        needle = bytes(memoryview(raw))
        found = self._buf.find(needle, self._pos)
        self.last_start = found
        if found < 0:
            return 0
        end = found + len(needle)
        line = self._line + self._buf.count(b"\n", self._pos, found)
        self._line = line + self._buf.count(b"\n", found, end)
        self._pos = end
        return line


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> None:
    keys = {key for key, _ in pairs}
    if len(keys) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)


def json_duplicate(text: str, path: str) -> LoadError | None:
    """The error for a JSON object that names a key twice, or None.

    msgspec (like Go's encoding/json) keeps the last value, so ``{"kind": "Pod", "kind":
    "Secret"}`` would read as a Secret; the API server decodes strictly and refuses it, as
    YAML's duplicates are refused (:class:`DuplicateKeyError`). The scan is the C JSON scanner
    with a pairs hook; only when it finds a repeat is the text composed again (as YAML, a JSON
    superset) for the exact lines.
    """
    try:
        json.loads(text, object_pairs_hook=_refuse_repeats)
    except _RepeatedKey as exc:
        try:
            _check_unique_keys(yaml.compose(text, Loader=_CLoader))
        except DuplicateKeyError as found:
            return found.load_error(path, 1)
        except (yaml.YAMLError, RecursionError):
            pass
        return LoadError(
            path, 0, f"duplicate key {_go_repr(exc.key)}: kubectl and the API server reject the object"
        )
    except (ValueError, RecursionError):
        return None  # not JSON after all: the caller's decoder reports it
    return None


def _load_json(text: str, path: str, strict: bool) -> LoadResult | None:
    """Objects of a JSON text; None when it is not JSON and ``strict`` is off (then it is YAML)."""
    import msgspec  # deferred for start-up time: YAML input never needs it

    result = LoadResult()
    buf = text.encode()
    stripped = text.lstrip()
    duplicate = json_duplicate(text, path) if '"' in text else None
    if duplicate is not None:
        result.errors.append(duplicate)
        return result
    try:
        if stripped.startswith("{"):
            top = msgspec.json.decode(buf, type=dict[str, msgspec.Raw])
            raw_items = top.get("items")
            kind = _decode_str(top.get("kind"))
            item_kind = list_item_kind(kind)
            if raw_items is not None and item_kind is not None:
                _collect_json_list(buf, top, item_kind, path, result)
                return result
            documents: list[Any] = [msgspec.json.decode(buf)]
        else:
            documents = msgspec.json.decode(buf)
            if not isinstance(documents, list):
                documents = [documents]
    except msgspec.DecodeError as exc:
        if not strict:
            return None
        result.errors.append(LoadError(path, _json_error_line(buf, str(exc)), f"invalid JSON: {exc}"))
        return result
    except RecursionError:
        result.errors.append(LoadError(path, 1, f"invalid JSON: {limits.TOO_DEEP}"))
        return result
    bounded = limits.json_depth_bounded(buf)
    for index, document in enumerate(documents):
        problem = None if bounded else limits.check_tree(document, shared=False)
        if problem:
            result.errors.append(LoadError(path, 1, f"invalid JSON: {problem}"))
            continue
        _collect(document, path, 1, index, None, result)
    return result


def _decode_str(raw: msgspec.Raw | None) -> str:
    import msgspec  # deferred for start-up time: YAML input never needs it

    if raw is None:
        return ""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return ""
    return value if isinstance(value, str) else ""


def list_item_kind(kind: object) -> str | None:
    """The kind a kubectl ``List`` or ``<Kind>List`` lends the items that leave theirs out
    (``PodList`` -> ``Pod``; "" for a bare ``List``: none), or None when ``kind`` names no list."""
    if isinstance(kind, str) and kind.endswith("List"):
        return kind.removesuffix("List")
    return None


def _collect_json_list(
    buf: bytes, top: dict[str, msgspec.Raw], item_kind: str, path: str, result: LoadResult
) -> None:
    """Unpack a JSON ``List``/``*List`` item by item, each with its line and a lazy locator."""
    import msgspec  # deferred for start-up time: YAML input never needs it

    try:
        items = msgspec.json.decode(top["items"], type=list[msgspec.Raw] | None) or []
    except msgspec.ValidationError:
        result.errors.append(LoadError(path, _line_at(buf, top["items"]), ITEMS_NOT_A_LIST))
        return
    list_version = _decode_str(top.get("apiVersion")) or "v1"
    _note_list_metadata(top.get("metadata"), result)
    lines = RawLines(buf)
    for index, raw in enumerate(items):
        line = lines.line_of(raw)
        try:
            item = msgspec.json.decode(raw)
        except RecursionError:
            result.errors.append(LoadError(path, line, f"invalid JSON: {limits.TOO_DEEP}"))
            continue
        if isinstance(item, dict):
            problem = None if lines.depth_bounded() else limits.check_tree(item, shared=False)
            if problem:
                result.errors.append(LoadError(path, line, f"invalid JSON: {problem}"))
                continue
        _add_list_item(
            result,
            item,
            index,
            item_kind,
            list_version,
            path,
            line,
            index,
            lambda raw=raw, line=line: DocumentLocator(bytes(raw).decode(), line),  # type: ignore[misc]
        )


def _add_list_item(
    result: LoadResult,
    item: Any,
    index: int,
    item_kind: str,
    list_version: str,
    path: str,
    line: int,
    doc: int,
    locator: Callable[[], DocumentLocator],
) -> None:
    """One item of a kubectl ``List`` (JSON or YAML): checked, completed with the List's
    kind/apiVersion where kubectl leaves them out, and added with its line and locator."""
    if not isinstance(item, dict):
        result.errors.append(LoadError(path, line, f"items[{index}] is not an object"))
        return
    problem = item_problem(item, index, item_kind, list_version)
    if problem:
        result.errors.append(LoadError(path, line, problem))
        return
    item = complete_item(item, item_kind, list_version)
    assert item is not None  # item_problem said it has a kind
    result.objects.append(Manifest(item, path, line, doc, locator().scoped(())))


def _line_at(buf: bytes, raw: msgspec.Raw) -> int:
    """The line where ``raw`` (a value cut from ``buf``) starts; 1 when it is not found."""
    found = buf.find(bytes(memoryview(raw)))
    return buf.count(b"\n", 0, found) + 1 if found >= 0 else 1


def _note_list_metadata(raw: msgspec.Raw | None, result: LoadResult) -> None:
    import msgspec  # deferred for start-up time: YAML input never needs it

    if raw is None:
        return
    try:
        meta = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return
    if isinstance(meta, dict):
        result.list_metadata.append(meta)


def _json_error_line(buf: bytes, message: str) -> int:
    match = re.search(r"byte (\d+)", message)
    if not match:
        return 0
    return buf[: int(match.group(1))].count(b"\n") + 1


# -- YAML ------------------------------------------------------------------------------------


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


def split_list_items(body: str) -> tuple[str, list[tuple[int, str]]] | None:
    """Cut a kubectl-style YAML List into ``(rest_of_document, [(line_offset, item_text)])``.

    kubectl (Go YAML) writes ``items:`` with each item starting ``- `` at
    column 0 and its other lines indented two spaces. Each item becomes its own
    small document: drop the ``- `` and two spaces of indent per line, which
    keeps its lines where they were. ``line_offset`` is 0-based within
    ``body``. Returns None when the document is not laid out that way.
    """
    key = _ITEMS_KEY.search(body)
    if key is None:
        return None
    items_start = key.end()
    end_match = _TOP_LEVEL_KEY.search(body, items_start)
    items_end = end_match.start() if end_match else len(body)
    rest = body[: key.start()] + body[items_end:]
    starts = [m.start() for m in _ITEM_START.finditer(body, items_start, items_end)]
    items: list[tuple[int, str]] = []
    line = body.count("\n", 0, items_start)
    previous = items_start
    for position, start in enumerate(starts):
        stop = starts[position + 1] if position + 1 < len(starts) else items_end
        line += body.count("\n", previous, start)
        previous = start
        chunk = body[start:stop]
        chunk = chunk[2:] if chunk.startswith("- ") else chunk[1:]
        items.append((line, chunk.replace("\n  ", "\n")))
    return rest, items


def load_yaml_document(body: str) -> Any:
    """One YAML document with the hostile-input checks; raises :class:`yaml.YAMLError`."""
    return _load_document(body)[0]


class NumberTooLongError(yaml.YAMLError):
    """An integer of more digits than Python converts (``sys.get_int_max_str_digits()``, 4300).

    No Kubernetes field holds such a number (integers are 64-bit, quantities are bounded), so
    the document is refused with one clear line instead of Python's ValueError.
    """

    def __init__(self, body: str) -> None:
        found = _LONG_NUMBER.search(body)
        digits = len(found.group(0)) if found else 0
        self.problem = (
            f"number too long ({digits} digits; gpuplane reads integers of up to {_INT_DIGITS} digits)"
        )
        self.problem_mark = _Mark(body.count("\n", 0, found.start()) if found else 0)
        super().__init__(self.problem)


class _Mark:
    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line


_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = LazyPattern(rf"[0-9_]{{{_INT_DIGITS + 1},}}")


def _load_document(body: str) -> tuple[Any, LineIndex | None]:
    """:func:`load_yaml_document` plus the document's line index when the fast path made one."""
    try:
        return _load_checked(body)
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise NumberTooLongError(body) from None
        raise


def _load_checked(body: str) -> tuple[Any, LineIndex | None]:
    lines = None
    if "*" in body and _MAYBE_ALIAS.search(body) is not None:
        data = _load_special(body)
        problem = limits.check_tree(data, shared=True)
    elif "!" in body or "<<" in body:
        data = _load_special(body)
        problem = None if limits.yaml_depth_bounded(body) else limits.check_tree(data, shared=False)
    else:
        data, lines = _load_plain(body)  # depth checked while building
        problem = None
    if problem:
        raise yaml.YAMLError(problem)
    return data, lines


def _load_special(body: str) -> Any:
    """A document with aliases, merge keys or tags: ``yaml.load`` in its two steps
    (compose, construct), with the duplicate-key check on the composed nodes in between."""
    loader = _Loader(body)
    try:
        node = loader.get_single_node()
        _check_unique_keys(node)
        return loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


# A Go template action (``{{ .Values.x }}``, ``{{- include "x" . }}``): Helm chart templates.
_TEMPLATE_ACTION = LazyPattern(r"\{\{-?\s*[.$\w\"(/]")
HELM_HINT = "; this looks like an unrendered Helm template: lint what `helm template CHART` prints"


# A name quoted from the file in a YAML problem: a tag (``could not determine a constructor for the
# tag '!x'``), a tag handle, an alias or anchor name. The characters PyYAML quotes ('\t', '@',
# "expected ',' or '}'") stay: they say what is wrong without repeating the file.
_QUOTED_CONTENT = LazyPattern(r"\b(tag|tag handle|alias|anchor) '[^']*'")


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's problem without the text it quotes from the file.

    The file may be anything a path argument names (a private key, an ``.env`` file given as
    ``--config`` or through MCP): an error gives the line and the kind of problem, never the
    file's content (issue 11 item 7)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return _QUOTED_CONTENT.sub(r"\1", problem)


def _yaml_error(exc: yaml.YAMLError, path: str, first_line: int, body: str = "") -> LoadError:
    mark = getattr(exc, "problem_mark", None)
    line = first_line + mark.line if mark is not None else first_line
    problem = yaml_problem(exc)
    if problem == "exceeded maximum nesting depth":  # LibYAML's own bound (1000 levels)
        problem = limits.TOO_DEEP
    hint = HELM_HINT if "{{" in body and _TEMPLATE_ACTION.search(body) else ""
    return LoadError(path, line, f"invalid YAML: {problem}{hint}")


def _load_yaml(text: str, path: str) -> LoadResult:
    result = LoadResult()
    for doc_index, (first_line, body) in enumerate(split_documents(text)):
        object_line = first_line + _leading_blank_lines(body)
        split = None if _may_share_anchors(body) else split_list_items(body)
        if split is not None and _load_split_list(split, path, first_line, doc_index, result):
            continue
        try:
            data, lines = _load_document(body)
        except DuplicateKeyError as exc:
            result.errors.append(exc.load_error(path, first_line))
            continue
        except yaml.YAMLError as exc:
            result.errors.append(
                _yaml_error(exc, path, object_line if not hasattr(exc, "problem_mark") else first_line, body)
            )
            continue
        except RecursionError:
            result.errors.append(LoadError(path, object_line, f"invalid YAML: {limits.TOO_DEEP}"))
            continue
        if data is None:
            continue
        locator = DocumentLocator(body, first_line, lines)
        _collect(data, path, object_line, doc_index, locator, result)
    return result


def _may_share_anchors(body: str) -> bool:
    """True when the document may define an anchor and use an alias: a List cut into
    per-item documents would lose anchors defined in an earlier item ("found undefined
    alias"), so such a document is loaded whole. Two substring tests first keep the common
    case (no ``&`` or no ``*``) at memchr speed."""
    return (
        "&" in body
        and "*" in body
        and _MAYBE_ANCHOR.search(body) is not None
        and _MAYBE_ALIAS.search(body) is not None
    )


def _load_split_list(
    split: tuple[str, list[tuple[int, str]]],
    path: str,
    first_line: int,
    doc_index: int,
    result: LoadResult,
) -> bool:
    """Load a kubectl List item by item; False when the rest is not a List (load it whole)."""
    rest, items = split
    try:
        head = load_yaml_document(rest)
    except (yaml.YAMLError, RecursionError):
        return False
    if not isinstance(head, dict):
        return False
    item_kind = list_item_kind(head.get("kind"))
    if item_kind is None:
        return False
    list_version = head.get("apiVersion") or "v1"
    if isinstance(head.get("metadata"), dict):
        result.list_metadata.append(head["metadata"])
    for index, (offset, item_text) in enumerate(items):
        line = first_line + offset
        try:
            item, lines = _load_document(item_text)
        except DuplicateKeyError as exc:
            result.errors.append(exc.load_error(path, line))
            continue
        except yaml.YAMLError as exc:
            result.errors.append(_yaml_error(exc, path, line, item_text))
            continue
        except RecursionError:
            result.errors.append(LoadError(path, line, f"invalid YAML: {limits.TOO_DEEP}"))
            continue
        _add_list_item(
            result,
            item,
            index,
            item_kind,
            list_version,
            path,
            line,
            doc_index,
            lambda text=item_text, line=line, lines=lines: DocumentLocator(text, line, lines),  # type: ignore[misc]
        )
    return True


ITEMS_NOT_A_LIST = "items is not a list"


def identity_problem(data: dict[str, Any]) -> str | None:
    """Why an object's ``kind``/``apiVersion`` make it unusable, or None.

    The API machinery decodes both into Go strings (apimachinery ``TypeMeta``), so
    ``apiVersion: 5`` is refused by kubectl and the API server
    (``cannot unmarshal number into Go struct field ... of type string``); gpuplane refuses
    it too instead of filing the object under the version ``"5"``.
    """
    kind = data.get("kind")
    if kind is not None and not isinstance(kind, str):
        return f"kind is not a string (a {_type_name(kind)})"
    version = data.get("apiVersion")
    if version is not None and not isinstance(version, str):
        return f"apiVersion is not a string (a {_type_name(version)})"
    return None


def item_problem(item: dict[str, Any], index: int, item_kind: str, list_version: str) -> str | None:
    """Why item ``index`` of a List cannot be used (bad kind/apiVersion, no kind), or None."""
    problem = identity_problem(item)
    if problem:
        return f"items[{index}]: {problem}"
    if not item.get("kind") and not item_kind:
        return f"items[{index}] has no kind"
    return None


def complete_item(item: dict[str, Any], item_kind: str, list_version: str) -> dict[str, Any] | None:
    """An item of a List with its kind and apiVersion, as the API server omits them.

    Items of a typed list (``PodList``) may lack ``kind``/``apiVersion``: they
    are the list's. A generic ``List`` says nothing about its items, so an item
    without a kind is unusable (None).
    """
    if item.get("kind"):
        if "apiVersion" not in item and item_kind:
            return {"apiVersion": list_version, **item}
        return item
    if not item_kind:
        return None
    return {"apiVersion": list_version, "kind": item_kind, **item}


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
        result.errors.append(
            LoadError(path, line, f"not a Kubernetes object (a {_type_name(data)} at top level)")
        )
        return
    kind = data.get("kind")
    if not kind or not isinstance(kind, str):
        pseudo = kindless.wrap(data, path)
        if pseudo is None:
            result.errors.append(LoadError(path, line, _NO_KIND))
            return
        result.objects.append(Manifest(pseudo, path, line, doc, _unwrapping(locator)))
        return
    problem = identity_problem(data)
    if problem:
        result.errors.append(LoadError(path, line, problem))
        return
    items = data.get("items")
    if kind == "List" or (kind.endswith("List") and isinstance(items, list)):
        if items is not None and not isinstance(items, list):
            result.errors.append(
                LoadError(path, (locator.line_of(("items",)) if locator else None) or line, ITEMS_NOT_A_LIST)
            )
            return
        item_kind = kind[: -len("List")] if kind != "List" else ""
        if isinstance(data.get("metadata"), dict):
            result.list_metadata.append(data["metadata"])
        for index, item in enumerate(items or []):
            prefix = ("items", index)
            item_line = (locator.line_of(prefix) if locator else None) or line
            if not isinstance(item, dict):
                result.errors.append(LoadError(path, item_line, f"items[{index}] is not an object"))
                continue
            problem = item_problem(item, index, item_kind, data.get("apiVersion") or "v1")
            if problem:
                result.errors.append(LoadError(path, item_line, problem))
                continue
            item = complete_item(item, item_kind, data.get("apiVersion") or "v1")
            assert item is not None  # item_problem said it has a kind
            sub = locator.scoped(prefix) if locator else None
            result.objects.append(Manifest(item, path, item_line, doc, sub))
        return
    result.objects.append(Manifest(data, path, line, doc, locator.scoped(()) if locator else None))


def _unwrapping(locator: DocumentLocator | None) -> Callable[[FieldPath], int | None] | None:
    """Locator of a pseudo-object: its ``data`` is the whole document, other fields its first line."""
    if locator is None:
        return None

    def line_of(path: FieldPath) -> int | None:
        inner = tuple(path[1:]) if path[:1] == ("data",) else ()
        return locator.line_of(inner)

    return line_of


def _type_name(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
