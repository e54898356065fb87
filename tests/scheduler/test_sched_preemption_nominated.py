"""Preemption dry runs count nominated pods, and a zero-victim node is not a candidate.

Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
(``SelectVictimsOnNode`` filters with ``RunFilterPluginsWithNominatedPods``) and
pkg/scheduler/framework/preemption/preemption.go (``DryRunPreemption``: success with no
victim becomes ``expected at least one victim pod on node %q``). Regression: the dry run
ignored nominated pods, so a node whose free GPUs a higher-priority nominated pod holds was
reported as "preemption can make room: evicting 0 lower-priority pod(s)".
"""

from __future__ import annotations

import numpy as np
from sched_helpers import node, pod, scheduler

from gpuplane.scheduler.framework import Code, Status, U
from gpuplane.scheduler.preemption import run_postfilter
from gpuplane.scheduler.runtime import Diagnosis
from gpuplane.why_pending.explain import explain

HELD = (
    "the 8 free nvidia.com/gpu on node n1 are reserved for the nominated pod default/nom (priority 1000, "
    "8 nvidia.com/gpu), of priority >= the pod's (0): kube-scheduler counts pods nominated to a node "
    "(status.nominatedNodeName, set by preemption) as already running there when filtering "
    "(RunFilterPluginsWithNominatedPods): that leaves at most 0 for this pod, which asks for 4"
)


def _nominated(name: str, gpus: int, priority: int, on: str) -> dict:
    body = pod(name, gpus=gpus, priority=priority)
    body["status"]["nominatedNodeName"] = on
    return body


def _docs(want_priority: int, want_spec: dict | None = None) -> list[dict]:
    # n1: 8 GPUs, all free; a CPU-only batch pod of priority -10 runs there (a potential victim).
    return [
        node("n1", gpus=8),
        pod("batch", node_name="n1", priority=-10),
        _nominated("nom", 8, 1000, "n1"),
        pod("want", gpus=4, priority=want_priority, spec=want_spec),
    ]


def _explain(docs: list[dict], name: str = "want"):
    s = scheduler(docs)
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == name)
    return explain(s, target)


def test_nominated_higher_priority_pod_counts_in_the_dry_run() -> None:
    expl = _explain(_docs(0))
    assert expl.message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    assert expl.preemption is not None and expl.preemption.nominated_node is None
    assert expl.cause_texts() == [HELD]


def test_dry_run_counts_nominated_pods_on_the_per_node_path() -> None:
    # A host port makes NodePorts active: the dry run filters node by node, not vectorized.
    ports = {
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "ports": [{"containerPort": 80, "hostPort": 8080}],
                "resources": {"requests": {"nvidia.com/gpu": "4"}, "limits": {"nvidia.com/gpu": "4"}},
            }
        ]
    }
    expl = _explain(_docs(0, ports))
    assert expl.message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    assert expl.cause_texts() == [HELD]


def test_higher_priority_pod_ignores_lower_priority_nominations() -> None:
    # addGEPriorityNominatedPods adds only nominated pods of >= priority: nom (1000) does not
    # count for want (2000), so want fits n1 in the Filter stage itself.
    expl = _explain(_docs(2000))
    assert expl.stage == "schedulable"
    assert expl.message == ""
    assert expl.preemption is None
    assert expl.cause_texts() == [
        "the pod fits now on 1 node(s) (n1): the next scheduling attempt should place it"
    ]


def _postfilter_on_fitting_nodes(names: list[str]):
    """PostFilter for a pod whose Filter verdict (crafted) says U although it fits: the dry run
    then keeps every lower-priority pod, which upstream turns into an Error status."""
    docs = [node(n, gpus=8) for n in names] + [pod(f"low-{n}", node_name=n, priority=-10) for n in names]
    docs.append(pod("p", gpus=4, priority=0))
    s = scheduler(docs)
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == "p")
    ctx = s.context(target)
    active, rejected, _ = s.framework.run_prefilter(ctx)
    assert rejected is None
    diag = Diagnosis(np.empty(0, dtype=np.int64))
    diag.groups[Status(U, ("Insufficient nvidia.com/gpu",), "NodeResourcesFit")] = list(range(len(names)))
    return run_postfilter(s.framework, ctx, diag, active)


def test_zero_victim_node_is_an_error_not_a_candidate() -> None:
    outcome = _postfilter_on_fitting_nodes(["n1"])
    assert outcome.nominated_node is None and outcome.victims == []
    assert outcome.error is True
    assert outcome.message == 'preemption: expected at least one victim pod on node "n1"'
    assert outcome.tried == {
        0: Status(Code.ERROR, ('expected at least one victim pod on node "n1"',), "DefaultPreemption")
    }


def test_zero_victim_errors_aggregate_in_brackets() -> None:
    # utilerrors.NewAggregate: several errors print as "[e1, e2]".
    outcome = _postfilter_on_fitting_nodes(["n1", "n2"])
    assert outcome.message == (
        'preemption: [expected at least one victim pod on node "n1", expected at least one victim pod on node "n2"]'
    )
