"""Pod templates patched by a controller from a base template (RBG ``templateRef.patch``, leader /
worker template patches), with every patched field remembered for findings.

The controllers apply a strategic merge patch (k8s.io/apimachinery ``pkg/util/strategicpatch``):
maps merge key by key, lists whose items carry a merge key (``containers``, ``initContainers``,
``volumes``, ``env`` by ``name``; ``volumeMounts`` by ``mountPath``; ``ports`` by
``containerPort``, as ``patchMergeKey`` in k8s.io/api ``core/v1/types.go``) merge item by item,
other values are replaced. ``$patch`` directives are not modelled (the patched field is then
taken as written).

:func:`merge_template` returns the merged template and, for each field the patch supplied,
``(path in the template, path in the object)`` so :attr:`PodSet.overrides` points findings at the
patch line the user wrote, not at the base template.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.manifest import FieldPath

MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
}

Moves = list[tuple[FieldPath, FieldPath]]


def merge_template(base: Any, patch: Any, patch_path: FieldPath) -> tuple[dict, Moves]:
    """``base`` (a pod template) with ``patch`` merged in, and the fields the patch supplied."""
    moves: Moves = []
    merged = _merge(base if isinstance(base, dict) else {}, patch, (), patch_path, moves)
    return (merged if isinstance(merged, dict) else {}), moves


def _merge(base: Any, patch: Any, here: FieldPath, there: FieldPath, moves: Moves) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            if not isinstance(key, str) or key.startswith("$"):
                continue
            merge_key = MERGE_KEYS.get(key)
            if key in base and merge_key and isinstance(base[key], list) and isinstance(value, list):
                out[key] = _merge_list(base[key], value, merge_key, (*here, key), (*there, key), moves)
            elif key in base and isinstance(base[key], dict) and isinstance(value, dict):
                out[key] = _merge(base[key], value, (*here, key), (*there, key), moves)
            else:
                out[key] = value
                moves.append(((*here, key), (*there, key)))
        return out
    moves.append((here, there))
    return patch


def _merge_list(
    base: list, patch: list, merge_key: str, here: FieldPath, there: FieldPath, moves: Moves
) -> list:
    out = list(base)
    index = {item.get(merge_key): i for i, item in enumerate(base) if isinstance(item, dict)}
    for j, item in enumerate(patch):
        key = item.get(merge_key) if isinstance(item, dict) else None
        i = index.get(key) if key is not None else None
        if i is not None:
            out[i] = _merge(base[i], item, (*here, i), (*there, j), moves)
        else:
            out.append(item)
            moves.append(((*here, len(out) - 1), (*there, j)))
    return out
