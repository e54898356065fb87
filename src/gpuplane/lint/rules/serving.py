"""Serving rules: GPU inference servers (probes, autoscaling signal, rollouts, images).

Facts: reference/platform.md §5 (startup probes, metrics to scale on, HPA/KEDA)
and §2.7 (GPU image sizes and cold starts); Deployment rollout arithmetic from
kubernetes/kubernetes ``pkg/controller/deployment/util/deployment_util.go``
(``ResolveFenceposts``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_dict, as_int, as_str, obj_label, where
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# Probe defaults (core/v1 Probe: periodSeconds 10, failureThreshold 3, initialDelaySeconds 0).
PROBE_PERIOD_DEFAULT = 10
PROBE_FAILURES_DEFAULT = 3
# Time a GPU server may take to load weights before the kubelet kills it. Weight
# loading alone takes minutes for 10-100+ GB models (reference/platform.md §2.7, §5.1).
STARTUP_BUDGET_S = 600
# A startup probe shorter than this is reported as too short for a model load
# (the Kubernetes docs' own slow-start example allows 300 s).
STARTUP_MIN_S = 300
PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")


def _probe_budget(probe: dict[str, Any]) -> int:
    """Seconds a probe tolerates failures before the kubelet acts (delay + threshold x period)."""
    return as_int(probe.get("initialDelaySeconds"), 0) + as_int(
        probe.get("failureThreshold"), PROBE_FAILURES_DEFAULT
    ) * as_int(probe.get("periodSeconds"), PROBE_PERIOD_DEFAULT)


def _startup_from_liveness(liveness: dict[str, Any]) -> dict[str, Any]:
    """A startupProbe with the liveness handler and a STARTUP_BUDGET_S window."""
    probe: dict[str, Any] = {k: liveness[k] for k in PROBE_HANDLERS if k in liveness}
    period = PROBE_PERIOD_DEFAULT
    probe["periodSeconds"] = period
    probe["failureThreshold"] = math.ceil(STARTUP_BUDGET_S / period)
    if "timeoutSeconds" in liveness:
        probe["timeoutSeconds"] = liveness["timeoutSeconds"]
    return probe


INFERENCE_NO_STARTUP_PROBE_DOCS = """
## What it catches

A GPU inference container (vLLM, TGI, Triton, KServe predictor, any GPU
Deployment/StatefulSet/LWS serving a port) with a `livenessProbe` that gives
up in under 10 minutes and no `startupProbe`, or with a `startupProbe` whose
window (`initialDelaySeconds + failureThreshold x periodSeconds`) is under
5 minutes.

## Why it hurts

Loading weights onto the GPU takes minutes (tens to hundreds of GB read from
disk or the network, then CUDA graph capture). The liveness probe starts
right away; the server's health endpoint does not answer while it loads, so
the kubelet kills it after `failureThreshold x periodSeconds` and the pod
loops:

```
Liveness probe failed: Get "http://10.0.3.7:8000/health": dial tcp 10.0.3.7:8000: connect: connection refused
Container vllm failed liveness probe, will be restarted
Back-off restarting failed container vllm
```

Each restart reloads the model from scratch: the GPU is held but never serves.

## How to fix

Add a `startupProbe` on the same endpoint with a window longer than the
worst-case load (`failureThreshold: 60`, `periodSeconds: 10` = 10 minutes).
Liveness and readiness probes only start after it succeeds, so the liveness
probe can stay tight. `--fix` adds one copied from the liveness probe.

## Bad

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  resources: {limits: {nvidia.com/gpu: 1}}
  livenessProbe:
    httpGet: {path: /health, port: 8000}
    periodSeconds: 10
```

## Good

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  resources: {limits: {nvidia.com/gpu: 1}}
  startupProbe:
    httpGet: {path: /health, port: 8000}
    periodSeconds: 10
    failureThreshold: 60
  livenessProbe:
    httpGet: {path: /health, port: 8000}
    periodSeconds: 10
```

## References

- Kubernetes docs, "Configure Liveness, Readiness and Startup Probes",
  "Protect slow starting containers with startup probes".
