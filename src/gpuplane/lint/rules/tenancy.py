"""Rules of category ``tenancy``: quotas and priorities for shared GPU clusters (spec/rules.md).

Quota semantics: kubernetes/kubernetes ``pkg/quota/v1/evaluator/core/pods.go`` (only
``requests.<extended>`` is charged) and ``pkg/apis/core/validation/validation.go``
(``ValidateResourceQuotaResourceName`` accepts any key with a ``/``); PriorityClass
facts: ``pkg/apis/scheduling/types.go`` (reference/platform.md §1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import DeleteKey, Finding, RenameKey
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_dict, is_extended_resource, obj_label, where

QUOTA_KEY_DOCS = """
## What it catches
A `ResourceQuota` that limits GPUs with `limits.nvidia.com/gpu` or a bare `nvidia.com/gpu` key (any
extended resource).

## Why it hurts
The API server accepts both spellings (`ValidateResourceQuotaResourceName` only checks keys without a
`/`), but the quota evaluator charges extended resources only under `requests.<name>`
(`pkg/quota/v1/evaluator/core/pods.go`): `status.used` never gets a value for the other keys, and the
quota enforces nothing. Teams run as many GPUs as they like while the quota looks configured. The
Kubernetes docs: "only quota items with the prefix `requests.` are allowed" for extended resources.

## How to fix
Rename the key to `requests.nvidia.com/gpu` (`gpuplane lint --fix` does it; when the `requests.` key is
already there, it removes the inert one).

## Bad
```yaml
kind: ResourceQuota
spec:
  hard:
    limits.nvidia.com/gpu: 8
```

## Good
```yaml
kind: ResourceQuota
spec:
  hard:
    requests.nvidia.com/gpu: 8
```

## References
- https://kubernetes.io/docs/concepts/policy/resource-quotas/#resource-quota-for-extended-resources
- kubernetes/kubernetes `pkg/quota/v1/evaluator/core/pods.go`; NVIDIA/k8s-device-plugin#211; kubeflow/website#2460
"""


def _quota_extended(key: str) -> tuple[str, str] | None:
    """(prefix, resource) for an extended-resource quota key that is never charged."""
    if key.startswith("count/") or ".storageclass.storage.k8s.io/" in key:
        return None
    if key.startswith("limits."):
        name = key[len("limits.") :]
        return ("limits.", name) if is_extended_resource(name) else None
    if is_extended_resource(key):
        return ("", key)
    return None


@rule(
    id="quota-gpu-invalid-key",
    severity="error",
    category="tenancy",
    summary="ResourceQuota limits GPUs with limits.<res> or a bare <res> key: accepted, never enforced",
    docs=QUOTA_KEY_DOCS,
    fixable=True,
)
def quota_gpu_invalid_key(ctx: LintContext) -> Iterator[Finding]:
    for quota in ctx.by_kind("ResourceQuota"):
        hard = quota.get("spec", "hard")
        if not isinstance(hard, dict):
            continue
        for key in hard:
            parsed = _quota_extended(str(key))
            if parsed is None:
                continue
            prefix, name = parsed
            good = f"requests.{name}"
            path = ("spec", "hard", key)
            if good in hard:
                fix, patch = f"remove {key} (requests.{name} already limits it)", (DeleteKey(path),)
            else:
                fix, patch = f"rename the key to {good}", (RenameKey(path, good),)
            yield ctx.report(
                quota,
                path,
                f"{obj_label(quota)} limits {key}: quota never charges extended resources "
                f"{'under limits.' if prefix else 'under a bare name'}: it enforces nothing",
                fix,
                patch=patch,
            )


NS_QUOTA_DOCS = """
## What it catches
A namespace that runs GPU workloads but has no `ResourceQuota` with `requests.<gpu resource>` for the
GPUs they use. Runs when the input or the cluster (`--cluster`) holds Namespaces or ResourceQuotas, so it
can tell.

## Why it hurts
Without a GPU quota one team's sweep can take every GPU of the cluster; other teams' jobs sit Pending
(`Insufficient nvidia.com/gpu`) and nothing says who is over their share.

## How to fix
Add a ResourceQuota per tenant namespace with `requests.nvidia.com/gpu` (and MIG / shared names used),
or admit GPU work through Kueue ClusterQueues with GPU nominal quotas.

