"""The ``cluster`` rules of spec/rules.md: what is wrong with a live cluster's GPU stack.

They register with the lint registry (``category="cluster"``,
``context="required"``), so ``gpuplane rules`` lists them and ``gpuplane
explain`` prints their pages, while ``gpuplane lint`` leaves them to
``gpuplane diagnose`` (``lint.engine.select_rules`` skips the category).

Each rule reads the shared :class:`~gpuplane.diagnose.facts.ClusterFacts` (the
inventory and its per-node flags, the GPU-stack pods per node, the scheduler's
verdicts) and yields :class:`~gpuplane.diagnose.evidence.ClusterFinding` s
whose ``evidence`` lists the nodes, pods, labels and conditions that prove them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.diagnose import inventory as inv
from gpuplane.diagnose.components import CHAIN, Component, pod_problem
from gpuplane.diagnose.evidence import ClusterFinding, Evidence, label_path, node_ref, pod_ref, ref
from gpuplane.diagnose.facts import ClusterFacts, facts_for, pod_scheduled_message
from gpuplane.diagnose.gangs import LiveGang, live_gangs
from gpuplane.k8s.cluster import GPU_NODE_LABELS, is_gpu_node
from gpuplane.k8s.objects import Node, Pod
from gpuplane.lint.registry import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

DEPLOY_OPERANDS = "nvidia.com/gpu.deploy.operands"
DEPLOY_DRIVER = "nvidia.com/gpu.deploy.driver"
GPU_PRESENT = "nvidia.com/gpu.present"
PAUSED = "paused-for-mig-change"
MAX_LISTED = 3


ClusterCheck = Callable[["LintContext", ClusterFacts], Iterator[ClusterFinding]]


def cluster_rule(
    *, id: str, severity: str, summary: str, docs: str
) -> Callable[[ClusterCheck], ClusterCheck]:
    """``@rule`` for the ``cluster`` category: every cluster rule needs the cluster
    (``context="required"``) and reads the shared :class:`ClusterFacts`, so the check is
    called as ``check(ctx, facts)`` and never runs without a cluster."""

    def decorate(check: ClusterCheck) -> ClusterCheck:
        @functools.wraps(check)
        def run(ctx: LintContext) -> Iterator[ClusterFinding]:
            if ctx.cluster is None:
                return iter(())
            return check(ctx, facts_for(ctx.cluster))

        rule(id=id, severity=severity, category="cluster", context="required", summary=summary, docs=docs)(
            run
        )
        return check

    return decorate


def _finding(
    ctx: LintContext,
    obj: Manifest,
    path: FieldPath,
    message: str,
    fix: str,
    evidence: list[Evidence],
    *,
    severity: str | None = None,
    explanation: dict[str, Any] | None = None,
) -> ClusterFinding:
    meta = ctx.rule
    if meta is None:
        raise RuntimeError("a cluster rule ran outside the engine")
    return ClusterFinding(
        meta.id,
        severity or meta.severity,
        obj,
        tuple(path),
        message,
        fix,
        evidence=evidence,
        explanation=explanation,
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _pod_name(pod: Pod) -> str:
    return pod.key


def _pod_ref(pod: Pod) -> dict[str, Any]:
    return pod_ref(pod.metadata.namespace, pod.metadata.name)


def _label_evidence(node_name: str, key: str, value: Any, note: str) -> Evidence:
    """Evidence that node ``node_name`` carries label ``key`` = ``value`` (what it proves: ``note``)."""
    return Evidence("label", node_ref(node_name), label_path(key), value, note)


def _flagged_nodes(
    facts: ClusterFacts, wanted: set[str]
) -> Iterator[tuple[inv.NodeInventory, Node, set[str]]]:
    """``(inventory, node, flags)`` of each node the inventory flagged with any of ``wanted``:
    the inventory computes the per-node facts once, the rules only explain them."""
    for node_inv in facts.inventory.nodes:
        flags = {flag.flag for flag in node_inv.flags}
        if not flags & wanted:
            continue
        node = facts.state.node_by_name.get(node_inv.name)
        if node is not None:
            yield node_inv, node, flags


def _pod_evidence(pod: Pod, note: str, status: str | None = None) -> Evidence:
    problem = pod_problem(pod)
    value = status or (problem.status if problem else pod.status.phase or "Pending")
    return Evidence("pod", _pod_ref(pod), "status", value, note)


def _problem_text(pod: Pod) -> str:
    problem = pod_problem(pod)
    if problem is None:
        return pod.status.phase or "Pending"
    parts = [problem.status]
    if problem.restarts:
        parts.append(f"{problem.restarts} restarts")
    if problem.detail:
        parts.append(problem.detail)
    where = f" (container {problem.container})" if problem.container else ""
    return f"{parts[0]}{where}" + (f": {', '.join(parts[1:])}" if len(parts) > 1 else "")


# -- gpu-node-not-advertising -------------------------------------------------------------------


@cluster_rule(
    id="gpu-node-not-advertising",
    severity="error",
    summary="node labelled or typed as a GPU node whose allocatable has no GPUs: driver / toolkit / device plugin failure",
    docs="""
## What it catches

A node that is a GPU node by its labels (GPU Feature Discovery `nvidia.com/gpu.product`,
GPU Operator `nvidia.com/gpu.present=true`, NFD `feature.node.kubernetes.io/pci-10de.present`,
cloud accelerator labels) or by its instance type (`p4d.24xlarge`, `g6e.12xlarge` ...), but
whose `status.allocatable` lists no GPU resource at all.

The finding names the **broken link of the enablement chain**: the kubelet, then the GPU
Operator operands in the order they depend on each other (driver, container toolkit,
operator validator, device plugin; reference/nvidia-gpu-stack.md §3.3, §3.5), read from the
operand pods on that node and the `nvidia.com/gpu.deploy.*` labels.

## Why it hurts

Only the device plugin turns GPUs into the `nvidia.com/gpu` resource the scheduler counts
(the kubelet device manager reports registered devices in capacity and allocatable). Until it
registers, every GPU pod skips the node: you pay for GPUs nobody can use, and GPU pods wait
Pending with `Insufficient nvidia.com/gpu`.

## How to fix

Fix the first failing component named in the finding; the later ones recover on their own.
`kubectl logs -n gpu-operator <pod> --previous` shows why it failed. Typical causes: a driver
container on a host that already has a driver (`driver.enabled=false`), a container toolkit
that cannot find containerd's config (`toolkit.env` `CONTAINERD_CONFIG`/`CONTAINERD_SOCKET`),
an operand disabled with `nvidia.com/gpu.deploy.<component>=false`.

