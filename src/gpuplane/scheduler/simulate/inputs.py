"""What the submitted manifests do to the cluster before the workloads arrive.

``kubectl apply -f PATH...`` semantics (the simulation's model of submitting the inputs):

- an object is identified by API group, kind, namespace and name; a later object with the
  same identity *replaces* the earlier one (apply updates it), whether the earlier one came
  from an earlier input file or from the cluster; each replacement is one note line;
- objects without pods (PersistentVolumeClaims, PVs, StorageClasses, PriorityClasses,
  Namespaces, ResourceQuotas, PodGroups, Queues, ClusterQueues, ConfigMaps, NodePools ...)
  join the cluster state at time 0, before any workload arrives, so the scheduler, quota and
  queue layers see them exactly as cluster objects; Nodes join the cluster's nodes;
- objects that create pods (workloads) are simulated: they arrive over time.

Admission on the way in: a PersistentVolumeClaim without ``spec.storageClassName`` gets the
cluster's default StorageClass (the ``DefaultStorageClass`` admission plugin,
kubernetes/kubernetes plugin/pkg/admission/storage/storageclass/setdefault/admission.go;
default decided by :func:`gpuplane.k8s.storage.default_storage_class`, as upstream's
``GetDefaultClass``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node, node_from_dict
from gpuplane.k8s.storage import default_storage_class
from gpuplane.k8s.workloads import expand_all
from gpuplane.sources.manifest import Manifest

Identity = tuple[str, str, str, str]


@dataclass(slots=True)
class Inputs:
    """The inputs sorted out: workloads to simulate, the cluster objects after apply, nodes."""

    workloads: list[Manifest] = field(default_factory=list)
    cluster_objects: list[Manifest] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def identity(obj: Manifest) -> Identity | None:
    """(group, kind, namespace, name); None for an object without a name (generateName)."""
    name = obj.name
    if not name:
        return None
    return obj.group, obj.kind, obj.namespace or "default", name


def _where(obj: Manifest) -> str:
    return f"{obj.path}:{obj.line}" if obj.path else "the input"


def _label(obj: Manifest) -> str:
    ns = obj.namespace
    return f"{obj.kind} {ns + '/' if ns else ''}{obj.name}"


def apply_inputs(cluster: ClusterState, objects: list[Manifest]) -> Inputs:
    """Apply ``objects`` on top of ``cluster`` (see module docstring)."""
    out = Inputs()
    latest: dict[Identity, int] = {}
    kept: list[Manifest | None] = []
    for obj in objects:
        key = identity(obj)
        if key is not None and key in latest:
            earlier = kept[latest[key]]
            assert earlier is not None
            out.notes.append(
                f"{_label(obj)} ({_where(obj)}) replaces the one in {_where(earlier)}: same kind, namespace "
                "and name (kubectl apply updates the object)"
            )
            kept[latest[key]] = obj  # the object keeps its place (creation order), new content
            continue
        if key is not None:
            latest[key] = len(kept)
        kept.append(obj)
    unique = [obj for obj in kept if obj is not None]

    # a suspended workload is still a workload (Kueue resumes it; scenario.py decides)
    with_pods = {id(ps.source) for ps in expand_all(unique) if ps.count > 0 or ps.suspended}
    applied: dict[Identity, Manifest] = {}
    extra: list[Manifest] = []
    for obj in unique:
        if obj.group == "" and obj.kind == "Node":
            try:
                out.nodes.append(node_from_dict(obj.data))
            except msgspec.ValidationError as exc:
                out.problems.append(f"{_where(obj)}: Node {obj.name}: {exc}")
            continue
        if id(obj) in with_pods:
            out.workloads.append(obj)
        else:
            extra.append(obj)
        key = identity(obj)
        if key is not None:
            applied[key] = obj

    cluster_objects: list[Manifest] = []
    for obj in cluster.objects:
        key = identity(obj)
        if key is not None and key in applied:
            out.notes.append(f"{_label(applied[key])} ({_where(applied[key])}) replaces the cluster's object")
            continue
        cluster_objects.append(obj)
    classes = [
        o for o in [*cluster_objects, *extra] if o.kind == "StorageClass" and o.group == "storage.k8s.io"
    ]
    default_class = default_storage_class(classes)
    default = default_class.name if default_class is not None else None
    for obj in extra:
        if obj.kind == "PersistentVolumeClaim" and obj.group == "" and default is not None:
            spec = obj.get("spec")
            if isinstance(spec, dict) and "storageClassName" not in spec:
                obj = Manifest(
                    {**obj.data, "spec": {**spec, "storageClassName": default}}, obj.path, obj.line, obj.doc
                )
        cluster_objects.append(obj)
    out.cluster_objects = cluster_objects
    return out
