"""Typed readers of manifest fields: one family, one contract, for every layer.

Manifests are plain dicts whose fields may hold anything a user wrote. Every reader here returns
the field when it has the type the API server decodes it as, else the caller's default, and never
raises. The contract follows what the API server accepts (kubectl converts YAML to JSON with
sigs.k8s.io/yaml, the API server decodes JSON with sigs.k8s.io/json):

- an integer field (``replicas``, ``parallelism``, ``minAvailable`` ...) is a JSON number with an
  integer value: ``3``, and ``3.0`` (YAML's float becomes ``3`` when kubectl marshals it to JSON).
  A string is not a number: ``replicas: "3"`` is refused by the API server (``cannot unmarshal
  string into Go struct field ... of type int32``), so no reader counts it as 3; a YAML boolean is
  not an integer either, although Python's ``bool`` is an ``int``.
- annotation and label values are strings by type (``map[string]string``): a count written there
  (``kueue.x-k8s.io/pod-group-total-count: "4"``) is read with :func:`annotation_int`.
"""

from __future__ import annotations

from typing import Any, TypeVar

_D = TypeVar("_D")


def as_dict(value: Any) -> dict[Any, Any]:
    """``value`` when it is a mapping, else an empty dict (do not mutate the result)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a sequence, else an empty list (do not mutate the result)."""
    return value if isinstance(value, list) else []


def as_int(value: Any, default: _D) -> int | _D:
    """An integer field (a number with an integer value, not a bool, not a string), else ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def as_str(value: Any, default: _D = None) -> str | _D:  # type: ignore[assignment]
    """A non-empty string field, else ``default`` (an empty name is no name)."""
    return value if isinstance(value, str) and value else default


def annotation_int(value: Any) -> int | None:
    """A count written in an annotation or label value (strings by type): ``"4"`` -> 4."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return as_int(value, None)


def child(node: Any, step: str | int) -> Any:
    """One step down a manifest: a mapping's value by name, a list's item by in-range index;
    None when the step is missing or does not fit the node (a name on a list, an index on a mapping)."""
    if isinstance(step, int):
        return node[step] if isinstance(node, list) and 0 <= step < len(node) else None
    return node.get(step) if isinstance(node, dict) else None


def dig(data: Any, *path: str | int) -> Any:
    """Walk nested dicts/lists with :func:`child`; None when a step is missing or mistyped."""
    node = data
    for step in path:
        node = child(node, step)
        if node is None:
            return None
    return node
