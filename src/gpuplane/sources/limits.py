"""Bounds on hostile input: file size, nesting depth, alias expansion.

Why here and not in the engines: every engine walks objects recursively and
assumes a tree. A YAML alias bomb ("billion laughs") loads in microseconds with
PyYAML because aliased nodes are shared, but anything that walks or encodes the
result expands it; a recursive alias (``&a [*a]``) even makes a cycle. Nesting
past Python's recursion limit breaks every recursive walk. So each document is
checked once, right after loading, and rejected with one clear line.

Limits (documented in docs/architecture.md "Input limits"):

- File size: YAML and other manifest files up to 64 MiB, JSON up to 4096 MiB
  (JSON snapshots of big clusters are large and msgspec reads them at
  ~0.5-1 GB/s; PyYAML needs ~10x the file size in RAM and reads ~5 MB/s, so
  a 100 MB YAML file would take ~20 s and ~1 GB). ``GPUPLANE_MAX_FILE_MB``
  overrides both limits.
- Nesting depth: 256 levels (real Kubernetes objects, CRDs included, stay
  under ~40). LibYAML stops at 1000 levels by itself ("exceeded maximum
  nesting depth"), msgspec at Python's recursion limit.
- Alias expansion: the rule of the YAML decoder kubectl and the API server use
  (sigs.k8s.io/yaml -> go-yaml v2 ``decode.go``, ``allowedAliasRatio``): once
  more than 100 nodes come from alias expansion in a document of more than
  1000 decoded nodes, the share of alias-driven nodes may be at most 99% up to
  400,000 nodes, falling linearly to 10% at 4,000,000. go-yaml's message is
  "document contains excessive aliasing"; we use the same words.
"""

from __future__ import annotations

import os
import re
from typing import Any

MIB = 1024 * 1024
DEFAULT_MAX_YAML_MB = 64
DEFAULT_MAX_JSON_MB = 4096
MAX_FILE_ENV = "GPUPLANE_MAX_FILE_MB"
MAX_DEPTH = 256
# The problem every reader reports past MAX_DEPTH (after "invalid JSON: " / "invalid YAML: ").
TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"

# go-yaml v2 decode.go: alias_ratio_range_low / alias_ratio_range_high.
_ALIAS_RANGE_LOW = 400_000
_ALIAS_RANGE_HIGH = 4_000_000


# Longest line prefix of indentation and block indicators that still proves the depth bound.
_PREFIX_LIMIT = 100
_LONG_PREFIX = re.compile(rf"^[ \t?:-]{{{_PREFIX_LIMIT},}}", re.MULTILINE)
# Flow brackets allowed on top of the deepest possible block nesting.
_BRACKET_BUDGET = MAX_DEPTH - 2 * (_PREFIX_LIMIT + 2)


def yaml_depth_bounded(text: str) -> bool:
    """True when ``text`` cannot nest deeper than :data:`MAX_DEPTH`: no tree walk needed.

    Why this holds: a block collection nested in another starts further right, except a
    sequence that is a mapping value (it may share the key's indentation), so block
    nesting of depth d needs a line whose prefix of spaces and indicators (``-``, ``?``,
    ``:``) is at least d/2 - 1 long (compact ``- - x`` counts its indicators); flow
    nesting needs one ``[`` or ``{`` per level. No anchor or tag, no long prefix and few brackets bound
    the depth by 2 * (100 + 2) + brackets <= 256. A document that fails the test is
    walked (:func:`check_tree`); typical manifests pass it at the cost of two
    ``str.count`` and one regex search instead of a Python walk over every container.
    """
    if "&" in text or "!" in text:  # anchors and tags may sit before a node on its line
        return False
    if text.count("[") + text.count("{") > _BRACKET_BUDGET:
        return False
    return _LONG_PREFIX.search(text) is None


