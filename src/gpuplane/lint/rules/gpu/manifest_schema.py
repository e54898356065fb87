"""Rule ``manifest-unknown-field``: a field the Kubernetes API does not define, in a GPU workload.

Why a rule: a misspelt field (``allowPrivilegedEscalation`` for ``allowPrivilegeEscalation``,
seen in karpenter-provider-aws ``examples/workloads/mig-nvidia.yaml``) is rejected by
``kubectl apply`` (which asks for strict server-side field validation since 1.27), but Helm
and client-go without strict validation send it and the API server drops it silently: the
setting the author meant does nothing, and nothing says so.

How: the built-in workload kinds that run GPUs (``ctx.gpu_podsets()`` sources) are validated
against the strict schemas kubernetes-validate bundles (``additionalProperties: false``) by
:func:`unknown_fields`, a walk of the schema's ``properties``/``items``/``$ref`` that needs no
compiled validator (compiling one was half of a one-file lint's start-up, issue 14 item 4).
Only unknown fields are reported; fields of a wrong type are ``pod-template-invalid``'s job.

Wording: the API server's strict decoder (k8s.io/apimachinery
``pkg/runtime/serializer/json``, ``strict decoding error: unknown field "<path>"``) wrapped in
``transformDecodeError`` (k8s.io/apiserver ``pkg/endpoints/handlers/rest.go``: ``<Kind> in
version "<version>" cannot be handled as a <Kind>: <error>``), as kubectl prints it, e.g.
kubernetes/website#52675: ``Deployment in version "v1" cannot be handled as a Deployment:
strict decoding error: unknown field "spec.template.spec.initContainers[0].restartPolicy"``.

"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import obj_label
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext
    from gpuplane.sources.manifest import FieldPath


# Built-in workload kinds checked: (group, kind).
_KINDS = frozenset(
    {
        ("", "Pod"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("batch", "Job"),
        ("batch", "CronJob"),
    }
)
_BUNDLED = LazyPattern(r"^v1\.(\d+)\.0-local-strict$")
_REF = LazyPattern(r"^(?:/api/_definitions\.json)?#/\$defs/(.+)$")


@lru_cache(maxsize=1)
def _bundled_minors() -> tuple[int, ...]:
    """Kubernetes minors (1.x) whose strict schemas kubernetes-validate bundles."""
    from gpuplane.generate.schema_files import schema_root  # deferred for start-up time

    try:
        names = os.listdir(schema_root())
    except OSError:
        return ()
    return tuple(sorted(int(m.group(1)) for n in names if (m := _BUNDLED.match(n))))


def _target_version(ctx: LintContext) -> str | None:
    """The cluster's minor when known (clamped to the bundled range), else the newest bundled
    minor gpuplane's scheduler wording knows."""
    from gpuplane.k8s.versions import NEWEST_MINOR, parse_minor  # deferred for start-up time

    bundled = _bundled_minors()
    if not bundled:
        return None
    minor = parse_minor(ctx.cluster.kubernetes_version()) if ctx.cluster is not None else None
    if minor is None:
        known = [m for m in bundled if m <= NEWEST_MINOR]
        minor = known[-1] if known else bundled[-1]
    minor = min(max(minor, bundled[0]), bundled[-1])
    return f"1.{minor}"


def _read_json(path: str) -> Any:
    with open(path, "rb") as handle:
        return json.loads(handle.read())


@lru_cache(maxsize=4)
def _definitions(version: str) -> dict[str, Any]:
    from gpuplane.generate.schema_files import schema_dir  # deferred for start-up time

    return _read_json(os.path.join(schema_dir(version), "_definitions.json"))["$defs"]


def _kind_schema(version: str, kind: str, api_version: str) -> dict[str, Any] | None:
    from gpuplane.generate.schema_files import schema_dir  # deferred for start-up time

    group, _, ver = api_version.rpartition("/")
    stem = f"{kind.lower()}-{group.split('.')[0]}-{ver}" if group else f"{kind.lower()}-{ver}"
    try:
        return _read_json(os.path.join(schema_dir(version), f"{stem}.json"))
    except (OSError, ValueError):
        return None


