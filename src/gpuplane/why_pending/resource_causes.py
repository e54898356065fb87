"""Causes of an ``Insufficient <resource>`` verdict: MIG / time-slicing renames, reservations for
nominated pods, fragmentation and shortage, each over every node that gave the verdict.

Why a module of its own: these causes read the most nodes (every node short of the GPU the pod
asks, often the whole cluster), so they are computed per distinct answer over the scheduler
index's arrays (``node_facts``), never per node: a pod's cost grows with the node shapes and the
distinct free amounts, not with the nodes (issue 14). Texts, counts and orders are those of the
walk over the nodes the causes were first written as (``tests/scheduler/test_resource_causes.py``
checks them against it on random clusters).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuplane.gpu.resources import classify, is_gpu_resource, parse_mig_profile
from gpuplane.gpu.sharing import Replication, UnitCount, unit_word
from gpuplane.scheduler.plugins.node_resources_fit import INSUFFICIENT
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.model import RANK_CAPACITY, RANK_DECISIVE, RANK_FRAGMENTATION, Cause, Explanation
from gpuplane.why_pending.node_facts import amounts, exposed, first_seen, mig_single, names_of, node_kinds

_CANONICAL = "why-pending/canonical"


def group_ids(sched: Scheduler, expl: Explanation) -> list[np.ndarray]:
    """Per group of ``expl``, its nodes' indexes, each the index ``by_name`` gives its name (a
    dump may name two nodes alike: the causes read the node the name finds, as they always did)."""
    index = sched.index
    if len(expl.node_ids) != len(expl.groups):
        by_name = index.by_name
        return [
            np.array([by_name[n] for n in names if n in by_name], dtype=np.intp) for _, names in expl.groups
        ]
    canonical = index.cache.get(_CANONICAL)
    if canonical is None or len(canonical) != index.num_nodes:
        canonical = index.cache[_CANONICAL] = np.array(
            [index.by_name[info.name] for info in index.node_infos], dtype=np.intp
        )
    return [canonical[ids] for ids in expl.node_ids]


def only_short_of(expl: Explanation, resource: str) -> list[str]:
    """Nodes whose only failing reason is ``Insufficient <resource>`` (NodeResourcesFit, any
    status code): the nodes that pass every other check, whose free ``resource`` is the room
    the pod could use. The node set why-pending and diagnose count free devices on."""
    wanted = (INSUFFICIENT + resource,)
    return [
        name
        for status, names in expl.groups
        if status.plugin == "NodeResourcesFit" and tuple(status.reasons) == wanted
        for name in names
    ]


def only_short_of_ids(sched: Scheduler, expl: Explanation, resource: str) -> np.ndarray:
    """:func:`only_short_of` as node indexes."""
    wanted = (INSUFFICIENT + resource,)
    ids = group_ids(sched, expl)
    parts = [
        ids[g]
        for g, (status, _) in enumerate(expl.groups)
        if status.plugin == "NodeResourcesFit" and tuple(status.reasons) == wanted
    ]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)


def resource_causes(
    sched: Scheduler, expl: Explanation, resource: str, want: int, groups: list[int]
) -> list[Cause]:
    """The causes of ``Insufficient <resource>`` on the nodes of ``expl.groups[g]`` for ``g`` in
    ``groups`` (every NodeResourcesFit group with that reason, in order)."""
    count = sum(len(expl.groups[g][1]) for g in groups)
    if not is_gpu_resource(resource):
        return [
            Cause(
                "resource",
                RANK_CAPACITY,
                count,
                f"{count} node(s) lack {resource}: the pod requests {_fmt(resource, want)}",
            )
        ]
    ids_of = group_ids(sched, expl)
    wanted = (INSUFFICIENT + resource,)
    ids = np.concatenate([ids_of[g] for g in groups]) if groups else np.empty(0, dtype=np.intp)
    # Only the nodes whose sole failure is this resource speak for its shortage: a node that
    # also lacks memory, cpu, ... is explained by that cause, and its free devices are no room.
    only = (
        np.concatenate(
            [np.full(len(ids_of[g]), tuple(expl.groups[g][0].reasons) == wanted, dtype=bool) for g in groups]
        )
        if groups
        else np.empty(0, dtype=bool)
    )
    alloc, req = amounts(sched.index, resource, ids)
    has = alloc > 0
    out: list[Cause] = []
    if not has.all():
        out.extend(_renamed_resource(sched, expl, resource, want, ids[~has]))
    keep = has & only
    if not keep.any():
        return out
    ids, alloc, req = ids[keep], alloc[keep], req[keep]
    reserved = _nominated_reservations(sched, expl, resource, ids)
    rest = np.ones(len(ids), dtype=bool)
    held: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    if reserved:
        names = sched.node_names()
        for pos in np.flatnonzero(np.isin(ids, np.fromiter(reserved, dtype=np.intp))).tolist():
            free_now = int(alloc[pos] - req[pos])
            if free_now >= want:
                # Room that is free on the node but promised to nominated pods: that, not
                # fragmentation or load, is why this node failed.
                keys = tuple(key for key, _, _ in reserved[int(ids[pos])])
                held.setdefault(keys, []).append((names[ids[pos]], free_now))
                rest[pos] = False
    for keys, nodes in held.items():
        out.append(_reservation_cause(sched, expl, resource, want, reserved, keys, nodes))
    if rest.any():
        out.append(_shortage_cause(sched, resource, want, ids[rest], alloc[rest], req[rest], reserved))
    return out


def _nominated_reservations(
    sched: Scheduler, expl: Explanation, resource: str, ids: np.ndarray
) -> dict[int, list[tuple[str, int, int]]]:
    """Node index -> ``[(pod key, priority, amount of resource)]`` of other pods nominated
    there with priority >= this pod's.

    kube-scheduler's ``RunFilterPluginsWithNominatedPods`` (pkg/scheduler/framework/runtime/
    framework.go; reference/scheduling.md §3.6) filters every node as if those pods were
    already on it, so their requests are not free room for this pod. Same set as
    ``Scheduler._nominated_extra`` uses for the verdicts.
    """
    from gpuplane.k8s.requests import pod_requests  # deferred for start-up time

    index = sched.index
    if not index.nominated:
        return {}
    wanted = np.zeros(index.num_nodes, dtype=bool)
    wanted[ids] = True
    me = expl.pod
    mine = index.priority(me)
    out: dict[int, list[tuple[str, int, int]]] = {}
    for other, j in index.nominated:
        if not wanted[j] or other is me or (other.metadata.uid and other.metadata.uid == me.metadata.uid):
            continue
        prio = index.priority(other)
        if prio < mine:
            continue
        try:
            amount = pod_requests(other).get(resource, 0)
        except (ValueError, TypeError):
            continue
        if amount > 0:
            key = f"{other.metadata.namespace or 'default'}/{other.metadata.name}"
            out.setdefault(j, []).append((key, prio, amount))
    return out


def _reservation_cause(
    sched: Scheduler,
    expl: Explanation,
    resource: str,
    want: int,
    reserved: dict[int, list[tuple[str, int, int]]],
    keys: tuple[str, ...],
    nodes: list[tuple[str, int]],
) -> Cause:
    """Nodes whose free GPUs would fit the pod but are held for nominated pods."""
    index = sched.index
    holders = reserved[index.by_name[nodes[0][0]]]
    who = ", ".join(f"{key} (priority {prio}, {amount} {resource})" for key, prio, amount in holders)
    mine = index.priority(expl.pod)
    names = [name for name, _ in nodes]
    free = sum(f for _, f in nodes)
    left = max(max(f - sum(a for _, _, a in reserved[index.by_name[name]]) for name, f in nodes), 0)
    one = len(names) == 1
    plural = "" if len(holders) == 1 else "s"
    cause = (
        f"the {free} free {resource} on {_nodes(len(names), names)} {'is' if free == 1 else 'are'} reserved "
        f"for the nominated pod{plural} {who}, of priority >= the pod's ({mine}): kube-scheduler counts pods "
        f"nominated to a node (status.nominatedNodeName, set by preemption) as already running there when "
        f"filtering (RunFilterPluginsWithNominatedPods): that leaves at most {left} for this pod, which asks "
        f"for {want}"
    )
    fix = (
        f"wait for {keys[0]}{' and the others' if len(keys) > 1 else ''} to bind to {names[0]}"
        f"{' and the other nodes' if not one else ''} (its next scheduling attempt), then for {want} {resource} "
        f"to free up; or add GPU nodes (or let the autoscaler) so the pod has room of its own"
    )
    return Cause("reserved", RANK_DECISIVE, len(names), cause, fix)


def _replicas_word(count: int) -> str:
    return " replica" if count == 1 else " replicas"


def _add_units(
    units: UnitCount, shared: Replication | None, amount: np.ndarray, ids: np.ndarray, names: np.ndarray
) -> None:
    """``UnitCount.add`` of each node's ``amount`` (nodes ``ids``, all shared alike), at once."""
    positive = amount > 0
    if not positive.any():
        return
    total = int(amount[positive].sum())
    if shared is None:
        units.whole += total
        return
    units.replicas[shared.strategy] = units.replicas.get(shared.strategy, 0) + total
    units.shared_nodes.update(names[ids[positive]].tolist())