## Bad

The node carries GPU labels, its device plugin pod crash-loops, and `status.allocatable` has
no GPU resource:

```yaml
# kubectl get node node-l40s-1 -o yaml
metadata:
  labels:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-L40S
    nvidia.com/gpu.count: "4"
status:
  allocatable: {cpu: 47810m, memory: "399054324Ki", pods: "110"}   # no nvidia.com/gpu
---
# kubectl get pod -n gpu-operator nvidia-device-plugin-daemonset-474gw -o yaml
status:
  containerStatuses:
  - name: nvidia-device-plugin-daemonset
    restartCount: 47
    state:
      waiting: {reason: CrashLoopBackOff}
```

## Good

The device plugin pod is Running and the kubelet counts its devices:

```yaml
status:
  capacity:    {nvidia.com/gpu: "4"}
  allocatable: {nvidia.com/gpu: "4"}
```

Check it with:

```sh
kubectl get nodes -L nvidia.com/gpu.product -o custom-columns='NODE:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu'
kubectl get pods -n gpu-operator -o wide --field-selector spec.nodeName=NODE
```

## References

- NVIDIA GPU Operator troubleshooting; NVIDIA/gpu-operator issues #327, #289, #2646
- kubernetes/kubernetes `pkg/kubelet/cm/devicemanager/manager.go` (`GetCapacity`)
""",
)
def gpu_node_not_advertising(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    state = facts.state
    for node_inv, node, _flags in _flagged_nodes(facts, {inv.FLAG_NOT_ADVERTISING}):
        yield _not_advertising(ctx, facts, node, node_inv.gpus)
    # Typed as a GPU node (instance type) but carrying no GPU label or resource at all.
    from gpuplane.gpu.catalog import catalog

    for node in state.nodes:
        labels = node.metadata.labels
        instance_type = labels.get("node.kubernetes.io/instance-type") or labels.get(
            "beta.kubernetes.io/instance-type"
        )
        if not instance_type:
            continue
        instance = catalog().instance(instance_type)
        if instance is None or instance.gpu_count <= 0 or is_gpu_node(node):
            continue
        yield _not_advertising(ctx, facts, node, instance.gpu_count, instance_type=instance_type)


def _gpu_label(node: Node) -> tuple[str, str] | None:
    labels = node.metadata.labels
    for key in GPU_NODE_LABELS:
        value = labels.get(key)
        if value:
            return key, value
    return None


def _not_advertising(
    ctx: LintContext, facts: ClusterFacts, node: Node, gpus: int, instance_type: str | None = None
) -> ClusterFinding:
    name = node.metadata.name
    evidence: list[Evidence] = []
    label = _gpu_label(node)
    if label is not None:
        evidence.append(_label_evidence(name, label[0], label[1], "marks a GPU node"))
        why = f"{label[0]}={label[1]}"
    else:
        key = "node.kubernetes.io/instance-type"
        evidence.append(
            _label_evidence(name, key, instance_type, f"instance type with {_plural(gpus, 'GPU')}")
        )
        why = f"instance type {instance_type} has {_plural(gpus, 'GPU')}"
    gpu_alloc = {k: v for k, v in node.status.allocatable.items() if "gpu" in k.lower()}
    evidence.append(
        Evidence(
            "resource",
            node_ref(name),
            "status.allocatable",
            gpu_alloc or "no GPU resource",
            "the kubelet has no GPU device plugin registration",
        )
    )
    link, detail, fix, more = _broken_link(facts, node, labelled=label is not None)
    evidence.extend(more)
    message = (
        f"node {name} is a GPU node ({why}) but advertises no GPU in status.allocatable; "
        f"broken link: {link}: {detail}"
    )
    return _finding(ctx, facts.manifest(node), ("status", "allocatable"), message, fix, evidence)


def not_advertised_cause(facts: ClusterFacts, node: Node) -> str:
    """Why a GPU node advertises no GPU, in a few words for charts: the first failing step of
    the enablement chain (as ``gpu-node-not-advertising`` reports it), e.g. "MIG config failed",
    "device plugin down"."""
    link = _broken_link(facts, node, labelled=_gpu_label(node) is not None)[0]
    if link == "mig-manager":
        if node.metadata.labels.get(inv.MIG_CONFIG_STATE) == "failed":
            return "MIG config failed"
        return "device plugin paused for a MIG change"
    return _LINK_LABELS.get(link, f"{link} failing")


_LINK_LABELS = {
    "kubelet": "node NotReady",
    "operands disabled": "GPU Operator operands disabled",
    "device plugin disabled": "device plugin disabled",
    "device plugin": "device plugin down",
    "device-plugin": "device plugin down",
    "device plugin registration": "device plugin not registered",
    "node labelling": "node not labelled by NFD",
}


def _broken_link(facts: ClusterFacts, node: Node, *, labelled: bool) -> tuple[str, str, str, list[Evidence]]:
    """``(link, detail, fix, evidence)``: the first failing step of the enablement chain on ``node``."""
    name = node.metadata.name
    labels = node.metadata.labels
    evidence: list[Evidence] = []
    if facts.state.node_ready(name) is False:
        return (
            "kubelet",
            "the node is NotReady, so no device plugin can register with its kubelet",
            f"kubectl describe node {name}  # fix the kubelet / node condition first",
            evidence,
        )
    if labels.get(DEPLOY_OPERANDS) == "false":
        evidence.append(
            _label_evidence(name, DEPLOY_OPERANDS, "false", "the GPU Operator deploys no operand here")
        )
        return (
            "operands disabled",
            f"{DEPLOY_OPERANDS}=false: the GPU Operator deploys nothing on this node",
            f"kubectl label node {name} {DEPLOY_OPERANDS}-  # let the operator manage the node",
            evidence,
        )
    components = facts.components_on(name)
    problems: list[tuple[Component, Pod]] = [(c, p) for c, p in components if pod_problem(p) is not None]
    for component, pod in problems:
        evidence.append(_pod_evidence(pod, f"{component.id} pod on the node: {_problem_text(pod)}"))
    by_id: dict[str, list[Pod]] = {}
    for component, pod in components:
        by_id.setdefault(component.id, []).append(pod)
    for step in CHAIN:
        for pod in by_id.get(step, ()):
            if pod_problem(pod) is None:
                continue
            later = [s for s in CHAIN[CHAIN.index(step) + 1 :]]
            waits = f"; {', '.join(later)} wait for it" if later else ""
            ns = pod.metadata.namespace or "default"
            return (
                step,
                f"pod {_pod_name(pod)} is {_problem_text(pod)}{waits}",
                f"kubectl logs -n {ns} {pod.metadata.name} --all-containers --previous  # {_fix_hint(step)}",
                evidence,
            )
    deploy_plugin = labels.get(inv.DEPLOY_DEVICE_PLUGIN)
    plugin_pods = by_id.get("device-plugin", [])
    if not plugin_pods:
        if deploy_plugin is not None:
            evidence.append(
                _label_evidence(
                    name,
                    inv.DEPLOY_DEVICE_PLUGIN,
                    deploy_plugin,
                    "gates the operator's device-plugin DaemonSet",
                )
            )
        if deploy_plugin == "false":
            return (
                "device plugin disabled",
                f"{inv.DEPLOY_DEVICE_PLUGIN}=false: the operator does not run the device plugin here",
                f"kubectl label node {name} {inv.DEPLOY_DEVICE_PLUGIN}=true --overwrite",
                evidence,
            )
        if deploy_plugin == PAUSED:
            state = labels.get(inv.MIG_CONFIG_STATE, "")
            return (
                "mig-manager",
                f"the MIG manager paused the device plugin for a MIG change ({inv.MIG_CONFIG_STATE}={state or 'unset'})",
                f"kubectl logs -n gpu-operator -l app=nvidia-mig-manager --tail=100  # on {name}; "
                "the plugin returns when the MIG change succeeds",
                evidence,
            )
        anywhere = [p for c, p in facts.component_pods() if c.id == "device-plugin"]
        if not anywhere:
            return (
                "device plugin",
                "no GPU device plugin runs anywhere in the cluster",
                "install the NVIDIA GPU Operator (helm install gpu-operator nvidia/gpu-operator) or the "
                "NVIDIA device plugin DaemonSet",
                evidence,
            )
        if (
            labelled
            and GPU_PRESENT not in labels
            and any(c.id == "gpu-operator" for c, _ in facts.component_pods())
        ):
            return (
                "node labelling",
                f"the GPU Operator has not labelled the node ({GPU_PRESENT} missing): "
                "Node Feature Discovery did not report the NVIDIA PCI device",
                "kubectl get pods -n gpu-operator -o wide | grep node-feature-discovery  # the NFD worker "
                f"must run on {name}",
                evidence,
            )
        taints = ", ".join(
            f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in node.spec.taints
        )
        return (
            "device plugin",
            f"no device-plugin pod runs on this node although {len(anywhere)} run elsewhere"
            + (f" (node taints: {taints})" if taints else ""),
            "compare the device-plugin DaemonSet's nodeSelector and tolerations with this node's labels "
            f"and taints: kubectl get ds -A | grep device-plugin; kubectl describe node {name}",
            evidence,
        )
    pod = plugin_pods[0]
    evidence.append(
        _pod_evidence(pod, "device plugin pod is up, yet nothing is registered", status="Running")
    )
    ns = pod.metadata.namespace or "default"
    if labels.get(inv.MIG_CONFIG_STATE) == "failed":
        # A failed MIG change leaves GPUs MIG-enabled with no (or not all) MIG devices. The plugin
        # serves whole GPUs only when MIG is disabled on them and MIG resources only for existing
        # MIG devices (reference/nvidia-gpu-stack.md §1.2), so it runs and registers nothing.
        config = labels.get(inv.MIG_CONFIG, "")
        evidence.append(
            _label_evidence(
                name,
                inv.MIG_CONFIG_STATE,
                "failed",
                f"the MIG manager could not apply {inv.MIG_CONFIG}={config or 'unset'}",
            )
        )
        return (
            "mig-manager",
            f"the MIG manager failed to apply {inv.MIG_CONFIG}={config!r} ({inv.MIG_CONFIG_STATE}=failed): "
            f"device-plugin pod {_pod_name(pod)} runs but finds no GPU with MIG disabled and no MIG device "
            "to serve",
            f"kubectl logs -n {ns} -l app=nvidia-mig-manager --tail=100  # on {name}; then relabel the node "
            f"with an entry of the mig-parted config: kubectl label node {name} {inv.MIG_CONFIG}=<entry> "
            "--overwrite",
            evidence,
        )
    return (
        "device plugin registration",
        f"device-plugin pod {_pod_name(pod)} runs but the kubelet lists no GPU: it found no device or "
        "could not register (driver not loaded on the host, kubelet restarted since)",
        f"kubectl logs -n {ns} {pod.metadata.name}  # then restart it: kubectl delete pod -n {ns} {pod.metadata.name}",
        evidence,
    )


def _fix_hint(step: str) -> str:
    return {
        "driver": "a host with a pre-installed driver needs ClusterPolicy spec.driver.enabled: false",
        "container-toolkit": "k3s/RKE2 need toolkit.env CONTAINERD_CONFIG and CONTAINERD_SOCKET",
        "operator-validator": "the validator waits for the driver and toolkit; its init container names the one failing",
        "device-plugin": "check the driver on the host and the nvidia.com/device-plugin.config entry",
        "mig-manager": "see why mig-parted could not apply the nvidia.com/mig.config layout",
        "gpu-feature-discovery": "GFD needs the driver (NVML) and the container toolkit",
        "dcgm": "DCGM needs the driver; the exporter needs DCGM",
    }.get(step, "the previous container's log says why it exited")


# -- gpu-unhealthy-devices ----------------------------------------------------------------------


@cluster_rule(
    id="gpu-unhealthy-devices",
    severity="warning",
    summary="allocatable GPUs < capacity: devices marked unhealthy (Xid errors)",
    docs="""
