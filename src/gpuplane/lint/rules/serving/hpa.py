"""Autoscaling GPU serving on CPU metrics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint import kinds
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_dict, as_str, obj_label
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


_CPU_MEM = frozenset({"cpu", "memory"})


def _hpa_cpu_only(hpa: Manifest) -> FieldPath | None:
    """Field path to report when the HPA scales on CPU/memory only, else None."""
    spec = hpa.data.get("spec")
    if not isinstance(spec, dict):
        return None
    if hpa.api_version == "autoscaling/v1":
        return (
            ("spec", "targetCPUUtilizationPercentage")
            if "targetCPUUtilizationPercentage" in spec
            else ("spec", "scaleTargetRef")
        )
    metrics = spec.get("metrics")
    if not metrics:
        return ("spec", "scaleTargetRef")  # no metrics: the controller defaults to 80% CPU
    if not isinstance(metrics, list):
        return None
    for m in metrics:
        if not isinstance(m, dict):
            return None
        kind = m.get("type")
        if kind == "Resource":
            name = as_str(as_dict(m.get("resource")).get("name"))
        elif kind == "ContainerResource":
            name = as_str(as_dict(m.get("containerResource")).get("name"))
        else:
            return None
        if name not in _CPU_MEM:
            return None
    return ("spec", "metrics")


def _keda_cpu_only(obj: Manifest) -> FieldPath | None:
    triggers = obj.get("spec", "triggers")
    if not isinstance(triggers, list) or not triggers:
        return None
    if all(isinstance(t, dict) and t.get("type") in _CPU_MEM for t in triggers):
        return ("spec", "triggers")
    return None


def _template_has_gpu(obj: Manifest) -> bool:
    """A cluster controller (not expanded into PodSets) whose pod template asks for GPUs."""
    containers = obj.get("spec", "template", "spec", "containers")
    return isinstance(containers, list) and any(
        isinstance(c, dict) and kinds.container_gpu_requests(c) for c in containers
    )


@rule(
    id="hpa-cpu-for-gpu-serving",
    severity="warning",
    category="serving",
    summary="HPA scales a GPU workload on CPU/memory only.",
    context="optional",
)
def hpa_cpu_for_gpu_serving(ctx: LintContext) -> Iterator[Finding]:
    candidates = [(o, _hpa_cpu_only(o)) for o in ctx.by_kind("HorizontalPodAutoscaler", "autoscaling")]
    candidates += [(o, _keda_cpu_only(o)) for o in ctx.by_kind("ScaledObject", "keda.sh")]
    scalers = [(o, p) for o, p in candidates if p is not None]
    if not scalers:
        return
    gpu_targets: dict[tuple[str, str, str], str] = {}
    for ps in ctx.gpu_podsets():
        src = ps.source
        gpu_targets.setdefault((src.namespace or "default", src.kind, src.name), ps.name)
    for kind in ("Deployment", "StatefulSet", "LeaderWorkerSet"):
        for obj in ctx.by_kind(kind, include_cluster=True):
            key = (obj.namespace or "default", kind, obj.name)
            if key not in gpu_targets and _template_has_gpu(obj):
                gpu_targets[key] = obj.name
    for obj, path in scalers:
        ref = obj.get("spec", "scaleTargetRef", default={})
        if not isinstance(ref, dict):
            continue
        kind = str(ref.get("kind") or "Deployment")
        key = (obj.namespace or "default", kind, str(ref.get("name") or ""))
        if key not in gpu_targets:
            continue
        what = f"KEDA {obj_label(obj)}" if obj.kind == "ScaledObject" else obj_label(obj)
        yield ctx.report(
            obj,
            path,
            f"{what} scales GPU {kind} {key[2]} on CPU/memory only: a GPU server saturates on the "
            "GPU (queued requests, KV cache) while its CPU stays low, so it does not scale when latency explodes.",
            "Scale on the server's load signal through a metrics adapter or KEDA: queue depth "
            "(vllm:num_requests_waiting), running requests (vllm:num_requests_running) or KV-cache usage.",
        )
