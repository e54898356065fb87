#!/usr/bin/env python3
"""Build ``examples/clusters/demo.yaml``: a small, coherent GPU cluster snapshot.

Why a script and not a hand-written file: the snapshot must add up (no node
overcommitted, quota ``status.used`` equal to the pods' requests, the Pending
pods' ``PodScheduled`` messages equal to what kube-scheduler v1.31 writes for
this exact state). Writing it from one model and checking those invariants here
keeps the demo honest when it is edited.

The cluster (EKS 1.31, Karpenter node pools, NVIDIA GPU Operator):
- ``cpu-general``: 2 x m6i.8xlarge, system and controller pods;
- ``a100-40gb``: 4 x p4d.24xlarge (8 x A100-SXM4-40GB); one GPU of node-a100-3
  is unhealthy (allocatable 7 < capacity 8);
- ``a100-40gb-mig``: 2 x p4d.24xlarge in MIG ``mixed`` strategy: node-a100-mig-1 with the
  custom layout GPUs 0-3 as 2 x 3g.20gb, GPUs 4-7 as 7 x 1g.5gb; node-a100-mig-2 whose MIG
  change failed (``nvidia.com/mig.config=all-3g.20gb``, an entry missing from the cluster's
  mig-parted ConfigMap): its GPUs are MIG-enabled with no MIG device, so it advertises nothing;
- ``h100-80gb``: 2 x p5.48xlarge (8 x H100-80GB-HBM3), tainted
  ``nvidia.com/gpu=present:NoSchedule``;
- ``l4-shared``: 3 x g6.4xlarge (1 x L4) time-sliced with 4 replicas
  (``nvidia.com/gpu: 4``, product ``NVIDIA-L4-SHARED``);
- ``l40s``: 1 x g6e.12xlarge (4 x L40S) whose device plugin is in
  CrashLoopBackOff: GPU labels, no ``nvidia.com/gpu`` at all.

Pending pods: an 8-GPU job no node can host although 9 whole GPUs are free
(fragmentation); a 4-GPU job without a toleration for the H100 taint; a job
asking ``nvidia.com/gpu`` on the MIG pool; two workers of a Volcano gang whose
other two workers run.

Run: ``python examples/clusters/build_demo.py [OUT]`` (default: rewrites demo.yaml next to it).
Message formats: reference/scheduling.md §1.2 (FitError), §1.4 (preemption),
§1.6 (v1.31 taint wording ``node(s) had untolerated taint {key: value}``),
§4.2 (Volcano).
"""

from __future__ import annotations

import collections
import hashlib
import sys
from pathlib import Path
from typing import Any

import yaml

VERSION = "v1.31.4-eks-2d5f260"
T0 = "2026-03-02T08:00:00Z"
T1 = "2026-03-09T14:20:00Z"
T2 = "2026-03-10T09:41:17Z"
ZONES = ("us-east-1a", "us-east-1b")

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
# What the DaemonSet controller adds to every DaemonSet pod (pkg/controller/daemon/util/daemonset_util.go).
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]

PRIORITY = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000,
            "inference-critical": 1000000, "training-high": 100000}


def uid(seed: str) -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def suffix(seed: str, n: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


# -- nodes ---------------------------------------------------------------------------------------

NODES: list[dict[str, Any]] = []


def gfd_labels(product: str, count: int, memory: int, family: str, cc: tuple[int, int], machine: str,
               replicas: int = 1, sharing: str = "none") -> dict[str, str]:
    """GPU Feature Discovery + GPU Operator labels (reference/nvidia-gpu-stack.md §2, §3.3)."""
    return {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.deploy.container-toolkit": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.driver": "true",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
        "nvidia.com/gpu.deploy.operator-validator": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.compute.major": str(cc[0]),
        "nvidia.com/gpu.compute.minor": str(cc[1]),
        "nvidia.com/gpu.machine": machine,
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.replicas": str(replicas),
        "nvidia.com/gpu.sharing-strategy": sharing,
        "nvidia.com/cuda.driver-version.full": "550.127.05",
        "nvidia.com/cuda.driver-version.major": "550",
        "nvidia.com/cuda.driver-version.minor": "127",
        "nvidia.com/cuda.driver-version.revision": "05",
        "nvidia.com/cuda.runtime-version.full": "12.4",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "4",
        "nvidia.com/mig.capable": "true" if family in ("ampere", "hopper") else "false",
        "nvidia.com/mps.capable": "false",
    }


def add_node(name: str, pool: str, instance: str, zone: str, cpu: int, mem_gib: int, *,
             gpu_capacity: dict[str, int] | None = None, gpu_allocatable: dict[str, int] | None = None,
             labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
             ip: str) -> None:
    capacity = {"cpu": str(cpu), "ephemeral-storage": "314560492Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": f"{mem_gib * 1048576 - 543244}Ki", "pods": "110"}
    reserved_cpu = 60 + 10 + 10 + (cpu - 4) * 25 // 10 if cpu > 4 else 80
    allocatable = {**capacity, "cpu": f"{cpu * 1000 - reserved_cpu}m",
                   "ephemeral-storage": "288764809146", "memory": f"{mem_gib * 1048576 - 543244 - 3055616}Ki"}
    for res, n in (gpu_capacity or {}).items():
        capacity[res] = str(n)
    for res, n in (gpu_allocatable if gpu_allocatable is not None else gpu_capacity or {}).items():
        allocatable[res] = str(n)
    all_labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": instance, "beta.kubernetes.io/os": "linux",
        "karpenter.k8s.aws/instance-category": instance[0], "karpenter.sh/capacity-type": "on-demand",
        "karpenter.sh/initialized": "true", "karpenter.sh/nodepool": pool, "karpenter.sh/registered": "true",
        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance, "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone, "topology.ebs.csi.aws.com/zone": zone,
    }
    all_labels.update(labels or {})
    condition = lambda t, s, r, m: {"type": t, "status": s, "reason": r, "message": m,  # noqa: E731
                                    "lastHeartbeatTime": T2, "lastTransitionTime": T0}
    node: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": uid(name), "resourceVersion": str(4000 + len(NODES)),
                     "creationTimestamp": T0, "labels": dict(sorted(all_labels.items())),
                     "annotations": {"alpha.kubernetes.io/provided-node-ip": ip, "node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"providerID": f"aws:///{zone}/i-{hashlib.sha1(name.encode()).hexdigest()[:17]}"},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "InternalDNS", "address": name}],
            "allocatable": allocatable, "capacity": capacity,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "bootID": uid(name + "boot"),
                         "containerRuntimeVersion": "containerd://1.7.23", "kernelVersion": "6.1.119-129.201.amzn2023.x86_64",
                         "kubeProxyVersion": VERSION, "kubeletVersion": VERSION, "machineID": uid(name + "m").replace("-", ""),
                         "operatingSystem": "linux", "osImage": "Amazon Linux 2023.6.20241212",
                         "systemUUID": uid(name + "s")},
        },
    }
    if taints:
        node["spec"]["taints"] = taints
    NODES.append(node)


