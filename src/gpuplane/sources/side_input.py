"""One-document input files (scenarios, ``advise --from``, blueprints, ``.gpuplane.yaml``,
prices) read through the same bounded path as manifests.

Side inputs are not Kubernetes objects, but they come from the same places and can be just as
hostile: :func:`read_document` reads them with :func:`gpuplane.sources.loader.read_bytes`
(regular files only, or ``-``; size capped before reading) and parses them with the loader's
rules (alias and depth bounds, duplicate keys refused in YAML and JSON, numbers too long for
Python refused with one line), so every reader of a side input gets ``path:line: message``
errors instead of a traceback. Typed validation of the data is the caller's job.
"""

from __future__ import annotations

from typing import Any

import msgspec
import yaml

from gpuplane.k8s.manifest import LoadError
from gpuplane.sources import limits
from gpuplane.sources.loader import (
    DuplicateKeyError,
    _load_document,
    _yaml_error,
    decode_text,
    json_duplicate,
    read_bytes,
    split_documents,
)


class SideInputError(ValueError):
    """A side input that cannot be used; ``str()`` is the one-line ``path:line: message``."""

    def __init__(self, error: LoadError) -> None:
        super().__init__(str(error))
        self.error = error


def read_document(path: str) -> Any:
    """The data of a one-document YAML or JSON file (None when it is empty or only comments).

    Raises :class:`SideInputError` for an unreadable, special, oversized, binary or non-UTF-8
    file, invalid YAML/JSON, a duplicate key, excessive aliasing or nesting, a number too long,
    or more than one document.
    """
    raw, error = read_bytes(path)
    if error is not None:
        raise SideInputError(error)
    text, error = decode_text(raw or b"", path)
    if error is not None:
        raise SideInputError(error)
    return parse_document(text or "", path)


def parse_document(text: str, path: str) -> Any:
    """:func:`read_document` for text already in memory (``path`` names it in errors)."""
    text = text.replace("\r\n", "\n")
    stripped = text.lstrip()
    if path.endswith(".json") or stripped[:1] in ("{", "["):
        found = _parse_json(text, path)
        if found is not None or path.endswith(".json"):
            return found[0] if found else None
    documents = split_documents(text)
    if len(documents) > 1:
        raise SideInputError(
            LoadError(path, documents[1][0], f"expected one YAML document, found {len(documents)}")
        )
    if not documents:
        return None
    first_line, body = documents[0]
    try:
        return _load_document(body)[0]
    except DuplicateKeyError as exc:
        raise SideInputError(exc.load_error(path, first_line)) from None
    except yaml.YAMLError as exc:
        raise SideInputError(_yaml_error(exc, path, first_line, body)) from None
    except RecursionError:
        raise SideInputError(LoadError(path, first_line, f"invalid YAML: {limits.TOO_DEEP}")) from None


def _parse_json(text: str, path: str) -> tuple[Any] | None:
    """``(data,)`` of a JSON text; None when it is not JSON and the name does not say JSON."""
    strict = path.endswith(".json")
    buf = text.encode()
    try:
        data = msgspec.json.decode(buf)
    except msgspec.DecodeError as exc:
        if not strict:
            return None
        raise SideInputError(LoadError(path, 0, f"invalid JSON: {exc}")) from None
    except RecursionError:
        raise SideInputError(LoadError(path, 1, f"invalid JSON: {limits.TOO_DEEP}")) from None
    duplicate = json_duplicate(text, path)
    if duplicate is not None:
        raise SideInputError(duplicate)
    if not limits.json_depth_bounded(buf):
        problem = limits.check_tree(data, shared=False)
        if problem:
            raise SideInputError(LoadError(path, 1, f"invalid JSON: {problem}"))
    return (data,)
