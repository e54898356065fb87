"""Fabric for multi-node training: the EFA device plugin, or the NVIDIA Network Operator.

Without a fabric NCCL moves every all-reduce over TCP sockets on the primary interface, an order
of magnitude below what p5, ND H100 v5 or DGX H100 nodes carry. Per fabric (the pools that run
multi-node training, :func:`gpuplane.generate.plan.fabric_of`):

- ``efa`` (AWS): the ``aws-efa-k8s-device-plugin`` chart (aws/eks-charts
  ``stable/aws-efa-k8s-device-plugin`` v0.5.30, appVersion v0.5.20) advertises
  ``vpc.amazonaws.com/efa``; training pods request the node's EFA interfaces in proportion to
  their GPUs (counts per instance type in ``gpu/data/fabric.yaml``) and run libfabric's EFA
  provider (``FI_PROVIDER=efa``; ``FI_EFA_USE_DEVICE_RDMA=1`` where the device does RDMA).
  Karpenter attaches the EFA interfaces when the pod requests the resource
  (karpenter-provider-aws ``pkg/providers/instance/instance.go``).
- ``infiniband`` / ``roce`` (Azure ND-series, on-prem): the NVIDIA Network Operator chart
  (Mellanox/network-operator v26.4.1 ``deployment/network-operator``; its NFD is turned off, the
  GPU Operator's serves both) and a ``NicClusterPolicy`` (``mellanox.com/v1alpha1``, fields as in
  ``example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr.yaml`` at v26.4.1): the DOCA driver and
  the RDMA shared device plugin, whose ``rdma/rdma_shared_device_a`` pods request with
  ``IPC_LOCK``. RoCE adds Multus, the CNI plugins and NVIDIA IPAM, and a ``MacvlanNetwork`` per
  tenant on the RoCE port so NCCL sees the port's GIDs inside the pod.
  GPUDirect RDMA between the NIC and GPU memory needs ``driver.rdma.enabled`` in the GPU Operator
  (nvidia-peermem).
- ``network.mode: sriov`` (infiniband / roce): the NicClusterPolicy runs the SR-IOV network device
  plugin (``sriovDevicePlugin``, its config as in ``example/crs/
  mellanox.com_v1alpha1_nicclusterpolicy_cr-full.yaml``: prefix ``nvidia.com``, resource
  ``hostdev``, Mellanox RDMA devices of the fabric's link type) with Multus, the CNI plugins and
  NVIDIA IPAM, and one ``HostDeviceNetwork`` per tenant (``example/crs/
  mellanox.com_v1alpha1_hostdevicenetwork_cr.yaml``; the operator prefixes its resourceName with
  ``nvidia.com/``: ``pkg/state/state_hostdevice_network.go``). A rank requests its GPU share of
  the node's devices as ``nvidia.com/hostdev`` and names the network once per device in
  ``k8s.v1.cni.cncf.io/networks``, so each device moves into the pod with an address. The devices
  are the PFs or the VFs the NIC firmware already exposes; creating VFs (``SriovNetworkNodePolicy``)
  is the SR-IOV Network Operator's job, which gpuplane does not install.
"""

from __future__ import annotations

import json
from typing import Any

from gpuplane.generate.components import component
from gpuplane.generate.plan import POOL_LABEL, PoolPlan
from gpuplane.generate.render.base import Bundle, helm_release, meta
from gpuplane.gpu.fabric import EFA_RESOURCE

EFA_PLUGIN = component("aws-efa-k8s-device-plugin")
NETWORK_OPERATOR = component("network-operator")
NETWORK_OPERATOR_NS = "nvidia-network-operator"
# The DOCA driver the network-operator release's example NicClusterPolicy pins (its source names it).
DOCA_DRIVER_VERSION = "doca3.4.1-26.04-1.1.0.0-1"
RDMA_RESOURCE_NAME = "rdma_shared_device_a"
RDMA_RESOURCE = f"rdma/{RDMA_RESOURCE_NAME}"
HOSTDEV_RESOURCE_NAME = "hostdev"
HOSTDEV_RESOURCE = f"nvidia.com/{HOSTDEV_RESOURCE_NAME}"
HOSTDEV_NETWORK = "hostdev"
HOSTDEV_POOL = "hostdev-pool"
ROCE_NETWORK = "roce"
ROCE_POOL = "roce-pool"
MELLANOX_VENDOR = "15b3"


def fabric_plans(bundle: Bundle, *fabrics: str) -> list[PoolPlan]:
    return [p for p in bundle.plans if p.fabric in fabrics]


