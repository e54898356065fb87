"""Rule ``pod-template-invalid``: pod template fields of a type the API server rejects.

Why a rule: every engine reads a workload's pods through ``PodSet.pod()`` (the typed
:class:`gpuplane.k8s.objects.Pod`), which drops a field of the wrong type and records why in
``PodSet.pod_error`` so one bad field does not hide the rest of the template. Without this
rule that drop is silent: the other rules, the scheduler model and simulate judge a pod the
API server would never create.

Wording: the API server decodes built-in kinds with ``sigs.k8s.io/json`` (encoding/json's
``UnmarshalTypeError``: ``json: cannot unmarshal <json type> into Go struct field
<Struct>.<json path> of type <Go type>``) and wraps the error in
``transformDecodeError`` (k8s.io/apiserver ``pkg/endpoints/handlers/rest.go``:
``<Kind> in version "<version>" cannot be handled as a <Kind>: <error>``). That text is
quoted where the Go struct and type of the field are known for certain; custom resources
are checked against their CRD's schema instead, with other wording.

"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from gpuplane.k8s.objects import Pod
from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import obj_label, where
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext


# One msgspec validation error: "<detail> - at `$<path>`" (model.py joins several with "; ").
_ERROR = LazyPattern(r"(?:^|; )(.*?) - at `\$((?:\.[^.\[`]+|\[\d+\]|\[\.\.\.\])*)`")
_STEP = LazyPattern(r"\.([^.\[`]+)|\[(\d+)\]|(\[\.\.\.\])")
_TYPE_ERROR = LazyPattern(r"^Expected `([^`]+)`, got `(\w+)`$")
_MISSING = LazyPattern(r"^Object missing required field `([^`]+)`$")

# Built-in kinds the API server decodes into Go structs (k8s.io/api core/v1, apps/v1, batch/v1):
# (group, kind) -> (struct holding ``template``, struct at the template root). A bare Pod has
# no owner struct: its root is the Pod itself.
_BUILTIN_STRUCTS = {
    ("", "Pod"): (None, "Pod"),
    ("", "ReplicationController"): ("ReplicationControllerSpec", "PodTemplateSpec"),
    ("apps", "Deployment"): ("DeploymentSpec", "PodTemplateSpec"),
    ("apps", "ReplicaSet"): ("ReplicaSetSpec", "PodTemplateSpec"),
    ("apps", "StatefulSet"): ("StatefulSetSpec", "PodTemplateSpec"),
    ("apps", "DaemonSet"): ("DaemonSetSpec", "PodTemplateSpec"),
    ("batch", "Job"): ("JobSpec", "PodTemplateSpec"),
    ("batch", "CronJob"): ("JobSpec", "PodTemplateSpec"),
}
# Typed-model structs whose name and fields are those of the k8s.io/api/core/v1 struct
# (PodAffinity also stands for PodAntiAffinity, Volume inlines VolumeSource, the volume
# sources and ResourceClaimRef have other Go names: their errors are quoted without wording).
_GO_STRUCTS = frozenset(
    {
        "ObjectMeta",
        "LabelSelectorRequirement",
        "LabelSelector",
        "NodeSelectorRequirement",
        "NodeSelectorTerm",
        "NodeSelector",
        "PreferredSchedulingTerm",
        "NodeAffinity",
        "PodAffinityTerm",
        "WeightedPodAffinityTerm",
        "Affinity",
        "Toleration",
        "TopologySpreadConstraint",
        "ResourceRequirements",
        "ContainerPort",
        "EnvVar",
        "VolumeMount",
        "Container",
        "PodResourceClaim",
        "PodSchedulingGate",
        "PodSpec",
    }
)
# Go type names that are certain even where the struct's fields are not (Volume inlines VolumeSource).
_GO_TYPE_NAMES = _GO_STRUCTS | {"Volume"}
# msgspec's names of JSON value types -> encoding/json's (UnmarshalTypeError.Value).
_JSON_VALUE = {
    "str": "string",
    "int": "number",
    "float": "number",
    "bool": "bool",
    "array": "array",
    "object": "object",
}
# msgspec's type names -> the words a finding uses.
_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "array": "a list",
    "object": "a map",
}


def _steps(path: str) -> tuple[tuple[str | int, ...], bool]:
    """Field steps of a msgspec ``$`` path and whether it ended at some value of a map (``[...]``)."""
    out: list[str | int] = []
    for name, index, any_key in _STEP.findall(path):
        if any_key:
            return tuple(out), True
        out.append(name if name else int(index))
    return tuple(out), False


def _errors(pod_error: str) -> list[tuple[str, tuple[str | int, ...], bool]]:
    """``(detail, steps, map value)`` of each error, without the ones the repair caused: after a
    bad field is dropped, its parent may miss a required field (the path is then a prefix of
    the previous error's path)."""
    out: list[tuple[str, tuple[str | int, ...], bool]] = []
    for detail, path in _ERROR.findall(pod_error):
        steps, map_value = _steps(path)
        if out and out[-1][1][: len(steps)] == steps and _MISSING.match(detail):
            continue
        out.append((detail, steps, map_value))
    return out


def _field_types(cls: Any) -> dict[str, Any]:
    """Wire name -> annotated type of a msgspec struct's fields."""
    return {f.encode_name: f.type for f in msgspec.structs.fields(cls)}


def _unwrap(tp: Any) -> Any:
    """``X | None`` -> ``X`` (a Go pointer: the decoder reports the pointed-to type)."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _go_type(tp: Any) -> str | None:
    """Go type name of an annotated model type, where it is certain (None otherwise)."""
    tp = _unwrap(tp)
    if tp is str:
        return "string"
    if tp is bool:
        return "bool"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args:
        inner = _go_type(args[0])
        return f"[]{inner}" if inner else None
    if origin is dict and args == (str, str):
        return "map[string]string"
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct) and tp.__name__ in _GO_TYPE_NAMES:
        return f"v1.{tp.__name__}"
    return None


def _go_field(root: str, steps: tuple[str | int, ...]) -> tuple[str, str] | None:
    """``(Go struct, Go type)`` of the field at ``steps`` of a template, when both are certain."""
    struct_name, field_type = root, None
    current: type[msgspec.Struct] | None = Pod
    for step in steps:
        if isinstance(step, int):
            tp = _unwrap(field_type)
            if typing.get_origin(tp) is not list:
                return None
            field_type = typing.get_args(tp)[0]
            continue
        if current is None:
            return None
        if current is not Pod:
            struct_name = current.__name__
            if struct_name not in _GO_STRUCTS:
                return None
        field_type = _field_types(current).get(step)
        if field_type is None:
            return None
        inner = _unwrap(field_type)
        origin = typing.get_origin(inner)
        element = typing.get_args(inner)[0] if origin is list and typing.get_args(inner) else inner
        current = element if isinstance(element, type) and issubclass(element, msgspec.Struct) else None
    go_type = _go_type(field_type) if field_type is not None else None
    return (struct_name, go_type) if go_type else None


def _api_wording(ps: PodSet, steps: tuple[str | int, ...], detail: str) -> str | None:
    """The API server's decode error for a type error in a built-in kind's template, else None."""
    src = ps.source
    root = _BUILTIN_STRUCTS.get((src.group, src.kind), (None, None))[1]
    match = _TYPE_ERROR.match(detail)
    if root is None or match is None or ps.synthetic or not steps:
        return None
    value = _JSON_VALUE.get(match.group(2))
    found = _go_field(root, steps)
    if value is None or found is None:
        return None
    struct_name, go_type = found
    json_path = ".".join(str(s) for s in (*ps.template_path, *steps) if isinstance(s, str))
    version = src.api_version.rsplit("/", 1)[-1]
    return (
        f'{src.kind} in version "{version}" cannot be handled as a {src.kind}: json: cannot unmarshal '
        f"{value} into Go struct field {struct_name}.{json_path} of type {go_type}"
    )


def _dotted(path: FieldPath) -> str:
    """``spec.template.spec.containers[0].env[0].name``: a field path as the API server prints it."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _describe(detail: str, shown: str, map_value: bool) -> tuple[str, str]:
    """What is wrong with the field at ``shown``, and the fix."""
    match = _TYPE_ERROR.match(detail)
    if match:
        expected = " or ".join(_TYPE_WORDS.get(t, t) for t in match.group(1).split(" | ") if t != "null")
        got = _TYPE_WORDS.get(match.group(2), match.group(2))
        if map_value:
            return f"holds {got} where the API expects {expected}", f"make every value of {shown} {expected}"
        return f"is {got} where the API expects {expected}", f"make {shown} {expected}"
    missing = _MISSING.match(detail)
    if missing:
        return f"lacks the required field {missing.group(1)}", f"add {missing.group(1)} to {shown}"
    return f"is invalid ({detail})", f"correct {shown}"


# encoding/json's value type names -> the words a finding uses.
_JSON_WORDS = {
    "string": "a string",
    "number": "a number",
    "bool": "a boolean",
    "array": "a list",
    "object": "a map",
}


def _expansion_findings(ctx: LintContext) -> Iterator[Finding]:
    """Objects (or pod templates) the workload model could not expand: the template is not a
    mapping, or expansion failed on the object. Without this they would create no pods, silently."""
    for problem in ctx.expansion_problems:
        src = problem.source
        label = obj_label(src)
        shown = _dotted(problem.path) or "the object"
        if problem.got is None:
            yield ctx.report(
                src,
                problem.path,
                f"{label}: gpuplane cannot read its pods ({problem.detail}): the object is malformed and "
                "gpuplane's other checks skip it.",
                f"correct the fields of {label} to the shapes its API expects",
            )
            continue
        got = _JSON_WORDS.get(problem.got, problem.got)
        quoted = ""
        struct = _BUILTIN_STRUCTS.get((src.group, src.kind), (None, None))[0]
        if struct is not None and problem.path and problem.path[-1] == "template" and problem.got != "null":
            json_path = ".".join(s for s in problem.path if isinstance(s, str))
            version = src.api_version.rsplit("/", 1)[-1]
            quoted = (
                f': "{src.kind} in version "{version}" cannot be handled as a {src.kind}: json: cannot '
                f'unmarshal {problem.got} into Go struct field {struct}.{json_path} of type v1.PodTemplateSpec"'
            )
        yield ctx.report(
            src,
            problem.path,
            f"{label}: {shown} is {got} where the API expects a pod template (a map): the API server rejects "
            f"it{quoted}. gpuplane's other checks see no pods for it.",
            f"make {shown} a pod template ({{metadata: ..., spec: {{containers: [...]}}}})",
        )


@rule(
    id="pod-template-invalid",
    severity="error",
    category="gpu",
    summary="pod template field of a type the API server rejects (other checks skip that field)",
)
def pod_template_invalid(ctx: LintContext) -> Iterator[Finding]:
    yield from _expansion_findings(ctx)
    for ps in ctx.podsets:
        ps.pod()  # converts the template once (cached): sets pod_error
        if not ps.pod_error:
            continue
        holder = ctx.holder(ps)
        base = tuple(ps.template_path)
        for detail, steps, map_value in _errors(ps.pod_error):
            full = (*base, *steps)
            # a synthetic template's fields do not exist as written: point at the field it was built from
            path = full if not ps.synthetic or ctx.writable(ps, full) else base
            shown = _dotted(full) if not ps.synthetic else f"pod template {_dotted(steps)}"
            api = _api_wording(ps, steps, detail)
            quoted = f': "{api}"' if api else ""
            problem, fix = _describe(detail, shown, map_value)
            yield ctx.report(
                holder,
                path,
                f"{where(ps)}: {shown} {problem}: the API server rejects it{quoted}. "
                "gpuplane's other checks leave this field out.",
                fix,
            )
