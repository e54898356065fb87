#!/usr/bin/env python3
"""Synthetic GPU cluster snapshots for benchmarks (kubectl ``get -o json|yaml`` List style).

Why synthetic: benchmarks need 5,000-node / 150,000-pod clusters that look like
real ``kubectl get nodes,pods -A -o json`` dumps (labels, taints, images,
probes, full status), are identical for a given seed, and are quick to write.

What it produces, shaped like ``kubectl get nodes,pods,... -A -o json`` (about 10 KB a node and
6.5 KB a running pod, as real dumps are: the scheduling fields are a third of the bytes):
- nodes in pools: a CPU pool and GPU pools (g4dn T4 x4, g6 L4 x1, some time-sliced with 4
  replicas, p4d A100-40GB x8, p5 H100-80GB x8 tainted ``nvidia.com/gpu=present:NoSchedule``,
  p5en H200 x8 tainted and MIG-partitioned by the MIG manager in mixed strategy) with GPU
  Feature Discovery labels (reference/nvidia-gpu-stack.md §2), capacity and allocatable, four
  conditions, 10-30 images, pod CIDRs and the managedFields of kubelet, Karpenter, NFD and
  the controller manager;
- pods bound to nodes without overcommitting any resource: 1-2 containers with
  requests/limits, probes (not for Jobs), env, the service-account projected volume,
  ownerReferences, tolerations, status conditions and containerStatuses, managedFields
  (controller manager's spec without what admission added, kubelet's status); some with node
  affinity, zone/hostname topology spread (DoNotSchedule and ScheduleAnyway), preferred pod
  anti-affinity; StatefulSet pods mount a PVC bound in their node's zone; a few Succeeded/Failed;
- ``--pending N`` unscheduled pods drawn from PENDING_MIX at its shares (plain GPU asks,
  product selectors, untolerated taints, MIG asks, oversize asks, unknown products and MIG
  profiles, CPU-only, zone affinity, a missing PVC, time-sliced GPUs), each with, at their
  shares, topology spread (SPREADS), required/preferred pod (anti-)affinity, a PVC (bound or
  WaitForFirstConsumer) and a PriorityClass; ``PodScheduled=False/Unschedulable``;
  ``--pending-replicas K`` makes each Pending workload K pods identical but for their identity
  (name, uid, resourceVersion, creation time: the replicas of one Job), default 1;
- Namespaces, PriorityClasses, ResourceQuotas, a StorageClass, the PVCs and their PVs.

Usage::

    python bench/gen_cluster.py --nodes 5000 --pods 150000 --pending 200 -o bench/out/cluster.json
    python bench/gen_cluster.py --nodes 20 --pods 300 --format yaml -o small.yaml

JSON items are encoded one by one with msgspec and streamed to the file, so
memory stays flat whatever the size.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

BASE_TIME = 1_767_225_600  # 2026-01-01T00:00:00Z, fixed so output depends only on the seed
KUBELET_VERSION = "v1.31.4-eks-2d5f260"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
TEAMS = (
    "team-vision",
    "team-nlp",
    "team-speech",
    "team-recsys",
    "team-research",
    "ml-platform",
    "inference",
    "data-eng",
    "batch",
    "notebooks",
)
SYSTEM_NS = ("kube-system", "gpu-operator", "monitoring", "karpenter")


def ts(offset: int) -> str:
    """RFC 3339 timestamp ``offset`` seconds after BASE_TIME (no datetime: this runs 10^6 times)."""
    t = BASE_TIME + offset
    days, rem = divmod(t, 86400)
    hour, rem = divmod(rem, 3600)
    minute, second = divmod(rem, 60)
    # 2026-01-01 + days: good enough for < 365 days of offsets
    day_of_year = days - 20454  # days since 1970-01-01 to 2026-01-01
    month_days = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    month = 0
    while month < 11 and day_of_year >= month_days[month]:
        day_of_year -= month_days[month]
        month += 1
    return f"2026-{month + 1:02d}-{day_of_year + 1:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


def uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


# -- managed fields ------------------------------------------------------------------------------

# Lists the API server merges by key (their entries appear as ``k:{...}`` in FieldsV1); the
# other lists are atomic (``f:tolerations: {}``), as in k8s.io/api's patch strategies.
MERGE_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "env": ("name",),
    "ports": ("containerPort", "protocol"),
    "volumeMounts": ("mountPath",),
    "volumes": ("name",),
    "conditions": ("type",),
    "addresses": ("type",),
    "ownerReferences": ("uid",),
    "podIPs": ("ip",),
    "hostIPs": ("ip",),
}
_ENCODE = msgspec.json.Encoder().encode


def fields_v1(value: dict[str, Any]) -> dict[str, Any]:
    """The FieldsV1 set of a manager that wrote every field of ``value``
    (k8s.io/apimachinery ``pkg/apis/meta/v1`` ManagedFieldsEntry, as ``kubectl get -o json``
    prints it since 1.18)."""
    out: dict[str, Any] = {}
    for key, child in value.items():
        if isinstance(child, dict):
            out[f"f:{key}"] = (
                {".": {}, **fields_v1(child)} if key in ("labels", "annotations") else fields_v1(child)
            )
        elif isinstance(child, list) and key in MERGE_KEYS and all(isinstance(c, dict) for c in child):
            entries: dict[str, Any] = {".": {}}
            for item in child:
                merge = {k: item[k] for k in MERGE_KEYS[key] if k in item}
                entries[f"k:{_ENCODE(merge).decode()}"] = {".": {}, **fields_v1(item)}
            out[f"f:{key}"] = entries
        else:
            out[f"f:{key}"] = {}
    return out


def managed(manager: str, when: str, fields: dict[str, Any], subresource: str = "") -> dict[str, Any]:
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": when,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(fields),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


# -- node pools ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Pool:
    """A node group: one instance type, one GPU model (or none)."""

    name: str
    instance_type: str
    weight: float
    cpu: int
    memory_gi: int
    gpus: int = 0
    product: str = ""
    gpu_memory_mib: int = 0
    family: str = ""
    compute: tuple[int, int] = (0, 0)
    taint: bool = False
    replicas: int = 1  # time-slicing replicas
    mig: dict[str, int] = field(default_factory=dict)  # mixed strategy: profile -> devices per node
    mig_memory: dict[str, int] = field(default_factory=dict)


POOLS = (
    Pool("cpu-general", "m6i.16xlarge", 0.40, 64, 256),
    Pool("t4", "g4dn.12xlarge", 0.10, 48, 192, 4, "Tesla-T4", 15360, "turing", (7, 5)),
    Pool("l4", "g6.xlarge", 0.10, 4, 16, 1, "NVIDIA-L4", 23034, "ada-lovelace", (8, 9)),
    Pool("l4-shared", "g6.2xlarge", 0.04, 8, 32, 1, "NVIDIA-L4", 23034, "ada-lovelace", (8, 9), replicas=4),
    Pool("a100-40gb", "p4d.24xlarge", 0.13, 96, 1152, 8, "NVIDIA-A100-SXM4-40GB", 40960, "ampere", (8, 0)),
    Pool(
        "h100-80gb",
        "p5.48xlarge",
        0.15,
        192,
        2048,
        8,
        "NVIDIA-H100-80GB-HBM3",
        81559,
        "hopper",
        (9, 0),
        taint=True,
    ),
    # H200s partitioned by the MIG manager (mixed strategy): 4 GPUs as 2 x 3g.71gb, 4 as 7 x 1g.18gb
    Pool(
        "h200-mig",
        "p5en.48xlarge",
        0.08,
        192,
        2048,
        8,
        "NVIDIA-H200",
        143771,
        "hopper",
        (9, 0),
        taint=True,
        mig={"3g.71gb": 8, "1g.18gb": 28},
        mig_memory={"3g.71gb": 71168, "1g.18gb": 16384},
    ),
)


def pick_pool(rng: random.Random) -> Pool:
    return rng.choices(POOLS, weights=[p.weight for p in POOLS])[0]


def gpu_resources(pool: Pool) -> dict[str, int]:
    """Extended resources the device plugin advertises on a node of ``pool``."""
    if not pool.gpus:
        return {}
    if pool.mig:
        return {f"nvidia.com/mig-{profile}": count for profile, count in pool.mig.items()}
    return {"nvidia.com/gpu": pool.gpus * pool.replicas}


def node_labels(pool: Pool, name: str, zone: str) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": pool.instance_type,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": "us-east-1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "karpenter.k8s.aws/instance-category": pool.instance_type[0],
        "karpenter.k8s.aws/instance-cpu": str(pool.cpu),
        "karpenter.sh/capacity-type": "on-demand",
        "karpenter.sh/nodepool": pool.name,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": pool.instance_type,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
    }
    if not pool.gpus:
        return labels
    labels.update(
        {
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.deploy.device-plugin": "true",
            "nvidia.com/gpu.deploy.driver": "true",
            "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
            "nvidia.com/gpu.deploy.dcgm-exporter": "true",
            "nvidia.com/gpu.product": pool.product + ("-SHARED" if pool.replicas > 1 else ""),
            "nvidia.com/gpu.count": str(pool.gpus),
            "nvidia.com/gpu.memory": str(pool.gpu_memory_mib),
            "nvidia.com/gpu.family": pool.family,
            "nvidia.com/gpu.compute.major": str(pool.compute[0]),
            "nvidia.com/gpu.compute.minor": str(pool.compute[1]),
            "nvidia.com/gpu.machine": pool.instance_type.replace(".", "-"),
            "nvidia.com/gpu.mode": "compute",
            "nvidia.com/gpu.replicas": str(pool.replicas),
            "nvidia.com/gpu.sharing-strategy": "time-slicing" if pool.replicas > 1 else "none",
            "nvidia.com/cuda.driver-version.full": "550.127.05",
            "nvidia.com/cuda.driver-version.major": "550",
            "nvidia.com/cuda.driver-version.minor": "127",
            "nvidia.com/cuda.driver-version.revision": "05",
            "nvidia.com/cuda.runtime-version.full": "12.4",
            "nvidia.com/cuda.runtime-version.major": "12",
            "nvidia.com/cuda.runtime-version.minor": "4",
            "nvidia.com/mig.capable": "true"
            if pool.family in ("ampere", "hopper") and pool.gpus == 8
            else "false",
            "nvidia.com/mps.capable": "false",
            "karpenter.k8s.aws/instance-gpu-count": str(pool.gpus),
            "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        }
    )
    if pool.replicas > 1:
        labels["nvidia.com/device-plugin.config"] = "l4-time-sliced-4"
    if pool.mig:
        labels["nvidia.com/mig.strategy"] = "mixed"
        labels["nvidia.com/mig.config"] = "custom-3g71-1g18"
        labels["nvidia.com/mig.config.state"] = "success"
        for profile, count in pool.mig.items():
            labels[f"nvidia.com/mig-{profile}.count"] = str(count)
            labels[f"nvidia.com/mig-{profile}.memory"] = str(pool.mig_memory[profile])
            labels[f"nvidia.com/mig-{profile}.product"] = f"{pool.product}-MIG-{profile}"
            labels[f"nvidia.com/mig-{profile}.replicas"] = "1"
            labels[f"nvidia.com/mig-{profile}.sharing-strategy"] = "none"
    return labels


IMAGE_REPOS = (
    "nvcr.io/nvidia/pytorch",
    "nvcr.io/nvidia/tritonserver",
    "vllm/vllm-openai",
    "nvcr.io/nvidia/k8s-device-plugin",
    "nvcr.io/nvidia/driver",
    "nvcr.io/nvidia/k8s/dcgm-exporter",
    "registry.k8s.io/kube-proxy",
    "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni",
    "quay.io/prometheus/node-exporter",
    "docker.io/library/python",
    "ghcr.io/huggingface/text-generation-inference",
    "rayproject/ray-ml",
    "public.ecr.aws/eks-distro/kubernetes/pause",
    "docker.io/bitnami/redis",
    "gcr.io/kubeflow-images-public/training-operator",
)


def node_images(rng: random.Random) -> list[dict[str, Any]]:
    images = []
    for i in range(rng.randint(10, 30)):
        repo = IMAGE_REPOS[i % len(IMAGE_REPOS)]
        tag = f"{rng.randint(20, 25)}.{rng.randint(1, 12):02d}-py3"
        digest = hashlib.sha256(f"{repo}{tag}{i}".encode()).hexdigest()
        images.append(
            {
                "names": [f"{repo}@sha256:{digest}", f"{repo}:{tag}"],
                "sizeBytes": rng.randint(20, 20000) * 1_000_000,
            }
        )
    return images


def make_node(rng: random.Random, pool: Pool, index: int) -> dict[str, Any]:
    zone = ZONES[index % len(ZONES)]
    name = f"ip-10-{index // 65536 % 256}-{index // 256 % 256}-{index % 256}.ec2.internal"
    created = ts(index)
    capacity: dict[str, Any] = {
        "cpu": str(pool.cpu),
        "ephemeral-storage": "524275692Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{pool.memory_gi * 1048576 + 32112}Ki",
        "pods": "110" if pool.cpu < 64 else "250",
    }
    allocatable = dict(capacity)
    allocatable["cpu"] = f"{pool.cpu * 1000 - 90 - pool.cpu * 6}m"
    allocatable["memory"] = f"{pool.memory_gi * 1048576 - 2_000_000}Ki"
    allocatable["ephemeral-storage"] = "482098037991"
    for resource, count in gpu_resources(pool).items():
        capacity[resource] = str(count)
        allocatable[resource] = str(count)
    taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}] if pool.taint else []
    conditions = [
        {
            "type": t,
            "status": "False",
            "reason": r,
            "message": m,
            "lastHeartbeatTime": ts(90000),
            "lastTransitionTime": created,
        }
        for t, r, m in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": ts(90000),
            "lastTransitionTime": created,
        }
    )
    ip = f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid(rng),
            "resourceVersion": str(1000 + index),
            "creationTimestamp": created,
            "labels": node_labels(pool, name, zone),
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "karpenter.k8s.aws/ec2nodeclass-hash": "15535182697325354914",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"providerID": f"aws:///{zone}/i-{rng.getrandbits(68):017x}"},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": node_images(rng),
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uid(rng),
                "containerRuntimeVersion": "containerd://1.7.23",
                "kernelVersion": "5.10.228-219.884.amzn2.x86_64",
                "kubeProxyVersion": KUBELET_VERSION,
                "kubeletVersion": KUBELET_VERSION,
                "machineID": f"{rng.getrandbits(128):032x}",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2",
                "systemUUID": uid(rng),
            },
        },
    }
    if taints:
        node["spec"]["taints"] = taints
    labels = node["metadata"]["labels"]
    node["spec"]["podCIDR"] = f"100.{index // 256 % 256}.{index % 256}.0/24"
    node["spec"]["podCIDRs"] = [node["spec"]["podCIDR"]]
    node["metadata"]["managedFields"] = [
        managed(
            "kubelet",
            created,
            {
                "metadata": {
                    "annotations": {
                        k: v for k, v in node["metadata"]["annotations"].items() if "karpenter" not in k
                    },
                    "labels": {
                        k: v
                        for k, v in labels.items()
                        if not k.startswith(("nvidia.com/", "feature.", "karpenter"))
                    },
                }
            },
        ),
        managed(
            "karpenter",
            created,
            {
                "metadata": {"labels": {k: v for k, v in labels.items() if k.startswith("karpenter")}},
                "spec": {k: v for k, v in node["spec"].items() if k in ("providerID", "taints")},
            },
        ),
        managed("kube-controller-manager", created, {"spec": {"podCIDR": "", "podCIDRs": []}}),
        managed("kubelet", ts(90000), node["status"], "status"),
    ]
    gfd = {k: v for k, v in labels.items() if k.startswith(("nvidia.com/", "feature."))}
    if gfd:
        node["metadata"]["managedFields"].insert(
            2, managed("nfd-master", created, {"metadata": {"labels": gfd}})
        )
    return node


# -- pods ----------------------------------------------------------------------------------------

DEFAULT_TOLERATIONS = [
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
]
GPU_TOLERATION = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
HTTP_PROBE = {
    "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
    "initialDelaySeconds": 10,
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 3,
}
READY_PROBE = {
    "httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
    "periodSeconds": 5,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 3,
}
STARTUP_PROBE = {
    "httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"},
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 60,
}
SECURITY_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
}

CPU_IMAGES = (
    "docker.io/library/python:3.11-slim",
    "docker.io/bitnami/redis:7.2",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "ghcr.io/acme/feature-store:2.3.1",
    "ghcr.io/acme/etl-worker:1.14.0",
)
GPU_IMAGES = (
    "nvcr.io/nvidia/pytorch:24.08-py3",
    "vllm/vllm-openai:v0.6.3",
    "nvcr.io/nvidia/tritonserver:24.08-py3",
    "ghcr.io/huggingface/text-generation-inference:2.3",
    "rayproject/ray-ml:2.35.0-gpu",
)


@dataclass(slots=True)
class NodeRoom:
    """What is still free on a node while pods are packed onto it (never overcommit)."""

    name: str
    pool: Pool
    zone: str
    cpu_m: int
    mem_mi: int
    pods: int
    gpu: dict[str, int]


def container(
    rng: random.Random,
    name: str,
    image: str,
    cpu_m: int,
    mem_mi: int,
    gpu: tuple[str, int] | None,
    serving: bool,
    probes: bool = True,
) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}
    limits: dict[str, str] = {"memory": f"{mem_mi}Mi"}
    if gpu:
        requests[gpu[0]] = str(gpu[1])
        limits[gpu[0]] = str(gpu[1])
    c: dict[str, Any] = {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--workers={rng.randint(1, 8)}"],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
        ],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": requests, "limits": limits},
        "securityContext": SECURITY_CONTEXT,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            }
        ],
    }
    if probes:
        c["livenessProbe"] = HTTP_PROBE
        c["readinessProbe"] = READY_PROBE
    if serving:
        c["startupProbe"] = STARTUP_PROBE
    return c


def owner(rng: random.Random, kind: str, name: str) -> list[dict[str, Any]]:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return [
        {
            "apiVersion": api,
            "kind": kind,
            "name": name,
            "uid": uid(rng),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def running_status(
    containers: list[dict[str, Any]], node: NodeRoom | None, started: str, phase: str, ip: str
) -> dict[str, Any]:
    ready = "True" if phase == "Running" else "False"
    statuses = []
    for c in containers:
        if phase == "Running":
            state: dict[str, Any] = {"running": {"startedAt": started}}
        else:
            code = 0 if phase == "Succeeded" else 1
            state = {
                "terminated": {
                    "exitCode": code,
                    "reason": "Completed" if code == 0 else "Error",
                    "startedAt": started,
                    "finishedAt": started,
                    "containerID": "containerd://" + hashlib.md5(c["name"].encode()).hexdigest(),
                }
            }
        statuses.append(
            {
                "containerID": "containerd://" + hashlib.md5((c["name"] + started).encode()).hexdigest(),
                "image": c["image"],
                "imageID": c["image"] + "@sha256:" + "0" * 64,
                "lastState": {},
                "name": c["name"],
                "ready": phase == "Running",
                "restartCount": 0,
                "started": phase == "Running",
                "state": state,
            }
        )
    return {
        "conditions": [
            {
                "type": "PodReadyToStartContainers",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": started,
            },
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": started},
            {"type": "Ready", "status": ready, "lastProbeTime": None, "lastTransitionTime": started},
            {
                "type": "ContainersReady",
                "status": ready,
                "lastProbeTime": None,
                "lastTransitionTime": started,
            },
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": started},
        ],
        "containerStatuses": statuses,
        "hostIP": ip,
        "hostIPs": [{"ip": ip}],
        "phase": phase,
        "podIP": ip.replace("10.", "100.", 1),
        "podIPs": [{"ip": ip.replace("10.", "100.", 1)}],
        "qosClass": "Burstable",
        "startTime": started,
    }


def base_pod(
    rng: random.Random,
    index: int,
    namespace: str,
    app: str,
    kind: str,
    owner_name: str,
    containers: list[dict[str, Any]],
    tolerations: list[dict[str, Any]],
) -> dict[str, Any]:
    suffix = f"{rng.getrandbits(24):06x}"[:5]
    name = f"{owner_name}-{suffix}" if kind != "StatefulSet" else f"{owner_name}-{index % 16}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{owner_name}-",
            "namespace": namespace,
            "uid": uid(rng),
            "resourceVersion": str(200000 + index),
            "creationTimestamp": ts(3600 + index % 80000),
            "labels": {
                "app.kubernetes.io/name": app,
                "app.kubernetes.io/part-of": namespace,
                "pod-template-hash": f"{rng.getrandbits(40):010x}"[:10],
            },
            "annotations": {"kubectl.kubernetes.io/default-container": containers[0]["name"]},
            "ownerReferences": owner(rng, kind, owner_name),
        },
        "spec": {
            "containers": containers,
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Never" if kind == "Job" else "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 1000},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations + DEFAULT_TOLERATIONS,
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                    "name": "kube-root-ca.crt",
                                }
                            },
                        ],
                    },
                }
            ],
        },
    }


def pod_managed_fields(pod: dict[str, Any], status_manager: str) -> None:
    """The controller wrote metadata and spec (nodeName comes from the binding, not a manager);
    the kubelet (or, while Pending, the scheduler) wrote the status."""
    meta, spec = pod["metadata"], pod["spec"]
    written = {
        k: v for k, v in meta.items() if k in ("generateName", "labels", "annotations", "ownerReferences")
    }
    # what admission adds (the service-account volume and mount, DefaultTolerationSeconds'
    # tolerations, Priority's priority) is not the controller's
    template = {k: v for k, v in spec.items() if k not in ("nodeName", "priority", "serviceAccount")}
    template["volumes"] = [v for v in spec["volumes"] if v["name"] != "kube-api-access"]
    template["tolerations"] = [t for t in spec["tolerations"] if t not in DEFAULT_TOLERATIONS]
    template["containers"] = [
        {**c, "volumeMounts": [m for m in c["volumeMounts"] if m["name"] != "kube-api-access"]}
        for c in spec["containers"]
    ]
    for key in ("volumes", "tolerations"):
        if not template[key]:
            del template[key]
    pod["metadata"]["managedFields"] = [
        managed(
            "kube-controller-manager", meta["creationTimestamp"], {"metadata": written, "spec": template}
        ),
        managed(status_manager, meta["creationTimestamp"], pod["status"], "status"),
    ]


def place_pod(
    rng: random.Random, index: int, room: NodeRoom, claims: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """A pod that fits in what is left on ``room`` (GPU pods on GPU nodes), or None if full.
    A StatefulSet pod mounts a PVC bound in its node's zone, appended to ``claims``."""
    if room.pods <= 0:
        return None
    gpu: tuple[str, int] | None = None
    if room.gpu and rng.random() < 0.8:
        resource = rng.choice(sorted(r for r, n in room.gpu.items() if n > 0) or [""])
        if resource:
            left = room.gpu[resource]
            want = (
                rng.choice([1, 1, 1, 2, 4, 8])
                if resource == "nvidia.com/gpu" and room.pool.replicas == 1
                else 1
            )
            want = min(want, left)
            gpu = (resource, want)
    n_containers = 1 if gpu else rng.choice((1, 1, 1, 1, 2))
    cpu_each = rng.choice((50, 100, 250, 500, 1000)) * (4 if gpu else 1)
    mem_each = rng.choice((64, 128, 256, 512, 1024)) * (8 if gpu else 1)
    if cpu_each * n_containers > room.cpu_m or mem_each * n_containers > room.mem_mi:
        cpu_each, mem_each = 10, 16
        if cpu_each * n_containers > room.cpu_m or mem_each * n_containers > room.mem_mi:
            return None
    images = GPU_IMAGES if gpu else CPU_IMAGES
    serving = bool(gpu) and rng.random() < 0.5
    kind = rng.choice(("ReplicaSet", "ReplicaSet", "Job", "StatefulSet"))
    containers = [
        container(
            rng,
            f"c{i}" if i else ("main" if not gpu else "trainer" if not serving else "server"),
            images[(index + i) % len(images)],
            cpu_each,
            mem_each,
            gpu if i == 0 else None,
            serving,
            probes=kind != "Job" and i == 0,
        )
        for i in range(n_containers)
    ]
    namespace = TEAMS[index % len(TEAMS)] if gpu or index % 7 else SYSTEM_NS[index % len(SYSTEM_NS)]
    app = f"{'train' if kind == 'Job' else 'serve' if serving else 'svc'}-{index % 97}"
    owner_name = f"{app}-{index % 13:x}{index % 7}"
    tolerations = [GPU_TOLERATION] if gpu else []
    pod = base_pod(rng, index, namespace, app, kind, owner_name, containers, tolerations)
    spec = pod["spec"]
    spec["nodeName"] = room.name
    if index % 5 == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "karpenter.sh/nodepool", "operator": "In", "values": [room.pool.name]}
                            ]
                        }
                    ]
                }
            }
        }
    if index % 9 == 0:
        key, when, _share = SPREADS[(index // 9) % len(SPREADS)]
        spec["topologySpreadConstraints"] = [spread(key, when, app)]
    if index % 10 == 3:
        spec.setdefault("affinity", {}).update(pod_affinity("preferred-anti", app))
    if kind == "StatefulSet" and claims is not None:
        claim = f"data-{pod['metadata']['name']}-{index}"
        spec["volumes"].append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})
        containers[0]["volumeMounts"].append({"mountPath": "/data", "name": "data"})
        claims.append(pvc(rng, namespace, claim, bound_zone=room.zone))
    if gpu and kind == "Job":
        spec["volumes"].append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}})
        containers[0]["volumeMounts"].append({"mountPath": "/dev/shm", "name": "dshm"})
    roll = rng.random()
    phase = "Running" if roll < 0.97 or kind != "Job" else ("Succeeded" if roll < 0.995 else "Failed")
    ip = f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"
    pod["status"] = running_status(containers, room, ts(7200 + index % 80000), phase, ip)
    pod_managed_fields(pod, "kubelet")
    if phase == "Running":  # terminal pods no longer hold node resources
        room.cpu_m -= cpu_each * n_containers
        room.mem_mi -= mem_each * n_containers
        room.pods -= 1
        if gpu:
            room.gpu[gpu[0]] -= gpu[1]
    return pod