## What it catches

A node whose `status.allocatable` has fewer devices of a GPU resource than `status.capacity`.

## Why it hurts

The kubelet's device manager counts every device the plugin registered in capacity and only
the healthy ones in allocatable (kubernetes/kubernetes `pkg/kubelet/cm/devicemanager/manager.go`,
`GetCapacity`). The NVIDIA device plugin marks a GPU unhealthy on critical Xid errors (double-bit
ECC, fallen off the bus ...). The GPU is paid for but unusable, and the node can no longer host
a job that needs all of its GPUs, so 8-GPU jobs stay Pending.

## How to fix

Find the GPU in the device plugin's log (`unhealthy`, `Xid`) and with `nvidia-smi -q` on the
node; drain the node (`kubectl drain NODE --ignore-daemonsets`), reset the GPU (`nvidia-smi -r`)
or replace the node, then restart the device plugin pod so it re-registers the device.

## Bad

```yaml
# kubectl get node node-a100-3 -o yaml
status:
  capacity:    {nvidia.com/gpu: "8"}
  allocatable: {nvidia.com/gpu: "7"}   # one device reported unhealthy by the plugin
```

## Good

```yaml
status:
  capacity:    {nvidia.com/gpu: "8"}
  allocatable: {nvidia.com/gpu: "8"}
```