- reference/platform.md §5.1 and §2.7.
"""


@rule(
    id="inference-no-startup-probe",
    severity="warning",
    category="serving",
    summary="GPU serving container with a liveness probe but no startup probe long enough for model load.",
    docs=INFERENCE_NO_STARTUP_PROBE_DOCS,
    fixable=True,
)
def inference_no_startup_probe(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        if not kinds.is_inference(ps):
            continue
        for c in ctx.containers(ps, ("containers",)):
            if not c.gpu_requests():
                continue
            liveness = c.data.get("livenessProbe")
            startup = c.data.get("startupProbe")
            if isinstance(startup, dict):
                budget = _probe_budget(startup)
                if budget >= STARTUP_MIN_S:
                    continue
                period = max(as_int(startup.get("periodSeconds"), PROBE_PERIOD_DEFAULT), 1)
                initial = as_int(startup.get("initialDelaySeconds"), 0)
                needed = max(math.ceil((STARTUP_BUDGET_S - initial) / period), 1)
                yield ctx.report(
                    ps.source,
                    (*c.path, "startupProbe"),
                    f"{where(ps, c)} (GPU server) has a startupProbe that gives up after {budget}s: "
                    "loading model weights takes minutes, so the kubelet restarts the server before it is up.",
                    f"Raise startupProbe.failureThreshold to {needed} (x periodSeconds {period} = "
                    f"{STARTUP_BUDGET_S}s) or more, to cover the worst-case model load.",
                    patch=(SetValue((*c.path, "startupProbe", "failureThreshold"), needed),),
                )
                continue
            if not isinstance(liveness, dict):
                continue
            budget = _probe_budget(liveness)
            if budget >= STARTUP_BUDGET_S:
                continue
            patch = ()
            if any(k in liveness for k in PROBE_HANDLERS):
                patch = (SetValue((*c.path, "startupProbe"), _startup_from_liveness(liveness)),)
            yield ctx.report(
                ps.source,
                (*c.path, "livenessProbe"),
                f"{where(ps, c)} (GPU server) has a livenessProbe that kills it after {budget}s "
                "and no startupProbe: the server cannot answer while it loads model weights, so it is restarted "
                "in a loop (CrashLoopBackOff) and never serves.",
                f"Add a startupProbe on the same endpoint with failureThreshold x periodSeconds >= "
                f"{STARTUP_BUDGET_S}s (e.g. periodSeconds: 10, failureThreshold: 60).",
                patch=patch,
            )


# ---------------------------------------------------------------------------------------------

HPA_CPU_DOCS = """
## What it catches

A HorizontalPodAutoscaler (or a KEDA ScaledObject) whose target is a GPU
workload and whose only signals are CPU and/or memory: `autoscaling/v1`
`targetCPUUtilizationPercentage`, `autoscaling/v2` `Resource` /
`ContainerResource` metrics on `cpu` / `memory`, an HPA with no metrics at all
(the default is 80% CPU), or KEDA `cpu` / `memory` triggers only.

## Why it hurts

A GPU inference server is saturated on the GPU (batch slots, KV cache) long
before its CPU is busy: CPU mostly reflects tokenisation and HTTP handling.
Requests queue up and latency explodes while the HPA sees 20% CPU and does not
scale; memory-based scaling never scales down for servers that preallocate.
Combined with multi-minute GPU node and model cold starts, the service misses
its SLO.

## How to fix

Scale on the server's own load signals through a metrics adapter or KEDA:
queue depth (`vllm:num_requests_waiting`, TGI `tgi_queue_size`), running batch
size (`vllm:num_requests_running`), or KV-cache usage, with headroom and
`minReplicas >= 1`.

## Bad

```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
```

## Good

```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Pods
    pods:
      metric: {name: vllm:num_requests_waiting}
      target: {type: AverageValue, averageValue: "5"}
```

## References

- GKE, "Best practices for autoscaling LLM inference workloads with GPUs".
- Kubernetes docs, "Horizontal Pod Autoscaling" (default metric: 80% CPU).
- KEDA docs, Prometheus scaler.
- reference/platform.md §5.2, §5.3.
"""

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
    docs=HPA_CPU_DOCS,
    context="optional",
)
def hpa_cpu_for_gpu_serving(ctx: LintContext) -> Iterator[Finding]:
    scalers = [(o, _hpa_cpu_only(o)) for o in ctx.by_kind("HorizontalPodAutoscaler", "autoscaling")]
    scalers += [(o, _keda_cpu_only(o)) for o in ctx.by_kind("ScaledObject", "keda.sh")]
    scalers = [(o, p) for o, p in scalers if p is not None]
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


# ---------------------------------------------------------------------------------------------

ROLLOUT_DOCS = """
## What it catches