# Why a Pending pod waits: (variant, share). Shares follow what GPU clusters queue: mostly plain
# and product-pinned GPU asks waiting for capacity, then MIG asks, CPU pods, and the mistakes
# (a taint not tolerated, a product or zone nobody has, an ask bigger than any node).
PENDING_MIX = (
    ("plain-gpu", 0.24),
    ("product-selector", 0.12),
    ("mig-ask", 0.10),
    ("cpu-only", 0.14),
    ("untolerated-taint", 0.08),
    ("oversize", 0.05),
    ("no-such-product", 0.03),
    ("no-such-mig", 0.03),
    ("zone-affinity", 0.03),
    ("missing-pvc", 0.03),
    ("shared-gpu", 0.04),
    ("spread-only", 0.11),
)
PENDING_KINDS = tuple(v for v, _ in PENDING_MIX)
# Constraints layered on any variant, each with its share of Pending pods.
SPREADS = (  # (topologyKey, whenUnsatisfiable, share)
    ("topology.kubernetes.io/zone", "DoNotSchedule", 0.12),
    ("topology.kubernetes.io/zone", "ScheduleAnyway", 0.08),
    ("kubernetes.io/hostname", "DoNotSchedule", 0.06),
    ("kubernetes.io/hostname", "ScheduleAnyway", 0.04),
)
POD_AFFINITY_SHARES = {
    "required-anti": 0.08,
    "preferred-anti": 0.10,
    "required-affinity": 0.03,
    "preferred-affinity": 0.05,
}
PRIORITY_SHARES = (("training-high", 0.20), ("inference-critical", 0.05), ("batch-low", 0.10))
PVC_SHARE = 0.10
PRODUCTS = tuple(p.product for p in POOLS if p.gpus and not p.mig)


