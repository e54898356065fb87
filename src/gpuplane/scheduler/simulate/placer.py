"""Fast scheduling cycles for simulate: nodes grouped into dynamic equivalence classes.

Why: a simulation places tens of thousands of pods on thousands of nodes; running the full
per-node framework for each pod is milliseconds. Two nodes with the same *static class*
(``ClusterIndex.class_ids``: labels except hostname, taints, cordon) and the same allocatable
and requested vectors get the same verdict from every Filter plugin the default profile runs
for an ordinary pod and the same score from every Score plugin the model computes
(``scheduler/scoring.py``), so one evaluation per class stands for all its members. After a
bind only the chosen node changes class (``node_changed``), which keeps each cycle a few
numpy operations over the classes instead of the nodes. Each pod shape keeps, per class slot,
whether it fits and its base score, and catches up only on the slots (re)assigned since its
last cycle (``FastPlacer.log``; one or two per bind, evaluated in plain Python): a cycle is then
one mask, one ``flatnonzero`` and one ``argmax`` (bench: ~20,000 placements/s on 5,000 nodes).

Exactness: the class path is taken only when the pod's active plugins (upstream PreFilter
``Skip`` semantics, ``Framework.run_prefilter``) are static plugins evaluated per class plus
NodeResourcesFit, with no PreFilterResult node subset, no per-node static key (hostname
selectors) and no nominated pods; anything else (host ports, pod (anti-)affinity, topology
spread, volumes, DRA) runs the full :meth:`Scheduler.schedule_one`, and so do pods whose score
depends on the pods on each node: ImageLocality, preferred pod (anti-)affinity, ScheduleAnyway
spread or the system default spread constraints (a pod selected by a Service or owned by a
ReplicaSet / StatefulSet / ReplicationController in the snapshot). The node chosen is the one
``schedule_one`` picks: highest total score, lowest node index on ties (tested against it).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.k8s.requests import pod_nonzero_requests
from gpuplane.k8s.selectors import preferred_node_affinity_score
from gpuplane.k8s.tolerations import count_intolerable_prefer_no_schedule
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.plugins.base import VectorFilter
from gpuplane.scheduler.plugins.node_resources_fit import FitState
from gpuplane.scheduler.preemption import PreemptionOutcome
from gpuplane.scheduler.runtime import first_failure
from gpuplane.scheduler.scoring import (
    MAX_NODE_SCORE,
    WEIGHTS,
    has_local_images,
    preferred_pod_terms,
    resource_score,
    resource_scores,
)
from gpuplane.scheduler.spread_scoring import default_selector, may_score_spread

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.state import SimCluster

_NONE = np.iinfo(np.int64).max
# score * _KEY_SHIFT - lowest node index orders classes as schedule_one does (indexes < 2^32)
_KEY_SHIFT = 1 << 32
_SCALAR_SYNC = 8  # up to this many changed slots, a shape catches up slot by slot
W_AFF = WEIGHTS["NodeAffinity"]
W_TAINT = WEIGHTS["TaintToleration"]


@dataclass(slots=True)
class Shape:
    """What one pod spec needs, computed once: static verdict per static class, resource rows."""

    ok_static: np.ndarray  # bool per static class
    rows: np.ndarray  # resource rows the pod requests (> 0)
    want: np.ndarray  # amounts for ``rows``
    cpu_nz: int
    mem_nz: int
    cpu_req: int  # actual requests (BalancedAllocation: useRequested)
    mem_req: int
    balanced: bool  # False for a best-effort pod (BalancedAllocation PreScore Skip)
    aff_raw: np.ndarray  # per static class
    taint_raw: np.ndarray  # per static class
    impossible: bool  # requests a resource no node has
    rows_list: list[int] = field(default_factory=list)  # ``rows`` / ``want`` as Python ints
    want_list: list[int] = field(default_factory=list)
    uniform: bool = False  # NodeAffinity / TaintToleration raw scores equal on every class
    # Per class slot, kept in step with the slots (re)assigned since (``FastPlacer.log``):
    fit: np.ndarray | None = None  # static verdict, pod count and free resources all pass
    base: np.ndarray | None = None  # LeastAllocated + BalancedAllocation weighted score
    synced: int = 0  # how much of ``FastPlacer.log`` is applied to ``fit`` / ``base``


def _affects_others(pod: Pod) -> bool:
    """A placed pod that changes other pods' filters (pod (anti-)affinity, host ports)."""
    spec = pod.spec
    affinity = spec.affinity
    if affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None):
        return True
    return any(port.host_port for c in spec.containers for port in c.ports)