## Bad
```yaml
kind: Namespace
metadata: {name: team-a}
# ... GPU Deployments in team-a, no ResourceQuota
```

## Good
```yaml
kind: ResourceQuota
metadata: {name: gpu, namespace: team-a}
spec:
  hard: {requests.nvidia.com/gpu: 16}
```

## References
- https://kubernetes.io/docs/concepts/policy/resource-quotas/
"""


def _quota_resources(ctx: LintContext) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for quota in ctx.by_kind("ResourceQuota", include_cluster=True):
        hard = quota.get("spec", "hard")
        if isinstance(hard, dict):
            ns = quota.namespace or "default"
            out.setdefault(ns, set()).update(
                str(k)[len("requests.") :] for k in hard if str(k).startswith("requests.")
            )
    return out


@rule(
    id="namespace-without-gpu-quota",
    severity="warning",
    category="tenancy",
    summary="namespace runs GPU workloads without a ResourceQuota on its GPUs",
    docs=NS_QUOTA_DOCS,
    context="optional",
)
def namespace_without_gpu_quota(ctx: LintContext) -> Iterator[Finding]:
    if not (
        ctx.by_kind("Namespace", include_cluster=True) or ctx.by_kind("ResourceQuota", include_cluster=True)
    ):
        return
    # Kueue admits the workload against ClusterQueue quotas: that is a GPU quota too.
    quotas = _quota_resources(ctx)
    namespaces = {ns.name: ns for ns in ctx.by_kind("Namespace")}
    reported: set[str] = set()
    for ps in ctx.gpu_podsets():
        ns = ps.source.namespace or "default"
        if ns in reported or ps.queue or kinds.is_daemon(ps):
            continue
        wanted = ctx.gpu_requests(ps)
        covered = quotas.get(ns, set())
        missing = sorted(name for name in wanted if name not in covered)
        if not missing:
            continue
        reported.add(ns)
        target = namespaces.get(ns)
        obj, path = (
            (target, ("metadata", "name")) if target is not None else (ps.source, ("metadata", "namespace"))
        )
        yield ctx.report(
            obj,
            path,
            f"namespace {ns} runs GPU workloads ({where(ps)}) with no ResourceQuota on {', '.join(missing)}",
            f"add a ResourceQuota in {ns} with hard: {{requests.{missing[0]}: <team share>}}",
        )


PRIORITY_DOCS = """
## What it catches
A GPU workload without `priorityClassName` where user PriorityClasses exist (in the input or the
cluster) and none of them is `globalDefault`.

## Why it hurts
Without a class the pod gets priority 0. When GPUs are short, the scheduler cannot tell a production
inference pod from an experiment: the wrong pods wait, and preemption (which only evicts strictly lower
priority) cannot make room for the important ones.

## How to fix
Set `priorityClassName` on every GPU pod template (or mark one class `globalDefault: true`).

## Bad
```yaml
spec:
  containers: [...]
```

## Good
```yaml
spec:
  priorityClassName: training-prod
  containers: [...]
```

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
"""


@rule(
    id="gpu-workload-without-priority",
    severity="info",
    category="tenancy",
    summary="GPU workload with no priorityClassName where PriorityClasses exist",
    docs=PRIORITY_DOCS,
    context="optional",
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


SYSTEM_PRIORITY_DOCS = """
## What it catches
`priorityClassName: system-node-critical` or `system-cluster-critical` on a user workload: training,
inference, batch Jobs. Node agents (DaemonSets such as the device plugin, GPU Operator operands, CSI and
CNI agents) use these classes legitimately in any namespace (allowed outside kube-system since 1.17) and
are not reported.

## Why it hurts
These classes have values 2000001000 / 2000000000, above every user class (max 1000000000). A training
job with them preempts everything else, including other tenants' inference; under node pressure the
kubelet evicts it last. Clusters that follow the docs' advice limit these classes with a
PriorityClass-scoped quota, and then the pods are rejected:
`insufficient quota to match these scopes: [{PriorityClass In [system-node-critical system-cluster-critical]}]`.

## How to fix
Create a user PriorityClass for the tier you need (e.g. `inference-prod: 100000`) and use it.

## Bad
```yaml
kind: Job
spec:
  template:
    spec:
      priorityClassName: system-cluster-critical
```

## Good
```yaml
kind: Job
spec:
  template:
    spec:
      priorityClassName: training-prod
```