def app_label(rng: random.Random) -> str:
    """An ``app.kubernetes.io/name`` that running pods carry (what spread and affinity count)."""
    return f"{rng.choice(('train', 'serve', 'svc'))}-{rng.randrange(97)}"


def spread(key: str, when: str, app: str) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
    }


def pod_affinity_term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}}, "topologyKey": key}


def pod_affinity(kind: str, app: str) -> dict[str, Any]:
    """One inter-pod (anti-)affinity of ``kind`` (a key of POD_AFFINITY_SHARES)."""
    anti = kind.endswith("anti")
    field_name = "podAntiAffinity" if anti else "podAffinity"
    term = pod_affinity_term(app, "kubernetes.io/hostname" if anti else "topology.kubernetes.io/zone")
    if kind.startswith("required"):
        return {field_name: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {
        field_name: {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
        }
    }


def node_selector_affinity(key: str, values: list[str]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
                ]
            }
        }
    }


def pending_pod(rng: random.Random, index: int, claims: list[dict[str, Any]]) -> dict[str, Any]:
    """An unscheduled pod: a variant of PENDING_MIX, plus spread, inter-pod affinity, a PVC and a
    priority at their shares. PVCs it mounts (bound, or waiting for their first consumer) are
    appended to ``claims``."""
    variant = rng.choices(PENDING_KINDS, weights=[w for _, w in PENDING_MIX])[0]
    gpu: tuple[str, int] | None = ("nvidia.com/gpu", rng.choice((1, 1, 2, 4, 8)))
    tolerations = [GPU_TOLERATION]
    selector: dict[str, str] = {}
    if variant == "product-selector":
        selector = {"nvidia.com/gpu.product": rng.choice(PRODUCTS)}
    elif variant == "no-such-product":
        selector = {"nvidia.com/gpu.product": "NVIDIA-B200"}
    elif variant == "untolerated-taint":
        gpu = ("nvidia.com/gpu", 8)
        selector = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
        tolerations = []
    elif variant == "mig-ask":
        gpu = rng.choice(
            (("nvidia.com/mig-3g.71gb", 1), ("nvidia.com/mig-3g.71gb", 2), ("nvidia.com/mig-1g.18gb", 1))
        )
    elif variant == "no-such-mig":
        gpu = ("nvidia.com/mig-7g.141gb", 1)
    elif variant == "oversize":
        gpu = ("nvidia.com/gpu", 16)
    elif variant == "cpu-only":
        gpu = None
        tolerations = []
    elif variant == "shared-gpu":
        gpu = ("nvidia.com/gpu", 1)
        selector = {"nvidia.com/gpu.sharing-strategy": "time-slicing"}
    cpu_m = rng.choice((512000, 96000, 16000, 4000)) if gpu is None else 8000
    containers = [
        container(rng, "trainer", GPU_IMAGES[index % len(GPU_IMAGES)], cpu_m, 65536, gpu, False, probes=False)
    ]
    namespace = TEAMS[index % len(TEAMS)]
    owner_name = f"pending-{variant}-{index}"
    pod = base_pod(
        rng, 10_000_000 + index, namespace, f"pending-{variant}", "Job", owner_name, containers, tolerations
    )
    spec = pod["spec"]
    if selector:
        spec["nodeSelector"] = selector
    affinity: dict[str, Any] = {}
    if variant == "zone-affinity":
        affinity.update(node_selector_affinity("topology.kubernetes.io/zone", ["us-west-2a"]))
    constraints = [spread(key, when, app_label(rng)) for key, when, share in SPREADS if rng.random() < share]
    if variant == "spread-only" and not constraints:
        constraints = [spread("topology.kubernetes.io/zone", "DoNotSchedule", app_label(rng))]
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    for kind, share in POD_AFFINITY_SHARES.items():
        if rng.random() < share:
            for field_name, terms in pod_affinity(kind, app_label(rng)).items():
                merged = affinity.setdefault(field_name, {})
                for when, items in terms.items():
                    merged.setdefault(when, []).extend(items)
    if affinity:
        spec["affinity"] = affinity
    if variant == "missing-pvc":
        spec["volumes"].append(
            {"name": "data", "persistentVolumeClaim": {"claimName": f"missing-data-{index}"}}
        )
    elif rng.random() < PVC_SHARE:
        claim = f"data-{owner_name}"
        spec["volumes"].append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})
        containers[0]["volumeMounts"].append({"mountPath": "/data", "name": "data"})
        claims.append(pvc(rng, namespace, claim, bound_zone=rng.choice((None, *ZONES))))
    roll = rng.random()
    for name, share in PRIORITY_SHARES:
        if roll < share:
            spec["priorityClassName"] = name
            spec["priority"] = PRIORITY_VALUES[name]
            break
        roll -= share
    created = ts(86000 + index)
    pod["status"] = {
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/0 nodes are available",
                "lastProbeTime": None,
                "lastTransitionTime": created,
            }
        ],
        "phase": "Pending",
        "qosClass": "Burstable",
    }
    pod_managed_fields(pod, "kube-scheduler")
    return pod