def efa_per_pod(plan: PoolPlan, gpus: int) -> int:
    """EFA interfaces one pod takes: its GPU share of the node's, at least one."""
    return max(plan.fabric_interfaces * gpus // max(plan.gpus_per_node, 1), 1)


def roce_network_name(tenant: str) -> str:
    return f"{ROCE_NETWORK}-{tenant}"


def hostdev_network_name(tenant: str) -> str:
    return f"{HOSTDEV_NETWORK}-{tenant}"


def sriov(bundle: Bundle) -> bool:
    """RDMA devices per rank through the SR-IOV device plugin instead of the shared device plugin."""
    return bundle.blueprint.network.mode == "sriov"


def rdma_resource(bundle: Bundle) -> str:
    """The extended resource an InfiniBand/RoCE rank requests."""
    return HOSTDEV_RESOURCE if sriov(bundle) else RDMA_RESOURCE


def rdma_devices_per_pod(bundle: Bundle, plan: PoolPlan, gpus: int) -> int:
    """SR-IOV devices one rank takes: its GPU share of the node's, at least one."""
    per_node = bundle.blueprint.network.rdma_devices_per_node or plan.fabric_interfaces
    return max(per_node * gpus // max(plan.gpus_per_node, 1), 1)


def pod_fabric(bundle: Bundle, plan: PoolPlan, gpus: int, tenant: str) -> dict[str, Any]:
    """What a multi-node training pod on ``plan`` adds: resources, env, capabilities, annotations."""
    if plan.fabric == "efa":
        env = [{"name": "FI_PROVIDER", "value": "efa"}]
        if plan.fabric_device_rdma:
            env.append({"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"})
        env.append({"name": "NCCL_DEBUG", "value": "WARN"})
        return {"resources": {EFA_RESOURCE: efa_per_pod(plan, gpus)}, "env": env}
    if plan.fabric in ("infiniband", "roce"):
        env = [
            {"name": "NCCL_IB_HCA", "value": "mlx5"},
            {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
            {"name": "NCCL_DEBUG", "value": "WARN"},
        ]
        if sriov(bundle):
            n = rdma_devices_per_pod(bundle, plan, gpus)
            # One attachment per device: Multus hands each one of the pod's allocated devices.
            networks = ",".join([hostdev_network_name(tenant)] * n)
            return {
                "resources": {HOSTDEV_RESOURCE: n},
                "env": env,
                "capabilities": ["IPC_LOCK"],
                "annotations": {"k8s.v1.cni.cncf.io/networks": networks},
            }
        out: dict[str, Any] = {"resources": {RDMA_RESOURCE: 1}, "env": env, "capabilities": ["IPC_LOCK"]}
        if plan.fabric == "roce":
            out["annotations"] = {"k8s.v1.cni.cncf.io/networks": roce_network_name(tenant)}
        return out
    return {}


def _efa(bundle: Bundle, plans: list[PoolPlan]) -> None:
    tolerations = sorted(
        {(t.key, t.effect) for p in plans for t in p.pool.taints}, key=lambda kv: (kv[0], kv[1])
    )
    bundle.releases.append(
        helm_release(
            EFA_PLUGIN,
            "kube-system",
            {
                "tolerations": [{"key": k, "operator": "Exists", "effect": e} for k, e in tolerations],
            },
            order=12,
        )
    )
    for plan in plans:
        bundle.decide(
            "network",
            f"gpu_pools.{plan.name} fabric",
            f"efa: {plan.fabric_interfaces} x {EFA_RESOURCE} per node",
            "multi-node NCCL over EFA (libfabric + aws-ofi-nccl in the image) instead of TCP sockets; each "
            "rank requests its GPU share of the node's EFA interfaces"
            + ("; device RDMA on" if plan.fabric_device_rdma else ""),
            "gpu/data/fabric.yaml [KARP] vpc.amazonaws.com/efa; [EFA-RDMA]",
        )
    bundle.note(
        "10-operators",
        "EFA: the nodes' security group must allow all traffic to and from itself (EFA's OS-bypass traffic "
        "is not IP-routed), and training images need libfabric with the EFA provider and the aws-ofi-nccl "
        "plugin (AWS Deep Learning Containers, or the EFA installer in your image)",
    )
    if bundle.blueprint.autoscaling.provisioner == "karpenter":
        for plan in plans:
            if plan.pool.placement_group is None:
                bundle.note(
                    "50-autoscaling",
                    f"pool `{plan.name}` trains across nodes over EFA: give it `placement_group` (an existing "
                    "cluster placement group, `aws ec2 create-placement-group --strategy cluster`) so its "
                    "EC2NodeClass selects it (placementGroupSelector) and every node lands on one network "
                    "segment in one AZ",
                )
    if bundle.blueprint.autoscaling.provisioner == "cluster-autoscaler":
        bundle.note(
            "50-autoscaling",
            "EFA node groups: create them in one subnet (one AZ) with EFA interfaces and a cluster placement "
            "group (eksctl `efaEnabled: true` does both), and add the tag "
            f"`k8s.io/cluster-autoscaler/node-template/resources/{EFA_RESOURCE}=<interfaces>` so the "
            "autoscaler knows a new node offers EFA",
        )


def _nic_cluster_policy(bundle: Bundle, plans: list[PoolPlan], fabric: str) -> dict[str, Any]:
    link = "infiniband" if fabric == "infiniband" else "ether"
    config = {
        "configList": [
            {
                "resourceName": RDMA_RESOURCE_NAME,
                "rdmaHcaMax": 63,
                "selectors": {"vendors": [MELLANOX_VENDOR], "linkTypes": [link]},
            }
        ]
    }
    image = {
        "repository": "nvcr.io/nvidia/mellanox",
        "version": f"network-operator-v{NETWORK_OPERATOR.version}",
    }
    tolerations = sorted({(t.key, t.effect) for p in plans for t in p.pool.taints})
    spec: dict[str, Any] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": POOL_LABEL, "operator": "In", "values": sorted(p.name for p in plans)}
                        ]
                    }
                ]
            }
        },
        "tolerations": [{"key": k, "operator": "Exists", "effect": e} for k, e in tolerations],
        "ofedDriver": {
            "image": "doca-driver",
            "repository": "nvcr.io/nvidia/mellanox",
            "version": DOCA_DRIVER_VERSION,
            "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1, "drain": {"enable": True}},
        },
    }
    if sriov(bundle):
        sriov_config = {
            "resourceList": [
                {
                    "resourcePrefix": "nvidia.com",
                    "resourceName": HOSTDEV_RESOURCE_NAME,
                    "selectors": {"vendors": [MELLANOX_VENDOR], "isRdma": True, "linkTypes": [link]},
                }
            ]
        }
        spec["sriovDevicePlugin"] = {
            "image": "sriov-network-device-plugin",
            **image,
            "config": json.dumps(sriov_config, indent=2, sort_keys=True),
        }
    else:
        spec["rdmaSharedDevicePlugin"] = {
            "image": "k8s-rdma-shared-dev-plugin",
            **image,
            "config": json.dumps(config, indent=2, sort_keys=True),
        }
    if fabric == "roce" or sriov(bundle):
        spec["secondaryNetwork"] = {
            "multus": {"image": "multus-cni", **image},
            "cniPlugins": {"image": "plugins", **image},
        }
        spec["nvIpam"] = {"image": "nvidia-k8s-ipam", **image, "enableWebhook": False}
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": meta("nic-cluster-policy"),
        "spec": spec,
    }