class FastPlacer:
    """Dynamic node classes over a :class:`SimCluster` (see module docstring)."""

    def __init__(self, sim: SimCluster) -> None:
        self.sim = sim
        self.rebuild()

    # -- class bookkeeping -----------------------------------------------------------------

    def rebuild(self) -> None:
        index = self.sim.sched.index
        self.n_rows = len(index.resource_index)
        cap = 64
        self.k = 0
        self.c_static = np.zeros(cap, dtype=np.int64)
        self.c_alloc = np.zeros((self.n_rows, cap), dtype=np.int64)
        self.c_req = np.zeros((self.n_rows, cap), dtype=np.int64)
        self.c_count = np.zeros(cap, dtype=np.int64)
        self.c_min = np.full(cap, _NONE, dtype=np.int64)
        self.c_gen = np.zeros(cap, dtype=np.int64)  # bumps when a slot gets a new class
        self.members: list[list[int]] = []
        # slot ids in the order they got a (new) class: shapes catch up on these only
        self.log: list[int] = []
        self.keys: dict[tuple, int] = {}
        self.key_of: list[tuple] = []
        self.free_slots: list[int] = []
        self.node_class = np.full(index.num_nodes, -1, dtype=np.int64)
        # keyed by id(pod.spec); the spec is kept in the value so a reused id never aliases
        self.n_static = len(index.class_reps)
        self.shapes: dict[int, tuple[object, Shape | None]] = {}
        # id(spec) -> (spec, released, version, priority, result, preemption outcome)
        self.failures: dict[
            int, tuple[object, int, int, int, ScheduleResult | FitError, PreemptionOutcome | None]
        ] = {}
        rows = index.resource_index
        self.pods_row = rows["pods"]
        self.cpu_row = rows.get("cpu")
        self.mem_row = rows.get("memory")
        for j in range(index.num_nodes):
            self._insert(j)

    def _grow(self) -> None:
        cap = len(self.c_static) * 2
        self.c_static = np.resize(self.c_static, cap)
        self.c_count = np.resize(self.c_count, cap)
        c_min = np.full(cap, _NONE, dtype=np.int64)
        c_min[: self.k] = self.c_min[: self.k]
        self.c_min = c_min
        c_gen = np.zeros(cap, dtype=np.int64)
        c_gen[: self.k] = self.c_gen[: self.k]
        self.c_gen = c_gen
        for name in ("c_alloc", "c_req"):
            old = getattr(self, name)
            new = np.zeros((self.n_rows, cap), dtype=np.int64)
            new[:, : self.k] = old[:, : self.k]
            setattr(self, name, new)

    def _insert(self, j: int) -> None:
        index = self.sim.sched.index
        alloc = index.alloc[:, j]
        req = index.req[:, j]
        static = int(index.class_ids[j])
        key = (static, alloc.tobytes(), req.tobytes())
        cid = self.keys.get(key)
        if cid is None:
            if self.free_slots:
                cid = self.free_slots.pop()
                self.key_of[cid] = key
            else:
                if self.k == len(self.c_static):
                    self._grow()
                cid = self.k
                self.k += 1
                self.members.append([])
                self.key_of.append(key)
            self.keys[key] = cid
            self.log.append(cid)
            self.c_gen[cid] += 1
            self.c_static[cid] = static
            self.c_alloc[:, cid] = alloc
            self.c_req[:, cid] = req
            self.c_count[cid] = 0
            self.c_min[cid] = _NONE
        bucket = self.members[cid]
        bisect.insort(bucket, j)
        self.c_count[cid] += 1
        self.c_min[cid] = bucket[0]
        self.node_class[j] = cid

    def node_added(self, j: int) -> None:
        """Node ``j`` was appended (autoscaler). A new resource row or a new static class
        changes every cached shape, so those rebuild; otherwise the node just joins its class."""
        index = self.sim.sched.index
        if len(index.resource_index) != self.n_rows or len(index.class_reps) != self.n_static:
            self.rebuild()
            return
        self.node_class = np.append(self.node_class, np.int64(-1))
        self._insert(j)

    def node_changed(self, j: int) -> None:
        """Node ``j``'s requested vector changed: move it to its new class."""
        index = self.sim.sched.index
        if len(index.resource_index) != self.n_rows:
            self.rebuild()
            return
        cid = int(self.node_class[j])
        bucket = self.members[cid]
        pos = bisect.bisect_left(bucket, j)
        del bucket[pos]
        self.c_count[cid] -= 1
        self.c_min[cid] = bucket[0] if bucket else _NONE
        if not bucket:  # recycle the slot so the class arrays stay as small as the live classes
            del self.keys[self.key_of[cid]]
            self.free_slots.append(cid)
        self._insert(j)
        info = index.node_infos[j]
        if info.pods and _affects_others(info.pods[-1]):
            self.shapes.clear()

    # -- per pod spec ----------------------------------------------------------------------

    def _shape(self, pod: Pod) -> Shape | None:
        key = id(pod.spec)
        cached = self.shapes.get(key)
        if cached is not None and cached[0] is pod.spec:
            return cached[1]
        shape = self._compute_shape(pod)
        self.shapes[key] = (pod.spec, shape)
        return shape

    def _compute_shape(self, pod: Pod) -> Shape | None:
        sched = self.sim.sched
        index = sched.index
        if index.nominated:
            return None
        fw = sched.framework
        ctx = sched.context(pod)
        active, rejected, subset = fw.run_prefilter(ctx)
        if rejected is not None or subset is not None:
            return None
        active_ids = {id(p) for p in active}
        for plugin in fw.dynamic_plugins:
            if id(plugin) in active_ids and not isinstance(plugin, VectorFilter):
                return None
        static = [p for p in fw.static_plugins if id(p) in active_ids]
        if any(p.static_key(ctx) for p in static):
            return None
        if has_local_images(ctx):
            return None  # ImageLocality differs node by node (status.images): the per-node path scores it
        if preferred_pod_terms(pod):
            return None  # InterPodAffinity scores depend on the pods on each node
        if pod.spec.topology_spread_constraints:
            if may_score_spread(pod):
                return None  # ScheduleAnyway: PodTopologySpread scores depend on the pods on each node
        elif not default_selector(ctx).empty():
            return None  # the system default spread constraints apply (Service / controller member)
        infos = index.node_infos
        reps = index.class_reps
        ok = np.array([first_failure(ctx, static, infos[r]) is None for r in reps], dtype=bool)
        fit_state = ctx.state.read(FitState)
        names = fit_state.resources if fit_state is not None else []
        rows: list[int] = []
        want: list[int] = []
        impossible = False
        for name in names:
            row = index.resource_index.get(name)
            if row is None:
                impossible = True
                continue
            rows.append(row)
            want.append(ctx.requests[name])
        try:
            nonzero = pod_nonzero_requests(pod)
        except (ValueError, TypeError):
            nonzero = {}
        aff = np.array([preferred_node_affinity_score(pod, infos[r].node) for r in reps], dtype=np.int64)
        taint = np.array(
            [
                count_intolerable_prefer_no_schedule(infos[r].node.spec.taints, pod.spec.tolerations)
                for r in reps
            ],
            dtype=np.int64,
        )
        return Shape(
            rows_list=rows,
            want_list=want,
            uniform=bool((aff == aff[0]).all() and (taint == taint[0]).all()) if len(reps) else True,
            ok_static=ok,
            rows=np.array(rows, dtype=np.int64),
            want=np.array(want, dtype=np.int64),
            cpu_nz=int(nonzero.get("cpu", 0)),
            mem_nz=int(nonzero.get("memory", 0)),
            cpu_req=int(ctx.requests.get("cpu", 0)),
            mem_req=int(ctx.requests.get("memory", 0)),
            balanced=bool(ctx.requests.get("cpu", 0) or ctx.requests.get("memory", 0)),
            aff_raw=aff,
            taint_raw=taint,
            impossible=impossible,
        )

    # -- the cycle -------------------------------------------------------------------------

    def schedule(self, pod: Pod) -> ScheduleResult | FitError:
        sched = self.sim.sched
        if sched.index.num_nodes == 0:
            return FitError(num_all_nodes=0, groups=[])
        shape = self._shape(pod)
        if shape is None:
            return sched.schedule_one(pod)
        if shape.impossible:
            return self._failure(pod)
        if shape.synced != len(self.log) or shape.fit is None or len(shape.fit) != len(self.c_gen):
            self._sync(shape)
        fit, base = shape.fit, shape.base
        assert fit is not None and base is not None  # _sync fills both
        k = self.k
        idx = np.flatnonzero(fit[:k] & (self.c_count[:k] > 0))
        if len(idx) == 0:
            return self._failure(pod)
        total = base[idx] if shape.uniform else self._scores(shape, idx)
        # highest score, then the lowest node index (``schedule_one``'s tie-break), in one pass
        pos = int(np.argmax(total * _KEY_SHIFT - self.c_min[idx]))
        j = int(self.c_min[idx[pos]])
        return ScheduleResult(
            node=sched.index.node_infos[j].name,
            evaluated_nodes=sched.index.num_nodes,
            feasible_nodes=int(self.c_count[idx].sum()),
        )

    def _sync(self, shape: Shape) -> None:
        """Bring the shape's per-slot fit and base score up to date: only slots that got a
        new class since the last sync change (a class's vectors never change)."""
        cap = len(self.c_gen)
        if shape.fit is None or len(shape.fit) != cap:
            fit = np.zeros(cap, dtype=bool)
            base = np.zeros(cap, dtype=np.int64)
            if shape.fit is not None and shape.base is not None:
                fit[: len(shape.fit)] = shape.fit
                base[: len(shape.base)] = shape.base
                slots = np.unique(np.array(self.log[shape.synced :], dtype=np.int64))
            else:
                slots = np.arange(self.k, dtype=np.int64)
            shape.fit, shape.base = fit, base
        else:
            tail = self.log[shape.synced :]
            if len(tail) <= _SCALAR_SYNC:
                # a few slots (the usual case: one bind moved one node): plain Python beats
                # numpy's per-call overhead on 1-element arrays
                shape.synced = len(self.log)
                for cid in set(tail):
                    self._sync_slot(shape, cid)
                return
            slots = np.unique(np.array(tail, dtype=np.int64))
        shape.synced = len(self.log)
        if not len(slots):
            return
        c_alloc = self.c_alloc
        c_req = self.c_req
        pr = self.pods_row
        ok = shape.ok_static[self.c_static[slots]] & (c_req[pr, slots] + 1 <= c_alloc[pr, slots])
        if len(shape.rows):
            free = c_alloc[np.ix_(shape.rows, slots)] - c_req[np.ix_(shape.rows, slots)]
            ok &= (free >= shape.want[:, None]).all(axis=0)
        assert shape.fit is not None and shape.base is not None  # both allocated above
        shape.fit[slots] = ok
        shape.base[slots] = self._base_scores(shape, slots)

    def _sync_slot(self, shape: Shape, cid: int) -> None:
        """One slot's fit and base score: the scalar twin of the vector path in :meth:`_sync`
        and :meth:`_base_scores` (same integer and float64 arithmetic)."""
        assert shape.fit is not None and shape.base is not None
        alloc = self.c_alloc[:, cid].tolist()
        req = self.c_req[:, cid].tolist()
        pr = self.pods_row
        ok = bool(shape.ok_static[self.c_static[cid]]) and req[pr] + 1 <= alloc[pr]
        if ok:
            for row, want in zip(shape.rows_list, shape.want_list, strict=True):
                if alloc[row] - req[row] < want:
                    ok = False
                    break
        shape.fit[cid] = ok
        cpu, mem = self.cpu_row, self.mem_row
        shape.base[cid] = resource_score(
            alloc[cpu] if cpu is not None else 0,
            req[cpu] + shape.cpu_nz if cpu is not None else 0,
            alloc[mem] if mem is not None else 0,
            req[mem] + shape.mem_nz if mem is not None else 0,
            req[cpu] + shape.cpu_req if cpu is not None else 0,
            req[mem] + shape.mem_req if mem is not None else 0,
            shape.balanced,
        )

    def _scores(self, shape: Shape, idx: np.ndarray) -> np.ndarray:
        """``score_nodes`` over classes: the cached LeastAllocated + BalancedAllocation score,
        plus normalized NodeAffinity and TaintToleration (same integer arithmetic), whose
        normalization depends on the feasible set."""
        assert shape.base is not None
        total = shape.base[idx]
        static = self.c_static[idx]
        aff = shape.aff_raw[static]
        top = int(aff.max())
        if top:
            total = total + (aff * MAX_NODE_SCORE // top) * W_AFF
        taint = shape.taint_raw[static]
        top = int(taint.max())
        if top:
            total = total + (MAX_NODE_SCORE - taint * MAX_NODE_SCORE // top) * W_TAINT
        else:
            total = total + MAX_NODE_SCORE * W_TAINT
        return total

    def _base_scores(self, shape: Shape, idx: np.ndarray) -> np.ndarray:
        columns = []
        balanced_used = []
        for row, extra, real in (
            (self.cpu_row, shape.cpu_nz, shape.cpu_req),
            (self.mem_row, shape.mem_nz, shape.mem_req),
        ):
            if row is None:
                zeros = np.zeros(len(idx), dtype=np.int64)
                columns += [zeros, zeros]
                balanced_used.append(zeros)
            else:
                columns += [self.c_alloc[row, idx], self.c_req[row, idx] + extra]
                balanced_used.append(self.c_req[row, idx] + real)
        return resource_scores(
            columns[0],
            columns[1],
            columns[2],
            columns[3],
            cpu_balanced=balanced_used[0],
            mem_balanced=balanced_used[1],
            balanced=shape.balanced,
        )

    def schedule_or_preempt(self, pod: Pod) -> tuple[ScheduleResult | FitError, PreemptionOutcome | None]:
        """:meth:`schedule` plus DefaultPreemption's outcome when nothing fits (one full cycle,
        ``Scheduler.schedule_or_preempt``; its answer is reused while still exact)."""
        sched = self.sim.sched
        if sched.index.num_nodes == 0:
            return FitError(num_all_nodes=0, groups=[]), None
        shape = self._shape(pod)
        if shape is None:
            return sched.schedule_or_preempt(pod)
        result = self.schedule(pod)
        if isinstance(result, ScheduleResult):
            return result, None
        return self._failure_entry(pod)[4:]

    def _failure(self, pod: Pod) -> ScheduleResult | FitError:
        return self._failure_entry(pod)[4]

    def _failure_entry(
        self, pod: Pod
    ) -> tuple[object, int, int, int, ScheduleResult | FitError, PreemptionOutcome | None]:
        """The full cycle's answer (FitError text, preemption outcome), cached per pod spec.

        Binds only take resources, so a shape that failed keeps failing until resources are
        released (a pod removed, a node added); its message's node counts may lag until the
        engine refreshes the final messages (``Engine.refresh_messages``). The preemption
        outcome stays exact while no victim candidate appeared: an outcome that found no
        victims is reused only if no pod of lower priority was bound since (a nominated
        outcome is never reused: acting on it changes the cluster).
        """
        sim = self.sim
        key = id(pod.spec)
        cached = self.failures.get(key)
        if cached is not None and cached[0] is pod.spec and cached[1] == sim.released:
            outcome = cached[5]
            if outcome is None or (
                outcome.nominated_node is None and not sim.lower_bound_since(cached[3], cached[2])
            ):
                return cached
        priority = sim.sched.index.priority(pod)
        result, outcome = sim.sched.schedule_or_preempt(pod)
        entry = (pod.spec, sim.released, sim.version, priority, result, outcome)
        self.failures[key] = entry
        return entry