A GPU Deployment with the `RollingUpdate` strategy whose `maxUnavailable`
resolves to 0 while `maxSurge` is above 0. Both default to `25%`; the
Deployment controller rounds `maxSurge` up and `maxUnavailable` down, so any
Deployment with fewer than 4 replicas and default settings has
`maxUnavailable` 0 and `maxSurge` 1. With `--cluster` the rule stays silent
when some node has enough free GPUs for one more pod.

## Why it hurts

The rollout must start a new pod before it may stop an old one. On a full GPU
pool the surge pod needs GPUs nobody frees, so it stays Pending
(`0/8 nodes are available: 8 Insufficient nvidia.com/gpu.`) and the rollout
never progresses until `progressDeadlineSeconds` marks it
`ProgressDeadlineExceeded`. With an autoscaler it costs a whole extra GPU node
for every rollout.

## How to fix

Let the rollout replace pods in place: `maxSurge: 0` and `maxUnavailable: 1`
(or a percentage that resolves to at least 1), accepting one replica less
during the rollout; or keep spare GPU capacity for the surge pod.

## Bad

```yaml
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 2            # default strategy: maxSurge 1, maxUnavailable 0
  template:
    spec:
      containers:
      - name: server
        resources: {limits: {nvidia.com/gpu: 8}}
```

## Good

```yaml
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 2
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
```

## References

- kubernetes/kubernetes `pkg/controller/deployment/util/deployment_util.go`
  (`ResolveFenceposts`: surge rounded up, unavailable rounded down).
- Kubernetes docs, Deployments, "Max Unavailable" / "Max Surge".
"""


def _scaled(value: Any, total: int, round_up: bool) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent``: an int, or a percentage of ``total``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%") and text[:-1].isdigit():
            scaled = int(text[:-1]) * total / 100
            return math.ceil(scaled) if round_up else math.floor(scaled)
        if text.isdigit():
            return int(text)
    return None


def _spare_gpus(ctx: LintContext, need: dict[str, int]) -> bool | None:
    """True when some cluster node has free GPUs for one more pod; None without a cluster."""
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return None
    for node in cluster.nodes:
        free = cluster.free(node.metadata.name)
        if all(free.get(name, 0) >= count for name, count in need.items()):
            return True
    return False


@rule(
    id="gpu-rollout-surge-deadlock",
    severity="warning",
    category="serving",
    summary="GPU Deployment rolling update with maxUnavailable 0 and maxSurge > 0 stalls on a full GPU pool.",
    docs=ROLLOUT_DOCS,
    context="optional",
    fixable=True,
)
def gpu_rollout_surge_deadlock(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.kind != "Deployment" or id(src) in seen:
            continue
        seen.add(id(src))
        spec = src.data.get("spec")
        if not isinstance(spec, dict):
            continue
        strategy = spec.get("strategy") if isinstance(spec.get("strategy"), dict) else {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            continue
        replicas = as_int(spec.get("replicas"), 1)
        if replicas < 1:
            continue
        rolling = strategy.get("rollingUpdate") if isinstance(strategy.get("rollingUpdate"), dict) else {}
        surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
        unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
        if surge is None or unavailable is None or unavailable > 0 or surge <= 0:
            continue
        need = ctx.gpu_requests(ps)
        if need and _spare_gpus(ctx, need):
            continue
        if "maxUnavailable" in rolling:
            path: FieldPath = ("spec", "strategy", "rollingUpdate", "maxUnavailable")
        elif "strategy" in spec:
            path = ("spec", "strategy")
        elif "replicas" in spec:
            path = ("spec", "replicas")
        else:
            path = ("spec",)
        gpus = ", ".join(f"{n}: {c}" for n, c in sorted(need.items())) or "GPUs"
        yield ctx.report(
            src,
            path,
            f"{obj_label(src)} ({replicas} replica(s), {gpus} per pod) rolls out with maxSurge {surge} and "
            f"maxUnavailable {unavailable}: every new pod needs spare GPUs before an old one stops, so on a full "
            "GPU pool the rollout stalls with the surge pod Pending (Insufficient GPUs).",
            "Set spec.strategy.rollingUpdate to maxSurge: 0 and maxUnavailable: 1 (replace pods in place), "
            "or keep spare GPU capacity for the surge pod.",
            patch=(
                SetValue(("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
                SetValue(("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1),
            ),
        )


# ---------------------------------------------------------------------------------------------

IMAGE_PULL_DOCS = """
## What it catches

