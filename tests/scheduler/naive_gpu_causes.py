"""The reference for ``why_pending.resource_causes`` (tests/scheduler/test_resource_causes.py):
``gpu_causes`` as it was before the causes were computed per distinct answer (issue 14), one
Python step per node name. Kept verbatim but for this docstring and its memo keys (prefixed
``naive/`` so it never shares a memo with the code under test); not imported by gpuplane.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpuplane.gpu.labels import MIG_STRATEGY
from gpuplane.gpu.resources import classify, is_gpu_resource, parse_mig_profile
from gpuplane.gpu.sharing import REPLICA_ADJECTIVE, Replication, UnitCount, replication, unit_word
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.scheduler.framework import NodeInfo
from gpuplane.scheduler.plugins.inter_pod_affinity import ERR_REASON_AFFINITY as AFFINITY_REASON
from gpuplane.scheduler.plugins.inter_pod_affinity import NAME as AFFINITY_PLUGIN
from gpuplane.scheduler.plugins.node_resources_fit import INSUFFICIENT
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.model import (
    RANK_CAPACITY,
    RANK_DECISIVE,
    RANK_FRAGMENTATION,
    RANK_OTHER,
    RANK_PREEMPTION,
    Cause,
    Explanation,
)
from gpuplane.why_pending.prequeue import GANG, VOLCANO_GANG, gang_members, pod_group_of


def _model(sched: Scheduler, node_name: str) -> str:
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    cache = sched.index.cache.setdefault("naive/explain/model", {})
    if node_name in cache:
        return cache[node_name]
    node = sched.cluster.node_by_name.get(node_name)
    if node is None:
        return ""
    try:
        model = catalog().model_for_node_labels(node.metadata.labels)
    except (OSError, ValueError, KeyError):
        model = None
    cache[node_name] = model.name if model is not None else ""
    return cache[node_name]


def add_causes(sched: Scheduler, expl: Explanation) -> None:
    """Fill ``expl.causes`` / ``expl.fixes`` (ranked: GPU capacity first, then placement rules)."""
    if expl.stage == "schedulable":
        node_list = ", ".join(expl.feasible_nodes[:5])
        expl.causes.append(
            Cause(
                "schedulable",
                RANK_DECISIVE,
                len(expl.feasible_nodes),
                f"the pod fits now on {len(expl.feasible_nodes)} node(s) ({node_list}"
                f"{', ...' if len(expl.feasible_nodes) > 5 else ''}): the next scheduling attempt should place it",
            )
        )
        return
    if expl.fit_error is None:
        return
    ranked: list[Cause] = []
    requests = sched.context(expl.pod).requests
    # NodeResourcesFit verdicts are merged per reason across groups: the same reasons can come
    # with different codes (newer minors return UnschedulableAndUnresolvable when a request
    # exceeds allocatable), and the causes must not depend on the wording version.
    by_reason: dict[str, list[str]] = {}
    for status, names in expl.groups:
        if status.plugin == "NodeResourcesFit":
            for reason in status.reasons:
                by_reason.setdefault(reason, []).extend(names)
    for reason, names in by_reason.items():
        if reason.startswith(INSUFFICIENT):
            resource = reason[len(INSUFFICIENT) :]
            ranked.extend(_resource_causes(sched, expl, resource, requests.get(resource, 0), names))
        else:
            ranked.append(
                Cause(
                    "pods",
                    RANK_CAPACITY,
                    len(names),
                    f"{len(names)} node(s) already run as many pods as allocatable 'pods' allows",
                )
            )
    for status, names in expl.groups:
        plugin = status.plugin
        count = len(names)
        if plugin == "NodeResourcesFit":
            continue
        if plugin == "TaintToleration":
            ranked.extend(_taint_causes(sched, expl, names))
        elif plugin == "NodeAffinity":
            ranked.append(Cause("node-affinity", RANK_DECISIVE, count, _affinity_cause(expl, count)))
        elif plugin == "NodeUnschedulable":
            ranked.append(
                Cause(
                    "cordoned",
                    RANK_DECISIVE,
                    count,
                    f"{count} node(s) are cordoned (spec.unschedulable: true)",
                    f"kubectl uncordon {names[0]}"
                    if count == 1
                    else "kubectl uncordon <node>  # once maintenance is over",
                )
            )
        elif status.reasons:
            ranked.append(
                Cause(
                    "filter",
                    RANK_OTHER,
                    count,
                    f"{count} node(s): {status.message} ({plugin or 'PreFilter'})",
                )
            )
    prefilter = expl.fit_error.prefilter_msg
    if prefilter:
        ranked.append(
            Cause(
                "prefilter",
                RANK_DECISIVE,
                expl.fit_error.num_all_nodes,
                f"the pod is rejected before any node is checked: {prefilter}",
                _prefilter_fix(prefilter),
            )
        )
    outcome = expl.preemption
    if outcome is not None and outcome.nominated_node:
        victims = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in outcome.victims[:5])
        ranked.append(
            Cause(
                "preemption",
                RANK_PREEMPTION,
                1,
                f"preemption can make room: evicting {len(outcome.victims)} lower-priority pod(s) on "
                f"{outcome.nominated_node} ({victims}); the pod would be nominated there",
            )
        )
    elif outcome is not None and outcome.error and "expected at least one victim pod" in outcome.message:
        # preemption.go DryRunPreemption: the dry run fit without evicting anyone.
        ranked.append(
            Cause(
                "preemption-no-victim",
                RANK_OTHER,
                1,
                "preemption found a node that fits without evicting any pod, which kube-scheduler "
                "reports as an error (the Filter and the preemption dry run disagreed); the pod is retried "
                "in a later scheduling cycle",
            )
        )
    elif outcome is not None and "preemptionPolicy=Never" in outcome.message:
        ranked.append(
            Cause(
                "preemption-never",
                RANK_OTHER,
                1,
                "the pod's PriorityClass has preemptionPolicy: Never, so it waits for capacity instead of evicting",
            )
        )
    elif expl.fit_error.postfilter_msg and "No preemption victims" in expl.fit_error.postfilter_msg:
        ranked.append(
            Cause(
                "preemption-no-victims",
                RANK_OTHER,
                1,
                "preemption cannot help: no pod of lower priority runs on the nodes that lack resources",
                "give the job a higher PriorityClass only if it may evict other work",
            )
        )
    if outcome is not None and outcome.nominated_node is None:
        lost = [
            j
            for j, status in outcome.tried.items()
            if status is not None and status.plugin == AFFINITY_PLUGIN and AFFINITY_REASON in status.reasons
        ]
        if lost:
            ranked.append(
                Cause(
                    "preemption-removes-affinity",
                    RANK_PREEMPTION,
                    len(lost),
                    f"preemption cannot help on {len(lost)} node(s): its dry run evicts every lower-priority pod "
                    "there first, including the pods that satisfy this pod's required pod affinity, so the node "
                    "then fails InterPodAffinity (kube-scheduler does not reprieve affinity targets: "
                    "SelectVictimsOnNode)",
                    "give the pods this pod needs (its podAffinity targets) a priority >= this pod's, or free "
                    "the resources another way",
                )
            )
    _gang_cause(sched, expl, requests)
    # Most decisive first (rank), and within a rank the cause that explains the most nodes
    # (sorted is stable: ties keep the order they were found in).
    seen: set[str] = set()
    for cause in sorted(ranked, key=lambda c: (c.rank, -c.nodes)):
        if cause.text not in seen:
            seen.add(cause.text)
            expl.causes.append(cause)
            if cause.fix and cause.fix not in expl.fixes:
                expl.fixes.append(cause.fix)


def _prefilter_fix(message: str) -> str | None:
    if message.startswith("persistentvolumeclaim"):
        return "create the PersistentVolumeClaim the pod mounts (kubectl get pvc -n <namespace>)"
    if "unbound immediate" in message:
        return "kubectl describe pvc <claim>  # an Immediate claim must be bound before scheduling; check the provisioner"
    return None


def _resource_causes(
    sched: Scheduler, expl: Explanation, resource: str, want: int, names: list[str]
) -> list[Cause]:
    out: list[Cause] = []
    index = sched.index
    infos = [index.node_infos[index.by_name[n]] for n in names if n in index.by_name]
    if not is_gpu_resource(resource):
        out.append(
            Cause(
                "resource",
                RANK_CAPACITY,
                len(names),
                f"{len(names)} node(s) lack {resource}: the pod requests {_fmt(resource, want)}",
            )
        )
        return out
    without = [i for i in infos if i.allocatable.get(resource, 0) <= 0]
    # Only the nodes whose sole failure is this resource speak for its shortage: a node that
    # also lacks memory, cpu, ... is explained by that cause, and its free devices are no room.
    only = set(only_short_of(expl, resource))
    with_resource = [i for i in infos if i.allocatable.get(resource, 0) > 0 and i.name in only]
    if without:
        out.extend(_renamed_resource(sched, expl, resource, want, without))
    if not with_resource:
        return out
    reserved = _nominated_reservations(sched, expl, resource, with_resource)
    held: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    rest = []
    for info in with_resource:
        free_now = info.allocatable.get(resource, 0) - info.requested.get(resource, 0)
        holders = reserved.get(info.index)
        if holders and free_now >= want:
            # Room that is free on the node but promised to nominated pods: that, not
            # fragmentation or load, is why this node failed.
            held.setdefault(tuple(key for key, _, _ in holders), []).append((info.name, free_now))
        else:
            rest.append(info)
    for keys, nodes in held.items():
        out.append(_reservation_cause(sched, expl, resource, want, reserved, keys, nodes))
    if rest:
        out.append(_shortage_cause(sched, resource, want, rest, reserved))
    return out


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


def _nominated_reservations(
    sched: Scheduler, expl: Explanation, resource: str, infos: list
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
    wanted = {info.index for info in infos}
    me = expl.pod
    mine = index.priority(me)
    out: dict[int, list[tuple[str, int, int]]] = {}
    for other, j in index.nominated:
        if j not in wanted or other is me or (other.metadata.uid and other.metadata.uid == me.metadata.uid):
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
        f"the {free} free {resource} on {_nodes(names)} {'is' if free == 1 else 'are'} reserved for the "
        f"nominated pod{plural} {who}, of priority >= the pod's ({mine}): kube-scheduler counts pods nominated "
        f"to a node (status.nominatedNodeName, set by preemption) as already running there when filtering "
        f"(RunFilterPluginsWithNominatedPods): that leaves at most {left} for this pod, which asks for {want}"
    )
    fix = (
        f"wait for {keys[0]}{' and the others' if len(keys) > 1 else ''} to bind to {names[0]}"
        f"{' and the other nodes' if not one else ''} (its next scheduling attempt), then for {want} {resource} "
        f"to free up; or add GPU nodes (or let the autoscaler) so the pod has room of its own"
    )
    return Cause("reserved", RANK_DECISIVE, len(names), cause, fix)


def _replication(sched: Scheduler, node_name: str, resource: str) -> Replication | None:
    """How ``resource`` is shared on the node (time-slicing / MPS replicas), memoized per node."""
    cache: dict[tuple[str, str], Replication | None] = sched.index.cache.setdefault(
        "naive/explain/sharing", {}
    )
    key = (node_name, resource)
    if key not in cache:
        node = sched.cluster.node_by_name.get(node_name)
        cache[key] = replication(node.metadata.labels, resource) if node is not None else None
    return cache[key]


def _replicas_word(count: int) -> str:
    return " replica" if count == 1 else " replicas"


def _shortage_cause(
    sched: Scheduler, resource: str, want: int, infos: list, reserved: dict[int, list[tuple[str, int, int]]]
) -> Cause:
    """Fragmentation (enough free in total, never enough on one node) or plain shortage.

    Free counts subtract what nominated pods of >= priority hold, as the Filter did. Time-sliced
    or MPS replicas are counted apart from whole GPUs (gpu/sharing.py): kube-scheduler adds them
    up alike, but 4 free replicas of one L4 are not 4 free GPUs."""
    free = {i.name: i.allocatable.get(resource, 0) - i.requested.get(resource, 0) for i in infos}
    for i in infos:
        if i.index in reserved:
            free[i.name] -= sum(amount for _, _, amount in reserved[i.index])
    total_free = sum(max(v, 0) for v in free.values())
    kinds = _node_kinds(sched, resource, list(free))
    shared = {name: kinds[name][0] for name in free}
    free_units, all_units = UnitCount(), UnitCount()
    for i in infos:
        free_units.add(i.name, free[i.name], shared[i.name])
        all_units.add(i.name, i.allocatable.get(resource, 0), shared[i.name])
    # unit_word reads only the MIG strategy label: the nodes labelled "single" speak for all.
    single = _mig_single_nodes(sched).intersection(free)
    unit = unit_word(resource, (sched.cluster.node_by_name[name].metadata.labels for name in sorted(single)))

    by_free: Counter[tuple[str, int, bool]] = Counter(
        (kinds[i.name][1], max(free[i.name], 0), shared[i.name] is not None) for i in infos
    )
    parts = ", ".join(
        f"{c} {model + ' ' if model else ''}node(s) with {f} free{_replicas_word(f) if replicas else ''}"
        for (model, f, replicas), c in sorted(by_free.items(), key=lambda x: (-x[1], -x[0][1], x[0][0]))
    )
    biggest = max(max(free.values()), 0)
    held = sum(amount for i in infos for _, _, amount in reserved.get(i.index, ()))
    held_note = f", after {held} held for nominated pods of >= priority" if held else ""
    if total_free >= want and biggest < want:
        return Cause(
            "fragmentation",
            RANK_FRAGMENTATION,
            len(infos),
            f"the {len(infos)} node(s) with {resource} that pass the other checks have {parts}; "
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
            len(infos),
            f"all {resource} are in use on the {len(infos)} node(s) that pass the other checks: "
            f"0 free of {all_units.text(unit)} ({parts}{held_note}); the pod asks for {want}",
            fix,
        )
    return Cause(
        "shortage",
        RANK_CAPACITY,
        len(infos),
        f"only {total_free} of {all_units.total} {resource} {'is' if total_free == 1 else 'are'} free on the "
        f"{len(infos)} node(s) that pass the other checks ({parts}{held_note})"
        + (f", that is {free_units.text(unit, free=True)}" if free_units.replicas else "")
        + f"; the pod asks for {want} on one node",
        fix,
    )


def _exposed_gpu_names(sched: Scheduler, info: NodeInfo, resource: str) -> tuple[str, ...]:
    """GPU resource names a node advertises besides ``resource`` (memoized per node)."""
    cache: dict[tuple[int, str], tuple[str, ...]] = sched.index.cache.setdefault("naive/explain/exposed", {})
    key = (info.index, resource)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = tuple(
            sorted(n for n, a in info.allocatable.items() if a > 0 and n != resource and is_gpu_resource(n))
        )
    return hit


def _exposed_by_kind(sched: Scheduler, resource: str) -> dict[int, tuple[list[str], list[str]]]:
    """Node index -> (MIG resource names, time-sliced/shared names) a node advertises besides
    ``resource``: filled as nodes are asked about, once per cluster (every Pending pod asking
    ``resource`` asks the same of the nodes that lack it)."""
    cache: dict[str, dict[int, tuple[list[str], list[str]]]] = sched.index.cache.setdefault(
        "naive/explain/exposed-kinds", {}
    )
    return cache.setdefault(resource, {})


def _node_kinds(
    sched: Scheduler, resource: str, names: list[str]
) -> dict[str, tuple[Replication | None, str]]:
    """Per node name: how ``resource`` is shared there (gpu/sharing.py) and the node's kind as a
    shortage cause names it (its GPU model, after the sharing adjective), memoized per node."""
    cache: dict[str, dict[str, tuple[Replication | None, str]]] = sched.index.cache.setdefault(
        "naive/explain/node-kinds", {}
    )
    kinds = cache.setdefault(resource, {})
    for name in names:
        if name not in kinds:
            rep = _replication(sched, name, resource)
            model = _model(sched, name)
            if rep is not None:
                model = f"{REPLICA_ADJECTIVE.get(rep.strategy, rep.strategy)} {model}".rstrip()
            kinds[name] = (rep, model)
    return kinds


def _mig_single_nodes(sched: Scheduler) -> frozenset[str]:
    """Names of the nodes labelled with the MIG ``single`` strategy (what ``unit_word`` asks)."""
    cached = sched.index.cache.get("naive/explain/mig-single")
    if cached is None:
        cached = sched.index.cache["naive/explain/mig-single"] = frozenset(
            node.metadata.name
            for node in sched.cluster.nodes
            if node.metadata.labels.get(MIG_STRATEGY) == "single"
        )
    return cached


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


def _renamed_resource(
    sched: Scheduler, expl: Explanation, resource: str, want: int, infos: list
) -> list[Cause]:
    """Nodes that do not advertise the GPU name the pod asks: MIG mixed strategy, time-slicing
    rename, or no GPU at all.

    A rename is offered as a fix only when what the node exposes could serve the pod
    (reference/nvidia-gpu-stack.md): a MIG profile with ``want`` slices free on that node,
    each container asking at most one GPU (a CUDA process uses one MIG device), the profile
    with the most memory chosen; time-sliced replicas with ``want`` free. Otherwise the node
    gets one short cause and no fix.
    """
    kind = classify(resource)
    asks_whole = kind is not None and kind.kind == "gpu"
    per_container = _max_gpus_per_container(expl, resource) if asks_whole else want
    mig_fit: dict[tuple[str, str], list[str]] = {}  # (exposed names, the one usable) -> nodes
    mig_no: dict[str, list[str]] = {}
    shared_fit: dict[str, list[str]] = {}
    shared_no: dict[str, list[str]] = {}
    plain: list[str] = []
    exposed_kinds = _exposed_by_kind(sched, resource)
    for info in infos:
        found = exposed_kinds.get(info.index)
        if found is None:
            names = _exposed_gpu_names(sched, info, resource)
            found = exposed_kinds[info.index] = (
                [n for n in names if (c := classify(n)) is not None and c.kind == "mig"],
                [n for n in names if (c := classify(n)) is not None and c.kind == "shared"],
            )
        mig, shared = found
        if mig:
            exposed = ", ".join(mig)
            fitting = _with_free(info, mig, want) if asks_whole and per_container <= 1 else []
            if fitting:
                mig_fit.setdefault((exposed, max(fitting, key=_mig_memory)), []).append(info.name)
            else:
                mig_no.setdefault(exposed, []).append(info.name)
        elif shared:
            fitting = _with_free(info, shared, want)
            (shared_fit if fitting else shared_no).setdefault(", ".join(shared), []).append(info.name)
        else:
            plain.append(info.name)
    out: list[Cause] = []
    for (exposed, usable), nodes in mig_fit.items():
        one = len(nodes) == 1
        out.append(
            Cause(
                "mig",
                RANK_DECISIVE,
                len(nodes),
                f"the pod asks {resource} but {_nodes(nodes)} {'is' if one else 'are'} MIG mixed-strategy and "
                f"expose{'s' if one else ''} only {exposed}; {want} free {usable} would serve it",
                f"resources:\n  limits:\n    {usable}: {want}   # or disable MIG on the node: "
                f"kubectl label node {nodes[0]} nvidia.com/mig.config=all-disabled --overwrite",
            )
        )
    for exposed, nodes in mig_no.items():
        one = len(nodes) == 1
        out.append(
            Cause(
                "mig",
                RANK_DECISIVE,
                len(nodes),
                f"{_nodes(nodes)} {'has its' if one else 'have their'} GPUs MIG-partitioned ({exposed}) and "
                f"advertise{'s' if one else ''} no {resource}",
            )
        )
    for exposed, nodes in shared_fit.items():
        out.append(
            Cause(
                "time-slicing",
                RANK_DECISIVE,
                len(nodes),
                f"time-slicing renamed the resource to {exposed} on {_nodes(nodes)} (renameByDefault: true): "
                f"{resource} is not advertised there",
                f"resources:\n  limits:\n    {exposed.split(', ')[0]}: {want}",
            )
        )
    for exposed, nodes in shared_no.items():
        out.append(
            Cause(
                "time-slicing",
                RANK_DECISIVE,
                len(nodes),
                f"time-slicing renamed the resource to {exposed} on {_nodes(nodes)}: {resource} is not advertised "
                f"there, and fewer than {want} replicas are free",
            )
        )
    if plain:
        out.append(
            Cause(
                "no-resource",
                RANK_CAPACITY,
                len(plain),
                f"{_nodes(plain)} advertise{'s' if len(plain) == 1 else ''} no {resource}",
            )
        )
    return out


def _with_free(info: NodeInfo, names: list[str], want: int) -> list[str]:
    """The resources of ``names`` with at least ``want`` units free on the node."""
    return [n for n in names if info.allocatable.get(n, 0) - info.requested.get(n, 0) >= want]


def _mig_memory(name: str) -> tuple[int, int]:
    """(memory GB, compute slices) of a MIG resource name, to prefer the largest profile."""
    kind = classify(name)
    profile = parse_mig_profile(kind.mig_profile) if kind is not None and kind.mig_profile else None
    return (profile.memory_gb, profile.compute_slices) if profile is not None else (0, 0)


def _nodes(names: list[str]) -> str:
    if len(names) == 1:
        return f"node {names[0]}"
    shown = ", ".join(names[:3])
    return f"{len(names)} nodes ({shown}{', ...' if len(names) > 3 else ''})"


def _taint_causes(sched: Scheduler, expl: Explanation, names: list[str]) -> list[Cause]:
    """One cause per untolerated taint, with the toleration as the fix.

    Where a taint usually comes from is said only when it is known: the key is a GPU
    resource name (the convention for dedicated GPU nodes, reference/nvidia-gpu-stack.md §3.4;
    GKE taints GPU node pools with ``nvidia.com/gpu``, reference/platform.md), or a Karpenter
    NodePool in the input declares it. The GPU Operator applies no taints (its operands only
    tolerate ``nvidia.com/gpu``), so no taint is attributed to it. A GPU-key taint on a pod
    that asks for no GPU is doing its job: no toleration is offered then.
    """
    pod = expl.pod
    taints: Counter[tuple[str, str, str]] = Counter()
    origin: dict[tuple[str, str, str], str] = {}
    index = sched.index
    # Nodes of one static class carry equal taints: one toleration check per class.
    by_class: dict[int, Any] = {}
    for name in names:
        node = sched.cluster.node_by_name.get(name)
        if node is None:
            continue
        j = index.by_name.get(name)
        cid = int(index.class_ids[j]) if j is not None else -1
        if cid < 0 or cid not in by_class:
            found = find_untolerated_taint(node.spec.taints, pod.spec.tolerations)
            if cid >= 0:
                by_class[cid] = found
        else:
            found = by_class[cid]
        taint = found
        if taint is None:
            continue
        taint_id = (taint.key, taint.value, taint.effect)
        taints[taint_id] += 1
        if taint_id not in origin:
            origin[taint_id] = _taint_origin(sched, node.metadata.labels, taint.key, taint.effect)
    out: list[Cause] = []
    wants_gpu = any(is_gpu_resource(r) for r in sched.context(pod).requests)
    for (key, value, effect), count in taints.most_common():
        gpu_key = key in GPU_TAINT_KEYS
        op = f'operator: Equal\n  value: "{value}"' if value else "operator: Exists"
        fix = f"tolerations:\n- key: {key}\n  {op}\n  effect: {effect}"
        shown = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        where = origin.get((key, value, effect), "")
        note = f" ({where})" if where else ""
        if gpu_key and not wants_gpu:
            out.append(
                Cause(
                    "taint",
                    RANK_DECISIVE,
                    count,
                    f"{count} GPU node(s) carry the taint {shown}{note}: it keeps pods that ask for "
                    "no GPU off GPU nodes, as intended",
                )
            )
        elif gpu_key:
            # ExtendedResourceToleration adds exactly this toleration (Exists) when enabled.
            fix += f"\n# or enable the ExtendedResourceToleration admission plugin: it adds it to pods requesting {key}"
            out.append(
                Cause(
                    "taint",
                    RANK_DECISIVE,
                    count,
                    f"{count} GPU node(s) carry the taint {shown}{note} and the pod does not "
                    "tolerate it: add this toleration",
                    fix,
                )
            )
        else:
            out.append(
                Cause(
                    "taint",
                    RANK_DECISIVE,
                    count,
                    f"{count} node(s) carry the taint {shown}{note} and the pod does not "
                    "tolerate it: add this toleration if the pod belongs there",
                    fix,
                )
            )
    return out


# Taint keys that are GPU resource names: the convention for dedicated GPU nodes
# (reference/nvidia-gpu-stack.md §3.4), which the ExtendedResourceToleration admission
# plugin tolerates automatically for pods requesting that resource when it is enabled.
GPU_TAINT_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")


def _taint_origin(sched: Scheduler, labels: dict[str, str], key: str, effect: str) -> str:
    """Where a taint comes from, when the input or a well-known convention says so; else ""."""
    pool = labels.get("karpenter.sh/nodepool")
    if pool:
        for obj in sched.cluster.by_kind("NodePool", "karpenter.sh"):
            if obj.name != pool:
                continue
            spec = ((obj.data.get("spec") or {}).get("template") or {}).get("spec") or {}
            for field in ("taints", "startupTaints"):
                for t in spec.get(field) or ():
                    if isinstance(t, dict) and t.get("key") == key and t.get("effect") == effect:
                        return f"set by Karpenter NodePool {pool}, spec.template.spec.{field}"
    if key not in GPU_TAINT_KEYS:
        return ""
    if key == "nvidia.com/gpu" and "cloud.google.com/gke-accelerator" in labels:
        return "GKE taints GPU node pools with nvidia.com/gpu when the cluster also has non-GPU pools"
    return "the usual taint on dedicated GPU nodes: key = the GPU resource name"


def _affinity_cause(expl: Explanation, count: int) -> str:
    selector = expl.pod.spec.node_selector
    if selector:
        wanted = ", ".join(f"{k}={v}" for k, v in selector.items())
        return f"{count} node(s) do not match the pod's nodeSelector/affinity ({wanted})"
    return f"{count} node(s) do not match the pod's required node affinity"


def _fmt(resource: str, amount: int) -> str:
    """An amount in scheduler units for people: ``64 cpu``, ``500m cpu``, ``2Gi memory``."""
    from gpuplane.k8s.requests import format_amount  # deferred for start-up time

    return format_amount(resource, amount)


def _gang_cause(sched: Scheduler, expl: Explanation, requests: dict[str, int]) -> None:
    """Replace the generic gang cause (prequeue) by a gang-level explanation: how many members
    wait, what each needs on one node, the most any node has free, and what would unblock it
    (how many nodes with that much free). Nodes counted are those that pass every check but
    the GPU (their only failing reason is the shortage of that GPU), so a taint, a selector or
    missing memory that rules a node out is not counted as room."""
    at = next((i for i, c in enumerate(expl.causes) if c.kind == GANG), None)
    if at is None:
        return
    mechanism, _, group = pod_group_of(sched, expl.pod)
    if mechanism != "volcano":
        return
    ns = expl.pod.metadata.namespace or "default"
    total, bound = gang_members(sched, mechanism, group, ns)
    waiting = total - bound
    gpu = next((r for r in sorted(requests) if is_gpu_resource(r) and requests[r] > 0), None)
    if gpu is None or waiting <= 0:
        return
    want = requests[gpu]
    index = sched.index
    row = index.resource_index.get(gpu)
    nodes = [index.by_name[n] for n in only_short_of(expl, gpu) if n in index.by_name]
    best = fitting = 0
    if row is not None and nodes:
        free = index.alloc[row, nodes] - index.req[row, nodes]
        best = max(int(free.max()), 0)
        fitting = int((free >= want).sum())
    fix = (
        f"to unblock the gang, {waiting} node(s) with {want} free {gpu} are needed at once ({fitting} now): "
        f"free {gpu} on {waiting - fitting if waiting > fitting else 0} more node(s) (drain or wait for jobs there), "
        "or let the autoscaler add them"
    )
    old = expl.causes[at]
    expl.causes[at] = Cause(
        GANG,
        old.rank,
        len(nodes),
        f"{VOLCANO_GANG}{ns}/{group}: {bound} of {total} placed; the other {waiting} need {want} {gpu} each on one "
        f"node; max free on any node is {best}",
        fix,
        subject=old.subject,
    )
    expl.fixes.insert(0, fix)


def group_gangs(explanations: list[Explanation]) -> None:
    """Say a gang's story once: the first member keeps the causes and fixes; every other
    member of the same gang with the same message points at it (5,000-node reports stay short)."""
    first: dict[tuple[str, str], Explanation] = {}
    for expl in explanations:
        gang = expl.cause_of_kind(GANG)
        if gang is None:
            continue
        key = (gang.subject, expl.message)
        lead = first.get(key)
        if lead is None:
            first[key] = expl
            continue
        expl.causes = [
            gang,
            Cause(
                "same-as", gang.rank, gang.nodes, f"same filter verdicts as {lead.pod.key} (explained there)"
            ),
        ]
        expl.fixes = []