Check it with:

```sh
kubectl get nodes -o custom-columns='NODE:.metadata.name,CAP:.status.capacity.nvidia\\.com/gpu,ALLOC:.status.allocatable.nvidia\\.com/gpu'
kubectl logs -n gpu-operator DEVICE_PLUGIN_POD | grep -i -e xid -e unhealthy
```

## References

- kubernetes/kubernetes `pkg/kubelet/cm/devicemanager/manager.go`
- NVIDIA/k8s-device-plugin health checks (`internal/rm/health.go`)
""",
)
def gpu_unhealthy_devices(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for node_inv, node, _flags in _flagged_nodes(facts, {inv.FLAG_UNHEALTHY}):
        name = node_inv.name
        for resource, use in sorted(node_inv.resources.items()):
            if use.allocatable >= use.capacity:
                continue
            bad = use.capacity - use.allocatable
            evidence = [
                Evidence(
                    "resource",
                    node_ref(name),
                    f"status.capacity[{resource}]",
                    use.capacity,
                    "devices the plugin registered",
                ),
                Evidence(
                    "resource",
                    node_ref(name),
                    f"status.allocatable[{resource}]",
                    use.allocatable,
                    "healthy devices the scheduler may hand out",
                ),
            ]
            if use.allocated:
                evidence.append(
                    Evidence(
                        "resource",
                        node_ref(name),
                        f"allocated[{resource}]",
                        use.allocated,
                        "held by pods on the node",
                    )
                )
            plugin = next((p for c, p in facts.components_on(name) if c.id == "device-plugin"), None)
            if plugin is not None:
                logs = f"kubectl logs -n {plugin.metadata.namespace} {plugin.metadata.name} | grep -i -e xid -e unhealthy"
                evidence.append(_pod_evidence(plugin, "its log names the unhealthy device"))
            else:
                logs = f"nvidia-smi -q -d ECC,PAGE_RETIREMENT on {name}"
            model = f" {node_inv.model}" if node_inv.model else ""
            message = (
                f"node {name}: {bad} of {use.capacity}{model} {resource} unhealthy (allocatable "
                f"{use.allocatable} < capacity {use.capacity}); the node can no longer host "
                f"{_article(use.capacity)} {use.capacity}-device pod"
            )
            fix = (
                f"{logs}; then kubectl drain {name} --ignore-daemonsets, reset (nvidia-smi -r) or replace the "
                "GPU, and restart the device plugin pod to re-register it"
            )
            yield _finding(
                ctx, facts.manifest(node), ("status", "allocatable", resource), message, fix, evidence
            )


# -- gpu-operator-pods-failing ------------------------------------------------------------------


@cluster_rule(
    id="gpu-operator-pods-failing",
    severity="error",
    summary="GPU Operator / device plugin / driver pods not Running or restarting",
    docs="""
## What it catches

Pods of the GPU stack (GPU Operator and its operands: driver, container toolkit, operator
validator, device plugin, GPU Feature Discovery, DCGM / DCGM exporter, MIG manager; or a
stand-alone NVIDIA device plugin) that are Failed, cannot be scheduled, wait with an error
(`CrashLoopBackOff`, `ImagePullBackOff`, `CreateContainerConfigError`, an init container in
error), or keep restarting (5 restarts or more). Completed validator pods are fine. One
finding per DaemonSet / Deployment, listing the nodes concerned.

## Why it hurts

Every operand is a link of the chain that makes GPUs schedulable (reference/nvidia-gpu-stack.md
§3.3): a failing driver or toolkit stalls everything after it (operands stuck in `Init`), a
failing device plugin withdraws the node's GPUs, a failing DCGM exporter blinds autoscaling and
idle detection.

## How to fix

`kubectl logs -n <namespace> <pod> --all-containers --previous`. Usual causes
(NVIDIA/gpu-operator issues): driver container on a host with a pre-installed driver
(`driver.enabled: false`), toolkit unable to reach containerd (k3s/RKE2 paths in
`toolkit.env`), an invalid device-plugin config entry, image pull failures behind a proxy.

## Bad

```yaml
# kubectl get pod -n gpu-operator nvidia-device-plugin-daemonset-474gw -o yaml
spec:
  nodeName: node-l40s-1
status:
  phase: Running
  containerStatuses:
  - name: nvidia-device-plugin-daemonset
    ready: false
    restartCount: 47
    lastState:
      terminated: {exitCode: 1, reason: Error}
    state:
      waiting: {reason: CrashLoopBackOff}
```

## Good

Every operand pod Running and ready with few restarts (validator pods `Completed`):

```yaml
status:
  phase: Running
  containerStatuses:
  - name: nvidia-device-plugin-daemonset
    ready: true
    restartCount: 0
    state:
      running: {startedAt: "2026-03-09T14:20:00Z"}
```

Check it with:

```sh
kubectl get pods -n gpu-operator -o wide
kubectl logs -n gpu-operator POD --all-containers --previous
```

## References

