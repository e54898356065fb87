"""Pod templates found inside custom resources no expander knows.

Why: operators of AI workloads appear faster than expanders can be written for them, and most
embed an ordinary core/v1 PodSpec somewhere in their spec (a ``template`` per role, a
``PodTemplateSpec`` under a fleet, an inlined PodSpec as KServe does). Without discovery such
objects get no analysis at all and silence reads as a clean bill. A PodSpec is recognised by
its shape, as the API server's own decoding would accept it: a mapping with a ``containers``
list holding at least one mapping with a string ``image``.

What a discovered PodSet is (and is not): one PodSet per pod spec found, ``count`` 1 with
``count_known`` False (the operator decides how many pods), the role guessed from the nearest
field or list-item name. Only the generic container and GPU checks are meant to read it; kind
groups (training, inference) do not include unknown kinds, so rules about roll-outs, gangs or
probes stay silent on them. Field paths stay true: a ``PodTemplateSpec`` (``{metadata, spec}``)
is the template itself; an inlined PodSpec under another name becomes a synthetic template
whose ``spec`` is overridden by the field it sits in (:attr:`PodSet.overrides`), so findings and
fixes point at the user's lines.

Bounds: the walk stops at depth :data:`MAX_DEPTH` and after :data:`MAX_NODES` maps and lists,
and returns at most :data:`MAX_TEMPLATES` templates, so a hostile or huge object costs little.
``metadata`` and ``status`` are not searched (labels, annotations and observed state hold no pod
templates the object asks for).
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from gpuplane.k8s.fields import child
from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import ExpandContext, PodSet, role_from_name

MAX_DEPTH = 16
MAX_NODES = 20_000
MAX_TEMPLATES = 64
_SKIPPED_TOP = frozenset({"metadata", "status", "apiVersion", "kind"})
# wrapper field names that say nothing about the role of the pods below them
_NEUTRAL = frozenset({"spec", "template", "podTemplate", "podSpec", "pod", "items"})

# API groups served by Kubernetes itself: their kinds are either expanded explicitly or create
# no pods, and their fields are not searched (a CustomResourceDefinition's schema mentions
# ``containers`` but holds no pod).
BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "extensions",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "admissionregistration.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)


def is_pod_spec(value: Any) -> bool:
    """A mapping shaped like a core/v1 PodSpec: a ``containers`` list with a container that has
    a string ``image``."""
    if not isinstance(value, dict):
        return False
    containers = value.get("containers")
    if not isinstance(containers, list):
        return False
    return any(isinstance(c, dict) and isinstance(c.get("image"), str) for c in containers)


def find_pod_specs(data: dict) -> list[FieldPath]:
    """Paths of the PodSpec-shaped mappings in ``data`` (outside ``metadata``/``status``), in
    document order, outermost only (a pod spec's own fields are not searched), bounded."""
    found: list[FieldPath] = []
    budget = MAX_NODES
    stack: list[tuple[Any, FieldPath]] = [
        (value, (key,)) for key, value in reversed(list(data.items())) if key not in _SKIPPED_TOP
    ]
    while stack and budget > 0 and len(found) < MAX_TEMPLATES:
        node, path = stack.pop()
        if isinstance(node, dict):
            budget -= 1
            if is_pod_spec(node):
                found.append(path)
                continue
            if len(path) < MAX_DEPTH:
                items = list(islice(node.items(), budget))  # never more children than the budget left
                stack.extend((value, (*path, key)) for key, value in reversed(items))
        elif isinstance(node, list):
            budget -= 1
            if len(path) < MAX_DEPTH:
                stack.extend((value, (*path, i)) for i, value in reversed(list(enumerate(node[:budget]))))
    return found


def _label(data: dict, path: FieldPath) -> str | None:
    """The nearest name for the pods at ``path``: a list item's ``name``, else a field name that
    is not a neutral wrapper (``spec``, ``template`` ...)."""
    node: Any = data
    names: list[str | None] = []
    for step in path:
        node = child(node, step)
        if isinstance(step, int):
            name = node.get("name") if isinstance(node, dict) else None
            names.append(name if isinstance(name, str) and name else None)
        else:
            names.append(None if step in _NEUTRAL else str(step))
    for name in reversed(names):
        if name:
            return name
    return None


def discover_podsets(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """PodSets of the pod specs found in ``obj`` (an object no expander knows); see the module."""
    data = obj.data
    podsets: list[PodSet] = []
    used: dict[str, int] = {}
    for path in find_pod_specs(data):
        label = _label(data, path) or obj.name or "pod"
        n = used[label] = used.get(label, 0) + 1
        name = label if n == 1 else f"{label}-{n}"
        role = role_from_name(label, "replica")
        parent_path = path[:-1]
        parent = _at(data, parent_path)
        if path[-1] == "spec" and isinstance(parent, dict):
            ps = PodSet(obj, name, role, 1, parent, parent_path, count_known=False)
        else:
            spec = _at(data, path)
            ps = PodSet(
                obj,
                name,
                role,
                1,
                {"spec": spec},
                path,
                count_known=False,
                synthetic=True,
                overrides=((("spec",), obj, path),),
            )
        podsets.append(ps)
    return finish(obj, podsets, ctx.related, kueue_whole=False)


def _at(data: Any, path: FieldPath) -> Any:
    node = data
    for step in path:
        node = node[step]
    return node
