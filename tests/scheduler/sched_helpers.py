"""Builders for small clusters: real manifest dicts, as kubectl would print them."""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.sources.manifest import Manifest
from gpuplane.why_pending.explain import explain


def node(
    name: str,
    *,
    cpu: str = "8",
    memory: str = "32Gi",
    gpus: int | None = None,
    pods: int = 110,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    extra: dict[str, Any] | None = None,
    version: str = "v1.31.4",
) -> dict:
    alloc: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods), "ephemeral-storage": "100Gi"}
    if gpus is not None:
        alloc["nvidia.com/gpu"] = str(gpus)
    alloc.update(extra or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc, "nodeInfo": {"kubeletVersion": version}},
    }


def pod(
    name: str,
    *,
    ns: str = "default",
    node_name: str | None = None,
    cpu: str | None = "100m",
    gpus: int | None = None,
    priority: int | None = None,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    phase: str | None = None,
    resources: dict[str, Any] | None = None,
) -> dict:
    limits: dict[str, Any] = {}
    requests: dict[str, Any] = {}
    if cpu:
        requests["cpu"] = cpu
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
        requests["nvidia.com/gpu"] = str(gpus)
    if resources:
        requests.update(resources)
        limits.update({k: v for k, v in resources.items() if "/" in k})
    body: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": requests, "limits": limits}}
        ]
    }
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    body.update(spec or {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}, "uid": f"uid-{name}"},
        "spec": body,
        "status": {"phase": phase or ("Running" if node_name else "Pending")},
    }


def obj(kind: str, name: str, api_version: str = "v1", ns: str | None = None, **fields: Any) -> dict:
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    meta.update(fields.pop("metadata", {}))
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def disruption_budget(name: str, selector: dict | None, status: dict, ns: str = "default") -> dict:
    """A ``policy/v1`` PodDisruptionBudget; a ``None`` selector leaves ``spec.selector`` out."""
    spec: dict = {} if selector is None else {"selector": selector}
    return obj("PodDisruptionBudget", name, "policy/v1", ns=ns, spec=spec, status=status)


def scheduler(docs: list[dict], version: str | None = None) -> Scheduler:
    state = ClusterState.from_objects([Manifest(d) for d in docs])
    return Scheduler(state, version=version)


def message(docs: list[dict], pod_name: str = "p", version: str | None = None) -> str:
    s = scheduler(docs, version)
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == pod_name)
    return explain(s, target).message
