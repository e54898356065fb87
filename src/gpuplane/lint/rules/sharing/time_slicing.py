"""Shared GPUs (time-slicing, MPS): requests above one replica, tenants sharing one GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import where
from gpuplane.lint.rules.sharing._shared import _classify, _container_requests, _dp_configs
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _shared_by_nodes(ctx: LintContext) -> set[str]:
    """Resources that every cluster node advertising them shares (``<resource>.replicas`` > 1)."""
    cluster = ctx.cluster
    if cluster is None:
        return set()
    verdict: dict[str, bool] = {}
    for node in cluster.nodes:
        labels = node.metadata.labels
        allocatable = cluster.allocatable(node.metadata.name)
        for name in node.status.allocatable:
            if not name.startswith("nvidia.com/") or allocatable.get(name, 0) <= 0:
                continue
            raw = str(labels.get(f"{name}.replicas", "1"))
            shared = raw.isdigit() and int(raw) > 1
            verdict[name] = verdict.get(name, True) and shared
    return {name for name, shared in verdict.items() if shared}


def _is_shared(name: str, node_shared: set[str]) -> bool:
    res = _classify(name)
    return (res is not None and res.kind == "shared") or name in node_shared


@rule(
    id="shared-gpu-request-gt1",
    severity="warning",
    category="sharing",
    summary="Pod asks for >1 of a time-sliced / MPS-shared GPU resource: no extra compute, may be rejected.",
    context="optional",
)
def shared_gpu_request_gt1(ctx: LintContext) -> Iterator[Finding]:
    node_shared = _shared_by_nodes(ctx)
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, count, path in _container_requests(c):
                if count > 1 and _is_shared(name, node_shared):
                    yield ctx.report(
                        ps.source,
                        path,
                        f"{where(ps, c)} asks for {count} {name}, a time-sliced/MPS-shared resource: "
                        "replicas are slices of the same GPUs (no extra compute), and with "
                        'failRequestsGreaterThanOne (default for MPS) the kubelet rejects the pod: "maximum request '
                        'size for shared resources is 1".',
                        f"Request {name}: 1, or use whole GPUs / a larger MIG profile for more compute.",
                    )


@rule(
    id="timeslicing-multi-tenant",
    severity="info",
    category="sharing",
    summary="Time-sliced GPUs shared by namespaces of different tenants: no memory or fault isolation.",
    context="optional",
)
def timeslicing_multi_tenant(ctx: LintContext) -> Iterator[Finding]:
    modes = {
        cfg.sharing_mode
        for _cm, parsed in _dp_configs(ctx)
        for cfg, _p in parsed.values()
        if cfg is not None and cfg.sharing_mode
    }
    if modes == {"mps"}:
        return
    node_shared = _shared_by_nodes(ctx)
    users: dict[str, list[tuple[PodSet, str, FieldPath]]] = {}
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, _count, path in _container_requests(c):
                if _is_shared(name, node_shared):
                    users.setdefault(name, []).append((ps, c.name, path))
                    break
    for name, uses in users.items():
        namespaces = sorted({_ns(ps.source) for ps, _c, _p in uses})
        if len(namespaces) < 2:
            continue
        for ps, cname, path in uses:
            others = [n for n in namespaces if n != _ns(ps.source)]
            yield ctx.report(
                ps.source,
                path,
                f'{obj_label(ps.source)}, container "{cname}" uses time-sliced {name}, which '
                f"namespace(s) {', '.join(others[:3])} also use: time-slicing has no memory or fault isolation "
                "between tenants.",
                "Give each tenant isolated slices (MIG profiles, or MPS with memory limits), or separate "
                "time-sliced node pools per namespace.",
            )