## References
- kubernetes/kubernetes `pkg/apis/scheduling/types.go` (SystemCriticalPriority, HighestUserDefinablePriority)
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
"""

SYSTEM_CLASSES = ("system-node-critical", "system-cluster-critical")


@rule(
    id="system-priority-misuse",
    severity="warning",
    category="tenancy",
    summary="system-node-critical / system-cluster-critical on user workloads (training, inference, batch)",
    docs=SYSTEM_PRIORITY_DOCS,
)
def system_priority_misuse(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        pc = pod_spec(ps).get("priorityClassName")
        if pc not in SYSTEM_CLASSES or kinds.is_daemon(ps):
            continue
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


PREEMPTS_DOCS = """
## What it catches
A training or batch PriorityClass whose value is at least that of the serving (inference) class while
its `preemptionPolicy` is `PreemptLowerPriority` (the default). Classes are recognised by the workloads
that use them (training vs inference pods) or by name (`train`, `batch`, `research` vs `serv`, `infer`).

Note on the catalog: Kubernetes preempts only pods of *strictly lower* priority, so a batch class
*equal* to the serving class cannot evict serving pods; it still stops serving from ever preempting batch
to get GPUs back, which is reported with its own message.

## Why it hurts
A training job with a higher class than serving evicts inference replicas whenever GPUs are short:
latency SLOs break so that a batch job can start, and with equal classes serving cannot reclaim GPUs.

## How to fix
Keep serving above training (e.g. inference 100000, training 10000) and give training classes
`preemptionPolicy: Never` if they must not evict anything.

## Bad
```yaml
kind: PriorityClass
metadata: {name: training}
value: 1000000
```

## Good
```yaml
kind: PriorityClass
metadata: {name: training}
value: 10000
preemptionPolicy: Never
```

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
- reference/platform.md §1.5–1.6
"""


def _pc_value(pc: Any) -> int | None:
    value = pc.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@rule(
    id="batch-priority-preempts-serving",
    severity="warning",
    category="tenancy",
    summary="training/batch PriorityClass >= the serving class with preemptionPolicy PreemptLowerPriority",
    docs=PREEMPTS_DOCS,
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


PRIORITY_SET_DIRECTLY_DOCS = """
## What it catches
A pod, or the pod template of a controller (Deployment, Job, JobSet, PyTorchJob ...), that writes
`spec.priority` itself with a value other than the one its PriorityClass gives.

This rule is a gpuplane addition beyond the rule catalog of spec/rules.md (the catalog allows
additions): it catches a rejection the other priority rules do not.

## Why it hurts
Pod priority is not a user field. The `Priority` admission plugin (enabled by default) computes it at
creation from `priorityClassName`, or from the `globalDefault` PriorityClass, or 0 when there is none,
and rejects a pod whose own `spec.priority` differs (kubernetes `plugin/pkg/admission/priority/admission.go`):

```
pods "gpu-placeholders-7d9c-x2x8p" is forbidden: the integer value of priority (-1000) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name
```

For a controller the template is accepted, but every pod it creates is refused: the ReplicaSet or Job
shows `FailedCreate` events and no pod ever appears. Low-priority GPU placeholder ("overprovisioning")
Deployments hit this often: they try to get a negative priority without creating a PriorityClass, so the
placeholders never exist and nodes are never pre-provisioned.

gpuplane resolves the class from the input and the cluster snapshot (system classes included); when the
named class is unknown it cannot tell the computed value and stays silent.

## How to fix
Remove `spec.priority` and set `priorityClassName` to a PriorityClass with the value you want (create
one, e.g. `value: -10` with `preemptionPolicy: Never` for placeholders). `gpuplane lint --fix` deletes
the `spec.priority` field.

## Bad
```yaml
kind: Deployment
spec:
  template:
    spec:
      priority: -1000
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.9
```

## Good
```yaml
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: gpu-placeholder
value: -10
preemptionPolicy: Never
---
kind: Deployment
spec:
  template:
    spec:
      priorityClassName: gpu-placeholder
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.9
```

## References
- kubernetes/kubernetes `plugin/pkg/admission/priority/admission.go` (`admitPod`)
- kubernetes/kubernetes `pkg/apis/scheduling/types.go` (`DefaultPriorityWhenNoDefaultClassExists`, system classes)
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
"""

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
    docs=PRIORITY_SET_DIRECTLY_DOCS,
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
