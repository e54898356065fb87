"""Reading a command's inputs the one way every front end does.

Rule ids are checked against the catalog, ``.gpuplane.yaml`` is found upward from where the
caller says, manifests and clusters are loaded with their problems reported as
:class:`~gpuplane.app.outcome.Messages`; input that leaves nothing to work on is an
:class:`~gpuplane.app.outcome.AppError`. The engines are imported inside the functions, for
start-up time (``gpuplane --help`` imports none of them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from gpuplane.app.outcome import AppError, Messages, Surface, plural

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.lint.config import LintConfig
    from gpuplane.sources.loader import LoadResult

INLINE_NAME = "<input>"  # the file name of manifests given as text (MCP)


def check_rule_ids(surface: Surface, **lists: Iterable[str] | None) -> None:
    """Every id of each named list (``disable=...``, ``enable=...``) is a known rule."""
    if not any(ids for ids in lists.values()):
        return  # nothing to check: do not import every lint and diagnose rule module for it
    from gpuplane.rule_catalog import all_rules  # for start-up time

    known = {meta.id for meta in all_rules()}
    for name, ids in lists.items():
        unknown = sorted(set(ids or ()) - known)
        if unknown:
            raise AppError(
                f"{surface.option(name)}: unknown rule id '{unknown[0]}' (see {surface.rules_hint})"
            )


def lint_config(
    path: str | None,
    start: str | None,
    disable: Iterable[str] = (),
    enable: Iterable[str] = (),
    *,
    enable_all: bool = False,
) -> LintConfig:
    """The lint configuration: ``path``, else the ``.gpuplane.yaml`` nearest above ``start``
    (default: the working directory), else the defaults; then ``disable``, ``enable_all``
    (profile ``all``: the opt-in rules too) and ``enable`` on top (``disable`` still wins over
    ``enable`` for the same id)."""
    from gpuplane.lint.config import ConfigError, LintConfig, find_config, load_config  # start-up time

    try:
        found = path or find_config(start)
        cfg = load_config(found) if found else LintConfig()
    except ConfigError as exc:
        raise AppError(str(exc)) from None
    cfg.disable |= set(disable)
    if enable_all:
        cfg.profile = "all"
    enabled = set(enable)
    if enabled:
        cfg.enable = enabled
    return cfg


def config_start(paths: Iterable[str]) -> str | None:
    """Where to look upward for .gpuplane.yaml when the caller's working directory is not the
    project (an assistant-started MCP server): the first path's folder."""
    first = next(iter(paths), "").strip()
    if not first or first == "-":
        return None
    full = os.path.abspath(first)
    return full if os.path.isdir(full) else os.path.dirname(full)


def load_manifests(
    paths: Iterable[str],
    messages: Messages,
    surface: Surface,
    *,
    inline: str | None = None,
    skip_non_manifests: bool = False,
) -> LoadResult:
    """Objects from inline text and every path, in order; each load error becomes an
    ``input-error`` message, and each path holding no manifest at all a note (an empty folder or
    stdin is not an error, but "No findings" alone would hide that nothing was checked)."""
    from gpuplane.sources.loader import STDIN, LoadResult, load_bytes, load_paths  # start-up time

    loaded = LoadResult()
    if inline is not None and inline.strip():
        loaded.extend(load_bytes(inline.encode("utf-8"), INLINE_NAME))
    for path in paths:
        part = load_paths([path], skip_non_manifests=skip_non_manifests)
        for skipped in part.skipped:
            messages.note(f"skipped {skipped}")
        if not part.objects and not part.errors and not part.skipped:
            messages.note(f"no manifests found in {'standard input' if path == STDIN else path}")
        loaded.extend(part)
    for error in loaded.errors:
        messages.input_error(str(error))
    if surface.refuse_empty and loaded.errors and not loaded.objects:
        raise AppError(nothing_usable([str(e) for e in loaded.errors]))
    return loaded


def nothing_usable(errors: list[str]) -> str:
    """The one line for manifests that gave nothing but ``errors``, the first of them in it."""
    more = f" (and {plural(len(errors) - 1, 'more error')})" if len(errors) > 1 else ""
    return f"nothing usable in the manifests: {errors[0]}{more}"


