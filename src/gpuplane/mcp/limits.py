"""Per-call limits of the MCP server: a time limit and a cap on the size of a result.

Why: whoever drives the server chooses its arguments (docs/mcp.md, "Trust model"), and one call
must not stall the session or flood the client. The known expensive paths are bounded where
they run (input size caps, ``advise mig``'s demand cap, live paging limits); these two limits
are the backstop for everything else.

- **Time.** Each call runs in a worker thread; when it is not done after ``call_timeout``
  seconds, the call returns a tool error at once and the session goes on. Python cannot stop a
  thread, so the computation is abandoned and runs to its end in the background (it holds a
  core meanwhile, never the session); while :data:`MAX_ABANDONED` such calls are still running,
  new calls are refused at once with a "busy" error instead of piling up.
- **Size.** A result whose structured content serialises to more than ``max_result_bytes`` is
  cut: the longest lists, mappings and strings are shortened until it fits, and the document
  gains ``truncated`` (what was cut: path, kept, total) and the text summary says so. Claude
  Code refuses a tool result over 25,000 tokens by default (``MAX_MCP_OUTPUT_TOKENS``), so a
  cut document with a clear marker is more useful than an error; the listing tools' ``limit``
  and ``cursor`` read the rest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

DEFAULT_CALL_TIMEOUT = 120.0  # seconds; 0 turns the limit off
DEFAULT_MAX_RESULT_KB = 256  # of serialised structuredContent; 0 turns the cap off
MAX_ABANDONED = 2  # timed-out calls still running before new calls are refused
STRING_KEEP_MIN = 200  # characters a cut string keeps at least
T = TypeVar("T")


@dataclass(slots=True)
class Limits:
    """The server's per-call limits (``gpuplane mcp --call-timeout / --max-result-kb``)."""

    call_timeout: float = DEFAULT_CALL_TIMEOUT
    max_result_bytes: int = DEFAULT_MAX_RESULT_KB * 1024


LIMITS = Limits()


def configure(call_timeout: float | None = None, max_result_kb: int | None = None) -> None:
    """Set the limits of this server process (``None`` keeps the default)."""
    if call_timeout is not None:
        LIMITS.call_timeout = call_timeout
    if max_result_kb is not None:
        LIMITS.max_result_bytes = max_result_kb * 1024


class CallLimitError(Exception):
    """A call refused or stopped by a limit; its text is the tool error's one line."""