- NVIDIA GPU Operator troubleshooting guide
- NVIDIA/gpu-operator issues #327, #406, #456, #2646
""",
)
def gpu_operator_pods_failing(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    groups: dict[tuple[str, str], list[tuple[Component, Pod]]] = {}
    for component, pod in facts.component_pods():
        if pod_problem(pod) is not None:
            groups.setdefault((pod.metadata.namespace or "default", component.workload), []).append(
                (component, pod)
            )
    for (namespace, workload), members in sorted(
        groups.items(), key=lambda item: (item[1][0][0].position, item[0])
    ):
        component = members[0][0]
        pods = [pod for _, pod in members]
        owner = facts.find_object("DaemonSet", namespace, workload) or facts.find_object(
            "Deployment", namespace, workload
        )
        obj = owner or facts.manifest(pods[0])
        listed = "; ".join(
            f"{p.spec.node_name or p.metadata.name}: {_problem_text(p)}" for p in pods[:MAX_LISTED]
        )
        more = f"; and {len(pods) - MAX_LISTED} more" if len(pods) > MAX_LISTED else ""
        message = (
            f"{component.id} {workload} in {namespace}: {_plural(len(pods), 'pod')} failing ({listed}{more})"
        )
        first = pods[0]
        fix = (
            f"kubectl logs -n {namespace} {first.metadata.name} --all-containers --previous  "
            f"# {_fix_hint(component.id)}"
        )
        evidence = [
            _pod_evidence(p, f"on node {p.spec.node_name or '(none)'}: {_problem_text(p)}") for p in pods
        ]
        yield _finding(ctx, obj, ("status",) if owner is None else (), message, fix, evidence)


# -- mig-config-failed --------------------------------------------------------------------------


@cluster_rule(
    id="mig-config-failed",
    severity="error",
    summary="node label nvidia.com/mig.config.state is failed (or pending for long)",
    docs="""
## What it catches

- `nvidia.com/mig.config.state=failed`: the MIG manager could not apply the layout named by
  `nvidia.com/mig.config` (reference/nvidia-gpu-stack.md §3.3; NVIDIA/mig-parted
  `pkg/mig/reconfigure/reconfigure.go` sets `pending` → `rebooting` → `success` | `failed`);
- `pending` / `rebooting` while the node's MIG manager pod is missing or failing: the change
  can never finish (a warning while the MIG manager is healthy: the change is in progress);
- a GFD product label ending in `-MIG-INVALID`: under the `single` strategy every GPU must be
  MIG-enabled with one profile.

When the snapshot holds the MIG manager's mig-parted ConfigMap, the finding says whether the
requested entry exists in it.

## Why it hurts

During a MIG change the manager pauses the device plugin
(`nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change`), so the node advertises no GPUs;
a failed or stuck change leaves them unusable or in the wrong layout.

## How to fix

Read the MIG manager log on the node (`kubectl logs -n gpu-operator -l app=nvidia-mig-manager`).
Common causes: the entry is not in the mig-parted config, GPU processes still running (the
manager cannot reset a busy GPU), a reboot required on some GPUs. Then relabel the node with a
valid entry: `kubectl label node NODE nvidia.com/mig.config=all-1g.10gb --overwrite`.

## Bad

The node asks for an entry that the MIG manager's mig-parted ConfigMap does not define; the
MIG manager gives up and the GPUs offer no MIG device:

```yaml
# kubectl get node node-a100-mig-2 -o yaml
metadata:
  labels:
    nvidia.com/mig.strategy: mixed
    nvidia.com/mig.config: all-3g.20gb
    nvidia.com/mig.config.state: failed
status:
  allocatable: {nvidia.com/gpu: "0"}
---
# kubectl get configmap -n gpu-operator custom-mig-config -o yaml
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled: [...]
      a100-3g20-1g5: [...]      # no all-3g.20gb
```

## Good

The label names an entry of the config and the MIG manager reports success; the device plugin
advertises the MIG devices:

```yaml
metadata:
  labels:
    nvidia.com/mig.config: a100-3g20-1g5
    nvidia.com/mig.config.state: success
status:
  allocatable: {nvidia.com/mig-1g.5gb: "28", nvidia.com/mig-3g.20gb: "8"}
```

Check it with:

```sh
kubectl get nodes -L nvidia.com/mig.config,nvidia.com/mig.config.state
kubectl get clusterpolicy -o jsonpath='{.items[0].spec.migManager.config.name}'
kubectl logs -n gpu-operator -l app=nvidia-mig-manager --tail=100
```

## References

- NVIDIA/mig-parted `cmd/nvidia-mig-manager`, `pkg/mig/reconfigure/reconfigure.go`
- NVIDIA GPU Operator docs, "GPU Operator with MIG"
""",
)
def mig_config_failed(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    known: set[str] | None = None
    cm_name = ""
    configmap_checked = False
    for _node_inv, node, flags in _flagged_nodes(
        facts, {inv.FLAG_MIG_FAILED, inv.FLAG_MIG_PENDING, inv.FLAG_MIG_INVALID}
    ):
        if not configmap_checked:
            from gpuplane.diagnose.mig import known_configs, mig_parted_configmap

            cm = mig_parted_configmap(facts.state)
            if cm is not None:
                known = known_configs(cm)
                cm_name = f"{cm.namespace}/{cm.name}" if cm.namespace else cm.name
            configmap_checked = True
        yield from _mig_findings(ctx, facts, node, flags, known, cm_name)


def _mig_findings(
    ctx: LintContext, facts: ClusterFacts, node: Node, flags: set[str], known: set[str] | None, cm_name: str
) -> Iterator[ClusterFinding]:
    name = node.metadata.name
    labels = node.metadata.labels
    config = labels.get(inv.MIG_CONFIG, "")
    state = labels.get(inv.MIG_CONFIG_STATE, "")
    evidence = [
        _label_evidence(name, inv.MIG_CONFIG, config or None, "the mig-parted entry the node asks for")
    ]
    if state:
        evidence.append(_label_evidence(name, inv.MIG_CONFIG_STATE, state, "set by the MIG manager"))
    plugin_label = labels.get(inv.DEPLOY_DEVICE_PLUGIN)
    if plugin_label == PAUSED:
        evidence.append(
            _label_evidence(
                name,
                inv.DEPLOY_DEVICE_PLUGIN,
                PAUSED,
                "the device plugin is stopped until the change completes",
            )
        )
    managers = [p for c, p in facts.components_on(name) if c.id == "mig-manager"]
    manager_problem = next((p for p in managers if pod_problem(p) is not None), None)
    for pod in managers:
        evidence.append(_pod_evidence(pod, "MIG manager on the node"))
    logs = (
        f"kubectl logs -n {managers[0].metadata.namespace} {managers[0].metadata.name} --tail=200"
        if managers
        else "kubectl logs -n gpu-operator -l app=nvidia-mig-manager --tail=200"
    )
    missing_entry = ""
    if config and known is not None and config not in known:
        missing_entry = f"; entry {config!r} does not exist in the mig-parted config {cm_name}"
        evidence.append(
            Evidence(
                "object",
                ref(
                    "v1",
                    "ConfigMap",
                    cm_name.split("/")[0] if "/" in cm_name else None,
                    cm_name.split("/")[-1],
                ),
                "data[config.yaml].mig-configs",
                sorted(known),
                f"no entry named {config}",
            )
        )
    relabel = f"kubectl label node {name} {inv.MIG_CONFIG}=<entry of the mig-parted config> --overwrite"
    obj, state_label = facts.manifest(node), ("metadata", "labels", inv.MIG_CONFIG_STATE)
    if inv.FLAG_MIG_FAILED in flags:
        message = (
            f"node {name}: the MIG manager failed to apply {inv.MIG_CONFIG}={config!r} "
            f"({inv.MIG_CONFIG_STATE}=failed){missing_entry}; its GPUs keep the previous layout or none"
        )
        yield _finding(ctx, obj, state_label, message, f"{logs}  # then: {relabel}", evidence)
    elif inv.FLAG_MIG_PENDING in flags:
        if not managers or manager_problem is not None:
            why = (
                "no MIG manager pod runs on the node"
                if not managers
                else f"the MIG manager pod is {_problem_text(manager_problem)}"
                if manager_problem
                else ""
            )
            message = (
                f"node {name}: MIG change to {config!r} is stuck ({inv.MIG_CONFIG_STATE}={state}): {why}"
                f"{missing_entry}; the device plugin stays paused, the node advertises no GPUs"
            )
            yield _finding(
                ctx, obj, state_label, message, f"{logs}  # fix the MIG manager, or {relabel}", evidence
            )
        else:
            message = (
                f"node {name}: MIG change to {config!r} in progress ({inv.MIG_CONFIG_STATE}={state})"
                f"{missing_entry}; its GPUs are withheld until it succeeds"
            )
            yield _finding(
                ctx,
                obj,
                state_label,
                message,
                f"{logs}  # if the state does not reach success within minutes",
                evidence,
                severity="warning",
            )
    if inv.FLAG_MIG_INVALID in flags:
        product = labels.get(inv.GFD_PRODUCT, "")
        evidence_invalid = [
            _label_evidence(
                name, inv.GFD_PRODUCT, product, "GFD: the MIG layout does not fit the single strategy"
            )
        ]
        message = (
            f"node {name}: GPU Feature Discovery reports {product}: with MIG strategy single every GPU "
            "must be MIG-enabled with one and the same profile"
        )
        yield _finding(
            ctx,
            obj,
            ("metadata", "labels", inv.GFD_PRODUCT),
            message,
            f"{relabel}  # an all-<profile> entry, or switch the ClusterPolicy to mig.strategy: mixed",
            evidence_invalid,
        )


# -- gang-partially-running ---------------------------------------------------------------------


@cluster_rule(
    id="gang-partially-running",
    severity="error",
    summary="a gang (PodGroup / job) has some pods running and others Pending: GPUs held, job stalled",
    docs="""