def _shortage_cause(
    sched: Scheduler,
    resource: str,
    want: int,
    ids: np.ndarray,
    alloc: np.ndarray,
    req: np.ndarray,
    reserved: dict[int, list[tuple[str, int, int]]],
) -> Cause:
    """Fragmentation (enough free in total, never enough on one node) or plain shortage.

    Free counts subtract what nominated pods of >= priority hold, as the Filter did. Time-sliced
    or MPS replicas are counted apart from whole GPUs (gpu/sharing.py): kube-scheduler adds them
    up alike, but 4 free replicas of one L4 are not 4 free GPUs. Counted per node kind (sharing
    and model) and distinct free amount, not per node."""
    free = alloc - req
    held = 0
    if reserved:
        for pos in np.flatnonzero(np.isin(ids, np.fromiter(reserved, dtype=np.intp))).tolist():
            amount = sum(a for _, _, a in reserved[int(ids[pos])])
            free[pos] -= amount
            held += amount
    positive_free = np.maximum(free, 0)
    total_free = int(positive_free.sum())
    kind_of, kinds = node_kinds(sched, resource, ids)
    names = sched.node_names()
    free_units, all_units = UnitCount(), UnitCount()
    # (model, replicas?) -> [(count, free, first position)], as a Counter over the nodes counts
    entries: list[tuple[int, int, str, int, bool]] = []
    by_label: dict[tuple[str, bool], np.ndarray] = {}
    for k in np.unique(kind_of).tolist():
        shared, model = kinds[k]
        members = kind_of == k
        _add_units(free_units, shared, positive_free[members], ids[members], names)
        _add_units(all_units, shared, alloc[members], ids[members], names)
        label = (model, shared is not None)
        by_label[label] = by_label[label] | members if label in by_label else members
    for (model, replicas), members in by_label.items():
        positions = np.flatnonzero(members)
        values, first, counts = np.unique(positive_free[positions], return_index=True, return_counts=True)
        for f, at, c in zip(values.tolist(), first.tolist(), counts.tolist(), strict=True):
            entries.append((int(c), int(f), model, int(positions[at]), replicas))
    # unit_word reads only the MIG strategy label: one node labelled "single" speaks for all.
    single = mig_single(sched)[ids]
    labels = [sched.index.node_infos[int(ids[int(np.argmax(single))])].labels] if single.any() else []
    unit = unit_word(resource, labels)
    parts = ", ".join(
        f"{c} {model + ' ' if model else ''}node(s) with {f} free{_replicas_word(f) if replicas else ''}"
        for c, f, model, _, replicas in sorted(entries, key=lambda e: (-e[0], -e[1], e[2], e[3]))
    )
    biggest = max(int(free.max()), 0)
    held_note = f", after {held} held for nominated pods of >= priority" if held else ""
    count = len(ids)
    if total_free >= want and biggest < want:
        return Cause(
            "fragmentation",
            RANK_FRAGMENTATION,
            count,
            f"the {count} node(s) with {resource} that pass the other checks have {parts}; "
            f"the pod asks for {want} on one node: fragmentation ({free_units.text(unit, free=True)}"
            f"{'' if free_units.replicas else ' in total'}, at most {biggest} on any node{held_note})",
            f"pack small GPU jobs (a MostAllocated / RequestedToCapacityRatio scoring profile) or drain one node "
            f"(kubectl cordon <node> and move its jobs) to reassemble {want} free {resource}; or split the pod into "
            f"pods of at most {biggest}"
            if biggest
            else None,
        )
    fix = "wait for running jobs to finish, add GPU nodes (or let the autoscaler), or lower the request"
    if total_free <= 0:
        return Cause(
            "shortage",
            RANK_CAPACITY,
            count,
            f"all {resource} are in use on the {count} node(s) that pass the other checks: "
            f"0 free of {all_units.text(unit)} ({parts}{held_note}); the pod asks for {want}",
            fix,
        )
    return Cause(
        "shortage",
        RANK_CAPACITY,
        count,
        f"only {total_free} of {all_units.total} {resource} {'is' if total_free == 1 else 'are'} free on the "
        f"{count} node(s) that pass the other checks ({parts}{held_note})"
        + (f", that is {free_units.text(unit, free=True)}" if free_units.replicas else "")
        + f"; the pod asks for {want} on one node",
        fix,
    )


