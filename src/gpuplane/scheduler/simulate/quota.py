"""ResourceQuota admission for the pods a simulated controller creates.

Upstream: kube-apiserver's ResourceQuota admission
(staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go) charges each
new pod against every quota of its namespace; when ``used + requested > hard`` for a key it
refuses the create with ``exceeded quota: %s, requested: %s, used: %s, limited: %s`` (each
list masked to the exceeded keys, ``key=value`` sorted and joined with ``,``), wrapped as
``pods "<name>" is forbidden: ...`` (reference/platform.md §1.2). The pod evaluator
(pkg/quota/v1/evaluator/core/pods.go) charges ``pods``/``count/pods``, ``cpu``/``requests.cpu``,
``memory``/``requests.memory``, ``limits.cpu``/``limits.memory``, ``requests.<extended>`` and
``ephemeral-storage`` keys; bare ``nvidia.com/gpu`` and ``limits.nvidia.com/gpu`` are never
charged (platform.md §1.1). Scoped quotas (scopes / scopeSelector) are not modelled: they are
skipped, and said so in the simulation notes.

Usage starts from ``status.used`` when the snapshot has it, else from the namespace's
non-terminal pods; the simulation's pods are charged on create and released on completion.
"""

from __future__ import annotations

from gpuplane.k8s.cluster import TERMINAL_PHASES, ClusterState
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.quantity import format_quantity, milli_value, value
from gpuplane.k8s.requests import pod_limits, pod_requests

_NATIVE = {"cpu", "memory", "ephemeral-storage"}
_BINARY = {"memory", "ephemeral-storage", "storage"}


def _usage_key(key: str) -> tuple[str, str] | None:
    """``(source, resource)`` a quota key charges: ``("requests", "cpu")`` ..., or None if inert."""
    if key in ("pods", "count/pods"):
        return "count", "pods"
    if key in _NATIVE:
        return "requests", key
    if key.startswith("requests."):
        return "requests", key[len("requests.") :]
    if key.startswith("limits.") and key[len("limits.") :] in _NATIVE:
        return "limits", key[len("limits.") :]
    return None


def pod_usage(pod: Pod, keys: list[str]) -> dict[str, int]:
    """What creating ``pod`` charges for each of ``keys`` (cpu in millicores)."""
    try:
        requests = pod_requests(pod)
        limits = pod_limits(pod)
    except (ValueError, TypeError):
        requests, limits = {}, {}
    out: dict[str, int] = {}
    for key in keys:
        charge = _usage_key(key)
        if charge is None:
            continue
        source, resource = charge
        if source == "count":
            out[key] = 1
        else:
            out[key] = (requests if source == "requests" else limits).get(resource, 0)
    return out


def format_amount(key: str, amount: int) -> str:
    resource = key.split(".", 1)[1] if key.startswith(("requests.", "limits.")) else key
    if resource == "cpu":
        return format_quantity(amount, milli=True)
    return format_quantity(amount, binary=resource in _BINARY)


def _parse(key: str, raw: object) -> int | None:
    resource = key.split(".", 1)[1] if key.startswith(("requests.", "limits.")) else key
    try:
        return milli_value(raw) if resource == "cpu" else value(raw)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return None


class QuotaBook:
    """Every unscoped ResourceQuota of the cluster with its running usage."""

    def __init__(self, cluster: ClusterState) -> None:
        self.quotas: dict[str, list[tuple[str, dict[str, int], dict[str, int]]]] = {}
        self.skipped_scoped: list[str] = []
        pods_by_ns: dict[str, list[Pod]] = {}
        for pod in cluster.pods:
            if pod.status.phase not in TERMINAL_PHASES:
                pods_by_ns.setdefault(pod.metadata.namespace or "default", []).append(pod)
        for quota in sorted(cluster.quotas, key=lambda q: q.name):
            ns = quota.namespace or "default"
            if quota.get("spec", "scopes") or quota.get("spec", "scopeSelector"):
                self.skipped_scoped.append(f"{ns}/{quota.name}")
                continue
            hard_raw = quota.get("spec", "hard") or {}
            if not isinstance(hard_raw, dict):
                continue
            hard: dict[str, int] = {}
            for key, raw in hard_raw.items():
                if _usage_key(str(key)) is None:
                    continue
                parsed = _parse(str(key), raw)
                if parsed is not None:
                    hard[str(key)] = parsed
            if not hard:
                continue
            used_raw = quota.get("status", "used") or {}
            used: dict[str, int] = {}
            keys = list(hard)
            if isinstance(used_raw, dict) and all(k in used_raw for k in keys):
                for key in keys:
                    used[key] = _parse(key, used_raw[key]) or 0
            else:
                for pod in pods_by_ns.get(ns, ()):
                    for key, amount in pod_usage(pod, keys).items():
                        used[key] = used.get(key, 0) + amount
            self.quotas.setdefault(ns, []).append((quota.name, hard, used))

    def admit(self, pod: Pod) -> str:
        """Charge ``pod``; the refusal text (and nothing charged) when a quota is exceeded."""
        ns = pod.metadata.namespace or "default"
        quotas = self.quotas.get(ns)
        if not quotas:
            return ""
        charges = []
        for name, hard, used in quotas:
            usage = pod_usage(pod, list(hard))
            exceeded = sorted(
                k for k, amount in usage.items() if amount and used.get(k, 0) + amount > hard[k]
            )
            if exceeded:
                requested = ",".join(f"{k}={format_amount(k, usage[k])}" for k in exceeded)
                in_use = ",".join(f"{k}={format_amount(k, used.get(k, 0))}" for k in exceeded)
                limited = ",".join(f"{k}={format_amount(k, hard[k])}" for k in exceeded)
                return (
                    f'pods "{pod.metadata.name}" is forbidden: exceeded quota: {name}, '
                    f"requested: {requested}, used: {in_use}, limited: {limited}"
                )
            charges.append((used, usage))
        for used, usage in charges:
            for key, amount in usage.items():
                used[key] = used.get(key, 0) + amount
        return ""

    def release(self, pod: Pod) -> None:
        quotas = self.quotas.get(pod.metadata.namespace or "default")
        for _, hard, used in quotas or ():
            for key, amount in pod_usage(pod, list(hard)).items():
                used[key] = used.get(key, 0) - amount