def build_nodes() -> None:
    for i in (1, 2):
        add_node(f"node-cpu-{i}", "cpu-general", "m6i.8xlarge", ZONES[i - 1], 32, 128, ip=f"10.0.1.{10 + i}")
    a100 = gfd_labels("NVIDIA-A100-SXM4-40GB", 8, 40960, "ampere", (8, 0), "p4d.24xlarge")
    for i in (1, 2, 3, 4):
        add_node(f"node-a100-{i}", "a100-40gb", "p4d.24xlarge", ZONES[0], 96, 1152,
                 gpu_capacity={"nvidia.com/gpu": 8},
                 gpu_allocatable={"nvidia.com/gpu": 7 if i == 3 else 8},
                 labels={**a100, "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success"},
                 ip=f"10.0.2.{10 + i}")
    mig_labels = {**a100, "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "a100-3g20-1g5",
                  "nvidia.com/mig.config.state": "success", "nvidia.com/device-plugin.config": "mig-mixed",
                  "nvidia.com/gpu.deploy.mig-manager": "true"}
    for profile, count, memory, sm, gi in (("3g.20gb", 8, 19968, 42, 4), ("1g.5gb", 28, 4864, 14, 1)):
        mig_labels.update({
            f"nvidia.com/mig-{profile}.count": str(count), f"nvidia.com/mig-{profile}.memory": str(memory),
            f"nvidia.com/mig-{profile}.multiprocessors": str(sm), f"nvidia.com/mig-{profile}.slices.gi": str(gi),
            f"nvidia.com/mig-{profile}.slices.ci": str(gi), f"nvidia.com/mig-{profile}.product": f"NVIDIA-A100-SXM4-40GB-MIG-{profile}",
            f"nvidia.com/mig-{profile}.replicas": "1", f"nvidia.com/mig-{profile}.sharing-strategy": "none",
        })
    mig_res = {"nvidia.com/gpu": 0, "nvidia.com/mig-1g.5gb": 28, "nvidia.com/mig-3g.20gb": 8}
    add_node("node-a100-mig-1", "a100-40gb-mig", "p4d.24xlarge", ZONES[0], 96, 1152, gpu_capacity=mig_res,
             labels=mig_labels, ip="10.0.2.21")
    # The failed MIG node. After a reboot (MIG mode survives reboots on Ampere GPUs, GPU instances
    # do not: NVIDIA MIG user guide, "Deployment Considerations") the MIG manager recreates the
    # instances from nvidia.com/mig.config. That label names all-3g.20gb, an entry of NVIDIA's
    # default-mig-parted-config but not of this cluster's custom-mig-config, so
    # `nvidia-mig-parted assert --valid-config` fails and the manager sets
    # nvidia.com/mig.config.state=failed. It fails before pausing any GPU client, and setState()
    # re-sets the operand nvidia.com/gpu.deploy.* labels to "true" anyway (NVIDIA/mig-parted
    # pkg/mig/reconfigure/reconfigure.go: Run, setState, maybeSetTrue), so every operand runs.
    # The mixed-strategy device plugin finds eight MIG-enabled GPUs and no MIG device: it serves
    # no resource (only GPUs with MIG disabled are nvidia.com/gpu under "mixed"), and GFD writes no
    # nvidia.com/mig-<profile>.* labels. The kubelet restored the device-plugin resources it had
    # checkpointed with no device, then reported them at 0 (pkg/kubelet/cm/devicemanager/manager.go
    # readCheckpoint + GetCapacity; pkg/kubelet/nodestatus/setters.go zeroes removed resources).
    failed_labels = {**a100, "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "all-3g.20gb",
                     "nvidia.com/mig.config.state": "failed", "nvidia.com/device-plugin.config": "mig-mixed",
                     "nvidia.com/gpu.deploy.mig-manager": "true"}
    add_node("node-a100-mig-2", "a100-40gb-mig", "p4d.24xlarge", ZONES[0], 96, 1152,
             gpu_capacity={res_name: 0 for res_name in mig_res}, labels=failed_labels, ip="10.0.2.22")
    h100 = gfd_labels("NVIDIA-H100-80GB-HBM3", 8, 81559, "hopper", (9, 0), "p5.48xlarge")
    for i in (1, 2):
        add_node(f"node-h100-{i}", "h100-80gb", "p5.48xlarge", ZONES[1], 192, 2048, gpu_capacity={"nvidia.com/gpu": 8},
                 labels={**h100, "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success"},
                 taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], ip=f"10.0.3.{10 + i}")
    l4 = gfd_labels("NVIDIA-L4-SHARED", 1, 23034, "ada-lovelace", (8, 9), "g6.4xlarge", replicas=4, sharing="time-slicing")
    for i in (1, 2, 3):
        add_node(f"node-l4-{i}", "l4-shared", "g6.4xlarge", ZONES[(i - 1) % 2], 16, 64, gpu_capacity={"nvidia.com/gpu": 4},
                 labels={**l4, "nvidia.com/device-plugin.config": "l4-time-sliced-4"}, ip=f"10.0.4.{10 + i}")
    l40s = gfd_labels("NVIDIA-L40S", 4, 46068, "ada-lovelace", (8, 9), "g6e.12xlarge")
    add_node("node-l40s-1", "l40s", "g6e.12xlarge", ZONES[1], 48, 384, labels=l40s, ip="10.0.5.11")


# -- pods ----------------------------------------------------------------------------------------

