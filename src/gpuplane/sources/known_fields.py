"""Drop the fields a built-in Kubernetes kind does not define, for the snapshot allow-list.

Why: the snapshot keeps whole objects of the kinds the engines read, so a string put under a
field the API does not know (``spec.template.spec.containers[0].dbPassword``, an unknown key
under ``metadata``, ``status.x``) would still reach a shared file. The API server drops such
fields itself on create (non-strict decoding), so nothing an engine reads from a real cluster
lives there; what the kind's schema defines is the allow-list of its fields.

How: the strict OpenAPI schemas kubernetes-validate bundles (newest bundled minor, a superset
of the older ones' fields) are walked along the object: a mapping whose schema lists
``properties`` keeps only those keys (and the values its ``additionalProperties`` types, e.g.
labels, resource lists); lists follow ``items``; a free-form value (no ``properties`` nor
``additionalProperties``) is kept as it is. Only objects whose ``apiVersion`` is one the schema
names are pruned, so a custom resource that shares a kind name (Volcano's ``Job``, the
scheduler-plugins ``PodGroup``) never meets a built-in schema. Without kubernetes-validate's
data nothing is pruned (the per-field redaction still applies).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

_REF = re.compile(r"^(?:/api/_definitions\.json)?#/\$defs/(.+)$")
_STRICT = re.compile(r"^v1\.(\d+)\.0-local-strict$")


@lru_cache(maxsize=1)
def _schema_dir() -> Path | None:
    """The newest strict schema folder kubernetes-validate bundles (found without importing it)."""
    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    try:
        minors = [(int(m.group(1)), p) for p in root.iterdir() if (m := _STRICT.match(p.name))]
    except OSError:
        return None
    return max(minors)[1] if minors else None


@lru_cache(maxsize=1)
def _definitions() -> dict[str, Any]:
    folder = _schema_dir()
    if folder is None:
        return {}
    try:
        defs = json.loads((folder / "_definitions.json").read_text(encoding="utf-8"))["$defs"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return defs if isinstance(defs, dict) else {}


@lru_cache(maxsize=128)
def _kind_schema(kind: str, api_version: str) -> dict[str, Any] | None:
    """The schema of ``kind`` in ``api_version`` when it is a built-in kind, else None."""
    folder = _schema_dir()
    if folder is None or not kind.isalnum():
        return None
    group, _, version = api_version.rpartition("/")
    stem = f"{kind.lower()}-{group.split('.')[0]}-{version}" if group else f"{kind.lower()}-{version}"
    try:
        schema = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    versions = ((schema.get("properties") or {}).get("apiVersion") or {}).get("enum") or []
    return schema if api_version in versions else None


def _resolve(schema: Any) -> Any:
    defs = _definitions()
    for _ in range(32):
        if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
            return schema
        found = _REF.match(schema["$ref"])
        schema = defs.get(found.group(1)) if found else None
    return None


POD_TEMPLATE = {"$ref": "#/$defs/io.k8s.api.core.v1.PodTemplateSpec"}


def prune_unknown_fields(obj: dict[str, Any]) -> int:
    """Remove, in place, every field of a built-in object its kind's schema does not define, and
    in any other object every unknown field of the pod templates it embeds; the number removed."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return 0
    schema = _kind_schema(kind, api_version)
    if schema is not None:
        return _prune(obj, schema)
    return sum(_prune(template, POD_TEMPLATE) for template in _pod_templates(obj))


def _pod_templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod templates a custom resource embeds at any depth: a mapping under some key whose
    ``spec`` has a ``containers`` list (Kubeflow ``replicaSpecs.*.template``, JobSet, KubeRay
    ``headGroupSpec.template``, LeaderWorkerSet ``workerTemplate`` ...)."""
    found: list[dict[str, Any]] = []
    stack: list[Any] = [obj.get("spec")]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            spec = value.get("spec")
            if (
                isinstance(spec, dict)
                and isinstance(spec.get("containers"), list)
                and set(value)
                <= {
                    "metadata",
                    "spec",
                }
            ):
                found.append(value)
                continue
            stack.extend(value.values())
    return found


def _prune(root: Any, schema: Any) -> int:
    removed = 0
    stack: list[tuple[Any, Any]] = [(root, schema)]
    while stack:
        value, node = stack.pop()
        node = _resolve(node)
        if not isinstance(node, dict):
            continue
        if isinstance(value, dict):
            props = node.get("properties")
            extra = node.get("additionalProperties")
            if not isinstance(props, dict) and not isinstance(extra, dict):
                continue  # free-form (RawExtension, JSON): nothing to check against
            props = props if isinstance(props, dict) else {}
            for key in list(value):
                child = props.get(key) if isinstance(key, str) else None
                if child is None and isinstance(extra, dict):
                    child = extra
                if child is None:
                    del value[key]
                    removed += 1
                elif isinstance(value[key], dict | list):
                    stack.append((value[key], child))
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            stack.extend((item, node["items"]) for item in value if isinstance(item, dict | list))
    return removed