## What it catches

Pods that must run together (a Volcano or coscheduling PodGroup, a Kueue pod group, the ranks
of a PyTorchJob / MPIJob / Volcano Job / JobSet / LeaderWorkerSet group / Indexed Job) of which
some are placed on nodes and others are Pending. For a PodGroup the gang counts as started once
`minMember` pods are placed.

## Why it hurts

kube-scheduler places one pod at a time (reference/scheduling.md §4.1): a distributed job can
get some ranks bound while the others wait. The bound ranks hold their GPUs and block in the
rendezvous (NCCL / torch.distributed init) until every rank is up, which may be never; two such
jobs can deadlock each other. Gang schedulers prevent this, but a gang that lost pods after it
started (evictions, node failures, restarts) ends up in the same state.

## How to fix

Release the GPUs held for nothing (delete the running pods or restart the job so it starts
whole), then make starts all-or-nothing: Volcano `minAvailable` equal to the ranks, a
coscheduling PodGroup `minMember`, or Kueue with `waitForPodsReady`. Free or add the capacity
the Pending ranks need (see their pending-gpu-pod findings).

## Bad

```yaml
# kubectl get podgroup -n team-nlp llm-finetune-<uid> -o yaml
spec:
  minMember: 4
status:
  running: 2
  conditions:
  - type: Unschedulable
    status: "True"
    message: "2/4 tasks in gang unschedulable: ..."
---
# kubectl get pods -n team-nlp -l volcano.sh/job-name=llm-finetune
# llm-finetune-worker-0   Running   node-a100-1   (holds 8 nvidia.com/gpu)
# llm-finetune-worker-1   Running   node-a100-2   (holds 8 nvidia.com/gpu)
# llm-finetune-worker-2   Pending
# llm-finetune-worker-3   Pending
```

## Good

All ranks placed together (or none bound while they wait):

```yaml
status:
  phase: Running
  running: 4
```

Check it with:

```sh
kubectl get podgroups -A
kubectl get pods -n NAMESPACE -l volcano.sh/job-name=JOB -o wide
```

## References

