"""Filters and pages over a command's listed items, for callers that pay per byte (MCP tools).

An assistant reading ``diagnose`` on a real cluster cannot afford every finding at once, so the
listing tools take the same four filters: ``severity`` (the minimum kept), ``namespace``,
``rule`` and ``limit``, with an opaque ``cursor`` that continues where the previous page
stopped. The cursor is the offset into the *filtered* list, spelled as text so callers treat it
as a token; the page reports ``total`` (items after filtering) and ``next_cursor`` (None on the
last page). Filtering lives here, in the service layer, so every tool filters alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuplane.app.outcome import AppError
from gpuplane.lint.finding import SEVERITY_RANK


@dataclass(frozen=True, slots=True)
class ListFilter:
    """Which items of a listing to keep, and which page of them."""

    severity: str | None = None
    namespace: str | None = None
    rule: str | None = None
    limit: int | None = None
    cursor: str | None = None

    def offset(self) -> int:
        """The cursor as an offset; anything but a cursor this module returned is refused."""
        if self.cursor is None or self.cursor == "":
            return 0
        if not self.cursor.isdigit():
            raise AppError(
                f"cursor {self.cursor!r} is not a cursor returned by an earlier call (next_cursor)"
            )
        return int(self.cursor)


def finding_namespace(item: dict[str, Any]) -> str | None:
    """The namespace of a finding's object (None for cluster-scoped objects)."""
    obj = item.get("object")
    return obj.get("namespace") if isinstance(obj, dict) else None


def page(
    items: list[dict[str, Any]],
    wanted: ListFilter,
    *,
    namespace_of: Callable[[dict[str, Any]], str | None] = finding_namespace,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The kept page of ``items`` and its paging block ``{"total", "returned", "next_cursor"}``.

    ``severity`` keeps items at or above it (``warning`` keeps warnings and errors), as
    ``--fail-on`` and ``--min-severity`` rank them; ``namespace`` and ``rule`` match exactly.
    """
    if wanted.severity is not None and wanted.severity not in SEVERITY_RANK:
        raise AppError(f"severity {wanted.severity!r}: expected one of info, warning, error")
    if wanted.limit is not None and wanted.limit < 1:
        raise AppError(f"limit {wanted.limit}: must be at least 1")
    start = wanted.offset()
    floor = SEVERITY_RANK[wanted.severity] if wanted.severity else 0
    kept = [
        item
        for item in items
        if SEVERITY_RANK.get(str(item.get("severity", "")), 0) >= floor
        and (wanted.namespace is None or namespace_of(item) == wanted.namespace)
        and (wanted.rule is None or item.get("rule") == wanted.rule)
    ]
    end = len(kept) if wanted.limit is None else min(len(kept), start + wanted.limit)
    chosen = kept[start:end]
    more = str(end) if end < len(kept) else None
    return chosen, {"total": len(kept), "returned": len(chosen), "next_cursor": more}
