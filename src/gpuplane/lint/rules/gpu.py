"""Rules of category ``gpu``: requesting accelerators (spec/rules.md).

API behaviour quoted in the docs comes from kubernetes/kubernetes
``pkg/apis/core/validation/validation.go`` (``ValidateContainerResourceRequirements``,
``ValidateResourceQuantityValue``, ``validateContainerResourceName``) and the NVIDIA
device plugin / container toolkit (reference/nvidia-gpu-stack.md §1.5, §6). The three API
checks (request without limit, request != limit, fractional quantity) are not re-implemented
here: the rules report :mod:`gpuplane.k8s.validation`'s errors, the ones simulate refuses
pods with, so lint and simulate can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.k8s import validation
from gpuplane.k8s.validation import ResourceError
from gpuplane.lint import kinds
from gpuplane.lint.context import ALL_SECTIONS, ContainerRef, LintContext, pod_spec
from gpuplane.lint.finding import AppendItem, Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import container_resource_items, is_extended_resource, where
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet


def _api_errors(
    ctx: LintContext, check: str
) -> Iterator[tuple[PodSet, Manifest, ContainerRef, ResourceError]]:
    """``(pod set, holder, container, error)`` for each API error of kind ``check`` on a field the
    manifest writes (defaulted requests repeat their limit's error: one finding, on the written field)."""
    for ps in ctx.podsets:
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            for err in c.api_errors():
                if err.check == check and not err.defaulted:
                    yield ps, holder, c, err


REQUEST_WITHOUT_LIMIT_DOCS = """
## What it catches
A container lists an extended resource (`nvidia.com/gpu`, `amd.com/gpu`, `nvidia.com/mig-1g.10gb`, ...)
under `resources.requests` but not under `resources.limits`.

## Why it hurts
Extended resources cannot be overcommitted, so the API server requires a limit for them
(`ValidateContainerResourceRequirements` in kubernetes `pkg/apis/core/validation/validation.go`). The object is rejected:

```
The Deployment "train" is invalid: spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources
```

For custom resources (PyTorchJob, RayJob ...) the CRD accepts the object and the *operator's* pod creation
fails instead, so the job sits there with no pods. Kubeflow Trainer's `trainer.resourcesPerNode` with
only `requests` fails this way when JobSet creates the Job (kubeflow/trainer#2363):
`Job.batch "torch-test-trainer-node-0" is invalid: spec.template.spec.containers[0].resources.limits:
Required value: Limit must be set for non overcommitable resources`.

The API names the `limits` map, not the resource: the error is `field.Required` on
`resources.limits`. gpuplane points at the request that needs the limit.

A TrainJob's `trainer.resourcesPerNode` *replaces* the runtime container's resources (kubeflow/trainer
`pkg/runtime/framework/plugins/jobset/builder.go`, `Builder.Trainer`), so requests without limits there
are rejected whatever the runtime declares; the finding points at the TrainJob field.

## How to fix
Put the count under `limits`. A limit alone is enough: the API server defaults the request to the limit.
`gpuplane lint --fix` adds `limits.<resource>` equal to the request.

## Bad
```yaml
resources:
  requests:
    nvidia.com/gpu: 1
```

## Good
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## References
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go` (`ValidateContainerResourceRequirements`)
- https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- kubeflow/trainer#2363 (the same rejection for a TrainJob's `resourcesPerNode`)
"""


@rule(
    id="gpu-request-without-limit",
    severity="error",
    category="gpu",
    summary="GPU (extended resource) in requests but not in limits: the API server rejects the pod",
    docs=REQUEST_WITHOUT_LIMIT_DOCS,
    fixable=True,
)
def gpu_request_without_limit(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.LIMIT_REQUIRED):
        name, value = err.name, c.resources("requests")[err.name]
        target = (*c.path, "resources", "limits", name)
        patch = (SetValue(target, value),) if ctx.writable(ps, target) else ()
        yield ctx.report(
            holder,
            (*c.path, "resources", "requests", name),
            f"{where(ps, c)} requests {name}: {value} without a limit; the API server rejects it "
            f'("{err.detail}")',
            f"set resources.limits[{name}]: {value} (a limit alone is enough: the request defaults to it)",
            patch=patch,
        )


MISMATCH_DOCS = """
## What it catches
A container sets both `requests` and `limits` for an extended resource (a GPU) with different values.

## Why it hurts
Extended resources are not overcommittable: the request must *equal* the limit. The API server rejects
the pod template (kubernetes `pkg/apis/core/validation/validation.go`):

```
The Deployment "train" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2
```

The error is on the `resources.requests` map (`field.Invalid(reqPath, ...)`), not on
`requests[nvidia.com/gpu]`; the value is the request, printed as `Quantity.String()`.
Kubernetes releases before 1.27 end the message at `must be equal to nvidia.com/gpu limit`: the
limit's value was added by kubernetes/kubernetes#112925, first released in v1.27.
For custom resources the operator's pod creation fails with the same text in a `FailedCreate` event.

## How to fix
Decide how many devices the container needs and write that number once, under `limits`
(drop the request: it defaults to the limit).

## Bad
```yaml
resources:
  requests: {nvidia.com/gpu: 1}
  limits: {nvidia.com/gpu: 2}
```

## Good
```yaml
resources:
  limits: {nvidia.com/gpu: 2}
```

## References
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go` (`ValidateContainerResourceRequirements`, `helper.IsOvercommitAllowed`)
- kubernetes/kubernetes#112925 ("added limit value to the pod validation error", v1.27)
"""


@rule(
    id="gpu-request-limit-mismatch",
    severity="error",
    category="gpu",
    summary="GPU requests differ from limits: extended resources cannot be overcommitted, the API rejects it",
    docs=MISMATCH_DOCS,
)
def gpu_request_limit_mismatch(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.NOT_EQUAL):
        name = err.name
        yield ctx.report(
            holder,
            (*c.path, "resources", "requests", name),
            f"{where(ps, c)} requests {name}: {c.resources('requests')[name]} but limits it to "
            f'{c.resources("limits")[name]}; the API server rejects it ("{err.detail}")',
            f"remove requests[{name}] and keep only limits[{name}] with the count the container needs",
        )


FRACTIONAL_DOCS = """
## What it catches
A GPU (or other extended resource) quantity that is not a whole number: `0.5`, `500m`, `1.5`.

## Why it hurts
Device plugins hand out whole devices, and the API server only accepts integers for extended resources
(`ValidateResourceQuantityValue` / `IsIntegerResourceName` in `pkg/apis/core/validation/validation.go`):

```
The Pod "half" is invalid:
* spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer
* spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer
```

The second line is the request that API defaulting copied from the limit; gpuplane reports the
field you wrote, once.

## How to fix
Request a whole GPU, or share GPUs the supported ways: time-slicing or MPS replicas in the NVIDIA device
plugin (`nvidia.com/gpu` becomes N replicas per GPU, or `nvidia.com/gpu.shared` with `renameByDefault`),
MIG slices (`nvidia.com/mig-1g.10gb: 1`), or DRA with a sharing-capable driver. `gpuplane advise sharing`
helps choose.

## Bad
```yaml
resources:
  limits: {nvidia.com/gpu: 0.5}
```

## Good
```yaml
resources:
  limits: {nvidia.com/mig-3g.40gb: 1}   # or nvidia.com/gpu: 1 on a time-sliced node
```

## References
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go` (`ValidateResourceQuantityValue`, `IsIntegerResourceName`)
- https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/ ("GPUs are only supposed to be specified in the limits section"; no fractions)
- NVIDIA k8s-device-plugin README: time-slicing and MPS
"""


@rule(
    id="gpu-fractional-quantity",
    severity="error",
    category="gpu",
    summary="non-integer GPU quantity (0.5, 500m): the API rejects it; use time-slicing, MPS, MIG or DRA",
    docs=FRACTIONAL_DOCS,
)
def gpu_fractional_quantity(ctx: LintContext) -> Iterator[Finding]:
    for ps, holder, c, err in _api_errors(ctx, validation.NOT_INTEGER):
        name, value = err.name, c.resources(err.section)[err.name]
        yield ctx.report(
            holder,
            (*c.path, "resources", err.section, name),
            f"{where(ps, c)} asks for {name}: {value}; extended resources must be whole numbers "
            f'(API: "{err.detail}")',
            "request a whole device, or share GPUs with device-plugin time-slicing/MPS replicas, "
            "a MIG slice (nvidia.com/mig-<profile>: 1) or DRA",
        )


UNKNOWN_NAME_DOCS = """
## What it catches
A GPU-looking resource name that no device plugin advertises: `nvidia.com/gpus`, `nvidia/gpu`, `gpu`,
`NVIDIA.com/gpu`, `nvidia.com/mig-3g.20gb` written as `nvidia.com/mig3g.20gb` ... With `--cluster`, also
any extended resource that no node advertises at all.

## Why it hurts
- An unprefixed name like `gpu` is not a standard container resource; the API rejects it:
  `spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers`.
- A prefixed but wrong name (`nvidia.com/gpus`) is accepted, then the pod is Pending forever:
  `0/12 nodes are available: 12 Insufficient nvidia.com/gpus.` (no node has that resource; the cluster
  autoscaler will not add one either).

## How to fix
Use the name the device plugin advertises (`kubectl describe node` → Allocatable): `nvidia.com/gpu`,
`nvidia.com/mig-<profile>`, `nvidia.com/gpu.shared`, `amd.com/gpu`, `gpu.intel.com/i915`/`xe`.

## Bad
```yaml
resources:
  limits: {nvidia.com/gpus: 1}
```

## Good
```yaml
resources:
  limits: {nvidia.com/gpu: 1}
```

## References
- NVIDIA k8s-device-plugin README (resource names, MIG strategies)
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go` (`validateContainerResourceName`)
- kube-scheduler NodeResourcesFit: `Insufficient <resource>`
"""


def _advertised(ctx: LintContext) -> set[str]:
    names: set[str] = set()
    if ctx.cluster is None:
        return names
    for node in ctx.cluster.nodes:
        names.update(node.status.allocatable or {})
        names.update(node.status.capacity or {})
    return names


def _is_mig_profile(name: str) -> bool:
    """A MIG slice resource (``nvidia.com/mig-5g.50gb``): mig-profile-unknown owns those, naming the
    profile and the GPU models that offer it, so one request never gets two findings."""
    from gpuplane.gpu.resources import classify

    res = classify(name)
    return res is not None and bool(res.mig_profile)


@rule(
    id="gpu-unknown-resource-name",
    severity="error",
    category="gpu",
    summary="GPU-looking resource name no device plugin exposes (nvidia.com/gpus, gpu, wrong case); "
    "ctx: any extended resource no node advertises",
    docs=UNKNOWN_NAME_DOCS,
    context="optional",
)
def gpu_unknown_resource_name(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.resources import suspicious_gpu_name

    advertised = _advertised(ctx)
    have_nodes = bool(ctx.cluster is not None and ctx.cluster.nodes)
    for ps in ctx.podsets:
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            for section in ("limits", "requests"):
                other = c.resources("requests" if section == "limits" else "limits")
                for name, _value in container_resource_items(c, section):
                    if section == "requests" and name in other:
                        continue  # reported once, on the limit
                    path = (*c.path, "resources", section, name)
                    better = suspicious_gpu_name(name)
                    if better is not None and better != name:
                        api = (
                            'the API server rejects it ("must be a standard resource for containers")'
                            if "/" not in name
                            else "no device plugin advertises it, so the pod stays Pending "
                            f'("Insufficient {name}")'
                        )
                        yield ctx.report(
                            holder, path, f"{where(ps, c)} asks for {name}: {api}", f"use {better}"
                        )
                    elif (
                        have_nodes
                        and is_extended_resource(name)
                        and name not in advertised
                        and not _is_mig_profile(name)
                    ):  # mig-profile-unknown says it more precisely
                        yield ctx.report(
                            holder,
                            path,
                            f"{where(ps, c)} asks for {name}, which no node of the cluster advertises: "
                            f'the pod stays Pending ("Insufficient {name}")',
                            "use a resource name from `kubectl describe node` Allocatable, or install the device "
                            "plugin that provides it",
                        )


HOARD_DOCS = """
## What it catches
An init container that asks for more GPUs than all app containers together.

## Why it hurts
The scheduler reserves, for the whole life of the pod, `max(largest init container, sum of app
containers)` per resource (`resource.PodRequests` in k8s.io/component-helpers, used by NodeResourcesFit).
An init container that downloads a model with `nvidia.com/gpu: 8` while the server uses 1 keeps 8 GPUs
reserved for as long as the pod runs: 7 GPUs idle and unavailable to anyone else.

## How to fix
Give the init container no GPU (downloads and conversions rarely need one) or at most what the app
containers use.

## Bad
```yaml
initContainers:
- name: warmup
  resources: {limits: {nvidia.com/gpu: 4}}
containers:
- name: server
  resources: {limits: {nvidia.com/gpu: 1}}
```

## Good
```yaml
initContainers:
- name: warmup
  resources: {limits: {nvidia.com/gpu: 1}}
containers:
- name: server
  resources: {limits: {nvidia.com/gpu: 1}}
```

## References
- kubernetes/kubernetes `staging/src/k8s.io/component-helpers/resource/helpers.go` (`PodRequests`)
- https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers
"""


@rule(
    id="gpu-init-container-hoards",
    severity="warning",
    category="gpu",
    summary="init container asks for more GPUs than the app containers: the pod reserves the maximum for its whole life",
    docs=HOARD_DOCS,
)
def gpu_init_container_hoards(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        app = ctx.gpu_requests(ps)
        holder = ctx.holder(ps)
        for c in ctx.containers(ps, ("initContainers",)):
            if c.data.get("restartPolicy") == "Always":
                continue  # sidecar: runs alongside the app and is added to its total
            for name, count in c.gpu_requests().items():
                if count > app.get(name, 0):
                    section = "limits" if name in c.resources("limits") else "requests"
                    yield ctx.report(
                        holder,
                        (*c.path, "resources", section, name),
                        f"{where(ps, c)} asks for {count} {name} but the app containers use {app.get(name, 0)}: "
                        f"the pod keeps {count} reserved for its whole life",
                        f"lower the init container to at most {app.get(name, 0)} {name} (or none)",
                    )


EXCEEDS_NODE_DOCS = """
## What it catches
With `--cluster`: one pod asks for more GPUs (or MIG devices, or any accelerator) than the largest node
of the cluster can offer (its allocatable).

## Why it hurts
kube-scheduler places a pod on one node. No node passes NodeResourcesFit and preemption cannot help, so
the pod is Pending for ever with `0/12 nodes are available: 12 Insufficient nvidia.com/gpu. preemption:
0/12 nodes are available: 12 No preemption victims found for incoming pod.` A node autoscaler only helps if
it can launch a bigger instance type.

## How to fix
Split the work across pods (distributed training: more workers with fewer GPUs each), request what one
node has, or add a node pool with bigger machines.

## Bad
```yaml
# largest node has 8 GPUs
resources: {limits: {nvidia.com/gpu: 16}}
```

## Good
```yaml
# 2 workers x 8 GPUs (PyTorchJob / JobSet)
resources: {limits: {nvidia.com/gpu: 8}}
```

## References
- kube-scheduler NodeResourcesFit (`pkg/scheduler/framework/plugins/noderesources/fit.go`)
"""


@rule(
    id="gpu-request-exceeds-node",
    severity="error",
    category="gpu",
    summary="one pod asks for more GPUs (or MIG devices) than any node has",
    docs=EXCEEDS_NODE_DOCS,
    context="required",
)
def gpu_request_exceeds_node(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return
    best: dict[str, int] = {}
    for node in cluster.nodes:
        for name, value in cluster.allocatable(node.metadata.name).items():
            if kinds.is_accelerator_resource(name) and value > best.get(name, 0):
                best[name] = value
    for ps in ctx.gpu_podsets():
        holder = ctx.holder(ps)
        wanted = kinds.effective_gpu_requests(ps)
        for name, count in wanted.items():
            top = best.get(name, 0)
            if top == 0 or count <= top:
                continue  # never advertised: gpu-unknown-resource-name / mig rules say why
            path = ps.spec_path
            for c in ctx.containers(ps):
                if name in c.resources("limits"):
                    path = (*c.path, "resources", "limits", name)
                    break
            yield ctx.report(
                holder,
                path,
                f"{where(ps)} needs {count} {name} per pod but the largest node offers {top}: "
                f'Pending for ever ("Insufficient {name}")',
                f"ask for at most {top} {name} per pod (split into more pods) or add nodes with more GPUs",
            )


VISIBLE_DOCS = """
## What it catches
A container that sets `NVIDIA_VISIBLE_DEVICES` itself (to `all`, indices or UUIDs), or
`CUDA_VISIBLE_DEVICES` naming more devices than the container was allocated. Node agents (DaemonSets)
are exempt: monitoring and device-plugin pods legitimately see every GPU.

## Why it hurts
With the device plugin's default `envvar` strategy the plugin tells the NVIDIA runtime which GPUs to
inject through `NVIDIA_VISIBLE_DEVICES`. A value set in the pod spec reaches the runtime hook, which
honours it for unprivileged containers while the toolkit's default
`accept-nvidia-visible-devices-envvar-when-unprivileged = true` is in place: the container gets GPUs the
scheduler never gave it, and jobs on the same node collide (`CUDA error: out of memory`, `all CUDA-capable
devices are busy or unavailable`). `CUDA_VISIBLE_DEVICES` only filters what the container sees: indices
beyond the allocation fail with `no CUDA-capable device is detected`.

## How to fix
Request GPUs through `resources.limits` and let the device plugin set the variable. Cluster-wide, set
the device plugin `deviceListStrategy: volume-mounts` (or CDI) and toolkit
`accept-nvidia-visible-devices-envvar-when-unprivileged = false`.

## Bad
```yaml
env:
- {name: NVIDIA_VISIBLE_DEVICES, value: all}
```

## Good
```yaml
resources:
  limits: {nvidia.com/gpu: 2}
```

## References
- NVIDIA k8s-device-plugin README (device list strategies), issues #61, #87
- NVIDIA container-toolkit `cmd/nvidia-container-runtime-hook/container_config.go` (`getDevices`)
- reference/nvidia-gpu-stack.md §6
"""

_INDEX_LIST = re.compile(r"^\s*[0-9A-Za-z-]+(\s*,\s*[0-9A-Za-z-]+)*\s*$")
_NO_DEVICES = {"void", "none", ""}


@rule(
    id="gpu-visible-devices-env",
    severity="warning",
    category="gpu",
    summary="container sets NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES to bypass the device plugin",
    docs=VISIBLE_DOCS,
)
def gpu_visible_devices_env(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if kinds.is_daemon(ps):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            allocated = sum(c.gpu_requests().values())
            for i, var in c.env():
                name = var.get("name")
                if name not in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") or "valueFrom" in var:
                    continue
                value = str(var.get("value") if var.get("value") is not None else "").strip()
                path = (*c.path, "env", i, "value")
                if name == "NVIDIA_VISIBLE_DEVICES":
                    if value.lower() in _NO_DEVICES:
                        continue
                    yield ctx.report(
                        holder,
                        path,
                        f"{where(ps, c)} sets NVIDIA_VISIBLE_DEVICES={value}: the runtime injects those GPUs "
                        "outside the device plugin's allocation",
                        "remove the variable and request GPUs in resources.limits (containers that need no GPU: "
                        "NVIDIA_VISIBLE_DEVICES=void)",
                    )
                elif _INDEX_LIST.match(value) and allocated and len(value.split(",")) > allocated:
                    yield ctx.report(
                        holder,
                        path,
                        f"{where(ps, c)} sets CUDA_VISIBLE_DEVICES={value} ({len(value.split(','))} devices) but "
                        f"is allocated {allocated}: the extra indices do not exist in the container",
                        "remove CUDA_VISIBLE_DEVICES (the container already sees exactly its allocated GPUs) or "
                        "request as many GPUs as it names",
                    )


PRIVILEGED_DOCS = """
## What it catches
A privileged container (`securityContext.privileged: true` or `capabilities.add: [SYS_ADMIN]`), or a
`hostPath` volume of `/dev/nvidia*` / `/dev`, in a pod that requests GPUs or targets GPU nodes.
DaemonSets (device plugin, DCGM exporter, GPU Operator operands) are exempt.

## Why it hurts
A privileged container receives every host device node, and the NVIDIA runtime hook always honours
`NVIDIA_VISIBLE_DEVICES` for it (CAP_SYS_ADMIN counts as privileged in the container toolkit): it sees
and can use all GPUs of the node, not the ones it was allocated. Other tenants' jobs then fail with
`CUDA error: out of memory` or are silently slowed, and any isolation between namespaces is gone.

## How to fix
Drop `privileged` / `SYS_ADMIN` and the `/dev` hostPath; request GPUs in `resources.limits`. Grant only
the specific capability the workload needs (e.g. `IPC_LOCK` for RDMA).

## Bad
```yaml
securityContext: {privileged: true}
resources: {limits: {nvidia.com/gpu: 1}}
```

## Good
```yaml
securityContext: {capabilities: {add: [IPC_LOCK]}}
resources: {limits: {nvidia.com/gpu: 1}}
```

## References
- NVIDIA container-toolkit `internal/config/image/privileged.go`
- reference/nvidia-gpu-stack.md §6
"""


def _targets_gpu_nodes(ps: object) -> bool:
    from gpuplane.lint.rules._common import GPU_LABELS, node_selector, required_terms, term_expressions

    if any(k in GPU_LABELS for k in node_selector(ps)):
        return True
    for term in required_terms(ps):
        if any(e.get("key") in GPU_LABELS for e in term_expressions(term)):
            return True
    tols = pod_spec(ps).get("tolerations")
    return isinstance(tols, list) and any(
        isinstance(t, dict) and str(t.get("key", "")).endswith(("/gpu", "gpu")) for t in tols
    )


@rule(
    id="gpu-privileged-access",
    severity="warning",
    category="gpu",
    summary="privileged container or /dev/nvidia* hostPath on a GPU pod: sees every GPU of the node",
    docs=PRIVILEGED_DOCS,
)
def gpu_privileged_access(ctx: LintContext) -> Iterator[Finding]:
    gpu_ids = {id(ps) for ps in ctx.gpu_podsets()}
    for ps in ctx.podsets:
        if kinds.is_daemon(ps) or not (id(ps) in gpu_ids or _targets_gpu_nodes(ps)):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps, ALL_SECTIONS):
            sc = c.data.get("securityContext")
            if not isinstance(sc, dict):
                continue
            if sc.get("privileged") is True:
                yield ctx.report(
                    holder,
                    (*c.path, "securityContext", "privileged"),
                    f"{where(ps, c)} is privileged on a GPU pod: it sees every GPU of the node",
                    "remove privileged: true and request GPUs in resources.limits",
                )
                continue
            caps = sc.get("capabilities")
            added = caps.get("add") if isinstance(caps, dict) else None
            if isinstance(added, list):
                for j, cap in enumerate(added):
                    if str(cap).upper() in ("SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"):
                        yield ctx.report(
                            holder,
                            (*c.path, "securityContext", "capabilities", "add", j),
                            f"{where(ps, c)} adds {cap}: the NVIDIA runtime treats it as privileged "
                            "and exposes every GPU of the node",
                            f"drop {cap}; add only the capability the workload needs",
                        )
        volumes = pod_spec(ps).get("volumes")
        for i, vol in enumerate(volumes if isinstance(volumes, list) else ()):
            host = vol.get("hostPath") if isinstance(vol, dict) else None
            path = str(host.get("path", "")) if isinstance(host, dict) else ""
            if path.rstrip("/") == "/dev" or path.startswith("/dev/nvidia") or path.startswith("/dev/dri"):
                yield ctx.report(
                    holder,
                    (*ps.spec_path, "volumes", i, "hostPath", "path"),
                    f"{where(ps)} mounts host {path}: GPU devices outside the device plugin's allocation",
                    "remove the hostPath volume; request GPUs in resources.limits",
                )


UNREQUESTED_DOCS = """
## What it catches
A container running a CUDA or GPU-framework image (`nvidia/cuda`, `nvcr.io/nvidia/*`, `*-gpu`, `*cuda*`
tags, vLLM, Triton ...) that requests no GPU and does not set `NVIDIA_VISIBLE_DEVICES`. Node agents
(DaemonSets) are exempt.

## Why it hurts
CUDA images set `NVIDIA_VISIBLE_DEVICES=all` in their environment. On nodes where `nvidia` is the default
container runtime (common with the GPU Operator), a container that did not request GPUs gets *all* of
them injected: the device plugin only rewrites the variable for containers it allocated. The container
then competes with the pods that really own those GPUs. The device plugin README warns about exactly this.

## How to fix
If the container needs no GPU, set `NVIDIA_VISIBLE_DEVICES=void` (`gpuplane lint --fix` adds it).
If it needs one, request it in `resources.limits`. Cluster-wide: `deviceListStrategy: volume-mounts`
plus toolkit `accept-nvidia-visible-devices-envvar-when-unprivileged = false`.

## Bad
```yaml
containers:
- name: preprocess
  image: nvcr.io/nvidia/pytorch:24.05-py3
```

## Good
```yaml
containers:
- name: preprocess
  image: nvcr.io/nvidia/pytorch:24.05-py3
  env:
  - {name: NVIDIA_VISIBLE_DEVICES, value: void}
```

## References
- NVIDIA k8s-device-plugin README ("If you do not request GPUs ... all the GPUs on the machine will be exposed")
- NVIDIA container-toolkit `internal/config/image/devices.go` (`void`, `none`, `all`)
- reference/nvidia-gpu-stack.md §6
"""

_CUDA_IMAGE = re.compile(
    r"(^|/)nvidia/cuda[:@]|nvcr\.io/nvidia/|cuda|-gpu\b|[:-]gpu$|vllm|tritonserver|tensorrt|"
    r"text-generation-inference|pytorch/pytorch:.*cuda|rapidsai/|sglang",
)


@rule(
    id="gpu-unrequested-cuda-image",
    severity="info",
    category="gpu",
    summary="CUDA/GPU framework image with no GPU request and no NVIDIA_VISIBLE_DEVICES=void: may see all GPUs",
    docs=UNREQUESTED_DOCS,
    fixable=True,
)
def gpu_unrequested_cuda_image(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if kinds.is_daemon(ps):
            continue
        holder = ctx.holder(ps)
        for c in ctx.containers(ps):
            image = c.data.get("image")
            if not isinstance(image, str) or not _CUDA_IMAGE.search(image.lower()):
                continue
            if c.gpu_requests() or kinds.names_accelerator(c.data):
                continue  # any GPU request counts, even an invalid one (gpu-fractional-quantity reports that)
            res = c.data.get("resources")
            if isinstance(res, dict) and res.get("claims"):
                continue  # DRA claim: the DRA driver controls which devices are visible
            if any(var.get("name") == "NVIDIA_VISIBLE_DEVICES" for _, var in c.env()):
                continue
            patch = (
                ()
                if ps.synthetic
                else (AppendItem((*c.path, "env"), {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}),)
            )
            yield ctx.report(
                holder,
                (*c.path, "image"),
                f"{where(ps, c)} runs GPU image {image} without requesting a GPU: where nvidia is the default "
                "runtime it sees every GPU of the node",
                "add env NVIDIA_VISIBLE_DEVICES=void (or request the GPU it needs in resources.limits)",
                patch=patch,
            )
