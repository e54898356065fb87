"""The grammar both ``--demand`` options share: ``KEY=COUNT[,KEY=COUNT...]``, repeatable.

``advise capacity`` counts GPUs of a model and ``advise mig`` MIG instances of a profile; the
keys and the bounds differ, the way a value is split does not. One reader, so the two options
read ``a=1,,b=2`` and ``x=9999...`` alike, and a count too long to convert (Python refuses
int strings of more than 4,300 digits) is a bound to report, never an internal error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


class DemandSyntaxError(ValueError):
    """An item without ``=``: the caller turns it into its own input error."""

    def __init__(self, item: str) -> None:
        super().__init__(item)
        self.item = item


def whole(text: str, limit: int) -> int | None:
    """The whole number ``text`` (None when it is not one), as ``limit + 1`` when it is longer
    than any allowed value (never converting thousands of digits: Python's int-string limit)."""
    text = text.strip()
    if not text.isdigit():
        return None
    return int(text) if len(text) <= len(str(limit)) else limit + 1


def demand_items(values: Iterable[str], limit: int) -> Iterator[tuple[str, str, int | None]]:
    """Each ``KEY=COUNT`` item of the option's values as ``(item, key, count)``, stripped.

    Values split at commas (empty items skipped) and each item at its last ``=`` (a key may hold
    one). ``count`` is :func:`whole` of the text after it, bounded by ``limit``; an item without
    ``=`` raises :class:`DemandSyntaxError`. Checking the key and the count is the caller's.
    """
    for text in values:
        for part in text.split(","):
            item = part.strip()
            if not item:
                continue
            key, sep, count = item.rpartition("=")
            if not sep:
                raise DemandSyntaxError(item)
            yield item, key.strip(), whole(count, limit)