class ClusterCache:
    """The last few snapshot states, reused while their files are unchanged.

    A long-lived caller (the MCP server) is asked several questions about the same snapshot
    (why_pending, then inventory, then lint against it); parsing and indexing it again each time
    costs ~100 ms on the demo and seconds on a 150,000-pod dump. The key is every snapshot
    file's path, size and mtime, so an edited or replaced file is read again. ``live`` is never
    cached (the cluster moves). Only read-only engines may share a cached state; an engine that
    changes the state it is given must load with ``fresh=True``.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._entries: dict[tuple[Any, ...], tuple[ClusterState, list[str], list[str]]] = {}
        import threading  # deferred for start-up time: only a long-lived caller (MCP) keeps a cache

        self._lock = threading.Lock()

    @staticmethod
    def key(source: str) -> tuple[Any, ...] | None:
        """Identity of a snapshot's content on disk; None when it cannot be cached."""
        from gpuplane.sources.loader import iter_manifest_files  # for start-up time

        try:
            if os.path.isdir(source):
                files = sorted(iter_manifest_files(source))
            elif os.path.isfile(source):
                files = [source]
            else:
                return None
            stats = tuple(
                (os.path.abspath(f), st.st_size, st.st_mtime_ns) for f in files for st in (os.stat(f),)
            )
        except OSError:
            return None
        return (source, *stats)

    def get(self, key: tuple[Any, ...]) -> tuple[ClusterState, list[str], list[str]] | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple[Any, ...], value: tuple[ClusterState, list[str], list[str]]) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = value
            while len(self._entries) > self.size:
                self._entries.pop(next(iter(self._entries)))


def load_cluster(
    source: str,
    context: str | None,
    kubeconfig: str | None,
    messages: Messages,
    surface: Surface,
    *,
    progress: bool = False,
    cache: ClusterCache | None = None,
    fresh: bool = False,
    warnings: bool = True,
) -> ClusterState:
    """The cluster state; each load problem an ``error`` message, then (with ``warnings``) its
    version warnings (a command that words messages for another version, or says them later,
    passes False and reads ``state.version_warnings()`` itself).

    Errors that leave nothing to work on are an :class:`AppError` (``nothing usable in cluster
    source '...'``). Otherwise the command runs on what was read; the caller decides whether
    the errors change its exit code.
    """
    from gpuplane.sources.cluster import LIVE, load_cluster_state  # for start-up time

    key = None if cache is None or fresh or source == LIVE else ClusterCache.key(source)
    cached = cache.get(key) if cache is not None and key is not None else None
    if cached is not None:
        state, errors, version_warnings = cached
    else:
        state, load_errors = load_cluster_state(
            source, context=context, kubeconfig=kubeconfig, progress=progress
        )
        errors = [str(e) for e in load_errors]
        if errors and state.empty:
            for error in errors:
                messages.error(error)
            detail = "" if surface.streams else f": {errors[0]}"
            raise AppError(f"nothing usable in cluster source {source!r}{detail}")
        version_warnings = list(state.version_warnings())
        if cache is not None and key is not None:
            cache.put(key, (state, errors, version_warnings))
    for error in errors:
        messages.error(error)
    for warning in version_warnings if warnings else ():
        messages.warning(warning)
    return state


class ClusterRequest(Protocol):
    """A request naming a cluster: a snapshot file or folder, or ``live`` with its kube-context
    and kubeconfig; ``progress``: a progress line on stderr while a big snapshot is read."""

    @property
    def cluster(self) -> str | None: ...
    @property
    def context(self) -> str | None: ...
    @property
    def kubeconfig(self) -> str | None: ...
    @property
    def progress(self) -> bool: ...


def read_cluster(
    request: ClusterRequest,
    messages: Messages,
    surface: Surface,
    *,
    cache: ClusterCache | None = None,
    warnings: bool = True,
) -> tuple[ClusterState, bool]:
    """:func:`load_cluster` of the request's cluster, and whether it had errors (bad input)."""
    assert request.cluster is not None
    before = len(messages.errors)
    state = load_cluster(
        request.cluster,
        request.context,
        request.kubeconfig,
        messages,
        surface,
        progress=request.progress,
        cache=cache,
        warnings=warnings,
    )
    return state, len(messages.errors) > before