def _ip_pool(name: str, subnet: str) -> dict[str, Any]:
    """An NVIDIA IPAM pool (example/crs/nvidia.com_v1alpha1_nv_ipam_ippool_cr.yaml at v26.4.1)
    handing each node a block of 64 addresses of ``subnet``."""
    return {
        "apiVersion": "nv-ipam.nvidia.com/v1alpha1",
        "kind": "IPPool",
        "metadata": meta(name, NETWORK_OPERATOR_NS),
        "spec": {"subnet": subnet, "perNodeBlockSize": 64},
    }


def _nv_ipam(pool: str) -> str:
    """A network's ``ipam`` field: the CNI IPAM config (JSON text) that draws from ``pool``."""
    return json.dumps({"type": "nv-ipam", "poolName": pool})


def _roce_objects(bundle: Bundle, tenants: list[str]) -> list[dict[str, Any]]:
    """The NVIDIA IPAM pool and one macvlan network per tenant namespace on the RoCE port
    (example/crs/nvidia.com_v1alpha1_nv_ipam_ippool_cr.yaml and
    mellanox.com_v1alpha1_macvlannetwork_cr-nvidia-ipam.yaml at v26.4.1): the operator writes the
    NetworkAttachmentDefinition the pods name in ``k8s.v1.cni.cncf.io/networks``."""
    out = [_ip_pool(ROCE_POOL, "192.168.128.0/18")]
    for t in tenants:
        out.append(
            {
                "apiVersion": "mellanox.com/v1alpha1",
                "kind": "MacvlanNetwork",
                "metadata": meta(roce_network_name(t)),
                "spec": {
                    "networkNamespace": t,
                    "master": bundle.blueprint.network.roce_interface,
                    "mode": "bridge",
                    "mtu": 9000,
                    "ipam": _nv_ipam(ROCE_POOL),
                },
            }
        )
    return out


