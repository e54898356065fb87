"""PriorityClasses of GPU workloads: missing, system classes misused, batch preempting
serving, priorities set directly on pods.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import DeleteKey, Finding
from gpuplane.lint.rules._common import as_dict, where
from gpuplane.ruleset import rule


@rule(
    id="gpu-workload-without-priority",
    severity="info",
    category="tenancy",
    summary="GPU workload with no priorityClassName where PriorityClasses exist",
    context="optional",
    tier="opt-in",
)
def gpu_workload_without_priority(ctx: LintContext) -> Iterator[Finding]:
    # a PriorityClass without a name (metadata mistyped) is rejected by the API: it offers no class
    classes = [
        pc
        for pc in ctx.by_kind("PriorityClass", include_cluster=True)
        if pc.name and not pc.name.startswith("system-")
    ]
    if not classes or any(pc.get("globalDefault") is True for pc in classes):
        return
    names = ", ".join(sorted({pc.name for pc in classes})[:4])
    for ps in ctx.gpu_podsets():
        if pod_spec(ps).get("priorityClassName") or ps.priority_class or kinds.is_daemon(ps):
            continue
        yield ctx.report(
            ctx.holder(ps),
            ps.spec_path,
            f"{where(ps)} asks for GPUs with no priorityClassName (priority 0)",
            f"set priorityClassName to one of: {names}",
        )


SYSTEM_CLASSES = ("system-node-critical", "system-cluster-critical")


# Namespaces cluster add-ons install into: kube-system and the `<project>-system` convention
# (volcano-system, kueue-system, karpenter ...), plus the NVIDIA operators' own.
_ADDON_NAMESPACES = frozenset(
    {"kube-system", "gpu-operator", "nvidia-gpu-operator", "nvidia-network-operator", "karpenter"}
)


def _addon_namespace(namespace: str | None) -> bool:
    ns = namespace or ""
    return ns in _ADDON_NAMESPACES or ns.endswith("-system")


@rule(
    id="system-priority-misuse",
    severity="warning",
    category="tenancy",
    summary="system-node-critical / system-cluster-critical on user workloads (training, inference, batch)",
)
def system_priority_misuse(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        pc = pod_spec(ps).get("priorityClassName")
        if pc not in SYSTEM_CLASSES or kinds.is_daemon(ps):
            continue
        if not ctx.is_gpu(ps) and _addon_namespace(ps.source.namespace):
            continue  # a cluster add-on's own installer or controller (Volcano, GPU Operator, Kueue ...)
        user = (
            kinds.is_training(ps)
            or kinds.is_inference(ps)
            or ps.source.kind in ("Job", "CronJob")
            or ctx.is_gpu(ps)
        )
        if not user:
            continue
        yield ctx.report(
            ctx.holder(ps),
            (*ps.spec_path, "priorityClassName"),
            f"{where(ps)} uses {pc}, reserved for node and cluster agents: it outranks every user workload",
            "create a user PriorityClass (value <= 1000000000) for this tier and use it",
        )


def _pc_value(pc: Any) -> int | None:
    value = pc.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@rule(
    id="batch-priority-preempts-serving",
    severity="warning",
    category="tenancy",
    summary="training/batch PriorityClass >= the serving class with preemptionPolicy PreemptLowerPriority",
    context="optional",
)
def batch_priority_preempts_serving(ctx: LintContext) -> Iterator[Finding]:
    classes = {
        pc.name: pc
        for pc in ctx.by_kind("PriorityClass", include_cluster=True)
        if not pc.name.startswith("system-") and _pc_value(pc) is not None
    }
    if len(classes) < 2:
        return
    serving: set[str] = set()
    batch: set[str] = set()
    for ps in ctx.podsets:
        name = pod_spec(ps).get("priorityClassName")
        if name in classes:
            if kinds.is_inference(ps):
                serving.add(name)
            elif kinds.is_training(ps) or ps.source.kind in ("Job", "CronJob"):
                batch.add(name)
    for name in classes:
        low = name.lower()
        if any(h in low for h in ("serv", "infer", "online", "latency")):
            serving.add(name)
        elif any(h in low for h in ("train", "batch", "research", "experiment", "backfill", "offline")):
            batch.add(name)
    batch -= serving
    if not serving or not batch:
        return
    top_serving = max(serving, key=lambda n: _pc_value(classes[n]) or 0)
    serving_value = _pc_value(classes[top_serving]) or 0
    input_ids = {id(o) for o in ctx.by_kind("PriorityClass")}
    for name in sorted(batch):
        pc = classes[name]
        if id(pc) not in input_ids:
            continue
        value = _pc_value(pc) or 0
        if pc.get("preemptionPolicy") == "Never" or value < serving_value:
            continue
        if value > serving_value:
            message = (
                f"PriorityClass {name} (training/batch, {value}) is above serving class {top_serving} "
                f"({serving_value}) and may preempt: training evicts inference pods when GPUs are short"
            )
        else:
            message = (
                f"PriorityClass {name} (training/batch) equals serving class {top_serving} ({value}): "
                "serving can never preempt batch pods to get GPUs back"
            )
        yield ctx.report(
            pc, ("value",), message, f"set value below {serving_value} and preemptionPolicy: Never on {name}"
        )


# pkg/apis/scheduling/types.go: SystemCriticalPriority + 1000 / SystemCriticalPriority.
SYSTEM_CLASS_VALUES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
# pkg/apis/scheduling/types.go DefaultPriorityWhenNoDefaultClassExists
DEFAULT_PRIORITY_NO_DEFAULT_CLASS = 0
# plugin/pkg/admission/priority/admission.go (admitPod); annotation of kubelet mirror pods.
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def _computed_priority(ctx: LintContext, class_name: Any) -> int | None:
    """The priority the admission plugin computes (None when the named class is unknown)."""
    classes = ctx.by_kind("PriorityClass", include_cluster=True)
    if isinstance(class_name, str) and class_name:
        for pc in classes:
            if pc.name == class_name:
                return _pc_value(pc)
        return SYSTEM_CLASS_VALUES.get(class_name)
    for pc in classes:
        if pc.data.get("globalDefault") is True:
            return _pc_value(pc)
    return DEFAULT_PRIORITY_NO_DEFAULT_CLASS


@rule(
    id="pod-priority-set-directly",
    severity="error",
    category="tenancy",
    summary="spec.priority written in a pod or pod template: the Priority admission plugin rejects the pod",
    fixable=True,
)
def pod_priority_set_directly(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        spec = pod_spec(ps)
        value = spec.get("priority")
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if MIRROR_POD_ANNOTATION in as_dict(as_dict(as_dict(ps.template).get("metadata")).get("annotations")):
            continue  # admitPod skips mirror pods
        computed = _computed_priority(ctx, spec.get("priorityClassName"))
        if computed is None or computed == value:
            continue
        path = (*ps.spec_path, "priority")
        yield ctx.report(
            ctx.holder(ps),
            path,
            f"{where(ps)} sets spec.priority itself; the Priority admission plugin rejects its pods: "
            f'"the integer value of priority ({value}) must not be provided in pod spec; priority admission '
            f'controller computed {computed} from the given PriorityClass name"',
            "remove spec.priority and set priorityClassName to a PriorityClass with the value you want",
            patch=(DeleteKey(path),) if ctx.writable(ps, path) else (),
        )
