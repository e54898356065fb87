"""``metav1.Time`` values (RFC 3339 text, as the API server serialises them) as Unix seconds.

One reader for every place that orders objects by a timestamp (the default StorageClass by
``creationTimestamp``, preemption's victims by ``status.startTime``), so they agree on what a
malformed value means: not a time the API would have written, ``None`` here, and each caller says
what that stands for (the oldest or the latest).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache


@lru_cache(maxsize=200_000)  # the pods of one rollout often share a start second; bounded for mcp
def rfc3339_seconds(value: str) -> float | None:
    """``"2026-03-01T00:00:00Z"`` -> seconds since the epoch; ``None`` for text that is no time."""
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None
