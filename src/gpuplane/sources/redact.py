"""Keep in a snapshot only what the engines read: an allow-list, not a deny-list.

A snapshot is meant to be attached to tickets and shared, so it must never
carry a credential wherever one was put. Rather than hunting for fields known
to hold secrets, every object is reduced to what diagnose, why-pending,
inventory, simulate and lint read, and the rest is dropped or redacted:

- **Fields** of built-in kinds: only those the kind's OpenAPI schema defines
  (:mod:`gpuplane.sources.known_fields`); a value under an unknown key, at any
  depth, is dropped.
- **Kinds**: only the kinds of :mod:`gpuplane.sources.catalog` (what a live
  read lists) and :data:`EXTRA_KINDS`; ``List`` objects are flattened at any
  depth first. Everything else is dropped: Secrets, kubeconfigs
  (``kind: Config``), SealedSecrets, ExternalSecrets, any CRD the engines do
  not read.
- **Annotations** (every ``annotations`` mapping, pod templates included): only
  the keys the engines read (:data:`KEPT_ANNOTATIONS`, or a prefix of
  :data:`KEPT_ANNOTATION_PREFIXES`); ``last-applied-configuration`` and
  ``managedFields`` are dropped.
- **command / args** (containers, probe and lifecycle ``exec``): each token is
  kept only when it is a flag name (``--nproc-per-node``), a number, or a
  well-known launcher word (:data:`KEPT_WORDS`); the value of
  ``--scheduler-name`` is kept (how a running scheduler is recognised). Every
  other token (paths, URLs, model ids, shell scripts, flag values) becomes
  ``<redacted>`` — so rules that read model paths or script text see less in a
  snapshot than in the manifest.
- **env**: ``value`` becomes ``<redacted>`` except for the device-selection
  variables (:data:`KEPT_ENV`); names and ``valueFrom`` references stay.
- **Probe ``httpHeaders``** values, **StorageClass ``parameters``** and
  **``flexVolume`` options** values become ``<redacted>`` (keys stay).
- **ConfigMap data**: a value is kept only when its content is a GPU Operator
  device-plugin config (``version`` + ``sharing``/``flags``) or a mig-parted
  config (``version`` + ``mig-configs``); every other value is ``<redacted>``.
  A name containing "gpu" or a GPU namespace keeps nothing by itself.

Secrets are never requested from a live cluster in the first place (sources/catalog.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from typing import Any

import yaml

from gpuplane.sources.catalog import RESOURCES
from gpuplane.sources.known_fields import prune_unknown_fields

REDACTED = "<redacted>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# Kinds read from --from dumps that a live read does not list but the engines read.
EXTRA_KINDS = frozenset({"PodDisruptionBudget", "ReplicationController"})
KEPT_KINDS = frozenset({r.kind for r in RESOURCES}) | EXTRA_KINDS

# GPU selection and device-plugin mode variables (NVIDIA container toolkit and
# k8s-device-plugin documentation): device ids / modes, kept for the lint rules.
KEPT_ENV = frozenset(
    {
        "NVIDIA_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA_MIG_CONFIG_DEVICES",
        "NVIDIA_MIG_MONITOR_DEVICES",
        "MIG_STRATEGY",
        "DEVICE_LIST_STRATEGY",
        "DEVICE_ID_STRATEGY",
        "PASS_DEVICE_SPECS",
        "FAIL_ON_INIT_ERROR",
    }
)

# Annotations the engines read (k8s/wellknown.py, gpu/labels.py, k8s/workloads, sources/cluster.py).
KEPT_ANNOTATIONS = frozenset(
    {
        "kubernetes.io/config.mirror",
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
        "volume.beta.kubernetes.io/storage-class",
        "volume.kubernetes.io/selected-node",
        "pv.kubernetes.io/bind-completed",
        "batch.kubernetes.io/job-completion-index",
        "k8s.v1.cni.cncf.io/networks",
        "ray.io/scheduler-name",
    }
)
# Scheduling / gang / queue annotation families whose values are names and counts.
KEPT_ANNOTATION_PREFIXES = (
    "gpuplane.io/",
    "kueue.x-k8s.io/",
    "scheduling.volcano.sh/",
    "volcano.sh/",
    "scheduling.x-k8s.io/",
    "scheduling.k8s.io/",
    "jobset.sigs.k8s.io/",
    "alpha.jobset.sigs.k8s.io/",
    "leaderworkerset.sigs.k8s.io/",
    "nvidia.com/",
    "karpenter.sh/",
    "cluster-autoscaler.kubernetes.io/",
)

# Launcher words and modes whose presence rules look for (torchrun, sleep-forever detection, serving CLIs).
KEPT_WORDS = frozenset(
    {
        "torchrun", "python", "python3", "-m", "torch.distributed.run", "torch.distributed.launch",
        "deepspeed", "accelerate", "launch", "mpirun", "mpiexec", "horovodrun", "sleep", "infinity",
        "inf", "vllm", "serve", "sh", "bash", "-c", "true", "false",
    }
)  # fmt: skip
# Flags whose value the engines read (k8s/schedulers.py RunningSchedulers).
_KEPT_VALUE_FLAGS = frozenset({"--scheduler-name"})
_FLAG = re.compile(r"--?[A-Za-z][A-Za-z0-9_.-]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NAME_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def flatten(objects: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """Every object, with ``kind: List`` (and ``*List``) items expanded at any depth."""
    stack = list(reversed(list(objects)))
    while stack:
        obj = stack.pop()
        if not isinstance(obj, dict):
            continue
        items = obj.get("items")
        if str(obj.get("kind") or "").endswith("List") and isinstance(items, list):
            stack.extend(reversed(items))
            continue
        yield obj


def is_kept_kind(obj: dict[str, Any]) -> bool:
    """Whether a snapshot keeps an object of this kind at all (the kind allow-list)."""
    return obj.get("kind") in KEPT_KINDS


def redact_argv(tokens: list[Any]) -> list[Any]:
    """Flag names, numbers, launcher words and ``--scheduler-name``'s value; the rest redacted."""
    out: list[Any] = []
    keep_next = False
    for token in tokens:
        if not isinstance(token, str):
            out.append(token if isinstance(token, int | float | bool) else REDACTED)
            continue
        plain = _FLAG.fullmatch(token) or _NUMBER.fullmatch(token) or token in KEPT_WORDS
        if plain or (keep_next and _NAME_VALUE.fullmatch(token)):
            out.append(token)
        elif "=" in token and _FLAG.fullmatch(token.split("=", 1)[0]):
            flag, value = token.split("=", 1)
            kept = _NUMBER.fullmatch(value) or (flag in _KEPT_VALUE_FLAGS and _NAME_VALUE.fullmatch(value))
            out.append(token if kept else f"{flag}={REDACTED}")
        else:
            out.append(REDACTED)
        keep_next = token in _KEPT_VALUE_FLAGS
    return out