PRIORITY_VALUES = {"training-high": 100000, "inference-critical": 1000000, "batch-low": -10}


def pvc(rng: random.Random, namespace: str, name: str, bound_zone: str | None) -> dict[str, Any]:
    """A PersistentVolumeClaim of the gp3 class; ``bound_zone`` binds it to a PV there (the PV
    is yielded with it), else it waits for its first consumer (WaitForFirstConsumer)."""
    claim: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid(rng),
            "creationTimestamp": ts(3000),
            "annotations": {"volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "500Gi"}},
            "storageClassName": "gp3",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }
    if bound_zone is not None:
        volume = f"pvc-{claim['metadata']['uid']}"
        claim["spec"]["volumeName"] = volume
        claim["status"] = {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "500Gi"},
        }
        claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
        claim["_pv"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": volume, "uid": uid(rng), "creationTimestamp": ts(3000)},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "500Gi"},
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name},
                "csi": {
                    "driver": "ebs.csi.aws.com",
                    "fsType": "ext4",
                    "volumeHandle": f"vol-{rng.getrandbits(64):016x}",
                },
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": [bound_zone],
                                    }
                                ]
                            }
                        ]
                    }
                },
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "gp3",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Bound"},
        }
    return claim


# -- other objects -------------------------------------------------------------------------------