def _strip(schema: Any) -> Any:
    """The parts of a schema :func:`unknown_fields` reads: ``$ref``, ``properties``, ``items``,
    ``additionalProperties`` (descriptions, types and enums are most of the bytes)."""
    if not isinstance(schema, dict):
        return None
    out: dict[str, Any] = {}
    if isinstance(schema.get("$ref"), str):
        out["$ref"] = schema["$ref"]
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _strip(v) or {} for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = _strip(schema["items"])
    extra = schema.get("additionalProperties")
    if extra is False or isinstance(extra, dict):
        out["additionalProperties"] = extra if extra is False else _strip(extra)
    return out


def _build_skeleton(version: str, kind: str, api_version: str) -> dict[str, Any] | None:
    root = _kind_schema(version, kind, api_version)
    if root is None:
        return None
    defs = _definitions(version)
    kept: dict[str, Any] = {}
    todo = [_strip(root)]
    skeleton = {"root": todo[0], "defs": kept}
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        ref = _REF.match(node["$ref"]) if "$ref" in node else None
        if ref and ref.group(1) not in kept and ref.group(1) in defs:
            kept[ref.group(1)] = stripped = _strip(defs[ref.group(1)])
            todo.append(stripped)
        todo.extend((node.get("properties") or {}).values())
        todo.extend(v for k, v in node.items() if k in ("items", "additionalProperties"))
    return skeleton