def redact_object(obj: dict[str, Any]) -> dict[str, Any]:
    """Reduce one (kept-kind) object in place to what the engines read, and return it."""
    prune_unknown_fields(obj)
    if obj.get("kind") == "ConfigMap":
        for key in ("data", "binaryData"):
            values = obj.get(key)
            if isinstance(values, dict):
                obj[key] = {k: (v if is_gpu_config(v) else REDACTED) for k, v in values.items()}
    if obj.get("kind") == "StorageClass":
        _redact_values(obj, "parameters")
    stack: list[Any] = [obj]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(item for item in current if isinstance(item, dict | list))
            continue
        if not isinstance(current, dict):
            continue
        current.pop("managedFields", None)
        for key, value in list(current.items()):
            if key == "annotations" and isinstance(value, dict):
                current[key] = {k: v for k, v in value.items() if _kept_annotation(k)}
            elif key in ("command", "args") and isinstance(value, list):
                current[key] = redact_argv(value)
            elif key in ("command", "args") and isinstance(value, str):
                current[key] = REDACTED
            elif key == "env" and isinstance(value, list):
                for var in value:
                    if isinstance(var, dict) and "value" in var and var.get("name") not in KEPT_ENV:
                        var["value"] = REDACTED
                stack.append(value)
            elif key == "httpHeaders" and isinstance(value, list):
                for header in value:
                    if isinstance(header, dict) and "value" in header:
                        header["value"] = REDACTED
            elif key == "flexVolume" and isinstance(value, dict):
                _redact_values(value, "options")
                stack.append(value)
            elif isinstance(value, dict | list):
                stack.append(value)
    return obj


def _kept_annotation(key: Any) -> bool:
    return isinstance(key, str) and (key in KEPT_ANNOTATIONS or key.startswith(KEPT_ANNOTATION_PREFIXES))


def _redact_values(parent: dict[str, Any], key: str) -> None:
    values = parent.get(key)
    if isinstance(values, dict):
        parent[key] = dict.fromkeys(values, REDACTED)


def is_gpu_config(value: Any) -> bool:
    """Whether a ConfigMap value is a device-plugin or mig-parted config, judged by its content.

    A device-plugin config (k8s-device-plugin ``api/config/v1``) has ``version``
    and ``sharing`` or ``flags``; a mig-parted config has ``version`` and
    ``mig-configs``. The value must parse as one YAML mapping with those keys.
    """
    if not isinstance(value, str) or "version" not in value or len(value) > 1_000_000:
        return False
    try:
        parsed = yaml.load(value, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return False
    if not isinstance(parsed, dict) or "version" not in parsed:
        return False
    return bool({"sharing", "flags", "mig-configs"} & set(parsed))


def keep(objects: Iterable[Any], gpu_namespaces: Collection[str] = ()) -> tuple[list[dict[str, Any]], int]:
    """Flatten, drop kinds outside the allow-list (counted), and redact the rest in place."""
    kept: list[dict[str, Any]] = []
    dropped = 0
    for obj in flatten(objects):
        if is_kept_kind(obj):
            kept.append(redact_object(obj))
        else:
            dropped += 1
    return kept, dropped