def extra_objects(rng: random.Random) -> Iterator[dict[str, Any]]:
    for ns in (*SYSTEM_NS, *TEAMS, "default"):
        yield {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": ns,
                "uid": uid(rng),
                "creationTimestamp": ts(0),
                "labels": {"kubernetes.io/metadata.name": ns},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
    yield {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "gp3", "uid": uid(rng), "creationTimestamp": ts(0)},
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3"},
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }
    for name, value in PRIORITY_VALUES.items():
        yield {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name, "uid": uid(rng), "creationTimestamp": ts(0)},
            "value": value,
            "globalDefault": False,
            "preemptionPolicy": "PreemptLowerPriority",
        }
    for i, team in enumerate(TEAMS):
        yield {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu-quota", "namespace": team, "uid": uid(rng), "creationTimestamp": ts(0)},
            "spec": {
                "hard": {
                    "requests.nvidia.com/gpu": str(64 + 16 * i),
                    "requests.cpu": "2000",
                    "requests.memory": "16Ti",
                }
            },
        }


# -- assembly ------------------------------------------------------------------------------------


def replica(rng: random.Random, pod: dict[str, Any], number: int) -> dict[str, Any]:
    """Replica ``number`` of the Pending ``pod``: the same pod of the same Job (labels, spec,
    status), with a name, uid, resourceVersion and creation time of its own."""
    copy = msgspec.json.decode(msgspec.json.encode(pod))
    meta = copy["metadata"]
    meta["name"] = f"{meta['generateName']}{rng.getrandbits(24):06x}"[: len(meta["generateName"]) + 5]
    meta["uid"] = uid(rng)
    meta["resourceVersion"] = f"{meta['resourceVersion']}{number:03d}"
    meta["creationTimestamp"] = ts(86000 + number)
    return copy