PODS: list[dict[str, Any]] = []


def res(cpu: str, memory: str, gpu: tuple[str, int] | None = None, mem_limit: bool = True) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": cpu, "memory": memory}
    limits: dict[str, str] = {"memory": memory} if mem_limit else {}
    if gpu:
        requests[gpu[0]] = str(gpu[1])
        limits[gpu[0]] = str(gpu[1])
    return {"requests": requests, "limits": limits} if limits else {"requests": requests}


def add_pod(namespace: str, name: str, node: str | None, containers: list[tuple[str, str, dict[str, Any]]], *,
            owner: tuple[str, str, str] | None = None, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, tolerations: list[dict[str, Any]] | None = None,
            node_selector: dict[str, str] | None = None, priority_class: str = "", scheduler: str = "default-scheduler",
            phase: str = "Running", waiting: dict[str, str] | None = None, restarts: int = 0,
            last_state: dict[str, Any] | None = None, pending_message: str | None = None,
            init_containers: list[tuple[str, str, dict[str, Any], str | None]] | None = None,
            volumes: list[dict[str, Any]] | None = None, mounts: dict[str, list[dict[str, Any]]] | None = None,
            extra_spec: dict[str, Any] | None = None, restart_policy: str = "Always") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid(namespace + name),
                            "resourceVersion": str(10000 + len(PODS)), "creationTimestamp": T1,
                            "labels": labels or {}}
    if owner:
        api, kind, oname = owner
        meta["generateName"] = name.rsplit("-", 1)[0] + "-" if kind in ("ReplicaSet", "DaemonSet", "Job") else None
        meta["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": oname, "uid": uid(namespace + kind + oname),
                                    "controller": True, "blockOwnerDeletion": True}]
    if annotations:
        meta["annotations"] = annotations
    meta = {k: v for k, v in meta.items() if v is not None}
    spec_containers = []
    for cname, image, resources in containers:
        c: dict[str, Any] = {"name": cname, "image": image, "imagePullPolicy": "IfNotPresent", "resources": resources,
                             "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
        if mounts and cname in mounts:
            c["volumeMounts"] = mounts[cname]
        spec_containers.append(c)
    spec: dict[str, Any] = {"containers": spec_containers, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
                            "preemptionPolicy": "PreemptLowerPriority", "priority": PRIORITY.get(priority_class, 0),
                            "restartPolicy": restart_policy, "schedulerName": scheduler, "securityContext": {},
                            "serviceAccount": "default", "serviceAccountName": "default",
                            "terminationGracePeriodSeconds": 30,
                            "tolerations": (tolerations or []) + (DEFAULT_TOLERATIONS if not owner or owner[1] != "DaemonSet" else [])}
    if init_containers:
        spec["initContainers"] = []
        for cname, image, resources, policy in init_containers:
            ic: dict[str, Any] = {"name": cname, "image": image, "imagePullPolicy": "IfNotPresent", "resources": resources,
                                  "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
            if policy:
                ic["restartPolicy"] = policy
            spec["initContainers"].append(ic)
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = node_selector
    if volumes:
        spec["volumes"] = volumes
    if extra_spec:
        spec.update(extra_spec)
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    pod["status"] = pod_status(pod, node, phase, waiting, restarts, last_state, pending_message)
    PODS.append(pod)
    return pod


def pod_status(pod: dict[str, Any], node: str | None, phase: str, waiting: dict[str, str] | None, restarts: int,
               last_state: dict[str, Any] | None, pending_message: str | None) -> dict[str, Any]:
    if node is None:
        return {"phase": "Pending", "qosClass": qos(pod),
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                "message": pending_message or "", "lastProbeTime": None, "lastTransitionTime": T2}]}
    host_ip = next(n["status"]["addresses"][0]["address"] for n in NODES if n["metadata"]["name"] == node)
    ready = phase == "Running" and waiting is None
    statuses = []
    for c in pod["spec"]["containers"]:
        if phase == "Succeeded":
            state: dict[str, Any] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": T1, "finishedAt": T2,
                                                    "containerID": "containerd://" + hashlib.sha256((pod["metadata"]["name"] + c["name"]).encode()).hexdigest()}}
        elif waiting is not None:
            state = {"waiting": dict(waiting)}
        else:
            state = {"running": {"startedAt": T1}}
        entry: dict[str, Any] = {"name": c["name"], "image": c["image"], "imageID": "", "lastState": last_state or {},
                                 "ready": ready, "restartCount": restarts, "started": ready, "state": state}
        if phase != "Pending" or waiting is None or waiting.get("reason") != "ContainerCreating":
            entry["containerID"] = "containerd://" + hashlib.sha256((pod["metadata"]["name"] + c["name"] + "id").encode()).hexdigest()
            entry["imageID"] = c["image"].split(":")[0] + "@sha256:" + hashlib.sha256(c["image"].encode()).hexdigest()
        statuses.append(entry)
    flag = "True" if ready else "False"
    started = "True" if phase != "Pending" else "False"
    conditions = [
        {"type": "PodReadyToStartContainers", "status": started, "lastProbeTime": None, "lastTransitionTime": T1},
        {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": T1},
        {"type": "Ready", "status": flag, "lastProbeTime": None, "lastTransitionTime": T1},
        {"type": "ContainersReady", "status": flag, "lastProbeTime": None, "lastTransitionTime": T1},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": T1},
    ]
    if not ready and phase != "Succeeded":
        reason = "ContainersNotReady"
        names = ", ".join(c["name"] for c in pod["spec"]["containers"])
        for cond in conditions[2:4]:
            cond["reason"] = reason
            cond["message"] = f"containers with unready status: [{names}]"
    if phase == "Succeeded":
        for cond in conditions[2:4]:
            cond["reason"] = "PodCompleted"
    status: dict[str, Any] = {"conditions": conditions, "containerStatuses": statuses, "hostIP": host_ip,
                              "hostIPs": [{"ip": host_ip}], "phase": phase, "qosClass": qos(pod), "startTime": T1}
    if phase != "Pending":
        pod_ip = f"10.0.{100 + len(PODS) // 200}.{len(PODS) % 200 + 20}"
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    return status


def qos(pod: dict[str, Any]) -> str:
    """QoS class as the API computes it (pkg/apis/core/helper/qos): simplified for cpu/memory."""
    containers = pod["spec"]["containers"]
    if all(not c["resources"].get("requests") and not c["resources"].get("limits") for c in containers):
        return "BestEffort"
    guaranteed = all(
        all(c["resources"].get("limits", {}).get(r) and c["resources"]["limits"].get(r) == c["resources"].get("requests", {}).get(r)
            for r in ("cpu", "memory"))
        for c in containers)
    return "Guaranteed" if guaranteed else "Burstable"


def daemon(namespace: str, ds: str, image: str, node: dict[str, Any], resources: dict[str, Any] | None = None,
           **kwargs: Any) -> dict[str, Any]:
    name = node["metadata"]["name"]
    return add_pod(namespace, f"{ds}-{suffix(ds + name)}", name, [(ds, image, resources or {})],
                   owner=("apps/v1", "DaemonSet", ds), labels={"app": ds, "controller-revision-hash": "6b7c9d8f5d"},
                   tolerations=[*DAEMON_TOLERATIONS, GPU_TOLERATION], priority_class="system-node-critical",
                   extra_spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                       "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}}}},
                   **kwargs)


def build_system_pods() -> None:
    for node in NODES:
        daemon("kube-system", "kube-proxy", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.31.3-minimal-eksbuild.2",
               node, {"requests": {"cpu": "100m"}})
        daemon("kube-system", "aws-node", "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.0-eksbuild.1",
               node, {"requests": {"cpu": "25m"}})
    operator = "nvcr.io/nvidia"
    for node in NODES:
        labels = node["metadata"]["labels"]
        if labels.get("nvidia.com/gpu.present") != "true":
            continue
        name = node["metadata"]["name"]
        daemon("gpu-operator", "nvidia-driver-daemonset", f"{operator}/driver:550.127.05-amzn2023", node)
        daemon("gpu-operator", "nvidia-container-toolkit-daemonset", f"{operator}/k8s/container-toolkit:v1.17.3-ubuntu20.04", node)
        daemon("gpu-operator", "gpu-feature-discovery", f"{operator}/k8s-device-plugin:v0.17.0", node)
        daemon("gpu-operator", "nvidia-dcgm-exporter", f"{operator}/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04", node)
        if name == "node-l40s-1":
            # The broken node: the plugin cannot talk to the driver and restarts forever, so
            # the kubelet never gets an nvidia.com/gpu registration from this node.
            daemon("gpu-operator", "nvidia-device-plugin-daemonset", f"{operator}/k8s-device-plugin:v0.17.0", node,
                   restarts=47, waiting={"reason": "CrashLoopBackOff",
                                         "message": "back-off 5m0s restarting failed container=nvidia-device-plugin-daemonset "
                                                    f"pod=nvidia-device-plugin-daemonset-{suffix('nvidia-device-plugin-daemonset' + name)}"
                                                    f"_gpu-operator({uid('gpu-operator' + 'nvidia-device-plugin-daemonset-' + suffix('nvidia-device-plugin-daemonset' + name))})"},
                   last_state={"terminated": {"exitCode": 1, "reason": "Error", "startedAt": T2, "finishedAt": T2,
                                              "containerID": "containerd://" + "d" * 64}})
        else:
            daemon("gpu-operator", "nvidia-device-plugin-daemonset", f"{operator}/k8s-device-plugin:v0.17.0", node)
        if labels.get("nvidia.com/gpu.deploy.mig-manager") == "true":
            daemon("gpu-operator", "nvidia-mig-manager", f"{operator}/cloud-native/k8s-mig-manager:v0.10.0-ubuntu20.04", node)
    # Controllers on the CPU pool.
    deployments = [
        ("kube-system", "coredns", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.2",
         res("100m", "70Mi"), "system-cluster-critical", 2),
        ("karpenter", "karpenter", "public.ecr.aws/karpenter/controller:1.1.1", res("1", "1Gi"), "system-cluster-critical", 2),
        ("gpu-operator", "gpu-operator", f"{operator}/gpu-operator:v24.9.1", res("200m", "350Mi"), "system-node-critical", 1),
        ("volcano-system", "volcano-scheduler", "docker.io/volcanosh/vc-scheduler:v1.10.0", res("500m", "512Mi"), "system-cluster-critical", 1),
        ("volcano-system", "volcano-controllers", "docker.io/volcanosh/vc-controller-manager:v1.10.0", res("200m", "256Mi"), "system-cluster-critical", 1),
        ("monitoring", "prometheus-server", "quay.io/prometheus/prometheus:v2.55.1", res("2", "8Gi"), "", 1),
    ]
    for index, (ns, name, image, resources, pc, replicas) in enumerate(deployments):
        rs = f"{name}-{suffix(name, 10)[:9]}"
        for r in range(replicas):
            node = f"node-cpu-{(index + r) % 2 + 1}"
            add_pod(ns, f"{rs}-{suffix(name + str(r))}", node, [(name, image, resources)],
                    owner=("apps/v1", "ReplicaSet", rs), labels={"app.kubernetes.io/name": name, "pod-template-hash": rs.rsplit("-", 1)[1]},
                    priority_class=pc, tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}] if pc else None)


