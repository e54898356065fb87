"""Rule ``manifest-unknown-field``: a field the Kubernetes API does not define, in a GPU workload.

Why a rule: a misspelt field (``allowPrivilegedEscalation`` for ``allowPrivilegeEscalation``,
seen in karpenter-provider-aws ``examples/workloads/mig-nvidia.yaml``) is rejected by
``kubectl apply`` (which asks for strict server-side field validation since 1.27), but Helm
and client-go without strict validation send it and the API server drops it silently: the
setting the author meant does nothing, and nothing says so.

How: the built-in workload kinds that run GPUs (``ctx.gpu_podsets()`` sources) are validated
against the strict schemas kubernetes-validate bundles (``additionalProperties: false``) with
the jsonschema-rs validators of :mod:`gpuplane.generate.validate` (compiled once per
(version, kind)). Only ``additionalProperties`` violations are reported; fields of a wrong
type are ``pod-template-invalid``'s job.

Wording: the API server's strict decoder (k8s.io/apimachinery
``pkg/runtime/serializer/json``, ``strict decoding error: unknown field "<path>"``) wrapped in
``transformDecodeError`` (k8s.io/apiserver ``pkg/endpoints/handlers/rest.go``: ``<Kind> in
version "<version>" cannot be handled as a <Kind>: <error>``), as kubectl prints it, e.g.
kubernetes/website#52675: ``Deployment in version "v1" cannot be handled as a Deployment:
strict decoding error: unknown field "spec.template.spec.initContainers[0].restartPolicy"``.

"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
_BUNDLED = re.compile(r"^v1\.(\d+)\.0-local-strict$")
_REF = re.compile(r"^(?:/api/_definitions\.json)?#/\$defs/(.+)$")


@lru_cache(maxsize=1)
def _bundled_minors() -> tuple[int, ...]:
    """Kubernetes minors (1.x) whose strict schemas kubernetes-validate bundles."""
    from gpuplane.generate.validate import _schema_dir  # deferred for start-up time

    base = _schema_dir("1.0").parent
    try:
        names = [p.name for p in base.iterdir()]
    except OSError:
        return ()
    return tuple(sorted(int(m.group(1)) for n in names if (m := _BUNDLED.match(n))))


def _target_version(ctx: LintContext) -> str | None:
    """The cluster's minor when known (clamped to the bundled range), else the newest bundled
    minor gpuplane's scheduler wording knows."""
    from gpuplane.scheduler.versions import NEWEST_MINOR, parse_minor  # deferred for start-up time

    bundled = _bundled_minors()
    if not bundled:
        return None
    minor = parse_minor(ctx.cluster.kubernetes_version()) if ctx.cluster is not None else None
    if minor is None:
        known = [m for m in bundled if m <= NEWEST_MINOR]
        minor = known[-1] if known else bundled[-1]
    minor = min(max(minor, bundled[0]), bundled[-1])
    return f"1.{minor}"


@lru_cache(maxsize=4)
def _definitions(version: str) -> dict[str, Any]:
    from gpuplane.generate.validate import _schema_dir  # deferred for start-up time

    return json.loads((_schema_dir(version) / "_definitions.json").read_text())["$defs"]


def _kind_schema(version: str, kind: str, api_version: str) -> dict[str, Any] | None:
    from gpuplane.generate.validate import _schema_dir  # deferred for start-up time

    group, _, ver = api_version.rpartition("/")
    stem = f"{kind.lower()}-{group.split('.')[0]}-{ver}" if group else f"{kind.lower()}-{ver}"
    path: Path = _schema_dir(version) / f"{stem}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _known_fields(version: str, kind: str, api_version: str, path: FieldPath) -> list[str]:
    """Property names the schema defines for the object at ``path`` (for suggestions)."""
    schema = _kind_schema(version, kind, api_version)
    defs = _definitions(version)
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
    import jsonschema_rs  # deferred for start-up time

    from gpuplane.generate.validate import _core_validator

    additional = jsonschema_rs.ValidationErrorKind.AdditionalProperties
    for src in sources:
        validator = _core_validator(version, src.kind, src.api_version)
        if validator is None:
            continue
        data = src.data
        try:
            if validator.is_valid(data):
                continue
        except (ValueError, TypeError):
            # a value JSON has no type for (a YAML date, a non-string key): validate its JSON form
            try:
                data = json.loads(json.dumps(data, default=str))
            except (ValueError, TypeError):
                continue
        errors = [
            (tuple(e.instance_path), list(e.kind.unexpected))
            for e in validator.iter_errors(data)
            if isinstance(e.kind, additional)
        ]
        label = obj_label(src)
        api = src.api_version.rsplit("/", 1)[-1]
        for parent, names in errors:
            known = _known_fields(version, src.kind, src.api_version, parent)
            for name in names:
                path = (*parent, name)
                shown = _dotted(path)
                quoted = (
                    f'{src.kind} in version "{api}" cannot be handled as a {src.kind}: strict decoding '
                    f'error: unknown field "{shown}"'
                )
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
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
