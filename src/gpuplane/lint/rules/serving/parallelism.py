"""Serving engines whose parallel sizes do not match the GPUs their pods get."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_dict, as_int, where
from gpuplane.lint.rules.serving._engines import EngineRun, engine_runs, spans_pods
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import ContainerRef, LintContext

# Device plugins whose count is one GPU per unit (an engine rank per GPU). Time-sliced replicas,
# HAMi shares, TPUs and Neuron cores count something else: the rule stays silent on those.
_WHOLE_GPU_KINDS = frozenset({"gpu", "mig"})
_RAY_KINDS = frozenset({"RayCluster", "RayService", "RayJob"})
# Env that pins devices inside the container: the engine then sees what it names, not the request.
_DEVICE_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)


def _whole_gpus(requests: dict[str, int]) -> tuple[int, str] | None:
    """(count, "nvidia.com/gpu: 8") of whole-GPU device requests; None when another accelerator
    kind (shared replicas, TPU, Neuron, HAMi) is asked for or none."""
    from gpuplane.gpu.resources import classify  # deferred for start-up time

    total, parts = 0, []
    for name, count in sorted(requests.items()):
        kind = classify(name)
        if kind is None or kind.kind not in _WHOLE_GPU_KINDS:
            return None
        total += count
        parts.append(f"{name}: {count}")
    return (total, ", ".join(parts)) if total else None


def _pod_gpus(ctx: LintContext, ps: PodSet) -> int | None:
    found = _whole_gpus(ctx.gpu_requests(ps))
    return found[0] if found else None


def _lws_size(ps: PodSet) -> int:
    return as_int(as_dict(as_dict(ps.source.data.get("spec")).get("leaderWorkerTemplate")).get("size"), 1)


def _lws_group(ctx: LintContext, ps: PodSet) -> tuple[int, str] | None:
    """GPUs of one LeaderWorkerSet group (leader + size-1 workers) and how they add up."""
    size = _lws_size(ps)
    leader = next((p for p in ctx.podsets if p.source is ps.source and p.role == "leader"), None)
    worker = next((p for p in ctx.podsets if p.source is ps.source and p.role == "worker"), None)
    if leader is None or size < 1:
        return None
    lead = _pod_gpus(ctx, leader)
    work = _pod_gpus(ctx, worker) if worker is not None else 0
    if lead is None or (size > 1 and work is None):
        return None
    work = work or 0
    total = lead + (size - 1) * work
    return total, f"{lead} on the leader + {size - 1} × {work} on the workers (group size {size})"


def _ray_group(ctx: LintContext, ps: PodSet) -> tuple[int, str] | None:
    """Most GPUs the Ray cluster can have (head + every worker group at its maximum)."""
    total, parts = 0, []
    for other in ctx.podsets:
        if other.source is not ps.source or other.role not in ("head", "worker"):
            continue
        per_pod = _pod_gpus(ctx, other) if ctx.gpu_requests(other) else 0
        if per_pod is None:
            return None
        count = max(other.count, other.max_count or 0)
        total += per_pod * count
        if per_pod:
            parts.append(f"{count} × {per_pod} ({other.name})")
    return total, " + ".join(parts) or "none"


def _finding(
    ctx: LintContext, ps: PodSet, c: ContainerRef, run: EngineRun, need: int, have: int, held: str
) -> Finding:
    path = (*c.path, *run.path)
    sizes = f"{run.name} runs with {run.describe()} = {need} GPU(s)"
    if need > have:
        return ctx.report(
            ctx.holder(ps),
            path,
            f"{where(ps, c)}: {sizes}, but {held}: the engine needs one GPU per rank and fails at start-up "
            "(or waits forever for the missing GPUs), so the server never becomes ready.",
            f"request {need} GPU(s) for it, or lower the parallel sizes to {have} GPU(s) in all.",
        )
    return ctx.report(
        ctx.holder(ps),
        path,
        f"{where(ps, c)}: {sizes}, but {held}: {have - need} GPU(s) are allocated and never used, for as "
        "long as the pod runs.",
        f"request {need} GPU(s), or raise the parallel sizes (tensor/pipeline/data parallel) to use all {have}.",
        severity="warning",
    )


@rule(
    id="serving-parallelism-gpu-mismatch",
    severity="error",
    category="serving",
    summary="vLLM/SGLang/TGI/TensorRT-LLM tensor × pipeline (× data) parallel size differs from the GPUs the "
    "pod or its multi-node group gets: cannot start (error) or GPUs held idle (warning)",
)
def serving_parallelism_gpu_mismatch(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        lws = ps.source.kind == "LeaderWorkerSet"
        # KubeRay-built pods (RayCluster/RayService/RayJob, and operators that create RayClusters
        # such as AIBrix's RayClusterFleet) carry KubeRay's managed /dev/shm marker
        ray = ps.source.kind in _RAY_KINDS or ps.managed_shm == "KubeRay"
        if (lws and ps.role != "leader") or (ray and ps.role != "head" and ps.role != "worker"):
            continue
        for c in ctx.containers(ps, ("containers",)):
            if any(name in _DEVICE_ENV for name in (item.get("name") for _, item in c.env())):
                continue
            # the LeaderWorkerSet webhook adds LWS_GROUP_SIZE to every container (kubernetes-sigs/lws
            # api/leaderworkerset/v1/leaderworkerset_types.go LwsGroupSize), used as --nnodes $(LWS_GROUP_SIZE)
            injected = {"LWS_GROUP_SIZE": str(_lws_size(ps))} if lws else None
            runs = engine_runs(c.data, injected)
            if len(runs) != 1 or runs[0].unknown or not runs[0].explicit():
                # several engines may share the GPUs; a size from a file is unknown here; without
                # a size flag the engine's own default decides
                continue
            run = runs[0]
            need = run.total_gpus()
            if need is None:
                continue
            own = _whole_gpus(c.gpu_requests())
            if own is None:
                continue
            have, held = own
            local = run.local_gpus()
            if local is not None:
                # the engine says how many of its GPUs sit in this pod
                if local != have:
                    yield _finding(ctx, ps, c, run, local, have, f"the container gets {held}")
                continue
            if lws:
                group = _lws_group(ctx, ps)
                if group is None:
                    continue
                total, how = group
                if total == have and not spans_pods(c.data) and need != have:
                    yield _finding(ctx, ps, c, run, need, have, f"the container gets {held}")
                elif total != have and need != total:
                    yield _finding(ctx, ps, c, run, need, total, f"the group gets {total} GPU(s): {how}")
                continue
            if ray:
                if ps.role != "head":
                    continue
                group = _ray_group(ctx, ps)
                if group is not None and need > group[0]:
                    # other Ray tasks may use spare GPUs: only the shortfall is certain
                    yield _finding(ctx, ps, c, run, need, group[0], f"the Ray cluster has at most {group[1]}")
                continue
            if spans_pods(c.data) or (ps.distributed and ps.role == "worker"):
                continue  # a multi-pod engine whose group size this kind does not say
            if need != have:
                yield _finding(ctx, ps, c, run, need, have, f"the container gets {held}")