def pending_workloads(
    rng: random.Random, pending: int, replicas: int, claims: list[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """``pending`` Pending pods, ``replicas`` of each workload (the last one may have fewer);
    with one replica each pod is its own Job, drawn exactly as before the option existed."""
    made = 0
    index = 0
    while made < pending:
        pod = pending_pod(rng, index, claims)
        index += 1
        yield pod
        made += 1
        for number in range(1, replicas):
            if made >= pending:
                break
            yield replica(rng, pod, number)
            made += 1


def generate(
    nodes: int, pods: int, pending: int, seed: int, pending_replicas: int = 1
) -> Iterator[dict[str, Any]]:
    """Every object of the snapshot, in kubectl order (namespaces and other kinds, nodes, pods)."""
    rng = random.Random(seed)
    yield from extra_objects(rng)
    rooms: list[NodeRoom] = []
    for index in range(nodes):
        pool = pick_pool(rng)
        node = make_node(rng, pool, index)
        alloc = node["status"]["allocatable"]
        rooms.append(
            NodeRoom(
                node["metadata"]["name"],
                pool,
                node["metadata"]["labels"]["topology.kubernetes.io/zone"],
                int(alloc["cpu"][:-1]),
                int(alloc["memory"][:-2]) // 1024,
                int(alloc["pods"]) - 4,
                dict(gpu_resources(pool)),
            )
        )
        yield node
    claims: list[dict[str, Any]] = []
    placed = 0
    index = 0
    cursor = 0
    misses = 0
    while placed < pods - pending and rooms and misses < len(rooms):
        room = rooms[cursor % len(rooms)]
        cursor += 1 + rng.randrange(3)
        pod = place_pod(rng, index, room, claims)
        index += 1
        if pod is None:
            misses += 1
            continue
        misses = 0
        placed += 1
        yield pod
    yield from pending_workloads(rng, pending, pending_replicas, claims)
    for claim in claims:
        volume = claim.pop("_pv", None)
        yield claim
        if volume is not None:
            yield volume


def write_json(objects: Iterator[dict[str, Any]], out: Any) -> int:
    encode = msgspec.json.Encoder().encode
    out.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n')
    count = 0
    for obj in objects:
        if count:
            out.write(b",\n")
        out.write(encode(obj))
        count += 1
    out.write(b"\n]}\n")
    return count


def write_yaml(objects: Iterator[dict[str, Any]], out: Any) -> int:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out.write(b'apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: ""\nitems:\n')
    count = 0
    for obj in objects:
        text = yaml.dump([obj], Dumper=dumper, default_flow_style=False, sort_keys=False)
        out.write(text.encode())
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100, help="number of nodes (default 100)")
    parser.add_argument("--pods", type=int, default=3000, help="number of pods incl. pending (default 3000)")
    parser.add_argument("--pending", type=int, default=0, help="how many of the pods are unscheduled")
    parser.add_argument(
        "--pending-replicas",
        type=int,
        default=1,
        metavar="K",
        help="pods per Pending workload, identical but for their identity (default 1: each its own Job)",
    )
    parser.add_argument("--format", choices=("json", "yaml"), default="json")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.nodes < 0 or args.pods < 0 or args.pending < 0 or args.pending > args.pods:
        parser.error("--nodes, --pods, --pending must be >= 0 and --pending <= --pods")
    if args.pending_replicas < 1:
        parser.error("--pending-replicas must be >= 1")
    objects = generate(args.nodes, args.pods, args.pending, args.seed, args.pending_replicas)
    writer = write_json if args.format == "json" else write_yaml
    if args.output == "-":
        count = writer(objects, sys.stdout.buffer)
    else:
        with open(args.output, "wb") as out:
            count = writer(objects, out)
    print(f"wrote {count} objects", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