- reference/scheduling.md §4 (Volcano, coscheduling, Kueue)
- volcano-sh/volcano `pkg/scheduler/plugins/gang/gang.go`
""",
)
def gang_partially_running(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for gang in live_gangs(facts.state.pods):
        bound, waiting = gang.bound, gang.waiting
        if not bound or not waiting:
            continue
        if gang.min_member is None and gang.group_kind == "PodGroup":
            gang.min_member = _podgroup_min(facts, gang)
        if gang.min_member is not None and len(bound) >= gang.min_member:
            continue  # the gang started with its minimum; extra (elastic) pods may wait
        held: dict[str, int] = {}
        for pod in bound:
            for resource, amount in facts.gpu_requests(pod).items():
                held[resource] = held.get(resource, 0) + amount
        wanted = sum(sum(facts.gpu_requests(pod).values()) for pod in waiting)
        if not held and not wanted:
            continue
        yield _gang_finding(ctx, facts, gang, bound, waiting, held)


def _podgroup_min(facts: ClusterFacts, gang: LiveGang) -> int | None:
    pg = facts.find_object("PodGroup", gang.namespace, gang.name)
    value = pg.get("spec", "minMember") if pg is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gang_finding(
    ctx: LintContext,
    facts: ClusterFacts,
    gang: LiveGang,
    bound: list[Pod],
    waiting: list[Pod],
    held: dict[str, int],
) -> ClusterFinding:
    pg = facts.find_object("PodGroup", gang.namespace, gang.name) if gang.group_kind == "PodGroup" else None
    owner = None
    if pg is None:
        owner = facts.find_object(gang.group_kind, gang.namespace, gang.name)
        if owner is None:
            for controller in bound[0].metadata.owner_references:
                if controller.controller:
                    owner = facts.find_object(controller.kind, gang.namespace, controller.name)
    obj = pg or owner or facts.manifest(waiting[0])
    evidence: list[Evidence] = []
    if pg is not None:
        evidence.append(
            Evidence(
                "podgroup",
                pg.ref(),
                "spec.minMember",
                pg.get("spec", "minMember"),
                "pods that must be placed together",
            )
        )
        for condition in pg.get("status", "conditions", default=[]):
            if isinstance(condition, dict) and condition.get("status") == "True" and condition.get("message"):
                evidence.append(
                    Evidence(
                        "condition",
                        pg.ref(),
                        f"status.conditions[{condition.get('type')}]",
                        condition.get("message"),
                        str(condition.get("reason") or ""),
                    )
                )
    for pod in bound:
        evidence.append(
            Evidence(
                "pod",
                _pod_ref(pod),
                "spec.nodeName",
                pod.spec.node_name,
                f"{pod.status.phase}, holds {_requests_text(facts.gpu_requests(pod))}",
            )
        )
    for pod in waiting:
        evidence.append(
            Evidence(
                "pod",
                _pod_ref(pod),
                "status.conditions[PodScheduled]",
                pod_scheduled_message(pod) or "Pending",
                f"waits for {_requests_text(facts.gpu_requests(pod))}",
            )
        )
    minimum = f", minMember {gang.min_member}" if gang.min_member is not None else ""
    mechanism = (
        f" (gang scheduler: {gang.mechanism})"
        if gang.group_kind == "PodGroup" or gang.mechanism == "kueue"
        else " (no gang scheduler)"
    )
    message = (
        f"{gang.label}{mechanism}: {len(bound)} of {len(gang.pods)} pods placed and {len(waiting)} Pending"
        f"{minimum}; the placed pods hold {_requests_text(held)} while the job cannot start"
    )
    names = " ".join(p.metadata.name for p in bound[:MAX_LISTED]) + (
        " ..." if len(bound) > MAX_LISTED else ""
    )
    if gang.group_kind == "PodGroup":
        fix = (
            f"kubectl delete pod -n {gang.namespace} {names}  # release the held GPUs; the gang restarts whole "
            f"once {len(gang.pods)} pods fit (minMember must equal the ranks the job needs)"
        )
    else:
        fix = (
            f"kubectl delete pod -n {gang.namespace} {names}  # release the held GPUs; then schedule the job "
            "as a gang: Volcano (schedulerName: volcano + minAvailable), a coscheduling PodGroup, or a Kueue "
            "queue with waitForPodsReady"
        )
    return _finding(ctx, obj, (), message, fix, evidence)


def _requests_text(requests: dict[str, int]) -> str:
    if not requests:
        return "no GPUs"
    return ", ".join(f"{amount} {name}" for name, amount in sorted(requests.items()))


# -- gpu-fragmentation --------------------------------------------------------------------------


@cluster_rule(
    id="gpu-fragmentation",
    severity="warning",
    summary="free GPUs exist, but no node can host the pending pods' per-pod GPU count",
    docs="""
## What it catches

A Pending pod asks for N devices of a GPU resource on one node; the nodes it is allowed on
(Ready, not cordoned, taints tolerated, nodeSelector and required node affinity matched) have
N or more of that resource free in total, but no single node has N free.

## Why it hurts

A pod's devices come from one node. Spreading small GPU jobs over many nodes (the default
`LeastAllocated` scoring does exactly that) leaves 2 free GPUs here and 3 there: the cluster is
"half empty" while every 8-GPU job waits.

## How to fix

Bin-pack GPU workloads: a scheduler profile scoring `nvidia.com/gpu` with `MostAllocated` or
`RequestedToCapacityRatio` (NodeResourcesFit `scoringStrategy`). To start the waiting job now,
cordon and drain the node with the most free GPUs so its jobs move elsewhere, or split the job
into pods that fit the free blocks.

## Bad

A pod asks 8 GPUs on one node; the nodes it may use have 15 free in total, at most 4 on any one:

```yaml
# kubectl get pod -n team-vision vit-h-pretrain-86f9g -o yaml
spec:
  containers:
  - resources:
      limits: {nvidia.com/gpu: "8"}
status:
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
# free nvidia.com/gpu per node: node-h100-2 4, node-a100-4 3, node-l4-2 3, node-a100-3 2, ...
```

## Good

Small GPU jobs packed together (NodeResourcesFit `MostAllocated` on `nvidia.com/gpu`), so one
node keeps 8 free:

```yaml
# KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: nvidia.com/gpu, weight: 10}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
```

Check it with:

```sh
gpuplane inventory --cluster SNAPSHOT   # free GPUs per node
kubectl describe nodes | grep -A8 'Allocated resources'
```

## References

