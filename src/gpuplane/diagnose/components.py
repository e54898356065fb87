"""The GPU enablement chain: which pod is which GPU-stack component, and is it healthy.

A GPU becomes schedulable only after a chain of node agents has done its part
(reference/nvidia-gpu-stack.md §3.3, §3.5): the **driver** is loaded, the
**container toolkit** configures the runtime, the **operator validator** checks
both, then the **device plugin** (whose ``toolkit-validation`` init container
waits for ``/run/nvidia/validations/toolkit-ready``, NVIDIA/gpu-operator
``assets/state-device-plugin/0500_daemonset.yaml``) registers ``nvidia.com/gpu``
with the kubelet; GPU Feature Discovery, DCGM and the MIG manager hang off the
same chain. When a node shows no GPUs, the first broken link in that order is
the cause; every later component merely waits ("stuck in Init", issues #327,
#289, #2646 in §3.5).

GPU Operator operands are DaemonSets whose pods carry ``app: <daemonset name>``
(``assets/state-*/..._daemonset.yaml``); the stand-alone device plugin is
``nvidia-device-plugin-daemonset`` with ``name: nvidia-device-plugin-ds``
(k8s-device-plugin static manifest) or ``app.kubernetes.io/name:
nvidia-device-plugin`` (its Helm chart); GKE's is ``nvidia-gpu-device-plugin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.k8s.objects import ContainerStatus, Pod

# (component id, chain position, name fragments matched against the pod's app label or owner name).
# Position orders the enablement chain: lower runs first, a failure there explains every later one.
_COMPONENTS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("driver", 10, ("nvidia-driver-daemonset", "nvidia-driver-installer", "nvidia-driver")),
    ("container-toolkit", 20, ("nvidia-container-toolkit",)),
    ("operator-validator", 30, ("nvidia-operator-validator",)),
    ("mig-manager", 35, ("nvidia-mig-manager",)),
    (
        "device-plugin",
        40,
        ("nvidia-device-plugin", "nvidia-gpu-device-plugin", "amdgpu-device-plugin", "intel-gpu-plugin"),
    ),
    ("gpu-feature-discovery", 50, ("gpu-feature-discovery",)),
    ("dcgm", 60, ("nvidia-dcgm-exporter", "nvidia-dcgm", "dcgm-exporter")),
    ("node-status-exporter", 70, ("nvidia-node-status-exporter",)),
    ("gpu-operator", 80, ("gpu-operator",)),
)
CHAIN = ("driver", "container-toolkit", "operator-validator", "device-plugin")
LABEL_KEYS = ("app", "app.kubernetes.io/name", "name", "k8s-app", "app.kubernetes.io/component")

# Container waiting reasons that are part of a normal start, not a failure.
_STARTING = frozenset({"ContainerCreating", "PodInitializing"})
# A container restarted this often is "restarting" even when it is Running right now.
RESTART_THRESHOLD = 5


@dataclass(frozen=True, slots=True)
class Component:
    id: str
    position: int
    workload: str  # DaemonSet / Deployment name the pod belongs to (owner name, else app label)


def component_of(pod: Pod) -> Component | None:
    """The GPU-stack component ``pod`` belongs to, or None for any other pod."""
    meta = pod.metadata
    candidates: list[str] = []
    for owner in meta.owner_references:
        if owner.controller:
            candidates.append(owner.name)
    labels = meta.labels
    for key in LABEL_KEYS:
        value = labels.get(key)
        if value:
            candidates.append(value)
    if not candidates:
        candidates.append(meta.name)
    for text in candidates:
        low = text.lower()
        for cid, position, fragments in _COMPONENTS:
            for fragment in fragments:
                if fragment in low:
                    return Component(cid, position, _workload_name(pod))
    return None


def _workload_name(pod: Pod) -> str:
    """The controller a component pod comes from: DaemonSet name, or the Deployment behind a ReplicaSet."""
    for owner in pod.metadata.owner_references:
        if owner.controller:
            if owner.kind == "ReplicaSet" and "-" in owner.name:
                return owner.name.rsplit("-", 1)[0]
            return owner.name
    return pod.metadata.labels.get("app") or pod.metadata.name


@dataclass(frozen=True, slots=True)
class PodProblem:
    """Why a pod is not healthy: a kubectl-like ``status`` plus the detail that explains it."""

    status: str  # CrashLoopBackOff, Init:CrashLoopBackOff, Error, Pending, Failed, Restarting ...
    container: str  # the container concerned ("" for the pod as a whole)
    restarts: int
    detail: str  # waiting/terminated message, exit code, condition message


def _terminated(status: ContainerStatus) -> dict:
    last = status.last_state.get("terminated") if isinstance(status.last_state, dict) else None
    return last if isinstance(last, dict) else {}


def _exit_detail(status: ContainerStatus) -> str:
    last = _terminated(status)
    if not last:
        return ""
    parts = [f"last exit code {last.get('exitCode')}"]
    if last.get("reason"):
        parts.append(str(last["reason"]))
    if last.get("message"):
        parts.append(str(last["message"]).strip().splitlines()[0][:200])
    return ", ".join(parts)


def pod_problem(pod: Pod) -> PodProblem | None:
    """A GPU-stack pod that is "not Running or restarting" (spec/rules.md gpu-operator-pods-failing).

    Completed validator pods (phase Succeeded, e.g. ``nvidia-cuda-validator-*``)
    are healthy. A pod still starting (``ContainerCreating``, ``PodInitializing``)
    is not reported: a snapshot cannot tell a slow start from a stuck one, but an
    init container that is *waiting with an error reason* or has restarted is.
    """
    status = pod.status
    phase = status.phase
    if phase == "Succeeded":
        return None
    if phase in ("Failed", "Unknown"):
        return PodProblem(phase, "", 0, status.message or status.reason or f"pod phase {phase}")
    if not pod.spec.node_name:
        message = ""
        for condition in status.conditions:
            if condition.type == "PodScheduled" and condition.status == "False":
                message = condition.message or condition.reason
        return PodProblem("Pending", "", 0, message or "not scheduled to any node")
    for init in status.init_container_statuses:
        problem = _container_problem(init, init=True)
        if problem is not None:
            return problem
    for container in status.container_statuses:
        problem = _container_problem(container, init=False)
        if problem is not None:
            return problem
    return None


def _container_problem(status: ContainerStatus, *, init: bool) -> PodProblem | None:
    state = status.state if isinstance(status.state, dict) else {}
    prefix = "Init:" if init else ""
    waiting = state.get("waiting")
    if isinstance(waiting, dict):
        reason = str(waiting.get("reason") or "")
        if reason and reason not in _STARTING:
            detail = _exit_detail(status) or str(waiting.get("message") or "").strip()
            return PodProblem(prefix + reason, status.name, status.restart_count, detail)
    terminated = state.get("terminated")
    if isinstance(terminated, dict) and not init and terminated.get("exitCode") not in (0, None):
        detail = f"exit code {terminated.get('exitCode')} {terminated.get('reason') or ''}".strip()
        return PodProblem(str(terminated.get("reason") or "Error"), status.name, status.restart_count, detail)
    if status.restart_count >= RESTART_THRESHOLD and _terminated(status).get("reason") != "Completed":
        return PodProblem(prefix + "Restarting", status.name, status.restart_count, _exit_detail(status))
    return None