@lru_cache(maxsize=32)
def _skeleton(version: str, kind: str, api_version: str) -> tuple[Any, dict[str, Any]] | None:
    """``(kind schema, the definitions it reaches)``, stripped by :func:`_strip`: for a Pod about
    5% of the 1.3 MB of bundled definitions, kept in the cache folder so that a one-file lint
    does not parse all of them each run (issue 14 item 4). The cache file is named after the
    bundled definitions' path, size and time, so another kubernetes-validate rebuilds it."""
    from gpuplane.cache import cache_dir, write_atomically  # deferred for start-up time
    from gpuplane.generate.schema_files import schema_dir

    source = os.path.join(schema_dir(version), "_definitions.json")
    folder = cache_dir()
    path = None
    try:
        stat = os.stat(source)
    except OSError:
        return None
    if folder is not None:
        key = zlib.crc32(f"{source}\0{stat.st_size}\0{stat.st_mtime_ns}\0{kind}\0{api_version}".encode())
        path = os.path.join(folder, f"schema-skeleton-{version}-{key:08x}.json")
        try:
            doc = _read_json(path)
            return doc["root"], doc["defs"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    built = _build_skeleton(version, kind, api_version)
    if built is None:
        return None
    if path is not None:
        with contextlib.suppress(OSError):  # an unwritable cache only costs the next run time
            write_atomically(path, json.dumps(built, separators=(",", ":")).encode())
    return built["root"], built["defs"]


def _known_fields(version: str, kind: str, api_version: str, path: FieldPath) -> list[str]:
    """Property names the schema defines for the object at ``path`` (for suggestions)."""
    found = _skeleton(version, kind, api_version)
    if found is None:
        return []
    schema, defs = found
    for step in (*path, None):
        seen = 0
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
            ref = _REF.match(schema["$ref"])
            schema = defs.get(ref.group(1)) if ref else None
            seen += 1
        if not isinstance(schema, dict) or step is None:
            break
        schema = schema.get("items") if isinstance(step, int) else (schema.get("properties") or {}).get(step)
    props = schema.get("properties") if isinstance(schema, dict) else None
    return list(props) if isinstance(props, dict) else []


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
        ref = _REF.match(schema["$ref"])
        schema = defs.get(ref.group(1)) if ref else None
        seen += 1
    return schema


def unknown_fields(
    data: Any, schema: Any, defs: dict[str, Any], path: FieldPath = (), memo: _Shapes | None = None
) -> Iterator[tuple[FieldPath, list[str]]]:
    """``(object path, [unknown keys])`` wherever ``data`` has keys its strict schema forbids,
    depth first in the data's key order.

    This is JSON Schema's ``additionalProperties: false`` over ``properties``, ``items``,
    ``additionalProperties`` schemas (maps) and ``$ref``, the only keywords of the bundled
    strict schemas that reach nested objects (``oneOf`` there is int-or-string only), so it
    finds what a compiled validator's AdditionalProperties errors find (tests/lint/rules
    compare it with jsonschema-rs) without compiling 1.3 MB of definitions for each run.

    ``memo`` keeps each schema node's resolved parts for a whole run: diagnose walks every GPU
    pod of a snapshot, and the same few dozen nodes (container, resources, metadata) would
    otherwise have their ``$ref`` chains matched again at every level of every pod.
    """
    found: list[tuple[FieldPath, list[str]]] = []
    _walk_unknown(data, schema, defs, path, {} if memo is None else memo, found)
    return iter(found)


# A schema node's resolved parts: ``(properties, additionalProperties, items)``, or None when it
# resolves to no schema. Keyed by the node's id, the node kept beside its parts so a recycled
# id (a skeleton evicted from its cache mid-run) is never mistaken for it.
_Shape = tuple[dict[str, Any], Any, Any]
_Shapes = dict[int, tuple[Any, _Shape | None]]


def _shape(schema: Any, defs: dict[str, Any], memo: _Shapes) -> _Shape | None:
    entry = memo.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    resolved = _resolve(schema, defs)
    shape: _Shape | None = None
    if isinstance(resolved, dict):
        props = resolved.get("properties")
        items = resolved.get("items")
        shape = (
            props if isinstance(props, dict) else {},
            resolved.get("additionalProperties", True),
            items if isinstance(items, dict) else None,
        )
    memo[id(schema)] = (schema, shape)
    return shape


def _walk_unknown(
    data: Any,
    schema: Any,
    defs: dict[str, Any],
    path: FieldPath,
    memo: _Shapes,
    found: list[tuple[FieldPath, list[str]]],
) -> None:
    shape = _shape(schema, defs, memo)
    if shape is None:
        return
    props, extra, items = shape
    if isinstance(data, dict):
        if extra is False:
            unexpected = [k for k in data if k not in props]
            if unexpected:
                found.append((path, [str(k) for k in unexpected]))
        for key, value in data.items():
            if isinstance(value, dict | list):
                sub = props.get(key) if key in props else (extra if isinstance(extra, dict) else None)
                if sub is not None:
                    _walk_unknown(value, sub, defs, (*path, key), memo, found)
    elif isinstance(data, list) and items is not None:
        for i, value in enumerate(data):
            if isinstance(value, dict | list):
                _walk_unknown(value, items, defs, (*path, i), memo, found)


def _dotted(path: FieldPath) -> str:
    """``spec.template.spec.containers[0].securityContext.x``: a field path as the API server prints it."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


@rule(
    id="manifest-unknown-field",
    severity="error",
    category="gpu",
    context="optional",
    summary="GPU workload field the Kubernetes API does not define (strict validation rejects it, "
    "Helm drops it silently)",
)
def manifest_unknown_field(ctx: LintContext) -> Iterator[Finding]:
    sources = []
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        src = ps.source
        if ps.synthetic or ps.template_source is not None or (src.group, src.kind) not in _KINDS:
            continue
        if id(src) not in seen:
            seen.add(id(src))
            sources.append(src)
    if not sources:
        return
    version = _target_version(ctx)
    if version is None:
        return
    memo: _Shapes = {}  # one per run: every pod of a snapshot walks the same schema nodes
    for src in sources:
        found = _skeleton(version, src.kind, src.api_version)
        if found is None:
            continue
        schema, defs = found
        errors = list(unknown_fields(src.data, schema, defs, memo=memo))
        label = obj_label(src)
        api = src.api_version.rsplit("/", 1)[-1]
        for parent, names in errors:
            from difflib import get_close_matches  # deferred for start-up time: only findings need it

            known = _known_fields(version, src.kind, src.api_version, parent)
            for name in names:
                path = (*parent, name)
                shown = _dotted(path)
                quoted = (
                    f'{src.kind} in version "{api}" cannot be handled as a {src.kind}: strict decoding '
                    f'error: unknown field "{shown}"'
                )
                close = get_close_matches(name, known, n=1, cutoff=0.6)
                where = _dotted(parent) or "the object"
                fix = (
                    f"rename {shown} to {close[0]}"
                    if close
                    else f"remove {shown} or move it where the API defines it (fields of {where}: "
                    f"{', '.join(sorted(known)) or 'none'})"
                )
                yield ctx.report(
                    src,
                    path,
                    f"{label}: {shown} is not a field of {src.kind} (Kubernetes {version} API): kubectl apply "
                    f'rejects it with strict field validation: "{quoted}". Helm and client-go without strict '
                    "validation drop it silently, so the setting does nothing.",
                    fix,
                )
