"""KubeAI ``kubeai.org/v1`` Model: the model-server pods the KubeAI operator creates.

A Model holds no pod template: the operator builds one pod per replica from the Model's fields
and its own configuration (kubeai-project/kubeai, commit f442a2cd):

- ``api/k8s/v1/model_types.go`` ``ModelSpec``: ``url``, ``engine`` (``VLLM``, ``OLlama``,
  ``FasterWhisper``, ``Infinity``), ``resourceProfile`` (``<name>:<multiple>``), ``cacheProfile``,
  ``image``, ``args``, ``env`` (a map), ``replicas``, ``minReplicas``, ``maxReplicas``,
  ``priorityClassName``.
- ``internal/modelcontroller/model_controller.go`` ``getModelConfig``: the profile's requests and
  limits are multiplied by ``<multiple>`` (``nvidia-gpu-h100:8`` -> 8 GPUs); a name that does not
  split in two or a multiple that is no integer is refused; ``lookupServerImage``: ``spec.image``,
  else the engine's image for the profile's ``imageName``, else the engine's ``default`` image;
  ``applyAutoscalingReplicaBounds``: ``replicas`` is raised to ``minReplicas`` and cut to
  ``maxReplicas``.
- ``internal/modelcontroller/engine_vllm.go`` ``vLLMPodForModel`` (and the other engines'
  files): one container ``server`` with the profile's resources, port 8000 ``http``, startup,
  readiness and liveness probes on ``/health``, a memory-backed ``emptyDir`` ``dshm`` at
  ``/dev/shm`` (modelled as :attr:`PodSet.managed_shm`), the profile's tolerations, node selector
  and affinity, ``spec.priorityClassName``. vLLM gets ``--model=<source>`` and
  ``--served-model-name=<name>`` before the Model's ``args``.
- ``internal/modelcontroller/cache.go`` / ``model_source.go``: with a ``cacheProfile`` the model is
  read from the cache PVC mounted at ``/models/<name>-<uid>``; a ``pvc://`` URL is mounted at
  ``/model``.

Resource profiles are cluster configuration (the operator's Helm values); the profiles of
KubeAI's default configuration (``charts/kubeai/values.yaml`` ``resourceProfiles``) are known
here. A profile not among them leaves the container without resources (its GPUs are unknown),
rather than guessing from its name.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import ExpandContext, PodSet, as_dict, as_int, as_list, as_str, nonneg

SERVER_CONTAINER = "server"
MANAGED_SHM = "KubeAI"

_GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
_AMD_TOLERATION = {"key": "amd.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def _profile(image: str, limits: dict, requests: dict | None = None, tolerate: dict | None = None) -> dict:
    out: dict[str, Any] = {"imageName": image, "limits": limits, "requests": requests or {}}
    if tolerate:
        out["tolerations"] = [tolerate]
    return out


_NVIDIA_1 = {"nvidia.com/gpu": "1"}
# charts/kubeai/values.yaml resourceProfiles (KubeAI's default configuration)
DEFAULT_RESOURCE_PROFILES: dict[str, dict[str, Any]] = {
    "cpu": _profile("cpu", {}, {"cpu": "1", "memory": "2Gi"}),
    "nvidia-gpu-t4": _profile("nvidia-gpu", _NVIDIA_1, _NVIDIA_1),
    "nvidia-gpu-l4": _profile(
        "nvidia-gpu", _NVIDIA_1, {"nvidia.com/gpu": "1", "cpu": "6", "memory": "24Gi"}, _GPU_TOLERATION
    ),
    "nvidia-gpu-l40s": _profile(
        "nvidia-gpu", _NVIDIA_1, {"nvidia.com/gpu": "1", "cpu": "6", "memory": "24Gi"}, _GPU_TOLERATION
    ),
    "nvidia-gpu-h100": _profile("nvidia-gpu", _NVIDIA_1, None, _GPU_TOLERATION),
    "nvidia-gpu-gh200": _profile("gh200", _NVIDIA_1, _NVIDIA_1, _GPU_TOLERATION),
    "nvidia-gpu-a100-80gb": _profile("nvidia-gpu", _NVIDIA_1, None, _GPU_TOLERATION),
    "nvidia-gpu-a100-40gb": _profile("nvidia-gpu", _NVIDIA_1, None, _GPU_TOLERATION),
    "nvidia-gpu-a16": _profile("nvidia-gpu", _NVIDIA_1, None, _GPU_TOLERATION),
    "nvidia-gpu-rtx4070-8gb": _profile("nvidia-gpu", _NVIDIA_1, None, _GPU_TOLERATION),
    "amd-gpu-mi300x": _profile("amd-gpu", {"amd.com/gpu": "1"}, None, _AMD_TOLERATION),
}

# charts/kubeai/values.yaml modelServers.<engine>.images
DEFAULT_IMAGES: dict[str, dict[str, str]] = {
    "VLLM": {
        "default": "vllm/vllm-openai:v0.10.2",
        "nvidia-gpu": "vllm/vllm-openai:v0.10.2",
        "cpu": "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.10.2",
        "google-tpu": "vllm/vllm-tpu:23194d83e8f2a6783b0d8c275f5f8a22faab9aec",
        "gh200": "vllm/vllm-openai:v0.10.2",
        "amd-gpu": "rocm/vllm/rocm6.4.1_vllm_0.10.1_20250909",
    },
    "OLlama": {
        "default": "ollama/ollama:0.11.11",
        "nvidia-gpu": "ollama/ollama:0.11.11",
        "amd-gpu": "ollama/ollama:0.11.11-rocm",
    },
    "FasterWhisper": {
        "default": "fedirz/faster-whisper-server:latest-cpu",
        "nvidia-gpu": "fedirz/faster-whisper-server:latest-cuda",
    },
    "Infinity": {
        "default": "michaelf34/infinity:0.0.77",
        "cpu": "michaelf34/infinity:0.0.77-cpu",
        "amd-gpu": "michaelf34/infinity:0.0.77-rocm",
        "nvidia-gpu": "michaelf34/infinity:0.0.77",
    },
}


def parse_resource_profile(value: Any) -> tuple[str, int] | None:
    """``"nvidia-gpu-l4:2"`` -> ``("nvidia-gpu-l4", 2)``; None where KubeAI refuses the value
    (``strings.Split`` on ``:`` must give two parts, the second ``strconv.Atoi``-able)."""
    if not isinstance(value, str):
        return None
    parts = value.split(":")
    if len(parts) != 2:
        return None
    digits = parts[1][1:] if parts[1][:1] in "+-" else parts[1]
    if not digits.isascii() or not digits.isdigit():
        return None
    return parts[0], int(parts[1])


def _multiply(block: dict, multiple: int) -> dict:
    """Quantities times ``multiple`` (``resource.Quantity.Mul``); integer quantities only, the
    others (``24Gi``) keep their suffix with the number multiplied."""
    out: dict[str, Any] = {}
    for name, value in block.items():
        text = str(value)
        number = "".join(ch for ch in text if ch.isdigit())
        suffix = text[len(number) :] if text.startswith(number) else None
        out[name] = f"{int(number) * multiple}{suffix}" if number and suffix is not None else value
    return out


def _model_source(spec: dict, name: str, uid: str) -> tuple[str, list[dict], list[dict]]:
    """vLLM's ``--model`` value and the volumes/mounts that hold the model (engine_vllm.go)."""
    url = as_str(spec.get("url")) or ""
    scheme, _, ref = url.partition("://")
    ref = ref.split("?", 1)[0]
    if as_str(spec.get("cacheProfile")):
        cache_dir = f"/models/{name}-{uid}"
        volume = {"name": "models", "persistentVolumeClaim": {"claimName": f"kubeai-cache-{name}"}}
        mount = {"name": "models", "mountPath": cache_dir, "readOnly": True}
        return cache_dir, [volume], [mount]
    if scheme == "pvc":
        claim = ref.split("/", 1)[0]
        volume = {"name": "model", "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}
        return "/model", [volume], [{"name": "model", "mountPath": "/model"}]
    return (url if scheme == "s3" else ref), [], []


def expand_model(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """One PodSet ``server``: ``replicas`` (raised to ``minReplicas``, cut to ``maxReplicas``) pods."""
    spec = as_dict(obj.data.get("spec"))
    engine = as_str(spec.get("engine")) or "VLLM"
    parsed = parse_resource_profile(spec.get("resourceProfile"))
    profile = DEFAULT_RESOURCE_PROFILES.get(parsed[0]) if parsed else None
    multiple = parsed[1] if parsed else 1
    overrides: list[tuple[FieldPath, Manifest, FieldPath]] = []
    container_path: FieldPath = ("spec", "containers", 0)

    images = DEFAULT_IMAGES.get(engine, DEFAULT_IMAGES["VLLM"])
    image = as_str(spec.get("image"))
    if image is None:
        image = images.get(as_str(as_dict(profile).get("imageName")) or "default") or images["default"]
    overrides.append(((*container_path, "image"), obj, ("spec", "image" if "image" in spec else "engine")))

    user_args = [a for a in as_list(spec.get("args")) if isinstance(a, str)]
    volumes: list[dict] = []
    mounts: list[dict] = []
    if engine == "VLLM":
        uid = as_str(obj.metadata.get("uid")) or "uid"
        model_arg, volumes, mounts = _model_source(spec, obj.name, uid)
        args = [f"--model={model_arg}", f"--served-model-name={obj.name}", *user_args]
        overrides.append(((*container_path, "args", 0), obj, ("spec", "url")))
        first_user = 2
    else:
        args = list(user_args)
        first_user = 0
    overrides.extend(
        ((*container_path, "args", first_user + i), obj, ("spec", "args", i)) for i in range(len(user_args))
    )
    overrides.append(((*container_path, "args"), obj, ("spec", "args")))

    env_map = as_dict(spec.get("env"))
    env = []
    for j, key in enumerate(sorted(k for k in env_map if isinstance(k, str))):
        env.append({"name": key, "value": env_map[key]})
        overrides.append(((*container_path, "env", j), obj, ("spec", "env", key)))
    overrides.append(((*container_path, "env"), obj, ("spec", "env")))

    container: dict[str, Any] = {"name": SERVER_CONTAINER, "image": image}
    if engine == "VLLM":
        container["command"] = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    container["args"] = args
    if env:
        container["env"] = env
    if profile is not None:
        resources = {
            kind: _multiply(profile[kind], multiple) for kind in ("requests", "limits") if profile[kind]
        }
        if resources:
            container["resources"] = resources
    overrides.append(((*container_path, "resources"), obj, ("spec", "resourceProfile")))
    container["ports"] = [{"containerPort": 8000, "protocol": "TCP", "name": "http"}]
    health = {"httpGet": {"path": "/health", "port": "http"}}
    container["startupProbe"] = {"failureThreshold": 5400, "periodSeconds": 2, "timeoutSeconds": 2, **health}
    container["readinessProbe"] = {"failureThreshold": 3, "periodSeconds": 10, "timeoutSeconds": 2, **health}
    container["livenessProbe"] = {"failureThreshold": 3, "periodSeconds": 30, "timeoutSeconds": 3, **health}
    if mounts:
        container["volumeMounts"] = mounts

    pod_spec: dict[str, Any] = {"containers": [container]}
    if volumes:
        pod_spec["volumes"] = volumes
    tolerations = as_list(as_dict(profile).get("tolerations"))
    if tolerations:
        pod_spec["tolerations"] = [dict(t) for t in tolerations]
        overrides.append((("spec", "tolerations"), obj, ("spec", "resourceProfile")))
    priority = as_str(spec.get("priorityClassName"))
    if priority:
        pod_spec["priorityClassName"] = priority
        overrides.append((("spec", "priorityClassName"), obj, ("spec", "priorityClassName")))
    engine_label = engine.lower()
    labels = {
        "app": "model",
        "model": obj.name,
        "app.kubernetes.io/name": engine_label,
        "app.kubernetes.io/instance": f"{engine_label}-{obj.name}",
        "app.kubernetes.io/managed-by": "kubeai",
    }
    template = {"metadata": {"labels": labels}, "spec": pod_spec}

    minimum = nonneg(as_int(spec.get("minReplicas"), 0))
    maximum = as_int(spec.get("maxReplicas"), None)
    replicas = as_int(spec.get("replicas"), None)
    count = minimum if replicas is None or replicas < minimum else replicas
    if maximum is not None and count > maximum:
        count = max(maximum, 0)
    ps = PodSet(
        obj,
        SERVER_CONTAINER,
        "server",
        count,
        template,
        ("spec",),
        synthetic=True,
        overrides=tuple(overrides),
        managed_shm=MANAGED_SHM,
        closed=True,
    )
    ps.max_count = maximum
    return finish(obj, [ps], ctx.related, kueue_whole=False)