def build_workloads() -> None:
    pytorch = "nvcr.io/nvidia/pytorch:24.08-py3"
    vllm = "vllm/vllm-openai:v0.6.4"
    shm = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]
    shm_mount = [{"name": "dshm", "mountPath": "/dev/shm"}]

    # Volcano gang: 4 workers x 8 GPUs, minAvailable 4; workers 0 and 1 run, 2 and 3 wait.
    pg = f"llm-finetune-{uid('team-nlp' + 'Job' + 'llm-finetune')}"
    for i in range(4):
        node = {0: "node-a100-1", 1: "node-a100-2"}.get(i)
        add_pod("team-nlp", f"llm-finetune-worker-{i}", node,
                [("worker", pytorch, res("8", "48Gi", ("nvidia.com/gpu", 8)))],
                owner=("batch.volcano.sh/v1alpha1", "Job", "llm-finetune"),
                labels={"volcano.sh/job-name": "llm-finetune", "volcano.sh/queue-name": "research",
                        "volcano.sh/task-spec": "worker", "volcano.sh/task-index": str(i)},
                annotations={"scheduling.k8s.io/group-name": pg, "volcano.sh/job-name": "llm-finetune",
                             "volcano.sh/queue-name": "research", "volcano.sh/task-spec": "worker",
                             "volcano.sh/task-index": str(i)},
                tolerations=[GPU_TOLERATION], scheduler="volcano", priority_class="training-high",
                volumes=shm, mounts={"worker": shm_mount}, restart_policy="OnFailure",
                pending_message=volcano_message(),
                extra_spec={"hostname": f"llm-finetune-worker-{i}", "subdomain": "llm-finetune"})

    # PyTorchJob resnet-ddp: master + 1 worker x 4 GPUs on A100 (no gang scheduling).
    for role, index, node in (("master", 0, "node-a100-3"), ("worker", 0, "node-a100-4")):
        add_pod("team-vision", f"resnet-ddp-{role}-{index}", node,
                [("pytorch", pytorch, res("16", "96Gi", ("nvidia.com/gpu", 4)))],
                owner=("kubeflow.org/v1", "PyTorchJob", "resnet-ddp"),
                labels={"training.kubeflow.org/job-name": "resnet-ddp", "training.kubeflow.org/operator-name": "pytorchjob-controller",
                        "training.kubeflow.org/replica-type": role, "training.kubeflow.org/replica-index": str(index)},
                node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
                volumes=shm, mounts={"pytorch": shm_mount}, restart_policy="OnFailure")
    # A Jupyter notebook with 1 GPU and a sidecar (init container with restartPolicy: Always).
    add_pod("team-vision", "notebook-alice-0", "node-a100-3",
            [("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2024-12-02", res("4", "32Gi", ("nvidia.com/gpu", 1)))],
            owner=("apps/v1", "StatefulSet", "notebook-alice"), labels={"app": "notebook", "notebook-name": "alice"},
            init_containers=[("fix-permissions", "busybox:1.36", res("1", "64Mi"), None),
                             ("oauth-proxy", "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1", res("100m", "128Mi"), "Always")])
    # A one-GPU evaluation job on node-a100-4.
    add_pod("team-nlp", f"bert-eval-{suffix('bert-eval')}", "node-a100-4",
            [("eval", pytorch, res("4", "16Gi", ("nvidia.com/gpu", 1)))],
            owner=("batch/v1", "Job", "bert-eval"), labels={"batch.kubernetes.io/job-name": "bert-eval"},
            restart_policy="Never")
    # Finished data-prep job on node-h100-2: Succeeded pods hold nothing.
    add_pod("team-research", f"data-prep-{suffix('data-prep')}", "node-h100-2",
            [("prep", pytorch, res("16", "64Gi", ("nvidia.com/gpu", 4)))],
            owner=("batch/v1", "Job", "data-prep"), labels={"batch.kubernetes.io/job-name": "data-prep"},
            tolerations=[GPU_TOLERATION], phase="Succeeded", restart_policy="Never")
    # Fine-tuning job on node-h100-2 (4 of 8 GPUs).
    add_pod("team-research", f"mixtral-sft-{suffix('mixtral-sft')}", "node-h100-2",
            [("trainer", pytorch, res("32", "256Gi", ("nvidia.com/gpu", 4)))],
            owner=("batch/v1", "Job", "mixtral-sft"), labels={"batch.kubernetes.io/job-name": "mixtral-sft"},
            tolerations=[GPU_TOLERATION], priority_class="training-high", volumes=shm, mounts={"trainer": shm_mount},
            restart_policy="Never")
    # vLLM serving Llama 70B: 2 replicas x 4 H100.
    rs = "llama-70b-vllm-7d9c6b5f4"
    for r in range(2):
        add_pod("inference", f"{rs}-{suffix('llama' + str(r))}", "node-h100-1",
                [("vllm", vllm, res("16", "128Gi", ("nvidia.com/gpu", 4)))],
                owner=("apps/v1", "ReplicaSet", rs), labels={"app": "llama-70b-vllm", "pod-template-hash": "7d9c6b5f4"},
                tolerations=[GPU_TOLERATION], priority_class="inference-critical", volumes=shm, mounts={"vllm": shm_mount})
    # Embedding API on the time-sliced L4 pool: 1 replica (of 4) per pod.
    rs = "embedding-api-5f7b8c9d6"
    placement = ("node-l4-1", "node-l4-1", "node-l4-2", "node-l4-3", "node-l4-3", "node-l4-3")
    for r, node in enumerate(placement):
        creating = r == 2  # bound to node-l4-2, still pulling its image: Pending but holding the GPU replica
        add_pod("inference", f"{rs}-{suffix('embed' + str(r))}", node,
                [("server", "ghcr.io/huggingface/text-embeddings-inference:1.5", res("2", "6Gi", ("nvidia.com/gpu", 1)))],
                owner=("apps/v1", "ReplicaSet", rs), labels={"app": "embedding-api", "pod-template-hash": "5f7b8c9d6"},
                priority_class="inference-critical", phase="Pending" if creating else "Running",
                waiting={"reason": "ContainerCreating"} if creating else None)
    # MIG consumers: 2 x 3g.20gb inference, 3 x 1g.5gb notebooks.
    rs = "reranker-6c8d7f9b5"
    for r in range(2):
        add_pod("team-nlp", f"{rs}-{suffix('rerank' + str(r))}", "node-a100-mig-1",
                [("server", "nvcr.io/nvidia/tritonserver:24.08-py3", res("4", "24Gi", ("nvidia.com/mig-3g.20gb", 1)))],
                owner=("apps/v1", "ReplicaSet", rs), labels={"app": "reranker", "pod-template-hash": "6c8d7f9b5"})
    for who in ("bob", "carol", "dave"):
        add_pod("team-speech", f"notebook-{who}-0", "node-a100-mig-1",
                [("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2024-12-02", res("2", "8Gi", ("nvidia.com/mig-1g.5gb", 1)))],
                owner=("apps/v1", "StatefulSet", f"notebook-{who}"), labels={"app": "notebook", "notebook-name": who})

    # Pending pods (messages filled in by compute_messages()).
    add_pod("team-vision", f"vit-h-pretrain-{suffix('vit')}", None,
            [("trainer", pytorch, res("4", "16Gi", ("nvidia.com/gpu", 8)))],
            owner=("batch/v1", "Job", "vit-h-pretrain"), labels={"batch.kubernetes.io/job-name": "vit-h-pretrain"},
            tolerations=[GPU_TOLERATION], volumes=shm, mounts={"trainer": shm_mount}, restart_policy="Never")
    add_pod("team-nlp", f"qwen-sft-{suffix('qwen')}", None,
            [("trainer", pytorch, res("4", "16Gi", ("nvidia.com/gpu", 4)))],
            owner=("batch/v1", "Job", "qwen-sft"), labels={"batch.kubernetes.io/job-name": "qwen-sft"},
            volumes=shm, mounts={"trainer": shm_mount}, restart_policy="Never")
    add_pod("team-speech", f"whisper-finetune-{suffix('whisper')}", None,
            [("trainer", pytorch, res("4", "16Gi", ("nvidia.com/gpu", 1)))],
            owner=("batch/v1", "Job", "whisper-finetune"), labels={"batch.kubernetes.io/job-name": "whisper-finetune"},
            node_selector={"karpenter.sh/nodepool": "a100-40gb-mig"}, tolerations=[GPU_TOLERATION], restart_policy="Never")


