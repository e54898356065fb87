"""Unrendered template placeholders in manifest fields (``${VAR}``, ``$VAR``, ``{{ ... }}``).

Files meant for ``envsubst``, Helm or Kustomize replacements are often linted before they are
rendered. Their placeholder fields are not wrong: they are not known yet. Rules must not judge
them (a placeholder where the API wants an integer is no type error), and the object is analysed
only in part (``manifest-unrendered-template`` says which fields were skipped).

Shell text is not a template: ``command``/``args`` (scripts: ``$HOME``, ``${RANK}``), ConfigMap and
Secret ``data``, and annotations (other tools' own templates) are not read; nor is the server's
``metadata.managedFields``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from gpuplane.sources.manifest import FieldPath, Manifest

# ${VAR} / ${VAR:-default} anywhere (envsubst, Terraform templatefile, Flux postBuild), a whole value
# that is $VAR, and Go-template actions {{ ... }} (Helm, gomplate).
_PLACEHOLDER = re.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:?+=-][^}]*)?\}|^\$[A-Za-z_][A-Za-z0-9_]*$|\{\{.*?\}\}"
)
# managedFields (the API server's record of who wrote which field: keys and empty maps only,
# about a third of each object of a kubectl dump) holds no value a template could have written.
_NOT_TEMPLATES = frozenset({"command", "args", "annotations", "managedFields"})
_DATA_KINDS = frozenset({"ConfigMap", "Secret"})
MAX_LISTED = 5


def is_placeholder(value: Any) -> bool:
    """A string holding an unrendered placeholder."""
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None


def _walk(value: Any, path: FieldPath) -> Iterator[FieldPath]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _NOT_TEMPLATES:
                continue
            if isinstance(key, str) and _PLACEHOLDER.search(key):
                yield (*path, key)
                continue
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, i))
    elif is_placeholder(value):
        yield path


def _may_hold_placeholder(data: Any) -> bool:
    """False when no string of ``data`` can hold a placeholder: one pass of a C encoder instead of
    a Python walk of every field (diagnose lints every object of a 100,000-pod snapshot)."""
    # msgspec (5x faster) when the cluster loader already imported it; never imported here, so a
    # one-file lint keeps its start-up (tests/test_startup_imports.py)
    fast = sys.modules.get("msgspec")
    try:
        if fast is not None:
            text = fast.json.encode(data)
        else:
            text = json.dumps(data, ensure_ascii=False, check_circular=False).encode()
    except Exception:  # not plain JSON data (YAML timestamps, odd keys, deep nesting): walk it
        return True
    # Every placeholder puts one of these in the object's JSON text: ``${``, ``{{``, or a string
    # that starts with ``$`` (its opening quote then ``$``); JSON escapes none of ``$``, ``{`` or
    # ``"``-free text. ``$`` first: one memchr pass rules out two of the three in most objects.
    return (b"$" in text and (b"${" in text or b'"$' in text)) or b"{{" in text


def placeholder_fields(obj: Manifest) -> list[FieldPath]:
    """Every field of ``obj`` whose key or value is an unrendered placeholder."""
    data = obj.data
    if obj.kind in _DATA_KINDS:
        data = {k: v for k, v in data.items() if k not in ("data", "stringData", "binaryData")}
    if not _may_hold_placeholder(data):
        return []
    return list(_walk(data, ()))


def under_placeholder(fields: list[FieldPath], path: FieldPath) -> bool:
    """``path`` is one of ``fields`` (placeholders) or lies inside one."""
    return any(tuple(path[: len(field)]) == tuple(field) for field in fields)