def _hostdev_objects(tenants: list[str]) -> list[dict[str, Any]]:
    """The NVIDIA IPAM pool and one HostDeviceNetwork per tenant namespace (example/crs/
    mellanox.com_v1alpha1_hostdevicenetwork_cr.yaml at v26.4.1): the operator writes a host-device
    NetworkAttachmentDefinition annotated with the device plugin's resource."""
    out = [_ip_pool(HOSTDEV_POOL, "192.168.192.0/18")]
    for t in tenants:
        out.append(
            {
                "apiVersion": "mellanox.com/v1alpha1",
                "kind": "HostDeviceNetwork",
                "metadata": meta(hostdev_network_name(t)),
                "spec": {
                    "networkNamespace": t,
                    "resourceName": HOSTDEV_RESOURCE_NAME,
                    "ipam": _nv_ipam(HOSTDEV_POOL),
                },
            }
        )
    return out


def _network_operator(bundle: Bundle, plans: list[PoolPlan], fabric: str) -> None:
    bundle.add(
        "00-namespaces",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": meta(
                NETWORK_OPERATOR_NS, labels={"pod-security.kubernetes.io/enforce": "privileged"}
            ),
        },
    )
    bundle.releases.append(
        helm_release(
            NETWORK_OPERATOR,
            NETWORK_OPERATOR_NS,
            # The GPU Operator already runs node-feature-discovery: one NFD per cluster.
            {"nfd": {"enabled": False}},
            order=12,
        )
    )
    bundle.add("25-network", _nic_cluster_policy(bundle, plans, fabric))
    pools = {p.name for p in plans}
    tenants = sorted({w.tenant for w in bundle.blueprint.workloads.training if w.pool in pools})
    if sriov(bundle):
        for obj in _hostdev_objects(tenants):
            bundle.add("25-network", obj)
    elif fabric == "roce":
        for obj in _roce_objects(bundle, tenants):
            bundle.add("25-network", obj)
    for plan in plans:
        if sriov(bundle):
            per_node = bundle.blueprint.network.rdma_devices_per_node or plan.fabric_interfaces
            bundle.decide(
                "network",
                f"gpu_pools.{plan.name} fabric",
                f"{fabric} sriov: NVIDIA Network Operator, {HOSTDEV_RESOURCE} ({per_node} per node)",
                "each rank gets its own RDMA devices (its GPU share of the node's) moved into the pod by the "
                "host-device CNI, instead of every rank sharing all HCAs; NCCL uses them through verbs "
                "(NCCL_IB_HCA=mlx5), IPC_LOCK lets it pin memory",
                NETWORK_OPERATOR.source,
            )
            continue
        bundle.decide(
            "network",
            f"gpu_pools.{plan.name} fabric",
            f"{fabric}: NVIDIA Network Operator, {RDMA_RESOURCE}",
            "NCCL uses the ConnectX ports through verbs (NCCL_IB_HCA=mlx5) instead of TCP sockets; the RDMA "
            "shared device plugin hands every rank the node's RDMA devices, IPC_LOCK lets it pin memory"
            + ("; the macvlan network puts the RoCE port's GIDs in the pod" if fabric == "roce" else ""),
            NETWORK_OPERATOR.source,
        )
    bundle.note(
        "10-operators",
        "Network Operator: apply `25-network/` once the chart's CRDs exist; the DOCA driver container "
        "replaces any host MOFED on the selected nodes (drain policy in the NicClusterPolicy)",
    )


def render(bundle: Bundle) -> None:
    efa = fabric_plans(bundle, "efa")
    if efa:
        _efa(bundle, efa)
    for fabric in ("infiniband", "roce"):
        plans = fabric_plans(bundle, fabric)
        if plans:
            _network_operator(bundle, plans, fabric)
    bp = bundle.blueprint
    from gpuplane.generate.plan import catalog_fabric, multi_node_pools  # deferred for start-up time

    for plan in bundle.plans:
        have = catalog_fabric(plan.pool)[0]
        if plan.name in multi_node_pools(bp) and have == "gpudirect-tcpx" and plan.fabric == "none":
            bundle.decide(
                "network",
                f"gpu_pools.{plan.name} fabric",
                "none (GPUDirect-TCPX not rendered)",
                "A3 High nodes reach full bandwidth only with GKE multi-networking, the tcpx receive-datapath "
                "sidecar and the NCCL plugin; gpuplane does not render them, so NCCL uses the primary gVNIC",
                "gpu/data/fabric.yaml [GKE-TCPX]",
            )
        if plan.name in multi_node_pools(bp) and plan.fabric == "none" and bp.provider == "on-prem":
            bundle.decide(
                "network",
                f"gpu_pools.{plan.name} fabric",
                "none",
                "network.fabric is not set: multi-node NCCL runs over TCP on the primary interface; set "
                "infiniband or roce (with roce_interface) when the nodes have ConnectX ports",
                "NVIDIA Network Operator docs",
            )