class _Abandoned:
    """Calls that passed the time limit and whose threads are still running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0

    def add(self) -> None:
        with self._lock:
            self.running += 1

    def done(self) -> None:
        with self._lock:
            self.running -= 1


ABANDONED = _Abandoned()


async def run_with_time_limit(name: str, fn: Callable[[], T]) -> T:
    """``fn()`` in a worker thread, or :class:`CallLimitError` after ``LIMITS.call_timeout`` s."""
    import anyio  # deferred for start-up time (anyio comes with the MCP SDK)
    import anyio.to_thread

    timeout = LIMITS.call_timeout
    if ABANDONED.running >= MAX_ABANDONED:
        raise CallLimitError(
            f"{name} refused: {ABANDONED.running} earlier calls passed the {timeout:g} s time limit and "
            "are still running; try again when they have finished"
        )
    state = {"abandoned": False, "finished": False}
    lock = threading.Lock()

    def worker() -> T:
        try:
            return fn()
        finally:
            with lock:
                state["finished"] = True
                if state["abandoned"]:
                    ABANDONED.done()

    def abandon() -> None:
        with lock:
            if not state["finished"]:
                state["abandoned"] = True
                ABANDONED.add()

    try:
        with anyio.fail_after(timeout if timeout > 0 else None):
            return await anyio.to_thread.run_sync(worker, abandon_on_cancel=True)
    except TimeoutError:
        abandon()
        raise CallLimitError(
            f"{name} did not finish within the server's {timeout:g} s time limit (gpuplane mcp "
            "--call-timeout); narrow the input (fewer paths, a smaller snapshot) and try again"
        ) from None
    except BaseException:  # the client cancelled the call: its thread runs on, abandoned
        abandon()
        raise


def size_of(data: Any) -> int:
    """Bytes of ``data`` as JSON (what the client receives as structuredContent)."""
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str).encode())


def cap_document(data: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``data`` cut to at most ``max_bytes`` of JSON, and what was cut (``path``, ``kept``, ``total``).

    Repeatedly shortens the largest list, mapping or string (by its JSON size) in proportion
    to the excess: a 2 MB ``findings`` list under a 256 KB cap keeps its first ~12%, in order.
    A document that still does not fit (one huge scalar field) keeps only its ``summary``.
    """
    if max_bytes <= 0 or size_of(data) <= max_bytes:
        return data, []
    cuts: dict[tuple[Any, ...], dict[str, Any]] = {}
    budget = max_bytes - 1024  # room for the ``truncated`` marker itself
    # a plain-JSON copy: the cut never touches the tool's own objects (some are cached)
    doc: Any = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    for _ in range(64):
        size = size_of(doc)
        if size <= budget:
            break
        found = _largest(doc, ())
        if found is None:
            break
        path, node, node_size = found
        keep_share = max(0.0, 1 - (size - budget) / node_size) * 0.95
        doc = _cut(doc, path, node, keep_share, cuts)
    if size_of(doc) > budget:
        doc = {k: data[k] for k in ("summary",) if k in data and size_of(data[k]) < budget // 2}
        cuts[("*",)] = {"path": "", "kept": len(doc), "total": len(data)}
    return doc, [{**cut, "path": cut["path"] or "(document)"} for cut in cuts.values()]


def _largest(node: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any, int] | None:
    """The node to shorten: from the top, step into the largest child while it holds more than
    half of its parent (the document itself is never cut while a child can be); stop at a list,
    mapping or long string whose bulk is spread over its items.

    Sizes are computed in one bottom-up pass (a container's size is its children's plus its
    brackets, keys and commas), so each value is serialised once however deep it sits."""
    sizes: dict[int, int] = {}

    def measure(value: Any) -> int:
        if isinstance(value, dict):
            size = 2 + max(0, len(value) - 1)
            size += sum(size_of(str(k)) + 1 + measure(v) for k, v in value.items())
        elif isinstance(value, list):
            size = 2 + max(0, len(value) - 1) + sum(measure(v) for v in value)
        else:
            return size_of(value)
        sizes[id(value)] = size
        return size

    def cuttable(value: Any) -> bool:
        return (isinstance(value, dict | list) and len(value) > 0) or (
            isinstance(value, str) and len(value) > STRING_KEEP_MIN
        )

    total = measure(node)
    where, current, current_size = path, node, total
    while isinstance(current, dict | list):
        items = list(current.items() if isinstance(current, dict) else enumerate(current))
        sized = [(sizes.get(id(v)) or size_of(v), k, v) for k, v in items if cuttable(v)]
        if not sized:
            break
        size, key, child = max(sized, key=lambda entry: entry[0])
        if where != path and size * 2 <= current_size:
            break
        where, current, current_size = (*where, key), child, size
    if not cuttable(current) or (where == path and not isinstance(current, str)):
        return None if where == path else (where, current, current_size)
    return where, current, current_size


def _cut(doc: Any, path: tuple[Any, ...], node: Any, share: float, cuts: dict[tuple[Any, ...], Any]) -> Any:
    """``doc`` with the node at ``path`` shortened to ``share`` of its items or characters."""
    first = cuts.get(path)
    if isinstance(node, str):
        total = first["total"] if first else len(node)
        keep = max(STRING_KEEP_MIN, int(len(node) * share))
        if keep >= len(node):
            keep = len(node) // 2
        short: Any = node[:keep] + f" ... [cut by gpuplane mcp: {keep} of {total} characters]"
    else:
        total = first["total"] if first else len(node)
        keep = min(int(len(node) * share), len(node) - 1)
        if isinstance(node, list):
            short = node[:keep]
        else:
            short = dict(list(node.items())[:keep])
    cuts[path] = {"path": _dotted(path), "kept": keep, "total": total}
    if not path:
        return short
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = short
    return doc


def _dotted(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def truncation_note(cuts: list[dict[str, Any]], max_bytes: int) -> str:
    """The text summary's tail for a cut result, e.g. ``; result cut to the server's 256 KiB limit
    (findings: 120 of 2400 kept) ...``."""
    parts = ", ".join(f"{c['path']}: {c['kept']} of {c['total']} kept" for c in cuts)
    return (
        f"; result cut to the server's {max_bytes // 1024} KiB limit ({parts}); use the filters or "
        "limit/cursor to read the rest (gpuplane mcp --max-result-kb raises the limit)"
    )