def json_depth_bounded(raw: bytes | str) -> bool:
    """True when JSON ``raw`` cannot nest deeper than :data:`MAX_DEPTH` (one bracket per level)."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{") < MAX_DEPTH
    return raw.count(b"[") + raw.count(b"{") < MAX_DEPTH


def max_file_bytes(is_json: bool) -> int:
    """The size limit for one input file; ``GPUPLANE_MAX_FILE_MB`` overrides the defaults."""
    override = os.environ.get(MAX_FILE_ENV, "").strip()
    if override:
        try:
            megabytes = float(override)
        except ValueError:
            megabytes = 0.0
        if megabytes > 0:
            return int(megabytes * MIB)
    return (DEFAULT_MAX_JSON_MB if is_json else DEFAULT_MAX_YAML_MB) * MIB


def size_error(size: int, is_json: bool) -> str:
    """The one-line message for a file over its size limit."""
    limit = max_file_bytes(is_json)
    what = "JSON" if is_json else "YAML"
    return (
        f"file is {size / MIB:.1f} MiB, over the {limit / MIB:g} MiB limit for {what} input "
        f"(set {MAX_FILE_ENV} to raise it)"
    )


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml v2's ``allowedAliasRatio``: the share of nodes that may come from aliases."""
    if decoded <= _ALIAS_RANGE_LOW:
        return 0.99
    if decoded >= _ALIAS_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decoded - _ALIAS_RANGE_LOW) / (_ALIAS_RANGE_HIGH - _ALIAS_RANGE_LOW))


def check_tree(data: Any, shared: bool) -> str | None:
    """Why ``data`` is unsafe to walk (too deep, cyclic, alias bomb), or None when it is fine.

    ``shared`` says the document may contain aliases (YAML text with ``*``):
    then containers can be shared or even cyclic, and the walk memoizes each
    container's expanded size and depth by ``id()`` so that a billion-laughs
    document costs as much as its unique nodes. Without aliases a plain
    iterative walk that only tracks depth is enough (and cheaper).
    """
    if not isinstance(data, dict | list):
        return None
    if not shared:
        return _check_depth(data)
    return _check_shared(data)


def _check_depth(root: dict[str, Any] | list[Any]) -> str | None:
    stack: list[tuple[Any, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > MAX_DEPTH:
            return TOO_DEEP
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                push((child, depth + 1))
    return None


def _check_shared(root: dict[str, Any] | list[Any]) -> str | None:
    # Post-order walk; per container: expanded node count and depth (memoized by id).
    expanded: dict[int, tuple[int, int]] = {}
    in_progress: set[int] = set()
    unique_nodes = 1  # the root
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            size, depth = 1, 1
            items = node.values() if isinstance(node, dict) else node
            if isinstance(node, dict):
                size += len(node)  # keys are decoded nodes too
            for child in items:
                if isinstance(child, dict | list):
                    child_size, child_depth = expanded[id(child)]
                    size += child_size
                    if child_depth + 1 > depth:
                        depth = child_depth + 1
                else:
                    size += 1
            in_progress.discard(key)
            expanded[key] = (size, depth)
            if depth > MAX_DEPTH:
                return TOO_DEEP
            continue
        if key in expanded:
            continue
        if key in in_progress:
            return "recursive alias: the document contains itself"
        in_progress.add(key)
        # Entries of each distinct container; a container counts itself as its parent's entry.
        unique_nodes += 2 * len(node) if isinstance(node, dict) else len(node)
        stack.append((node, True))
        items = node.values() if isinstance(node, dict) else node
        for child in items:
            if isinstance(child, dict | list):
                child_key = id(child)
                if child_key in in_progress:
                    return "recursive alias: the document contains itself"
                if child_key not in expanded:
                    stack.append((child, False))
    total, _ = expanded[id(root)]
    from_aliases = total - unique_nodes
    if from_aliases > 100 and total > 1000 and from_aliases / total > allowed_alias_ratio(total):
        return f"document contains excessive aliasing ({total:,} nodes after alias expansion)"
    return None
