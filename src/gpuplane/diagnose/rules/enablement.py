"""Is every GPU node usable: advertising its GPUs, healthy devices, GPU Operator pods running."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.diagnose import inventory as inv
from gpuplane.diagnose.components import CHAIN, Component, pod_problem
from gpuplane.diagnose.evidence import ClusterFinding, Evidence, node_ref
from gpuplane.diagnose.facts import ClusterFacts
from gpuplane.diagnose.rules._shared import (
    MAX_LISTED,
    PAUSED,
    _finding,
    _flagged_nodes,
    _label_evidence,
    _plural,
    _pod_evidence,
    _problem_text,
    cluster_rule,
)
from gpuplane.gpu.labels import DEPLOY_OPERANDS, GPU_PRESENT
from gpuplane.gpu.nodes import GPU_NODE_LABELS, is_gpu_node
from gpuplane.k8s.objects import Node, Pod

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


def _pod_name(pod: Pod) -> str:
    return pod.key


# -- gpu-node-not-advertising -------------------------------------------------------------------


@cluster_rule(
    id="gpu-node-not-advertising",
    severity="error",
    summary="node labelled or typed as a GPU node whose allocatable has no GPUs: driver / toolkit / device plugin failure",
)
def gpu_node_not_advertising(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    state = facts.state
    for node_inv, node, _flags in _flagged_nodes(facts, {inv.FLAG_NOT_ADVERTISING}):
        yield _not_advertising(ctx, facts, node, node_inv.gpus)
    # Typed as a GPU node (instance type) but carrying no GPU label or resource at all.
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

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
        anywhere = facts.component_pods_of("device-plugin")
        if not anywhere:
            return (
                "device plugin",
                "no GPU device plugin runs anywhere in the cluster",
                "install the NVIDIA GPU Operator (helm install gpu-operator nvidia/gpu-operator) or the "
                "NVIDIA device plugin DaemonSet",
                evidence,
            )
        if labelled and GPU_PRESENT not in labels and facts.component_pods_of("gpu-operator"):
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


def _article(number: int) -> str:
    """``a`` or ``an`` before a number, by how it is said: an 8, an 11, an 18, an 80, an 11000;
    a 1, a 100."""
    digits = str(abs(number))
    lead = digits[: len(digits) % 3 or 3]  # the group said first: "eleven" thousand, "eighty"
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
