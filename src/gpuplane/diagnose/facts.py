"""Facts every cluster rule reads, computed once per ClusterState.

The cluster rules are separate functions (one rule, one function: design.md),
but they look at the same things: the inventory and its per-node flags, the
GPU-stack pods on each node, each pod's GPU requests, and the scheduler's
verdict on each Pending pod. :func:`facts_for` builds those once per
:class:`~gpuplane.k8s.cluster.ClusterState` (kept on the state, so it goes
away with it) and every rule shares them, whether diagnose or ``lint --enable`` runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplane.diagnose.components import Component, component_of
from gpuplane.diagnose.evidence import manifest_of
from gpuplane.diagnose.inventory import Inventory, NodeInventory, build_inventory
from gpuplane.diagnose.positions import Key, Position, index_positions
from gpuplane.gpu.requests import pod_device_requests
from gpuplane.k8s.objects import Node, Pod
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState

_FACTS = "diagnose.facts"  # key in ClusterState.derived


def facts_for(state: ClusterState) -> ClusterFacts:
    """The shared facts of ``state`` (built on first use, kept in ``state.derived``).

    Not a ``WeakKeyDictionary`` keyed by the state: the facts refer to the state, so such a
    cache holds every state it ever saw (a long-lived MCP server grew by each snapshot read)."""
    found = state.derived.get(_FACTS)
    if found is None:
        found = state.derived[_FACTS] = ClusterFacts(state)
    assert isinstance(found, ClusterFacts)
    return found


class ClusterFacts:
    """Lazily computed, cached views of one cluster snapshot for the cluster rules."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self._inventory: Inventory | None = None
        self._node_inv: dict[str, NodeInventory] | None = None
        self._components: dict[str, list[tuple[Component, Pod]]] | None = None
        self._component_pods: list[tuple[Component, Pod]] | None = None
        self._components_by_id: dict[str, list[Pod]] | None = None
        self._manifests: dict[int, Manifest] = {}
        self._objects: dict[tuple[str, str | None, str], Manifest] | None = None
        self._gpu_requests: dict[int, dict[str, int]] = {}
        self._free: dict[str, list[tuple[Node, int]]] = {}
        self._free_by_name: dict[str, dict[str, int]] = {}
        self._explanations: dict[int, dict[str, Any]] = {}
        self._explained: dict[int, tuple[Any, str]] = {}
        self._evaluations: Any = None  # the explaining session's memo (why_pending.evaluations)
        self._positions: dict[Key, Position] | None = None
        self._scheduler: Any = None
        self._scheduler_error: str | None = None

    # -- inventory ----------------------------------------------------------------------------

    @property
    def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = build_inventory(self.state)
        return self._inventory

    def node_inventory(self, name: str) -> NodeInventory | None:
        if self._node_inv is None:
            self._node_inv = {node.name: node for node in self.inventory.nodes}
        return self._node_inv.get(name)

    # -- GPU stack pods -----------------------------------------------------------------------

    def _index_components(self) -> None:
        by_node: dict[str, list[tuple[Component, Pod]]] = {}
        every: list[tuple[Component, Pod]] = []
        for pod in self.state.pods:
            component = component_of(pod)
            if component is None:
                continue
            every.append((component, pod))
            if pod.spec.node_name:
                by_node.setdefault(pod.spec.node_name, []).append((component, pod))
        self._components = by_node
        self._component_pods = every

    def components_on(self, node: str) -> list[tuple[Component, Pod]]:
        """GPU-stack pods bound to ``node`` (any phase), in enablement-chain order."""
        if self._components is None:
            self._index_components()
        assert self._components is not None
        return sorted(self._components.get(node, ()), key=lambda item: item[0].position)

    def component_pods(self) -> list[tuple[Component, Pod]]:
        """Every GPU-stack pod of the cluster (operator, operands, stand-alone device plugins)."""
        if self._component_pods is None:
            self._index_components()
        assert self._component_pods is not None
        return self._component_pods

    def component_pods_of(self, component: str) -> list[Pod]:
        """The GPU-stack pods of one component id (``device-plugin``, ``gpu-operator`` ...) in
        :meth:`component_pods` order. Indexed once: gpu-node-not-advertising asks for every dark
        node, and a filter of every stack pod per node cost nodes x pods on a cluster-wide outage."""
        found = self._components_by_id
        if found is None:
            found = self._components_by_id = {}
            for comp, pod in self.component_pods():
                found.setdefault(comp.id, []).append(pod)
        return found.get(component, [])

    # -- objects ------------------------------------------------------------------------------

    def manifest(self, obj: Node | Pod) -> Manifest:
        """``obj`` as a Manifest reference (cached: findings on one object share it)."""
        key = id(obj)
        found = self._manifests.get(key)
        if found is None:
            found = self._manifests[key] = manifest_of(obj, self.state.source, self.position(obj))
        return found

    def position(self, obj: Node | Pod) -> Position | None:
        """Where ``obj`` sits in the snapshot file (None for live clusters, stdin, unknown objects).

        The index is built on the first call only: a clean cluster never scans its file again.
        """
        if self._positions is None:
            self._positions = index_positions(self.state.source)
        kind = "Pod" if isinstance(obj, Pod) else "Node"
        return self._positions.get((kind, obj.metadata.namespace or "", obj.metadata.name))

    def find_object(self, kind: str, namespace: str | None, name: str) -> Manifest | None:
        """A plain object of the snapshot (PodGroup, DaemonSet, PyTorchJob ...) by kind and name."""
        if self._objects is None:
            index: dict[tuple[str, str | None, str], Manifest] = {}
            for obj in self.state.objects:
                index.setdefault((obj.kind, obj.namespace, obj.name), obj)
            self._objects = index
        return self._objects.get((kind, namespace, name))

    # -- pods ---------------------------------------------------------------------------------

    def gpu_requests(self, pod: Pod) -> dict[str, int]:
        """The pod's effective requests of accelerator resources (``resource.PodRequests``)."""
        key = id(pod)
        found = self._gpu_requests.get(key)
        if found is None:
            found = self._gpu_requests[key] = pod_device_requests(pod)
        return found

    # -- free room ----------------------------------------------------------------------------

    def free_nodes(self, resource: str) -> list[tuple[Node, int]]:
        """``(node, free resource)`` for every node with some of ``resource`` free
        (``ClusterState.free``: allocatable - requested), in snapshot order.

        Once per resource: gpu-fragmentation asks for every Pending GPU pod, which rebuilt
        every node's free map per pod (Pending pods x nodes); most nodes (CPU nodes, full GPU
        nodes) have none free, so a pod's question now costs a lookup per node the model names
        for it, or (without the model) the checks of the nodes with room."""
        found = self._free.get(resource)
        if found is None:
            state = self.state
            found = []
            for node in state.nodes:
                free = state.free(node.metadata.name).get(resource, 0)
                if free > 0:
                    found.append((node, free))
            self._free[resource] = found
        return found

    def free_by_node(self, resource: str) -> dict[str, int]:
        """Node name -> free ``resource``, for the nodes of :meth:`free_nodes`."""
        found = self._free_by_name.get(resource)
        if found is None:
            found = self._free_by_name[resource] = {
                node.metadata.name: free for node, free in self.free_nodes(resource)
            }
        return found

    def pending_gpu_pods(self) -> list[Pod]:
        """Unscheduled Pending pods that ask for an accelerator."""
        return [pod for pod in self.state.pending_pods if self.gpu_requests(pod)]

    # -- why pending --------------------------------------------------------------------------

    def explanation(self, pod: Pod) -> dict[str, Any]:
        """``{"message", "causes", "fixes", "stage", "table", "source"}`` for a Pending pod (cached)."""
        key = id(pod)
        found = self._explanations.get(key)
        if found is None:
            found = self._explanations[key] = _explain_pending(self, pod)
        return found

    def explained(self, pod: Pod) -> tuple[Any, str]:
        """``(Explanation, "")`` from the scheduler model for ``pod``, ``(None, why)`` when the
        model is unavailable or failed on it. One cycle per pod, shared by every rule that asks
        (pending-gpu-pod's text and gpu-fragmentation's node set)."""
        key = id(pod)
        found = self._explained.get(key)
        if found is None:
            scheduler = self.scheduler()
            if scheduler is None:
                found = (None, self.scheduler_error or "")
            else:
                from gpuplane.why_pending.evaluations import Evaluations  # start-up time: loaded on demand
                from gpuplane.why_pending.explain import explain

                if self._evaluations is None:
                    self._evaluations = Evaluations(scheduler)
                try:
                    found = (explain(scheduler, pod, self._evaluations), "")
                except Exception as exc:  # one pod the model cannot handle keeps the snapshot's own words
                    found = (None, f"scheduler model failed on this pod ({type(exc).__name__}: {exc})")
            self._explained[key] = found
        return found

    @property
    def scheduler_error(self) -> str | None:
        """Why :meth:`scheduler` could not build the model (None when it did or was not asked)."""
        return self._scheduler_error

    def scheduler(self) -> Any:
        """The kube-scheduler model over this state, or None when it cannot be built."""
        if self._scheduler is None and self._scheduler_error is None:
            try:
                from gpuplane.scheduler.scheduler import Scheduler  # deferred for start-up time

                self._scheduler = Scheduler(self.state)
            except Exception as exc:  # the model failing must not cost the other findings
                self._scheduler_error = f"{type(exc).__name__}: {exc}"
        return self._scheduler


