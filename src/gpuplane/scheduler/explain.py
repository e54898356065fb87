"""Causes and fixes: turn kube-scheduler's verdicts into plain, GPU-aware English.

The FailedScheduling message says *what* failed on how many nodes; an engineer needs *why*
and *what to change*. This module reads the per-node verdicts the framework produced and
the cluster's GPU facts (resource names per node, MIG / time-slicing renames, GPU-pool
taints, free devices per node) and writes ranked causes and concrete fixes (YAML snippets
or kubectl commands). GPU resource semantics come from gpuplane.gpu.resources
(reference/nvidia-gpu-stack.md: MIG mixed strategy exposes ``nvidia.com/mig-<profile>``,
time-slicing with ``renameByDefault`` exposes ``nvidia.com/gpu.shared``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gpuplane.gpu.resources import classify, is_gpu_resource
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.scheduler.plugins.node_resources_fit import INSUFFICIENT

if TYPE_CHECKING:
    from gpuplane.scheduler.scheduler import Explanation, Scheduler

GPU_TAINT_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "sku", "dedicated", "nvidia.com/gpu.present")


def _model(sched: Scheduler, node_name: str) -> str:
    from gpuplane.gpu.catalog import catalog

    cache = sched.index.cache.setdefault("explain/model", {})
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
            f"the pod fits now on {len(expl.feasible_nodes)} node(s) ({node_list}"
            f"{', ...' if len(expl.feasible_nodes) > 5 else ''}): the next scheduling attempt should place it"
        )
        return
    if expl.fit_error is None:
        return
    ranked: list[tuple[int, str, str | None]] = []  # (rank, cause, fix)
    requests = sched.context(expl.pod).requests
    for status, names in expl.groups:
        plugin = status.plugin
        count = len(names)
        if plugin == "NodeResourcesFit":
            for reason in status.reasons:
                if reason.startswith(INSUFFICIENT):
                    resource = reason[len(INSUFFICIENT) :]
                    ranked.extend(_resource_causes(sched, expl, resource, requests.get(resource, 0), names))
                else:
                    ranked.append((3, f"{count} node(s) already run as many pods as allocatable 'pods' allows", None))
        elif plugin == "TaintToleration":
            ranked.extend(_taint_causes(sched, expl, names))
        elif plugin == "NodeAffinity":
            ranked.append((4, _affinity_cause(expl, count), None))
        elif plugin == "NodeUnschedulable":
            ranked.append((5, f"{count} node(s) are cordoned (spec.unschedulable: true)",
                           f"kubectl uncordon {names[0]}" if count == 1 else "kubectl uncordon <node>  # once maintenance is over"))
        elif status.reasons:
            ranked.append((6, f"{count} node(s): {status.message} ({plugin or 'PreFilter'})", None))
    prefilter = expl.fit_error.prefilter_msg
    if prefilter:
        ranked.append((1, f"the pod is rejected before any node is checked: {prefilter}", _prefilter_fix(prefilter)))
    outcome = expl.preemption
    if outcome is not None and outcome.nominated_node:
        victims = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in outcome.victims[:5])
        ranked.append(
            (2, f"preemption can make room: evicting {len(outcome.victims)} lower-priority pod(s) on "
                f"{outcome.nominated_node} ({victims}); the pod would be nominated there", None)
        )
    elif outcome is not None and "preemptionPolicy=Never" in outcome.message:
        ranked.append((7, "the pod's PriorityClass has preemptionPolicy: Never, so it waits for capacity instead of evicting", None))
    elif expl.fit_error.postfilter_msg and "No preemption victims" in expl.fit_error.postfilter_msg:
        ranked.append((7, "preemption cannot help: no pod of lower priority runs on the nodes that lack resources",
                       "give the job a higher PriorityClass only if it may evict other work"))
    ranked.sort(key=lambda r: r[0])
    seen: set[str] = set()
    for _, cause, fix in ranked:
        if cause not in seen:
            seen.add(cause)
            expl.causes.append(cause)
            if fix and fix not in expl.fixes:
                expl.fixes.append(fix)


def _prefilter_fix(message: str) -> str | None:
    if message.startswith("persistentvolumeclaim"):
        return "create the PersistentVolumeClaim the pod mounts (kubectl get pvc -n <namespace>)"
    if "unbound immediate" in message:
        return "kubectl describe pvc <claim>  # an Immediate claim must be bound before scheduling; check the provisioner"
    return None


def _resource_causes(
    sched: Scheduler, expl: Explanation, resource: str, want: int, names: list[str]
) -> list[tuple[int, str, str | None]]:
    out: list[tuple[int, str, str | None]] = []
    index = sched.index
    infos = [index.node_infos[index.by_name[n]] for n in names if n in index.by_name]
    if not is_gpu_resource(resource):
        out.append((3, f"{len(names)} node(s) lack {resource}: the pod requests {_fmt(resource, want)}", None))
        return out
    without = [i for i in infos if i.allocatable.get(resource, 0) <= 0]
    with_resource = [i for i in infos if i.allocatable.get(resource, 0) > 0]
    if without:
        out.extend(_renamed_resource(sched, resource, want, without))
    if not with_resource:
        return out
    free = {i.name: i.allocatable.get(resource, 0) - i.requested.get(resource, 0) for i in with_resource}
    total_free = sum(max(v, 0) for v in free.values())
    by_free: Counter[tuple[str, int]] = Counter((_model(sched, i.name), max(free[i.name], 0)) for i in with_resource)
    parts = ", ".join(
        f"{c} {model + ' ' if model else ''}node(s) with {f} free"
        for (model, f), c in sorted(by_free.items(), key=lambda x: (-x[1], -x[0][1], x[0][0]))
    )
    biggest = max(max(free.values()), 0)
    if total_free >= want:
        out.append(
            (0, f"the {len(with_resource)} node(s) with {resource} that pass the other checks have {parts}; "
                f"the pod asks for {want} on one node: fragmentation ({total_free} free in total, "
                f"at most {biggest} on any node)",
             f"pack small GPU jobs (a MostAllocated / RequestedToCapacityRatio scoring profile) or drain one node "
             f"(kubectl cordon <node> and move its jobs) to reassemble {want} free {resource}; or split the pod into "
             f"pods of at most {biggest}" if biggest else None)
        )
    else:
        total = sum(i.allocatable.get(resource, 0) for i in with_resource)
        out.append(
            (0, f"all {resource} are in use on the {len(with_resource)} node(s) that pass the other checks: "
                f"{total_free} free of {total} ({parts}); the pod asks for {want}",
             "wait for running jobs to finish, add GPU nodes (or let the autoscaler), or lower the request")
        )
    return out


def _renamed_resource(
    sched: Scheduler, resource: str, want: int, infos: list
) -> list[tuple[int, str, str | None]]:
    """Nodes that do not advertise the GPU name the pod asks: MIG mixed strategy, time-slicing
    rename, or no GPU at all."""
    kind = classify(resource)
    mig: dict[str, list[str]] = {}
    shared: dict[str, list[str]] = {}
    plain: list[str] = []
    for info in infos:
        names = [n for n, a in info.allocatable.items() if a > 0 and n != resource and is_gpu_resource(n)]
        m = sorted(n for n in names if (c := classify(n)) is not None and c.kind == "mig")
        sh = sorted(n for n in names if (c := classify(n)) is not None and c.kind == "shared")
        if m:
            mig.setdefault(", ".join(m), []).append(info.name)
        elif sh:
            shared.setdefault(", ".join(sh), []).append(info.name)
        else:
            plain.append(info.name)
    out: list[tuple[int, str, str | None]] = []
    asks_whole = kind is not None and kind.kind == "gpu"
    for exposed, nodes in mig.items():
        first = exposed.split(", ")[-1]
        out.append((0, f"the pod asks {resource} but {_nodes(nodes)} {'is' if len(nodes) == 1 else 'are'} MIG "
                       f"mixed-strategy and expose{'s' if len(nodes) == 1 else ''} only {exposed}"
                       + ("" if asks_whole else f", not {resource}"),
                    f"resources:\n  limits:\n    {first}: {want}   # or disable MIG on the node: "
                    f"kubectl label node {nodes[0]} nvidia.com/mig.config=all-disabled --overwrite"))
    for exposed, nodes in shared.items():
        out.append((0, f"time-slicing renamed the resource to {exposed} on {_nodes(nodes)} (renameByDefault: true): "
                       f"{resource} is not advertised there",
                    f"resources:\n  limits:\n    {exposed.split(', ')[0]}: {want}"))
    if plain:
        out.append((3, f"{_nodes(plain)} advertise{'s' if len(plain) == 1 else ''} no {resource}", None))
    return out


def _nodes(names: list[str]) -> str:
    if len(names) == 1:
        return f"node {names[0]}"
    shown = ", ".join(names[:3])
    return f"{len(names)} nodes ({shown}{', ...' if len(names) > 3 else ''})"


def _taint_causes(sched: Scheduler, expl: Explanation, names: list[str]) -> list[tuple[int, str, str | None]]:
    pod = expl.pod
    taints: Counter[tuple[str, str, str]] = Counter()
    gpu_nodes = 0
    for name in names:
        node = sched.cluster.node_by_name.get(name)
        if node is None:
            continue
        taint = find_untolerated_taint(node.spec.taints, pod.spec.tolerations)
        if taint is not None:
            taints[(taint.key, taint.value, taint.effect)] += 1
        if any(is_gpu_resource(r) for r in node.status.allocatable):
            gpu_nodes += 1
    out: list[tuple[int, str, str | None]] = []
    wants_gpu = any(is_gpu_resource(r) for r in sched.context(pod).requests)
    for (key, value, effect), count in taints.most_common():
        gpu_pool = key in GPU_TAINT_KEYS or key.startswith(("nvidia.com/", "amd.com/"))
        op = f"operator: Equal\n  value: \"{value}\"" if value else "operator: Exists"
        fix = f"tolerations:\n- key: {key}\n  {op}\n  effect: {effect}"
        if gpu_pool and wants_gpu:
            out.append((1, f"{count} GPU node(s) carry the taint {key}={value}:{effect} (the GPU node pool's taint, "
                           "as the GPU Operator / node-pool setup applies it) and the pod does not tolerate it: add this toleration", fix))
        else:
            out.append((4 if not wants_gpu or not gpu_nodes else 2,
                        f"{count} node(s) have the untolerated taint {key}={value}:{effect}", fix if gpu_pool else None))
    return out


def _affinity_cause(expl: Explanation, count: int) -> str:
    selector = expl.pod.spec.node_selector
    if selector:
        wanted = ", ".join(f"{k}={v}" for k, v in selector.items())
        return f"{count} node(s) do not match the pod's nodeSelector/affinity ({wanted})"
    return f"{count} node(s) do not match the pod's required node affinity"


def _fmt(resource: str, amount: int) -> str:
    if resource == "cpu":
        return f"{amount}m cpu"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        from gpuplane.k8s.quantity import format_quantity

        return f"{format_quantity(amount, binary=True)} {resource}"
    return f"{amount} {resource}"