def _max_gpus_per_container(expl: Explanation, resource: str) -> int:
    """The largest count of ``resource`` one container (or init container) asks for: a
    CUDA process sees one MIG device, so a MIG slice can stand in for at most 1 GPU each."""
    from gpuplane.k8s.quantity import parse_quantity  # deferred for start-up time

    best = 0
    spec = expl.pod.spec
    for container in (*spec.containers, *spec.init_containers):
        res = container.resources
        raw = (res.limits or {}).get(resource) or (res.requests or {}).get(resource)
        if raw is None:
            continue
        try:
            best = max(best, int(parse_quantity(str(raw))))
        except (ValueError, TypeError):
            continue
    return best


# The categories of a node that does not advertise the asked name, in the order their causes come.
_MIG_FIT, _MIG_NO, _SHARED_FIT, _SHARED_NO, _PLAIN = range(5)


def _renamed_resource(
    sched: Scheduler, expl: Explanation, resource: str, want: int, ids: np.ndarray
) -> list[Cause]:
    """Nodes that do not advertise the GPU name the pod asks: MIG mixed strategy, time-slicing
    rename, or no GPU at all.

    A rename is offered as a fix only when what the node exposes could serve the pod
    (reference/nvidia-gpu-stack.md): a MIG profile with ``want`` slices free on that node,
    each container asking at most one GPU (a CUDA process uses one MIG device), the profile
    with the most memory chosen; time-sliced replicas with ``want`` free. Otherwise the node
    gets one short cause and no fix. Nodes are sorted into (category, exposed names, usable
    name) answers per distinct set of exposed names, with numpy over their free amounts.
    """
    kind = classify(resource)
    asks_whole = kind is not None and kind.kind == "gpu"
    per_container = _max_gpus_per_container(expl, resource) if asks_whole else want
    index = sched.index
    facts = exposed(sched, resource)
    mig_of, shared_of = facts.mig[ids], facts.shared[ids]
    answer = np.zeros(len(ids), dtype=np.int64)
    answers: dict[tuple[Any, ...], int] = {(_PLAIN,): 0}

    def number(key: tuple[Any, ...]) -> int:
        return answers.setdefault(key, len(answers))

    for m in np.unique(mig_of[mig_of >= 0]).tolist():
        names = facts.names[m]
        shown = ", ".join(names)
        positions = np.flatnonzero(mig_of == m)
        usable = np.full(len(positions), -1, dtype=np.int64)
        if asks_whole and per_container <= 1:
            # max(fitting, key=memory): the first of the largest profiles that has room.
            for i in sorted(range(len(names)), key=lambda i: _mig_memory(names[i]), reverse=True):
                alloc, req = amounts(index, names[i], ids[positions])
                usable[(alloc - req >= want) & (usable < 0)] = i
        codes = [number((_MIG_FIT, shown, names[i])) if i >= 0 else -1 for i in range(len(names))]
        no_fit = number((_MIG_NO, shown))
        answer[positions] = [no_fit if u < 0 else codes[u] for u in usable.tolist()]
    for s in np.unique(shared_of[(shared_of >= 0) & (mig_of < 0)]).tolist():
        names = facts.names[s]
        positions = np.flatnonzero((shared_of == s) & (mig_of < 0))
        fits = np.zeros(len(positions), dtype=bool)
        for name in names:
            alloc, req = amounts(index, name, ids[positions])
            fits |= alloc - req >= want
        shown = ", ".join(names)
        answer[positions] = np.where(fits, number((_SHARED_FIT, shown)), number((_SHARED_NO, shown)))
    keys = list(answers)
    found = sorted(first_seen(answer), key=lambda item: keys[item[0]][0])  # stable: first seen within
    out: list[Cause] = []
    for code, positions in found:
        key = keys[code]
        count = len(positions)
        first = names_of(sched, ids[positions], 3)
        one = count == 1
        where = _nodes(count, first)
        if key[0] == _MIG_FIT:
            _, shown, usable_name = key
            out.append(
                Cause(
                    "mig",
                    RANK_DECISIVE,
                    count,
                    f"the pod asks {resource} but {where} {'is' if one else 'are'} MIG mixed-strategy and "
                    f"expose{'s' if one else ''} only {shown}; {want} free {usable_name} would serve it",
                    f"resources:\n  limits:\n    {usable_name}: {want}   # or disable MIG on the node: "
                    f"kubectl label node {first[0]} nvidia.com/mig.config=all-disabled --overwrite",
                )
            )
        elif key[0] == _MIG_NO:
            out.append(
                Cause(
                    "mig",
                    RANK_DECISIVE,
                    count,
                    f"{where} {'has its' if one else 'have their'} GPUs MIG-partitioned ({key[1]}) and "
                    f"advertise{'s' if one else ''} no {resource}",
                )
            )
        elif key[0] == _SHARED_FIT:
            out.append(
                Cause(
                    "time-slicing",
                    RANK_DECISIVE,
                    count,
                    f"time-slicing renamed the resource to {key[1]} on {where} (renameByDefault: true): "
                    f"{resource} is not advertised there",
                    f"resources:\n  limits:\n    {key[1].split(', ')[0]}: {want}",
                )
            )
        elif key[0] == _SHARED_NO:
            out.append(
                Cause(
                    "time-slicing",
                    RANK_DECISIVE,
                    count,
                    f"time-slicing renamed the resource to {key[1]} on {where}: {resource} is not advertised "
                    f"there, and fewer than {want} replicas are free",
                )
            )
        else:
            out.append(
                Cause(
                    "no-resource",
                    RANK_CAPACITY,
                    count,
                    f"{where} advertise{'s' if one else ''} no {resource}",
                )
            )
    return out


def _mig_memory(name: str) -> tuple[int, int]:
    """(memory GB, compute slices) of a MIG resource name, to prefer the largest profile."""
    kind = classify(name)
    profile = parse_mig_profile(kind.mig_profile) if kind is not None and kind.mig_profile else None
    return (profile.memory_gb, profile.compute_slices) if profile is not None else (0, 0)


def _nodes(count: int, first: list[str]) -> str:
    """``node a`` or ``5 nodes (a, b, c, ...)``: ``first`` holds at least the first 3 names."""
    if count == 1:
        return f"node {first[0]}"
    shown = ", ".join(first[:3])
    return f"{count} nodes ({shown}{', ...' if count > 3 else ''})"


def _fmt(resource: str, amount: int) -> str:
    """An amount in scheduler units for people: ``64 cpu``, ``500m cpu``, ``2Gi memory``."""
    from gpuplane.k8s.requests import format_amount  # deferred for start-up time

    return format_amount(resource, amount)