A GPU container running a known multi-GB framework or serving image (vLLM,
TGI, Triton, NeMo, NGC PyTorch/TensorFlow, SGLang, TensorRT-LLM, NIM, CUDA
`-devel` images ...) that is pulled on every start: `imagePullPolicy: Always`,
or no policy with a `:latest` / untagged image (the API server then defaults
the policy to `Always`).

## Why it hurts

These images are 10-20 GB. With `Always` the kubelet contacts the registry on
every container start; when the tag moved (`:latest`) it downloads the new
layers, adding minutes to every cold start and every crash restart while the
GPU sits idle, and a registry outage or rate limit (`ErrImagePull`,
`ImagePullBackOff`) takes the server down even though the image is on the node.

## How to fix

Pin a version tag or digest and use `imagePullPolicy: IfNotPresent`;
pre-cache images on GPU nodes (data-volume snapshots, image streaming) for
fast scale-out.

## Bad

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:latest
  imagePullPolicy: Always
  resources: {limits: {nvidia.com/gpu: 1}}
```

## Good

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  imagePullPolicy: IfNotPresent
  resources: {limits: {nvidia.com/gpu: 1}}
```

## References

- Kubernetes docs, Images, "Image pull policy" (defaulting rules for `:latest`).
- reference/platform.md §2.7 (10-20 GB CUDA/PyTorch/vLLM images, ~1 min per GiB pulled).
"""

# Image references (lower-case substrings) of framework/serving images that are several GB
# (reference/platform.md §2.7: vLLM + PyTorch + CUDA images are commonly 10-20 GB).
LARGE_IMAGE_HINTS = (
    "vllm/vllm-openai",
    "vllm-openai",
    "text-generation-inference",
    "tritonserver",
    "nvcr.io/nvidia/pytorch",
    "nvcr.io/nvidia/tensorflow",
    "nvcr.io/nvidia/nemo",
    "nvcr.io/nim/",
    "tensorrt-llm",
    "tensorrt_llm",
    "lmsysorg/sglang",
    "pytorch/pytorch",
    "deepspeed",
    "nvcr.io/nvidia/cuda",
    "nvidia/cuda",
    "rocm/pytorch",
    "rocm/vllm",
    "huggingface/transformers-pytorch-gpu",
    "nvcr.io/nvidia/dynamo",
)


def _image_tag(image: str) -> tuple[str | None, bool]:
    """``(tag, has_digest)`` of an image reference."""
    if "@" in image:
        return None, True
    last = image.rsplit("/", 1)[-1]
    return (last.rsplit(":", 1)[1], False) if ":" in last else (None, False)


def _is_large(image: str) -> bool:
    low = image.lower()
    if any(h in low for h in LARGE_IMAGE_HINTS):
        return "nvidia/cuda" not in low or "devel" in low or "cudnn" in low
    return False


@rule(
    id="image-pull-always-large",
    severity="info",
    category="serving",
    summary="Huge GPU image pulled on every start (imagePullPolicy Always or :latest): slow cold starts.",
    docs=IMAGE_PULL_DOCS,
    fixable=True,
)
def image_pull_always_large(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps, ("containers",)):
            image = c.data.get("image")
            if not isinstance(image, str) or not _is_large(image):
                continue
            tag, digest = _image_tag(image)
            floating = not digest and (tag is None or tag == "latest")
            policy = c.data.get("imagePullPolicy")
            if policy is None:
                if not floating:
                    continue
                yield ctx.report(
                    ps.source,
                    (*c.path, "image"),
                    f"{where(ps, c)} runs the multi-GB image {image} without a pinned tag, so "
                    "its pull policy defaults to Always: every start re-checks the registry and pulls new layers "
                    "when the tag moved, adding minutes to cold starts.",
                    "Pin a version tag or digest (the policy then defaults to IfNotPresent) and pre-cache the image "
                    "on GPU nodes.",
                )
            elif policy == "Always":
                patch = () if floating else (SetValue((*c.path, "imagePullPolicy"), "IfNotPresent"),)
                yield ctx.report(
                    ps.source,
                    (*c.path, "imagePullPolicy"),
                    f"{where(ps, c)} pulls the multi-GB image {image} with imagePullPolicy "
                    "Always: every start and restart goes to the registry, slowing cold starts and failing with "
                    "ImagePullBackOff when the registry is unreachable.",
                    "Use imagePullPolicy: IfNotPresent with a pinned tag or digest."
                    + (" Pin a version instead of :latest first." if floating else ""),
                    patch=patch,
                )