- kubernetes/kubernetes `pkg/scheduler/framework/plugins/noderesources/fit.go` (scoring strategies)
- reference/scheduling.md §3.3 (scoring)
""",
)
def gpu_fragmentation(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for pod in facts.pending_gpu_pods():
        for resource, want in sorted(facts.gpu_requests(pod).items()):
            frees = fragment_frees(facts, pod, resource)
            total = sum(frees.values())
            best = max(frees.values(), default=0)
            if not frees or total < want or best >= want:
                continue
            ranked = sorted(frees.items(), key=lambda item: (-item[1], item[0]))
            evidence = [Evidence("pod", _pod_ref(pod), f"requests[{resource}]", want, "needed on one node")]
            for node_name, free in ranked[:8]:
                evidence.append(
                    Evidence(
                        "node", node_ref(node_name), f"free[{resource}]", free, _node_model(facts, node_name)
                    )
                )
            listed = ", ".join(f"{n} {f}" for n, f in ranked[:4]) + (", ..." if len(ranked) > 4 else "")
            message = (
                f"pod {pod.key} needs {want} {resource} on one node: {total} are free on the "
                f"{_plural(len(frees), 'node')} it may use ({listed}), at most {best} on any one"
            )
            drain = ranked[0][0]
            fix = (
                f"bin-pack GPU jobs (NodeResourcesFit scoringStrategy MostAllocated on {resource}); to start "
                f"it now: kubectl cordon {drain} and move its GPU pods, or split it into pods of at most {best}"
            )
            yield _finding(ctx, facts.manifest(pod), ("spec", "containers"), message, fix, evidence)


def fragment_frees(facts: ClusterFacts, pod: Pod, resource: str) -> dict[str, int]:
    """Free ``resource`` per node the pod may use apart from that resource (only nodes with some free).

    The node set is the scheduler model's, as why-pending counts it: nodes whose only failing
    reason is ``Insufficient <resource>`` (a node that also lacks memory or cpu is no room).
    Without the model (or when it has no per-node verdicts for the pod), the nodes are Ready,
    uncordoned, with taints tolerated and required node affinity matched."""
    nodes = _only_short_nodes(facts, pod, resource)
    state = facts.state
    if nodes is not None:
        frees = {}
        for name in nodes:
            free = state.free(name).get(resource, 0)
            if free > 0:
                frees[name] = free
        return frees
    from gpuplane.k8s.selectors import pod_matches_required_node_affinity
    from gpuplane.k8s.tolerations import find_untolerated_taint

    frees: dict[str, int] = {}
    for node in state.gpu_nodes():
        name = node.metadata.name
        if node.spec.unschedulable or state.node_ready(name) is False:
            continue
        free = state.free(name).get(resource, 0)
        if free <= 0:
            continue
        if find_untolerated_taint(node.spec.taints, pod.spec.tolerations) is not None:
            continue
        if not pod_matches_required_node_affinity(pod, node):
            continue
        frees[name] = free
    return frees


def _article(number: int) -> str:
    """``a`` or ``an`` before a number, by how it is said: an 8, an 11, an 18, an 80, an 11000;
    a 1, a 100."""
    digits = str(abs(number))
    lead = digits[: len(digits) % 3 or 3]  # the group said first: "eleven" thousand, "eighty"
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"


def _only_short_nodes(facts: ClusterFacts, pod: Pod, resource: str) -> list[str] | None:
    """Nodes the scheduler model rejects for ``pod`` only for lack of ``resource``; None when
    the model is unavailable or did not filter nodes for this pod (gated, queued, ...)."""
    from gpuplane.scheduler.explain import only_short_of

    cache: dict[int, Any] = facts.__dict__.setdefault("_explained_pods", {})
    key = id(pod)
    if key not in cache:
        scheduler = facts.scheduler()
        expl = None
        if scheduler is not None:
            try:
                expl = scheduler.explain(pod)
            except Exception:  # the model failing on one pod keeps the fallback node set
                expl = None
        cache[key] = expl if expl is not None and expl.groups else None
    expl = cache[key]
    return None if expl is None else only_short_of(expl, resource)


def _node_model(facts: ClusterFacts, name: str) -> str:
    node_inv = facts.node_inventory(name)
    if node_inv is None:
        return ""
    parts = [node_inv.model or node_inv.product or "unknown model"]
    if node_inv.sharing is not None:
        parts.append(f"{node_inv.sharing.strategy} x{node_inv.sharing.replicas}")
    return ", ".join(parts)


# -- pending-gpu-pod ----------------------------------------------------------------------------


@cluster_rule(
    id="pending-gpu-pod",
    severity="error",
    summary="a GPU pod is Pending: the finding carries the scheduler-style explanation and the fix",
    docs="""
## What it catches

Every pod that asks for an accelerator and has no node. The finding carries what
`gpuplane why-pending` says about it: the FailedScheduling message kube-scheduler writes for
this cluster state (default profile, in the cluster's Kubernetes version wording), the per-node
reasons grouped, the causes in GPU terms and concrete fixes. The message the real scheduler last
wrote on the pod (`PodScheduled` condition) is kept as evidence beside it.

## Why it hurts

A Pending GPU pod is a job not running: training that does not progress, an inference replica
missing. The scheduler's own message counts nodes per reason but does not say which change fixes
it.

## How to fix

Apply the fix in the finding (a toleration, the resource name the nodes advertise, a node
selector that matches, capacity to free or add). See `gpuplane why-pending --pod NS/NAME` for
the full per-node table.

## Bad

```yaml
# kubectl get pod -n team-nlp qwen-sft-gb55k -o yaml
spec:
  containers:
  - resources:
      limits: {nvidia.com/gpu: "4"}
  # no toleration for the H100 nodes' taint nvidia.com/gpu=present:NoSchedule
status:
  phase: Pending
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
    message: "0/14 nodes are available: 12 Insufficient nvidia.com/gpu, 2 node(s) had untolerated
      taint {nvidia.com/gpu: present}. preemption: ..."
```

## Good

The pod tolerates the taint and lands on an H100 node with free GPUs:

```yaml
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}
  nodeName: node-h100-2
status:
  phase: Running
```

Check it with:

```sh
kubectl get pods -A --field-selector=status.phase=Pending
gpuplane why-pending --cluster SNAPSHOT --pod NAMESPACE/NAME
```

## References

- kubernetes/kubernetes `pkg/scheduler/framework/types.go` (`FitError`)
- reference/scheduling.md §1-§4
""",
)
def pending_gpu_pod(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    for pod in facts.pending_gpu_pods():
        expl = facts.explanation(pod)
        requests = facts.gpu_requests(pod)
        evidence = [Evidence("pod", _pod_ref(pod), "requests", requests, "accelerators asked for")]
        observed = expl.get("observed") or ""
        if observed:
            evidence.append(
                Evidence(
                    "condition",
                    _pod_ref(pod),
                    "status.conditions[PodScheduled]",
                    observed,
                    f"written by {pod.spec.scheduler_name or 'default-scheduler'}",
                )
            )
        for row in expl.get("table", [])[:6]:
            sample = ", ".join(row["sample"][:3]) + (", ..." if row["nodes"] > 3 else "")
            evidence.append(
                Evidence(
                    "scheduler",
                    _pod_ref(pod),
                    f"filter[{row['plugin']}]",
                    "; ".join(row["reasons"]),
                    f"{_plural(row['nodes'], 'node')}: {sample}",
                )
            )
        message = expl.get("message") or observed or "no scheduling message recorded"
        causes = expl.get("causes") or []
        summary = f"; {causes[0]}" if causes else ""
        text = f"pod {pod.key} asks for {_requests_text(requests)} and is Pending: {message.rstrip('.')}{summary}"
        fixes = expl.get("fixes") or []
        if len(fixes) == 1:
            fix = fixes[0]
        elif fixes:
            fix = "\n".join(f"{i}) {item}" for i, item in enumerate(fixes, 1))
        else:
            fix = (
                f"gpuplane why-pending --cluster {facts.state.source or 'SOURCE'} --pod {pod.key}  "
                "# per-node reasons"
            )
        yield _finding(ctx, facts.manifest(pod), ("spec",), text, fix, evidence, explanation=expl)