# -- scheduler messages (kube-scheduler v1.31, default profile) ------------------------------------

def quantity(value: str) -> int:
    """Just enough of resource.Quantity for this file: cpu in milli, memory in bytes, counts."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    for unit, factor in units.items():
        if value.endswith(unit):
            return int(value[:-2]) * factor
    if value.endswith("m"):
        return int(value[:-1])
    return int(value)


def cpu_milli(value: str) -> int:
    return int(value[:-1]) if value.endswith("m") else int(value) * 1000


def pod_requests(pod: dict[str, Any]) -> dict[str, int]:
    """resource.PodRequests (reference/scheduling.md §3.1) for the shapes used here."""
    total: collections.Counter[str] = collections.Counter()
    for c in pod["spec"]["containers"]:
        for name, value in c["resources"].get("requests", {}).items():
            total[name] += cpu_milli(value) if name == "cpu" else quantity(value)
    sidecars: collections.Counter[str] = collections.Counter()
    init_max: collections.Counter[str] = collections.Counter()
    for c in pod["spec"].get("initContainers", []):
        req = {n: cpu_milli(v) if n == "cpu" else quantity(v) for n, v in c["resources"].get("requests", {}).items()}
        if c.get("restartPolicy") == "Always":
            for n, v in req.items():
                total[n] += v
                sidecars[n] += v
            current = dict(sidecars)
        else:
            current = {n: v + sidecars.get(n, 0) for n, v in req.items()}
        for n, v in current.items():
            init_max[n] = max(init_max[n], v)
    for n, v in init_max.items():
        total[n] = max(total[n], v)
    return dict(total)


def node_free(node: dict[str, Any]) -> dict[str, int]:
    name = node["metadata"]["name"]
    alloc = {n: cpu_milli(v) if n == "cpu" else quantity(v) for n, v in node["status"]["allocatable"].items()}
    used: collections.Counter[str] = collections.Counter()
    count = 0
    for pod in PODS:
        if pod["spec"].get("nodeName") == name and pod["status"]["phase"] not in ("Succeeded", "Failed"):
            count += 1
            used.update(pod_requests(pod))
    free = {n: alloc.get(n, 0) - used.get(n, 0) for n in set(alloc) | set(used)}
    free["pods"] = alloc["pods"] - count
    return free


def tolerated(taint: dict[str, str], tolerations: list[dict[str, Any]]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_reasons(pod: dict[str, Any], node: dict[str, Any]) -> tuple[list[str], bool]:
    """First failing filter of the default profile: (reasons, resolvable-by-preemption)."""
    spec = pod["spec"]
    if node["spec"].get("unschedulable"):
        return ["node(s) were unschedulable"], False
    for taint in node["spec"].get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute") and not tolerated(taint, spec.get("tolerations", [])):
            return [f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"], False
    labels = node["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in spec.get("nodeSelector", {}).items()):
        return ["node(s) didn't match Pod's node affinity/selector"], False
    free = node_free(node)
    request = pod_requests(pod)
    reasons = []
    if free["pods"] < 1:
        reasons.append("Too many pods")
    for name in ("cpu", "memory", "ephemeral-storage"):
        if request.get(name, 0) > free.get(name, 0):
            reasons.append(f"Insufficient {name}")
    for name in sorted(request):
        if name not in ("cpu", "memory", "ephemeral-storage") and request[name] > free.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons, True


def fit_error(pod: dict[str, Any]) -> str:
    """FitError.Error() + DefaultPreemption's text for a pod with no lower-priority pods around."""
    hist: collections.Counter[str] = collections.Counter()
    preempt: collections.Counter[str] = collections.Counter()
    priority = pod["spec"]["priority"]
    for node in NODES:
        reasons, resolvable = node_reasons(pod, node)
        assert reasons, f"{pod['metadata']['name']} would fit on {node['metadata']['name']}"
        hist.update(reasons)
        if resolvable:
            victims = [p for p in PODS if p["spec"].get("nodeName") == node["metadata"]["name"]
                       and p["status"]["phase"] not in ("Succeeded", "Failed") and p["spec"]["priority"] < priority]
            assert not victims, "this builder only models clusters without preemption victims"
            preempt["No preemption victims found for incoming pod"] += 1
        else:
            preempt["Preemption is not helpful for scheduling"] += 1
    n = len(NODES)
    first = ", ".join(sorted(f"{c} {r}" for r, c in hist.items()))
    second = ", ".join(sorted(f"{c} {r}" for r, c in preempt.items()))
    return f"0/{n} nodes are available: {first}. preemption: 0/{n} nodes are available: {second}."


