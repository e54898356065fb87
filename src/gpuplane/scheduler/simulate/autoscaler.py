"""Node autoscaling for simulate: Karpenter NodePools and Cluster Autoscaler node groups.

When pods stay unschedulable after a scheduling pass, the autoscaler looks for a node shape
that would host them and launches nodes; each becomes schedulable after the cold start of
``coldstart.py`` (decision / batching + provisioning + GPU stack), and pods bound to it pull
their image first (``gpuplane.io/image-size-gib``).

- **Karpenter** (``karpenter.sh/v1`` NodePool; reference/platform.md §3.1): candidate instance
  types are the catalog's AWS types (``gpu/data/instances.yaml``) allowed by
  ``spec.template.spec.requirements`` (``node.kubernetes.io/instance-type``,
  ``karpenter.k8s.aws/instance-family`` / ``-category`` / ``-gpu-name`` / ``-gpu-count``; other
  ``In`` requirements become node labels); taints and labels from the template; ``spec.limits``
  caps the pool's total capacity; pools are tried by ``spec.weight`` (higher first). The
  smallest fitting type is launched (fewest GPUs, then vCPUs) — a stand-in for Karpenter's
  cheapest-fit choice, as no prices are modelled.
- **Cluster Autoscaler** node groups (CA has no CRD, so a small gpuplane object)::

      apiVersion: gpuplane.io/v1alpha1
      kind: ClusterAutoscalerNodeGroup
      metadata: {name: a100}
      spec:
        instanceType: p4d.24xlarge       # catalog type: GPUs, vCPUs, memory
        minSize: 0
        maxSize: 4
        priority: 10                     # priority expander (higher first)
        labels: {nvidia.com/gpu.present: "true"}
        taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
        allocatable: {}                  # optional overrides of the node's allocatable

  Existing nodes carrying all of ``labels`` count towards ``maxSize``. Groups are tried by
  ``priority`` then listing order (CA's default ``random`` expander made deterministic).

A catalog instance type without published vCPU / memory figures gets no cpu / memory limit
in the model (said so in the notes) rather than an invented one; kube-reserved overhead is
not subtracted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuplane.gpu.catalog import InstanceType, catalog
from gpuplane.gpu.nodes import is_gpu_node
from gpuplane.k8s.cluster import parse_resource_list
from gpuplane.k8s.objects import Node, Pod, node_from_dict
from gpuplane.k8s.requests import pod_requests
from gpuplane.k8s.selectors import node_selector_requirement_matches, parse_go_int64
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.engine import Engine
    from gpuplane.scheduler.simulate.model import SimPod

KARPENTER = "karpenter"
CLUSTER_AUTOSCALER = "cluster-autoscaler"
NODEGROUP_KIND = "ClusterAutoscalerNodeGroup"
GPUPLANE_GROUP = "gpuplane.io"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
UNKNOWN_CPU = "1000"  # no catalog figure: not limiting
UNKNOWN_MEMORY = "1000Ti"
_GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(slots=True)
class Template:
    instance: InstanceType
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    allocatable: dict[str, str]


@dataclass(slots=True)
class Pool:
    name: str
    kind: str
    templates: list[Template]
    order: tuple[int, int]
    limits: dict[str, int] = field(default_factory=dict)
    max_size: int | None = None
    used: dict[str, int] = field(default_factory=dict)
    size: int = 0


def _allocatable(it: InstanceType, overrides: dict[str, Any]) -> dict[str, str]:
    alloc = {
        "cpu": str(it.vcpus) if it.vcpus else UNKNOWN_CPU,
        "memory": f"{int(it.memory_gib)}Gi" if it.memory_gib else UNKNOWN_MEMORY,
        "pods": "110",
        "ephemeral-storage": "100Gi",
    }
    if it.gpu_count:
        alloc[_GPU_RESOURCE] = str(it.gpu_count)
    alloc.update({str(k): str(v) for k, v in overrides.items()})
    return alloc


def _karpenter_gpu_names() -> dict[str, str]:
    """GPU model -> Karpenter ``instance-gpu-name`` value (from the catalog's lookup table)."""
    out: dict[str, str] = {}
    for (gpu_name, _mem), model in catalog()._by_karpenter.items():
        if model:
            out.setdefault(model, gpu_name)
    return out


def _requirement_ok(req: dict[str, Any], it: InstanceType, gpu_names: dict[str, str]) -> bool | None:
    """True/False when the requirement speaks about the instance type, None when it is a label."""
    key = req.get("key")
    family = it.name.split(".", 1)[0]
    facts = {
        "node.kubernetes.io/instance-type": it.name,
        "karpenter.k8s.aws/instance-family": family,
        "karpenter.k8s.aws/instance-category": family[:1],
        "karpenter.k8s.aws/instance-gpu-name": gpu_names.get(it.gpu_model),
        "karpenter.k8s.aws/instance-gpu-count": str(it.gpu_count) if it.gpu_count else None,
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia" if it.gpu_count else None,
    }
    if key not in facts:
        return None
    # The instance type's labels as the node would carry them (an unknown fact: no label),
    # matched by the scheduler's own requirement semantics (k8s.selectors).
    labels = {name: value for name, value in facts.items() if value is not None}
    return node_selector_requirement_matches(_as_node_requirement(req), labels)


def _as_node_requirement(req: dict[str, Any]) -> dict[str, Any]:
    """Karpenter's integer ``Gte``/``Lte`` (karpenter.sh/v1 NodePool requirements) as the
    core ``Gt``/``Lt`` with the bound moved by one; other operators are core already. Values
    are read as strings (a YAML ``8`` is the label value ``"8"``)."""
    op = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    req = {**req, "values": values}
    if op not in ("Gte", "Lte"):
        return req
    bound = parse_go_int64(values[0]) if len(values) == 1 else None
    if bound is None:
        return {**req, "operator": "Gt" if op == "Gte" else "Lt"}  # refused like a bad Gt/Lt
    shifted = bound - 1 if op == "Gte" else bound + 1
    return {**req, "operator": "Gt" if op == "Gte" else "Lt", "values": [str(shifted)]}


def karpenter_pool(obj: Manifest, weight_order: int) -> Pool:
    spec = obj.get("spec", "template", "spec") or {}
    meta_labels = obj.get("spec", "template", "metadata", "labels") or {}
    requirements = [r for r in spec.get("requirements") or [] if isinstance(r, dict)]
    taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
    gpu_names = _karpenter_gpu_names()
    labels = {str(k): str(v) for k, v in meta_labels.items()}
    for req in requirements:
        if (
            req.get("operator") == "In"
            and req.get("values")
            and _requirement_ok(req, _PROBE, gpu_names) is None
        ):
            labels.setdefault(str(req["key"]), str(req["values"][0]))
    templates = []
    for it in catalog().instance_types.values():
        if it.provider != "aws":
            continue
        if all(_requirement_ok(r, it, gpu_names) is not False for r in requirements):
            node_labels = {
                **labels,
                "node.kubernetes.io/instance-type": it.name,
                "karpenter.k8s.aws/instance-family": it.name.split(".", 1)[0],
                NODEPOOL_LABEL: obj.name,
            }
            if it.gpu_model in gpu_names:
                node_labels["karpenter.k8s.aws/instance-gpu-name"] = gpu_names[it.gpu_model]
                node_labels["karpenter.k8s.aws/instance-gpu-count"] = str(it.gpu_count)
            templates.append(Template(it, node_labels, taints, _allocatable(it, {})))
    templates.sort(key=lambda t: (t.instance.gpu_count, t.instance.vcpus or 10**6, t.instance.name))
    limits = parse_resource_list(obj.get("spec", "limits") or {})
    weight = obj.get("spec", "weight")
    return Pool(
        obj.name,
        KARPENTER,
        templates,
        (-(weight if isinstance(weight, int) else 0), weight_order),
        limits=limits,
    )


_PROBE = InstanceType("aws", "", "", 0, None, None, "")


def nodegroup_pool(obj: Manifest, order: int) -> tuple[Pool | None, str]:
    spec = obj.get("spec") or {}
    name = spec.get("instanceType")
    it = catalog().instance(name) if isinstance(name, str) else None
    if it is None:
        return None, f"ClusterAutoscalerNodeGroup {obj.name}: instanceType {name!r} is not in the catalog"
    labels = {str(k): str(v) for k, v in (spec.get("labels") or {}).items()}
    labels.setdefault("node.kubernetes.io/instance-type", it.name)
    taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
    alloc = _allocatable(it, spec.get("allocatable") or {})
    max_size = spec.get("maxSize")
    priority = spec.get("priority")
    pool = Pool(
        obj.name,
        CLUSTER_AUTOSCALER,
        [Template(it, labels, taints, alloc)],
        (-(priority if isinstance(priority, int) else 0), order),
        max_size=max_size if isinstance(max_size, int) else None,
    )
    return pool, ""


class Autoscaler:
    """The pools in play and the nodes launched so far."""

    def __init__(self, pools: list[Pool], kind: str) -> None:
        self.pools = sorted(pools, key=lambda p: p.order)
        self.kind = kind
        self.in_flight: list[dict[str, Any]] = []
        self.covered: set[int] = set()  # id(SimPod) waiting for an in-flight node
        self.counter = 0
        self.verdicts: dict[tuple[Any, ...], tuple[object, tuple[bool, str]]] = {}
        self.probes: dict[tuple[str, str], Node] = {}
        self.noted: set[str] = set()  # jobs already named in a "not helped" note

    @classmethod
    def from_objects(cls, objects: list[Manifest], mode: str) -> tuple[Autoscaler | None, list[str]]:
        """Pools found among ``objects``; ``mode`` is auto | karpenter | cluster-autoscaler."""
        pools: list[Pool] = []
        errors: list[str] = []
        for n, obj in enumerate(objects):
            if obj.kind == "NodePool" and obj.group == "karpenter.sh" and mode in ("auto", KARPENTER):
                pools.append(karpenter_pool(obj, n))
            elif (
                obj.kind == NODEGROUP_KIND
                and obj.group == GPUPLANE_GROUP
                and mode in ("auto", CLUSTER_AUTOSCALER)
            ):
                pool, error = nodegroup_pool(obj, n)
                if pool is not None:
                    pools.append(pool)
                else:
                    errors.append(error)
        if not pools:
            return None, errors
        kinds = {p.kind for p in pools}
        return cls(pools, kinds.pop() if len(kinds) == 1 else "mixed"), errors

    def attach(self, engine: Engine) -> None:
        """Count existing nodes of each pool (NodePool label / node-group labels) and their capacity."""
        for pool in self.pools:
            for node in engine.sim.state.nodes:
                labels = node.metadata.labels
                if pool.kind == KARPENTER:
                    mine = labels.get(NODEPOOL_LABEL) == pool.name
                else:
                    mine = all(labels.get(k) == v for k, v in pool.templates[0].labels.items())
                if mine:
                    pool.size += 1
                    for res, amount in parse_resource_list(node.status.capacity).items():
                        pool.used[res] = pool.used.get(res, 0) + amount

    # -- fitting ---------------------------------------------------------------------------

    @staticmethod
    def _fits(
        engine: Engine, pod: Pod, free: dict[str, int], alloc: dict[str, int], node: Node
    ) -> tuple[bool, str]:
        """The scheduler's own PreFilter + Filter verdict for ``pod`` on the not-yet-existing
        ``node`` holding ``alloc - free`` already (``Scheduler.check_new_node``)."""
        requested = {res: alloc.get(res, 0) - free.get(res, 0) for res in alloc}
        return engine.sim.sched.check_new_node(pod, node, requested)

    def _node(self, pool: Pool, tpl: Template) -> Node:
        self.counter += 1
        return self._make_node(f"{pool.name}-{tpl.instance.name.replace('.', '-')}-{self.counter}", tpl)

    @staticmethod
    def _make_node(name: str, tpl: Template) -> Node:
        return node_from_dict(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {**tpl.labels, "kubernetes.io/hostname": name}},
                "spec": {"taints": tpl.taints},
                "status": {"allocatable": tpl.allocatable, "capacity": tpl.allocatable},
            }
        )

    def _within_limits(self, pool: Pool, tpl: Template) -> bool:
        if pool.max_size is not None and pool.size >= pool.max_size:
            return False
        capacity = parse_resource_list(tpl.allocatable)
        for res, limit in pool.limits.items():
            if res == "nodes":
                if pool.size + 1 > limit:
                    return False
            elif pool.used.get(res, 0) + capacity.get(res, 0) > limit:
                return False
        return True

    def scale_up(self, engine: Engine, pending: list[SimPod]) -> None:
        """Launch nodes for pods the scheduler could not place (first fit on nodes already
        launching, else the first pool, in expander order, with a fitting shape).

        Only pods that exist (created: not refused by validation or quota) and that a new node
        would help are considered: a pod rejected at PreFilter (a missing PVC, an unbound
        immediate claim) or failing the Filter plugins on every template (taints, selectors,
        volume topology, too big) triggers nothing, as in Cluster Autoscaler (the pod's
        ``NotTriggerScaleUp`` event) and Karpenter (the pod is left to the scheduler)."""
        for pod in pending:
            if id(pod) in self.covered or not pod.created:
                continue
            placed = False
            for flight in self.in_flight:
                if self._fits(engine, pod.pod, flight["free"], flight["alloc"], flight["node"])[0]:
                    self._charge(flight, pod)
                    placed = True
                    break
            if placed:
                continue
            reason = ""
            for pool in self.pools:
                for tpl in pool.templates:
                    fits, why = self._template_fits(engine, pod, pool, tpl)
                    if not fits:
                        reason = reason or why
                        continue
                    if not self._within_limits(pool, tpl):
                        reason = reason or f"{pool.name}: limits reached"
                        continue
                    self._launch(engine, pod, pool, tpl)
                    placed = True
                    break
                if placed:
                    break
            if not placed:
                self._not_helped(engine, pod, reason)

    def _template_fits(self, engine: Engine, pod: SimPod, pool: Pool, tpl: Template) -> tuple[bool, str]:
        """An empty template node's verdict, once per pod spec, pool and template (the
        cluster objects a verdict depends on only change when claims bind: then recomputed)."""
        key = (id(pod.pod.spec), pool.name, tpl.instance.name, engine.sim.released)
        cached = self.verdicts.get(key)
        if cached is not None and cached[0] is pod.pod.spec:
            return cached[1]
        node = self._probe(pool, tpl)
        alloc = parse_resource_list(tpl.allocatable)
        verdict = self._fits(engine, pod.pod, alloc, alloc, node)
        self.verdicts[key] = (pod.pod.spec, verdict)
        return verdict

    def _probe(self, pool: Pool, tpl: Template) -> Node:
        """The template node as the scheduler would see it (name settled at launch)."""
        key = (pool.name, tpl.instance.name)
        node = self.probes.get(key)
        if node is None:
            node = self.probes[key] = self._make_node(
                f"{pool.name}-{tpl.instance.name.replace('.', '-')}-template", tpl
            )
        return node

    def _not_helped(self, engine: Engine, pod: SimPod, reason: str) -> None:
        job = pod.job.key
        if job in self.noted:
            return
        self.noted.add(job)
        what = (
            "no NodePool or node group"
            if self.kind == "mixed"
            else ("no NodePool" if self.kind == KARPENTER else "no node group")
        )
        engine.notes.append(f"{self.kind}: {what} helps {pod.key} ({job}): {reason or 'no template fits'}")

    def _launch(self, engine: Engine, pod: SimPod, pool: Pool, tpl: Template) -> None:
        node = self._node(pool, tpl)
        free = parse_resource_list(tpl.allocatable)
        pool.size += 1
        for res, amount in free.items():
            pool.used[res] = pool.used.get(res, 0) + amount
        gpu = is_gpu_node(node)
        delay = engine.cold.node_ready_after(pool.kind, gpu)
        flight = {
            "node": node,
            "template": tpl,
            "free": free,
            "alloc": dict(free),
            "pool": pool,
            "ready_s": engine.now + delay,
        }
        self._charge(flight, pod)
        self.in_flight.append(flight)
        engine.push(engine.now + delay, "node-ready", flight)
        engine.log(
            "node-launched",
            node=node.metadata.name,
            pool=pool.name,
            instance_type=tpl.instance.name,
            ready_s=engine.now + delay,
        )
        engine.nodes_added.append(
            {
                "node": node.metadata.name,
                "pool": pool.name,
                "autoscaler": pool.kind,
                "instance_type": tpl.instance.name,
                "launched_s": engine.now,
                "ready_s": engine.now + delay,
                "cold_start": [
                    {"phase": p.name, "seconds": p.seconds, "figure": p.figure}
                    for p in engine.cold.node_phases(pool.kind, gpu)
                ],
            }
        )

    def _charge(self, flight: dict[str, Any], pod: SimPod) -> None:
        try:
            req = pod_requests(pod.pod)
        except (ValueError, TypeError):
            req = {}
        free = flight["free"]
        for res, amount in req.items():
            free[res] = free.get(res, 0) - amount
        free["pods"] = free.get("pods", 0) - 1
        flight.setdefault("pods", []).append(pod)
        self.covered.add(id(pod))

    def node_ready(self, engine: Engine, flight: dict[str, Any]) -> None:
        node: Node = flight["node"]
        self.in_flight.remove(flight)
        for pod in flight.get("pods", []):
            self.covered.discard(id(pod))
        engine.sim.add_node(node)
        engine.fresh_nodes.add(node.metadata.name)
        engine.log("node-ready", node=node.metadata.name, pool=flight["pool"].name)
