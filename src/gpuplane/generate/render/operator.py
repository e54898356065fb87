"""NVIDIA GPU Operator: Helm values, the ClusterPolicy they produce, the operator namespace.

Values keys and defaults: NVIDIA/gpu-operator ``deployments/gpu-operator/values.yaml`` at
v26.7.0 (reference nvidia-gpu-stack.md §3.2); ClusterPolicy fields from
``api/nvidia/v1/clusterpolicy_types.go`` / the v26.7.0 CRD (§3.1). The ClusterPolicy is
written for review only: the chart creates it, and a second one would be marked ``ignored``.
"""

from __future__ import annotations

from typing import Any

from gpuplane.generate.components import component
from gpuplane.generate.render.base import Bundle, helm_release, meta

OPERATOR_NS = "gpu-operator"
OPERATOR = component("gpu-operator")
DEVICE_PLUGIN_CM = "gpuplane-device-plugin-config"
MIG_PARTED_CM = "gpuplane-mig-parted-config"
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"


def mig_strategy(bundle: Bundle) -> str:
    """``mixed`` as soon as one pool uses MIG: it advertises one resource per profile and
    leaves full GPUs as ``nvidia.com/gpu`` (device-plugin README, MIG strategies)."""
    return "mixed" if any(p.pool.sharing.mode == "mig" for p in bundle.plans) else "none"


def _tolerations(bundle: Bundle) -> list[dict[str, str]]:
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    default = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    seen[("nvidia.com/gpu", "Exists", "NoSchedule")] = default
    for plan in bundle.plans:
        for tol in plan.tolerations():
            # Exists (any value): operands must run on the node whatever value the taint carries.
            seen.setdefault(
                (tol["key"], "Exists", tol["effect"]),
                {"key": tol["key"], "operator": "Exists", "effect": tol["effect"]},
            )
    return [dict(sorted(t.items())) for _, t in sorted(seen.items())]


def toolkit_preinstalled(bundle: Bundle) -> bool:
    """EKS GPU nodes with a preinstalled driver run the EKS-optimized NVIDIA AMI (AL2023 or
    Bottlerocket ``aws-k8s-nvidia``), which also ships and configures the NVIDIA Container
    Toolkit (AWS EKS user guide, "Use EKS-optimized accelerated AMIs for GPU instances").
    A second toolkit from the operator would rewrite containerd's config: ``toolkit.enabled=false``
    (reference nvidia-gpu-stack.md §3.5, "Host toolkit already configured")."""
    bp = bundle.blueprint
    return bp.provider == "eks" and bp.driver.managed_by == "preinstalled"


def operator_values(bundle: Bundle) -> dict[str, Any]:
    bp = bundle.blueprint
    strategy = mig_strategy(bundle)
    has_mig = strategy != "none"
    driver: dict[str, Any] = {"enabled": bp.driver.managed_by == "operator"}
    if bp.driver.managed_by == "operator" and bp.driver.version:
        driver["version"] = bp.driver.version
    if bp.driver.managed_by == "operator" and any(p.fabric in ("infiniband", "roce") for p in bundle.plans):
        # GPUDirect RDMA: the driver container loads nvidia-peermem so ConnectX ports read and write GPU
        # memory directly (gpu-operator values.yaml driver.rdma.enabled; GPUDirect RDMA docs).
        driver["rdma"] = {"enabled": True}
    values: dict[str, Any] = {
        "cdi": {"enabled": True},
        "daemonsets": {"tolerations": _tolerations(bundle)},
        "dcgmExporter": {"enabled": True},
        "devicePlugin": {"config": {"create": False, "default": "default", "name": DEVICE_PLUGIN_CM}},
        "driver": driver,
        "gfd": {"enabled": True},
        "mig": {"strategy": strategy},
        "migManager": {"enabled": has_mig},
        "toolkit": {"enabled": not toolkit_preinstalled(bundle)},
    }
    if has_mig:
        values["migManager"]["config"] = {"create": False, "default": "all-disabled", "name": MIG_PARTED_CM}
    if bp.provider == "gke" and bp.driver.managed_by == "preinstalled":
        # GKE installs the driver under /home/kubernetes/bin/nvidia; the operator must look there.
        # With the operator's own driver (node pools with gpu-driver-version=disabled, Ubuntu) the
        # default host paths apply (NVIDIA GPU Operator with Google GKE, "NVIDIA Driver Manager").
        values["hostPaths"] = {"driverInstallDir": GKE_DRIVER_DIR}
        values["toolkit"]["installDir"] = GKE_DRIVER_DIR
    return values


def _clusterpolicy(values: dict[str, Any]) -> dict[str, Any]:
    """The ClusterPolicy the chart renders from these values (the fields gpuplane sets)."""
    spec: dict[str, Any] = {
        "cdi": {"enabled": values["cdi"]["enabled"]},
        "daemonsets": {"tolerations": values["daemonsets"]["tolerations"]},
        "dcgm": {"enabled": False},
        "dcgmExporter": {"enabled": True},
        "devicePlugin": {"enabled": True, "config": {"name": DEVICE_PLUGIN_CM, "default": "default"}},
        "driver": {"enabled": values["driver"]["enabled"]},
        "gfd": {"enabled": True},
        "mig": {"strategy": values["mig"]["strategy"]},
        "migManager": {"enabled": values["migManager"]["enabled"]},
        "nodeStatusExporter": {"enabled": False},
        "operator": {"runtimeClass": "nvidia"},
        "toolkit": {"enabled": values["toolkit"]["enabled"]},
    }
    if "version" in values["driver"]:
        spec["driver"]["version"] = values["driver"]["version"]
    if "rdma" in values["driver"]:
        spec["driver"]["rdma"] = dict(values["driver"]["rdma"])
    if values["migManager"].get("config"):
        spec["migManager"]["config"] = {"name": MIG_PARTED_CM, "default": "all-disabled"}
    if "hostPaths" in values:
        spec["hostPaths"] = dict(values["hostPaths"])
        spec["toolkit"]["installDir"] = values["toolkit"]["installDir"]
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": meta(
            "cluster-policy",
            annotations={"gpuplane.io/note": "created by the gpu-operator chart; for review, not applied"},
        ),
        "spec": spec,
    }


CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
# Operand pods per GPU node the quota must leave room for (driver, toolkit, device plugin, GFD,
# DCGM exporter, validator, MIG manager, NFD worker ...), plus the operator and NFD master.
OPERAND_PODS_PER_NODE = 12


def critical_pod_quota(bundle: Bundle) -> dict[str, Any]:
    """The ResourceQuota that lets GKE admit the operator's critical-priority pods in its namespace.

    GKE configures the ResourceQuota admission plugin with ``limitedResources`` covering the
    ``system-node-critical`` / ``system-cluster-critical`` PriorityClasses (Kubernetes docs,
    "Resource Quotas" > "Limit Priority Class consumption by default"): a pod using one of them is
    refused in any namespace without a quota whose ``scopeSelector`` matches that class. The
    operator's operands use ``system-node-critical``; NVIDIA's GKE guide creates this quota in the
    operator namespace before installing the chart (gpu-operator docs "NVIDIA GPU Operator with
    Google GKE", "Create a resource quota"; Google "Manage the GPU stack with the NVIDIA GPU
    Operator on GKE").
    """
    nodes = sum(p.pool.max_nodes for p in bundle.plans)
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": meta("gpu-operator-critical-pods", OPERATOR_NS),
        "spec": {
            "hard": {"pods": str(OPERAND_PODS_PER_NODE * nodes + 20)},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": list(CRITICAL_PRIORITY_CLASSES),
                    }
                ]
            },
        },
    }


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    bundle.add(
        "00-namespaces",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            # Operands are privileged DaemonSets: PSA must allow them (operator getting-started docs).
            "metadata": meta(OPERATOR_NS, labels={"pod-security.kubernetes.io/enforce": "privileged"}),
        },
    )
    if bp.provider == "gke":
        bundle.add("00-namespaces", critical_pod_quota(bundle))
        bundle.decide(
            "gpu-operator",
            "provider gke",
            "ResourceQuota gpu-operator-critical-pods (PriorityClass system-node-critical, system-cluster-critical)",
            "GKE admits pods of the critical PriorityClasses only in namespaces holding a quota scoped to "
            "them; without it the operator's DaemonSets create no pods outside kube-system",
            "Kubernetes docs 'Limit Priority Class consumption by default'; NVIDIA GPU Operator GKE guide",
        )
    values = operator_values(bundle)
    bundle.releases.append(
        helm_release(
            OPERATOR,
            OPERATOR_NS,
            values,
            order=10,
        )
    )
    bundle.stages["10-operators"].reference.append(_clusterpolicy(values))
    bundle.shared["operator_values"] = values
    if bp.driver.managed_by == "operator":
        bundle.decide(
            "gpu-operator",
            "driver.managed_by",
            "driver.enabled=true",
            "the operator's driver container installs and upgrades the driver on every GPU node",
            "nvidia-gpu-stack.md §3.2",
        )
    else:
        bundle.decide(
            "gpu-operator",
            "driver.managed_by",
            "driver.enabled=false",
            "the node image already carries the NVIDIA driver; a driver container would conflict with it "
            "(CrashLoopBackOff, gpu-operator #327)",
            "nvidia-gpu-stack.md §3.5",
        )
    if toolkit_preinstalled(bundle):
        bundle.decide(
            "gpu-operator",
            "toolkit.enabled",
            "false",
            "the EKS-optimized NVIDIA AMIs (AL2023, Bottlerocket) ship the driver and the NVIDIA Container "
            "Toolkit already configured for containerd",
            "nvidia-gpu-stack.md §3.5; AWS EKS accelerated AMIs",
        )
    bundle.decide(
        "gpu-operator",
        "mig.strategy",
        values["mig"]["strategy"],
        "mixed advertises one nvidia.com/mig-<profile> resource per profile and keeps full GPUs as "
        "nvidia.com/gpu, so MIG and non-MIG pools coexist"
        if values["mig"]["strategy"] == "mixed"
        else "no pool uses MIG",
        "nvidia-gpu-stack.md §1.2",
    )
    bundle.decide(
        "gpu-operator",
        "devicePlugin.config",
        f"{DEVICE_PLUGIN_CM}, default 'default'",
        "one ConfigMap holds every pool's sharing config; nodes pick theirs with the "
        "nvidia.com/device-plugin.config label and unlabelled nodes get the unshared default",
        "nvidia-gpu-stack.md §1.3",
    )
    if bp.provider == "gke" and bp.driver.managed_by == "preinstalled":
        bundle.decide(
            "gpu-operator",
            "provider gke",
            f"hostPaths.driverInstallDir={GKE_DRIVER_DIR}",
            "GKE installs the driver under /home/kubernetes/bin/nvidia; create the node pool with "
            "gke-no-default-nvidia-gpu-device-plugin=true so GKE's own device plugin does not also "
            "advertise nvidia.com/gpu (verify against NVIDIA's GKE guide for the operator version)",
            "NVIDIA GPU Operator docs, Google GKE",
        )