def compute_messages() -> None:
    for pod in PODS:
        if pod["spec"].get("nodeName") or pod["spec"]["schedulerName"] != "default-scheduler":
            continue
        pod["status"]["conditions"][0]["message"] = fit_error(pod)


def volcano_message() -> str:
    """What Volcano records on its waiting workers: every node fails the GPU check (reference/scheduling.md §4.2)."""
    n = len(NODES)
    return f"0/{n} nodes are unavailable: {n} Insufficient nvidia.com/gpu."


def check_volcano_message() -> None:
    """Volcano's resource check: no node has 8 whole GPUs free for the waiting workers."""
    for node in NODES:
        assert node_free(node).get("nvidia.com/gpu", 0) < 8, node["metadata"]["name"]


def check_nodes() -> None:
    for node in NODES:
        free = node_free(node)
        over = {n: v for n, v in free.items() if v < 0}
        assert not over, (node["metadata"]["name"], over)


# -- other objects -------------------------------------------------------------------------------


def obj(api: str, kind: str, name: str, namespace: str | None = None, **body: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid(f"{kind}{namespace}{name}"), "resourceVersion": "1200",
                            "creationTimestamp": T0}
    if namespace:
        meta["namespace"] = namespace
    meta.update(body.pop("metadata", {}))
    return {"apiVersion": api, "kind": kind, "metadata": meta, **body}


