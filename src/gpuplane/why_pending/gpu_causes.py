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

import numpy as np

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.scheduler.plugins.inter_pod_affinity import ERR_REASON_AFFINITY as AFFINITY_REASON
from gpuplane.scheduler.plugins.inter_pod_affinity import NAME as AFFINITY_PLUGIN
from gpuplane.scheduler.plugins.node_resources_fit import INSUFFICIENT
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.model import (
    RANK_CAPACITY,
    RANK_DECISIVE,
    RANK_OTHER,
    RANK_PREEMPTION,
    Cause,
    Explanation,
)
from gpuplane.why_pending.node_facts import first_seen
from gpuplane.why_pending.prequeue import GANG, VOLCANO_GANG, gang_members, pod_group_of
from gpuplane.why_pending.resource_causes import group_ids, only_short_of, only_short_of_ids, resource_causes

__all__ = ["add_causes", "group_gangs", "only_short_of"]


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
    by_reason: dict[str, list[int]] = {}  # reason -> the groups that give it, in order
    for g, (status, _) in enumerate(expl.groups):
        if status.plugin == "NodeResourcesFit":
            for reason in status.reasons:
                by_reason.setdefault(reason, []).append(g)
    for reason, groups in by_reason.items():
        if reason.startswith(INSUFFICIENT):
            resource = reason[len(INSUFFICIENT) :]
            ranked.extend(resource_causes(sched, expl, resource, requests.get(resource, 0), groups))
        else:
            count = sum(len(expl.groups[g][1]) for g in groups)
            ranked.append(
                Cause(
                    "pods",
                    RANK_CAPACITY,
                    count,
                    f"{count} node(s) already run as many pods as allocatable 'pods' allows",
                )
            )
    for g, (status, names) in enumerate(expl.groups):
        plugin = status.plugin
        count = len(names)
        if plugin == "NodeResourcesFit":
            continue
        if plugin == "TaintToleration":
            ranked.extend(_taint_causes(sched, expl, group_ids(sched, expl)[g]))
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
    # InterPodAffinity fails a node for want of affinity targets only for a pod with required
    # pod affinity terms (ErrReasonAffinityRulesNotMatch): no other pod's dry run can have lost
    # them, and its statuses (one per node tried) need no reading.
    if outcome is not None and outcome.nominated_node is None and _requires_pod_affinity(expl.pod):
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


def _requires_pod_affinity(pod: Pod) -> bool:
    """The pod has required pod-affinity terms (what InterPodAffinity's affinity check reads)."""
    affinity = pod.spec.affinity
    block = affinity.pod_affinity if affinity is not None else None
    return block is not None and bool(block.required_during_scheduling_ignored_during_execution)


def _prefilter_fix(message: str) -> str | None:
    if message.startswith("persistentvolumeclaim"):
        return "create the PersistentVolumeClaim the pod mounts (kubectl get pvc -n <namespace>)"
    if "unbound immediate" in message:
        return "kubectl describe pvc <claim>  # an Immediate claim must be bound before scheduling; check the provisioner"
    return None


def _taint_causes(sched: Scheduler, expl: Explanation, ids: np.ndarray) -> list[Cause]:
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
    # Nodes of one static class carry equal taints and labels but the hostname: one toleration
    # check per class, the classes met in node order (a taint first counted where a walk of
    # the nodes first meets it, its origin read from that node's labels).
    for _, positions in first_seen(index.class_ids[ids]):
        node = index.node_infos[int(ids[positions[0]])].node
        taint = find_untolerated_taint(node.spec.taints, pod.spec.tolerations)
        if taint is None:
            continue
        taint_id = (taint.key, taint.value, taint.effect)
        taints[taint_id] += len(positions)
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
    nodes = only_short_of_ids(sched, expl, gpu)
    best = fitting = 0
    if row is not None and len(nodes):
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
