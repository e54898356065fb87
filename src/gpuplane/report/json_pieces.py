"""A JSON document as ``msgspec.json.format(msgspec.json.encode(doc), indent=2)`` writes it, in pieces.

Why: why-pending's ``-f json`` lists every node's reasons for every Pending pod (spec/cli.md), about
1 GB for 2,000 pods on 5,000 nodes. Encoding that whole, then re-indenting the whole, held the
document three times over (the objects, the compact bytes, the formatted bytes) and wrote nothing
until the end. Formatting is local: a value at depth ``d`` prints as its own formatted text with
every line after the first indented by ``2 * d`` spaces (raw newlines occur only between tokens:
the encoder escapes them inside strings). So the top levels of a document can be walked here and
each value below them formatted alone, and written as it comes (``tests/test_json_pieces.py``
proves the pieces equal the whole on random documents).

A value may also come formatted already (:class:`Formatted`): a producer that knows its structure
(why-pending's per-node reasons, one text per Status shared by its nodes) renders it faster than
the generic encoder, byte for byte alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class Formatted:
    """A JSON value that renders itself as the formatter would at a depth (``render``), and
    gives its plain value (``plain``) wherever it is encoded whole."""

    __slots__ = ()

    def render(self, depth: int) -> bytes:
        raise NotImplementedError

    def plain(self) -> Any:
        raise NotImplementedError


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Formatted):
        return obj.plain()
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def format_value(value: Any, depth: int = 0) -> bytes:
    """``value`` formatted with indent 2 as it prints at ``depth`` (its first line unindented)."""
    import msgspec  # deferred for start-up time

    if isinstance(value, Formatted):
        return value.render(depth)
    text = msgspec.json.format(msgspec.json.encode(value, enc_hook=_enc_hook), indent=2)
    return text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


def pieces(value: Any, spread: int, depth: int = 0) -> Iterator[bytes]:
    """The formatted document in pieces: maps with text keys and lists are walked ``spread``
    levels deep; what lies below is formatted one value at a time."""
    import msgspec  # deferred for start-up time

    if spread <= 0 or isinstance(value, Formatted):
        yield format_value(value, depth)
        return
    if isinstance(value, dict) and value and all(type(k) is str for k in value):
        inner = b"  " * (depth + 1)
        yield b"{\n"
        last = len(value) - 1
        for i, (key, item) in enumerate(value.items()):
            yield inner + msgspec.json.encode(key) + b": "
            yield from pieces(item, spread - 1, depth + 1)
            yield b",\n" if i < last else b"\n"
        yield b"  " * depth + b"}"
    elif isinstance(value, list) and value:
        inner = b"  " * (depth + 1)
        yield b"[\n"
        last = len(value) - 1
        for i, item in enumerate(value):
            yield inner
            yield from pieces(item, spread - 1, depth + 1)
            yield b",\n" if i < last else b"\n"
        yield b"  " * depth + b"]"
    else:
        yield format_value(value, depth)