TIME_SLICING = """version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""
MIG_MIXED = """version: v1
flags:
  migStrategy: mixed
"""
MIG_PARTED = """version: v1
mig-configs:
  all-disabled:
  - devices: all
    mig-enabled: false
  a100-3g20-1g5:
  - device-filter: "0x20B010DE"
    devices: [0, 1, 2, 3]
    mig-enabled: true
    mig-devices:
      "3g.20gb": 2
  - device-filter: "0x20B010DE"
    devices: [4, 5, 6, 7]
    mig-enabled: true
    mig-devices:
      "1g.5gb": 7
"""


def quota_used(namespace: str, keys: list[str]) -> dict[str, str]:
    """status.used as the quota controller computes it: non-terminal pods' requests, `requests.` keys only
    for extended resources (reference/platform.md §1.1)."""
    total: collections.Counter[str] = collections.Counter()
    for pod in PODS:
        if pod["metadata"]["namespace"] == namespace and pod["status"]["phase"] not in ("Succeeded", "Failed"):
            total.update(pod_requests(pod))
    used = {}
    for key in keys:
        if key == "requests.nvidia.com/gpu":
            used[key] = str(total.get("nvidia.com/gpu", 0))
        elif key == "requests.cpu":
            used[key] = f"{total.get('cpu', 0)}m" if total.get("cpu", 0) % 1000 else str(total.get("cpu", 0) // 1000)
        elif key == "pods":
            used[key] = str(sum(1 for p in PODS if p["metadata"]["namespace"] == namespace
                                and p["status"]["phase"] not in ("Succeeded", "Failed")))
    return used


def other_objects() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ns in ("default", "kube-system", "gpu-operator", "karpenter", "volcano-system", "monitoring",
               "team-vision", "team-nlp", "team-speech", "team-research", "inference"):
        labels = {"kubernetes.io/metadata.name": ns}
        if ns == "gpu-operator":
            labels["pod-security.kubernetes.io/enforce"] = "privileged"
        items.append(obj("v1", "Namespace", ns, metadata={"labels": labels}, spec={"finalizers": ["kubernetes"]},
                         status={"phase": "Active"}))
    for name, value, desc in (
        ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
        ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
        ("inference-critical", 1000000, "Online inference serving; may preempt training."),
        ("training-high", 100000, "Production training jobs."),
    ):
        items.append(obj("scheduling.k8s.io/v1", "PriorityClass", name, value=value, globalDefault=False,
                         preemptionPolicy="PreemptLowerPriority", description=desc))
    items.append(obj("storage.k8s.io/v1", "StorageClass", "gp3",
                     metadata={"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                     provisioner="ebs.csi.aws.com", parameters={"type": "gp3", "fsType": "ext4"},
                     reclaimPolicy="Delete", volumeBindingMode="WaitForFirstConsumer", allowVolumeExpansion=True))
    items.append(obj("storage.k8s.io/v1", "StorageClass", "fsx-lustre", provisioner="fsx.csi.aws.com",
                     parameters={"deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": "250",
                                 "subnetId": "subnet-0a1b2c3d4e5f60718", "securityGroupIds": "sg-0123456789abcdef0"},
                     reclaimPolicy="Retain", volumeBindingMode="Immediate"))
    for ns, name, sc, mode, size in (("team-nlp", "llm-checkpoints", "fsx-lustre", "ReadWriteMany", "2400Gi"),
                                     ("team-vision", "imagenet", "fsx-lustre", "ReadWriteMany", "1200Gi"),
                                     ("team-speech", "notebook-home-bob", "gp3", "ReadWriteOnce", "100Gi")):
        pv = f"pvc-{uid(ns + name)}"
        items.append(obj("v1", "PersistentVolumeClaim", name, ns,
                         spec={"accessModes": [mode], "resources": {"requests": {"storage": size}},
                               "storageClassName": sc, "volumeMode": "Filesystem", "volumeName": pv},
                         status={"accessModes": [mode], "capacity": {"storage": size}, "phase": "Bound"}))
        items.append(obj("v1", "PersistentVolume", pv,
                         spec={"accessModes": [mode], "capacity": {"storage": size},
                               "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": name, "namespace": ns},
                               "csi": {"driver": "fsx.csi.aws.com" if sc == "fsx-lustre" else "ebs.csi.aws.com",
                                       "volumeHandle": f"fs-{hashlib.sha1(pv.encode()).hexdigest()[:17]}"},
                               "persistentVolumeReclaimPolicy": "Retain" if sc == "fsx-lustre" else "Delete",
                               "storageClassName": sc, "volumeMode": "Filesystem"},
                         status={"phase": "Bound"}))
    # Quotas: team-nlp is correct; team-vision uses limits.nvidia.com/gpu, which the quota
    # evaluator never charges (reference/platform.md §1.1) - note its status.used has no such key.
    nlp_hard = {"requests.nvidia.com/gpu": "40", "requests.cpu": "256", "pods": "50"}
    items.append(obj("v1", "ResourceQuota", "gpu-quota", "team-nlp", spec={"hard": nlp_hard},
                     status={"hard": nlp_hard, "used": quota_used("team-nlp", list(nlp_hard))}))
    vision_hard = {"limits.nvidia.com/gpu": "16", "requests.cpu": "128", "pods": "40"}
    items.append(obj("v1", "ResourceQuota", "gpu-quota", "team-vision", spec={"hard": vision_hard},
                     status={"hard": vision_hard, "used": quota_used("team-vision", ["requests.cpu", "pods"])}))
    items.append(obj("v1", "LimitRange", "defaults", "team-speech",
                     spec={"limits": [{"type": "Container", "default": {"cpu": "2", "memory": "8Gi"},
                                       "defaultRequest": {"cpu": "500m", "memory": "2Gi"}}]}))
    items.append(obj("policy/v1", "PodDisruptionBudget", "llama-70b-vllm", "inference",
                     spec={"maxUnavailable": 1, "selector": {"matchLabels": {"app": "llama-70b-vllm"}}},
                     status={"currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1, "expectedPods": 2,
                             "observedGeneration": 1}))
    items.append(obj("v1", "ConfigMap", "device-plugin-config", "gpu-operator",
                     data={"l4-time-sliced-4": TIME_SLICING, "mig-mixed": MIG_MIXED}))
    items.append(obj("v1", "ConfigMap", "custom-mig-config", "gpu-operator", data={"config.yaml": MIG_PARTED}))
    items.append(obj("nvidia.com/v1", "ClusterPolicy", "cluster-policy", spec={
        "operator": {"defaultRuntime": "containerd"},
        "daemonsets": {"priorityClassName": "system-node-critical",
                       "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
        "driver": {"enabled": True, "version": "550.127.05", "repository": "nvcr.io/nvidia", "image": "driver"},
        "toolkit": {"enabled": True, "version": "v1.17.3-ubuntu20.04"},
        "devicePlugin": {"enabled": True, "version": "v0.17.0",
                         "config": {"name": "device-plugin-config", "default": ""}},
        "dcgmExporter": {"enabled": True}, "gfd": {"enabled": True},
        "mig": {"strategy": "mixed"},
        "migManager": {"enabled": True, "config": {"name": "custom-mig-config", "default": "all-disabled"}},
        "validator": {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
    }, status={"namespace": "gpu-operator", "state": "notReady"}))
    items.append(obj("scheduling.volcano.sh/v1beta1", "Queue", "research",
                     spec={"weight": 1, "reclaimable": False, "capability": {"nvidia.com/gpu": "32"}},
                     status={"state": "Open", "running": 1}))
    pg = f"llm-finetune-{uid('team-nlp' + 'Job' + 'llm-finetune')}"
    summary = ("pod group is not ready, 2 Pending, 2 Running, 4 minAvailable; Pending: 2 Unschedulable. "
               f"Origin reason is worker: {volcano_message()}")
    items.append(obj("batch.volcano.sh/v1alpha1", "Job", "llm-finetune", "team-nlp", spec={
        "minAvailable": 4, "schedulerName": "volcano", "queue": "research", "priorityClassName": "training-high",
        "maxRetry": 3, "plugins": {"env": [], "svc": [], "pytorch": ["--master=worker", "--worker=worker", "--port=23456"]},
        "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
        "tasks": [{"name": "worker", "replicas": 4, "minAvailable": 4, "template": {
            "metadata": {"labels": {"app": "llm-finetune"}},
            "spec": {"restartPolicy": "OnFailure", "tolerations": [GPU_TOLERATION],
                     "containers": [{"name": "worker", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                     "command": ["torchrun", "--nproc-per-node=8", "finetune.py"],
                                     "resources": res("8", "48Gi", ("nvidia.com/gpu", 8)),
                                     "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
                     "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]}}}],
    }, status={"state": {"phase": "Pending"}, "minAvailable": 4, "pending": 2, "running": 2,
               "taskStatusCount": {"worker": {"phase": {"Pending": 2, "Running": 2}}}}))
    items.append(obj("scheduling.volcano.sh/v1beta1", "PodGroup", pg, "team-nlp",
                     metadata={"ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                                    "name": "llm-finetune", "uid": uid("team-nlp" + "Job" + "llm-finetune"),
                                                    "controller": True, "blockOwnerDeletion": True}]},
                     spec={"minMember": 4, "minTaskMember": {"worker": 4}, "queue": "research",
                           "priorityClassName": "training-high",
                           "minResources": {"count/pods": "4", "cpu": "32", "memory": "192Gi", "nvidia.com/gpu": "32",
                                            "pods": "4", "requests.cpu": "32", "requests.memory": "192Gi",
                                            "requests.nvidia.com/gpu": "32"}},
                     status={"phase": "Unknown", "running": 2, "conditions": [{
                         "type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                         "message": f"2/4 tasks in gang unschedulable: {summary}",
                         "lastTransitionTime": T2, "transitionID": uid("pg-transition")}]}))
    items.append(obj("kubeflow.org/v1", "PyTorchJob", "resnet-ddp", "team-vision", spec={
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
                "containers": [{"name": "pytorch", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                "resources": res("16", "96Gi", ("nvidia.com/gpu", 4)),
                                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]}}},
            "Worker": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
                "containers": [{"name": "pytorch", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                "resources": res("16", "96Gi", ("nvidia.com/gpu", 4)),
                                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]}}}}},
        status={"conditions": [{"type": "Running", "status": "True", "reason": "PyTorchJobRunning",
                                "message": "PyTorchJob team-vision/resnet-ddp is running."}],
                "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 1}}}))
    return items


class NoAliasDumper(yaml.SafeDumper):
    """kubectl never writes YAML anchors; shared Python objects must be written out in full."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(__file__).with_name("demo.yaml")
    NODES.clear()
    PODS.clear()
    build_nodes()
    build_system_pods()
    build_workloads()
    check_nodes()
    check_volcano_message()
    compute_messages()
    items = other_objects() + NODES + PODS
    document = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
    header = ("# A demo GPU cluster snapshot (kubectl get -o yaml List style), built by build_demo.py.\n"
              "# Try: gpuplane inventory --cluster examples/clusters/demo.yaml\n"
              "#      gpuplane why-pending --cluster examples/clusters/demo.yaml\n")
    text = yaml.dump(document, Dumper=NoAliasDumper, sort_keys=True, default_flow_style=False, width=1000)
    out.write_text(header + text)
    print(f"wrote {out} ({len(NODES)} nodes, {len(PODS)} pods, {len(items) - len(NODES) - len(PODS)} other objects)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
