"""ClusterState: one cluster snapshot, indexed once, read by every engine.

The scheduler model, why-pending, diagnose, inventory, simulate and lint
(``--cluster``) all need the same views of a cluster: nodes by name, the pods
that hold resources on each node, the unscheduled pods, and the few kinds of
plain objects that change scheduling or admission (namespaces, quotas,
PriorityClasses, StorageClasses, PVCs ...). Building them in one pass and
computing per-node numbers lazily (then caching them) keeps a 5,000-node /
150,000-pod snapshot cheap: engines that look at 8 GPU nodes never pay for
summing the requests of the other 4,992.

Which pods hold resources on a node mirrors kube-scheduler's cache: its pod
informer lists pods with the field selector
``status.phase!=Succeeded,status.phase!=Failed`` (kubernetes/kubernetes
``pkg/scheduler/scheduler.go``, ``NewInformerFactory``), and every assigned pod
it sees (``spec.nodeName`` set) is added to that node's ``NodeInfo`` whatever its
phase, including pods bound but still Pending (image pulls, init containers)
and pods being deleted (their resources are released only when the object goes
away). The per-node ``requested`` sum is ``NodeInfo.Requested``: each pod's
``resource.PodRequests`` (``gpuplane.k8s.requests.pod_requests``), and the pod
count that the NodeResourcesFit "Too many pods" check compares with
``allocatable.pods``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from gpuplane.k8s.manifest import LoadError, Manifest
from gpuplane.k8s.objects import Node, Pod, is_typed_kind, typed_from_dict

# Phases whose pods no longer hold node resources (scheduler informer field selector).
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})

# Kubernetes 1.x only: no other major exists, so "v2.99.1" is no version gpuplane can word.
_KUBELET_VERSION = re.compile(r"^v?1\.(\d+)(?:$|[.+-])")

_PODS = "pods"


def _minor_version(version: str) -> tuple[int, int] | None:
    """``(1, 31)`` from ``v1.31.4``, ``v1.31.4-eks-1234``, ``1.31`` ...; None if unparsable
    (``banana``, ``v2.99.1``: Kubernetes has no major version but 1)."""
    match = _KUBELET_VERSION.match(version.strip()) if version else None
    return (1, int(match.group(1))) if match else None


def parse_resource_list(resources: Mapping[str, Any]) -> dict[str, int]:
    """A ResourceList as integers: ``cpu`` in millicores, everything else in units.

    Same units as :func:`gpuplane.k8s.requests.pod_requests` (``Quantity.MilliValue``
    for cpu, ``Quantity.Value`` otherwise), so allocatable and requests subtract.
    A quantity the API server would reject is left out rather than guessed.
    """
    from gpuplane.k8s.quantity import milli_value, value  # deferred for start-up time

    parsed: dict[str, int] = {}
    for name, quantity in resources.items():
        try:
            parsed[name] = milli_value(quantity) if name == "cpu" else value(quantity)
        except (ValueError, TypeError):
            continue
    return parsed


class ClusterState:
    """A cluster snapshot with its indexes.

    Attributes are built once in the constructor (one pass over pods and
    objects); per-node ``allocatable``/``requested``/``free`` are computed on first
    use and cached. Treat instances as read-only: engines that place pods
    (simulate) keep their own overlay instead of mutating the state.
    """

    def __init__(
        self,
        nodes: list[Node],
        pods: list[Pod],
        objects: list[Manifest],
        *,
        server_version: str | None = None,
        source: str = "",
        errors: list[LoadError] | None = None,
    ) -> None:
        self.source = source
        self.server_version = server_version
        self.errors: list[LoadError] = list(errors or [])
        self.nodes = nodes
        self.node_by_name: dict[str, Node] = {node.metadata.name: node for node in nodes}
        self.pods = pods
        self.pods_by_node: dict[str, list[Pod]] = {}
        self.pending_pods: list[Pod] = []
        self._index_pods(pods)

        self.objects = objects
        self._by_kind: dict[str, list[Manifest]] = {}
        self.namespaces: dict[str, Manifest] = {}
        self.priority_classes: dict[str, Manifest] = {}
        self.storage_classes: dict[str, Manifest] = {}
        self.pvcs: dict[tuple[str, str], Manifest] = {}
        # PersistentVolumes by name, read-only: every change goes through put_pv, which bumps
        # pvs_version, so indexes built over the PVs (VolumeBinding's by class) know when to rebuild.
        self._pvs: dict[str, Manifest] = {}
        self.pvs: Mapping[str, Manifest] = MappingProxyType(self._pvs)
        self.pvs_version = 0
        self.quotas: list[Manifest] = []
        self.limit_ranges: list[Manifest] = []
        self.pdbs: list[Manifest] = []
        self._index_objects(objects)

        self._allocatable: dict[str, dict[str, int]] = {}
        self._capacity: dict[str, dict[str, int]] = {}
        self._requested: dict[str, dict[str, int]] = {}
        # Each summed pod's own requests, by id with the pod itself (so an id is never read
        # for another object): the scheduler index reads them instead of summing them again.
        self._pod_requests: dict[int, tuple[Pod, dict[str, int]]] = {}
        # What engines above compute once per state (diagnose's facts): kept on the state so it
        # goes away with it. A WeakKeyDictionary keyed by the state would not do: its values
        # refer back to the state, so the weak key is held strongly and no state is ever freed.
        self.derived: dict[str, Any] = {}

    # -- construction --------------------------------------------------------------------

    def _index_pods(self, pods: list[Pod]) -> None:
        by_node = self.pods_by_node
        pending = self.pending_pods
        for pod in pods:
            phase = pod.status.phase
            node_name = pod.spec.node_name
            if node_name:
                if phase not in TERMINAL_PHASES:
                    bucket = by_node.get(node_name)
                    if bucket is None:
                        by_node[node_name] = [pod]
                    else:
                        bucket.append(pod)
            # A pod object without a status has just been created: the API server
            # sets phase Pending on create (pkg/registry/core/pod/strategy.go).
            elif phase in ("Pending", "") and pod.metadata.deletion_timestamp is None:
                pending.append(pod)

    def _index_objects(self, objects: Iterable[Manifest]) -> None:
        by_kind = self._by_kind
        for obj in objects:
            kind = obj.kind
            bucket = by_kind.get(kind)
            if bucket is None:
                by_kind[kind] = [obj]
            else:
                bucket.append(obj)
        core = ""
        for obj in self.by_kind("Namespace", core):
            self.namespaces[obj.name] = obj
        for obj in self.by_kind("PriorityClass", "scheduling.k8s.io"):
            self.priority_classes[obj.name] = obj
        for obj in self.by_kind("StorageClass", "storage.k8s.io"):
            self.storage_classes[obj.name] = obj
        for obj in self.by_kind("PersistentVolumeClaim", core):
            self.pvcs[(obj.namespace or "default", obj.name)] = obj
        for obj in self.by_kind("PersistentVolume", core):
            self._pvs[obj.name] = obj
        self.quotas = self.by_kind("ResourceQuota", core)
        self.limit_ranges = self.by_kind("LimitRange", core)
        self.pdbs = self.by_kind("PodDisruptionBudget", "policy")

    @classmethod
    def from_objects(cls, objects: list[Manifest], *, source: str = "") -> ClusterState:
        """From loaded manifests (tests, lint ``--cluster`` on plain files).

        Pods and Nodes become typed structs; a Pod or Node with a field of the
        wrong type is left out and recorded in ``errors`` (``path:line: kind/name:
        message``) instead of raising.
        """
        nodes: list[Node] = []
        pods: list[Pod] = []
        others: list[Manifest] = []
        errors: list[LoadError] = []
        for obj in objects:
            file_manifest(obj, pods, nodes, others, errors)
        return cls(nodes, pods, others, source=source, errors=errors)

    # -- objects -----------------------------------------------------------------------

    def by_kind(self, kind: str, group: str | None = None) -> list[Manifest]:
        """Objects of ``kind``; with ``group`` ("" = core), only that API group."""
        found = self._by_kind.get(kind, [])
        if group is None:
            return list(found)
        return [obj for obj in found if obj.group == group]

    def put_pv(self, pv: Manifest) -> None:
        """Add or replace a PersistentVolume (simulate's binding), the one way the PVs change.

        A replaced PV keeps its place in the cluster's order (the order ``ListPVs`` returns and
        VolumeBinding's index keeps within a class); a new one goes last."""
        self._pvs[pv.name] = pv
        self.pvs_version += 1

    def kinds(self) -> list[str]:
        """Every kind present among the plain objects (sorted)."""
        return sorted(self._by_kind)

    # -- per-node numbers ----------------------------------------------------------------

    def capacity(self, node: str) -> dict[str, int]:
        """Parsed ``status.capacity`` (cpu milli, others units); {} for an unknown node."""
        return self._parsed_status(self._capacity, node, "capacity")

    def allocatable(self, node: str) -> dict[str, int]:
        """Parsed ``status.allocatable`` (cpu milli, others units, ``pods`` count)."""
        return self._parsed_status(self._allocatable, node, "allocatable")

    def _parsed_status(
        self, cache: dict[str, dict[str, int]], node: str, field: Literal["capacity", "allocatable"]
    ) -> dict[str, int]:
        """The node's ``status.<field>`` resource list parsed once and kept in ``cache``."""
        cached = cache.get(node)
        if cached is None:
            found = self.node_by_name.get(node)
            cached = parse_resource_list(getattr(found.status, field)) if found is not None else {}
            cache[node] = cached
        return cached

    def requested(self, node: str) -> dict[str, int]:
        """Sum of the effective requests of the pods holding resources on ``node``,
        plus ``pods``: how many they are (``NodeInfo.Requested`` and ``len(Pods)``)."""
        cached = self._requested.get(node)
        if cached is None:
            cached = self._sum_requests(self.pods_by_node.get(node, ()), self._pod_requests)
            self._requested[node] = cached
        return cached

    def summed_requests(self, pod: Pod) -> dict[str, int] | None:
        """``pod_requests(pod)`` as :meth:`requested` computed it for the pod's node (None when
        it did not: the pod is not on a node, or its quantities did not parse)."""
        entry = self._pod_requests.get(id(pod))
        return entry[1] if entry is not None and entry[0] is pod else None

    @staticmethod
    def _sum_requests(
        pods: Iterable[Pod], seen: dict[int, tuple[Pod, dict[str, int]]] | None = None
    ) -> dict[str, int]:
        from gpuplane.k8s.requests import pod_requests  # deferred for start-up time

        total: dict[str, int] = {}
        count = 0
        get = total.get
        for pod in pods:
            count += 1
            try:
                requests = pod_requests(pod)
            except (ValueError, TypeError):
                # A quantity the API server would have rejected: such a pod cannot exist
                # in a real cluster; count it, but do not guess its size.
                continue
            if seen is not None:
                seen[id(pod)] = (pod, requests)
            for name, amount in requests.items():
                total[name] = get(name, 0) + amount
        total[_PODS] = get(_PODS, 0) + count
        return total

    def free(self, node: str) -> dict[str, int]:
        """``allocatable - requested`` for every resource in allocatable (may be negative
        when a device plugin withdrew devices that running pods still hold)."""
        requested = self.requested(node)
        return {name: amount - requested.get(name, 0) for name, amount in self.allocatable(node).items()}

    # -- cluster facts -------------------------------------------------------------------

    def kubernetes_version(self) -> str | None:
        """``"1.31"``: the server's version when known, else the highest kubelet minor.

        The control plane is never older than its kubelets (version skew policy,
        kubernetes.io/releases/version-skew-policy), so the newest kubelet is the
        best lower bound a snapshot offers.
        """
        if self.server_version:
            parsed = _minor_version(self.server_version)
            if parsed:
                return f"{parsed[0]}.{parsed[1]}"
        best = self._kubelet_best()[0]
        return f"{best[0]}.{best[1]}" if best else None

    def _kubelet_best(self) -> tuple[tuple[int, int] | None, list[str]]:
        """The highest kubelet minor, and the kubelet versions that could not be read."""
        best: tuple[int, int] | None = None
        unusable: list[str] = []
        seen: set[str] = set()
        for node in self.nodes:
            version = node.status.node_info.kubelet_version
            if version in seen:
                continue
            seen.add(version)
            parsed = _minor_version(version)
            if parsed is None:
                if version:
                    unusable.append(version)
            elif best is None or parsed > best:
                best = parsed
        return best, unusable

    def version_warnings(self) -> list[str]:
        """One line per version value that cannot be used (commands print them on stderr).

        An unreadable version must not silently pick the newest wording: the user learns
        which value was ignored and which version the messages follow instead.
        """
        warnings: list[str] = []
        best, unusable = self._kubelet_best()
        fallback = (
            f"Kubernetes {best[0]}.{best[1]} from the nodes' kubelets"
            if best
            else "the newest wording gpuplane knows"
        )
        if self.server_version and _minor_version(self.server_version) is None:
            warnings.append(
                f"cluster version {self.server_version!r} is not a Kubernetes version like v1.31; "
                f"using {fallback}"
            )
        if unusable:
            shown = ", ".join(repr(v) for v in unusable[:3]) + (
                f" and {len(unusable) - 3} more" if len(unusable) > 3 else ""
            )
            warnings.append(f"kubelet version {shown} is not a Kubernetes version like v1.31; ignored")
        return warnings

    def node_ready(self, node: str) -> bool | None:
        """The node's ``Ready`` condition (None when the node or condition is absent)."""
        found = self.node_by_name.get(node)
        if found is None:
            return None
        for condition in found.status.conditions:
            if condition.type == "Ready":
                return condition.status == "True"
        return None

    @property
    def empty(self) -> bool:
        """Nothing was read at all: with load errors, the source was unusable (spec/cli.md)."""
        return not self.nodes and not self.pods and not self.objects

    def __repr__(self) -> str:
        return (
            f"<ClusterState {self.source or '<memory>'}: {len(self.nodes)} nodes, {len(self.pods)} pods, "
            f"{len(self.pending_pods)} pending, {len(self.objects)} other objects>"
        )


def file_manifest(
    manifest: Manifest,
    pods: list[Pod],
    nodes: list[Node],
    others: list[Manifest],
    errors: list[LoadError],
) -> None:
    """Put ``manifest`` in the list it belongs to; a Pod/Node with a wrong field becomes an error.

    Shared by :meth:`ClusterState.from_objects` and the cluster readers of ``gpuplane.sources``
    so every reader decides "typed Pod/Node" the same way (:func:`gpuplane.k8s.objects.is_typed_kind`).
    """
    kind = manifest.kind
    if not is_typed_kind(kind, manifest.api_version):
        others.append(manifest)
        return
    try:
        typed = typed_from_dict(kind, manifest.data)
    except ValueError as exc:
        errors.append(
            LoadError(
                manifest.path,
                manifest.line,
                f"{describe_object(kind, manifest.namespace, manifest.name)}: {exc}",
            )
        )
        return
    if isinstance(typed, Pod):
        pods.append(typed)
    else:
        nodes.append(typed)


def describe_object(kind: str, namespace: str | None, name: str) -> str:
    """``Pod ns/name``, ``Node name``: how load errors name an object."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