def pod_scheduled_message(pod: Pod) -> str:
    """The ``PodScheduled=False`` condition message: what the scheduler last wrote on the pod."""
    for condition in pod.status.conditions:
        if condition.type == "PodScheduled" and condition.status == "False":
            return condition.message or condition.reason
    return ""


def _explain_pending(facts: ClusterFacts, pod: Pod) -> dict[str, Any]:
    """Why ``pod`` is Pending: the scheduler model's explanation (message, causes, fixes).

    Falls back to the pod's own ``PodScheduled`` condition (the last FailedScheduling
    text the real scheduler wrote) when the model cannot explain this pod.
    """
    observed = pod_scheduled_message(pod)
    expl, note = facts.explained(pod)
    if expl is None:
        return _observed_only(observed, note)
    return {
        "message": expl.message or observed,
        "observed": observed,
        "causes": expl.cause_texts(),
        "fixes": list(expl.fixes),
        "stage": expl.stage,
        "table": expl.table(),
        "kubernetes_version": facts.scheduler().wording.label,
        "source": "scheduler-model",
    }


def _observed_only(observed: str, note: str) -> dict[str, Any]:
    return {
        "message": observed,
        "observed": observed,
        "causes": [],
        "fixes": [],
        "stage": "scheduler",
        "table": [],
        "source": "pod-condition",
        "note": note,
    }
