"""Node autoscaling: Karpenter NodePools + EC2NodeClass, or Cluster Autoscaler settings.

Karpenter v1 fields (``karpenter.sh/v1`` NodePool, ``karpenter.k8s.aws/v1`` EC2NodeClass) from
aws/karpenter-provider-aws v1.14 docs (reference platform.md §3). Cluster Autoscaler flags,
ASG node-template tags and GPU labels from kubernetes/autoscaler ``FAQ.md`` and
``cloudprovider/aws/README.md`` (§2). On GKE the cluster autoscaler is built in: node-pool
flags replace a deployment.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from gpuplane.generate.blueprint import GpuPool
from gpuplane.generate.components import component
from gpuplane.generate.plan import NVIDIA_GPU, PoolPlan
from gpuplane.generate.render.base import Bundle, HelmRelease, helm_release, meta

KARPENTER = component("karpenter")
# The Cluster Autoscaler is pinned per Kubernetes minor: data/cluster_autoscaler.yaml.
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
NODECLASS = "gpu"


def nodeclass_name(disk_gi: int, sizes: set[int]) -> str:
    """One EC2NodeClass per distinct root volume size: ``gpu`` when all pools agree, else ``gpu-<size>gi``."""
    return NODECLASS if len(sizes) == 1 else f"{NODECLASS}-{disk_gi}gi"


def _own_nodeclass(pool: GpuPool) -> bool:
    """A placement group or capacity reservations belong to one pool: it gets an EC2NodeClass of its own.

    "Each EC2NodeClass maps to exactly one placement group" (aws/karpenter-provider-aws v1.14.1
    website/content/en/docs/concepts/nodeclasses.md, spec.placementGroupSelector), so pools sharing
    a NodeClass would share its placement group and reservations.
    """
    return pool.placement_group is not None or bool(pool.capacity_reservations)


def pool_nodeclass(pool: GpuPool, sizes: set[int]) -> str:
    """The EC2NodeClass a pool's NodePool references."""
    return f"{NODECLASS}-{pool.name}" if _own_nodeclass(pool) else nodeclass_name(pool.root_volume_gi, sizes)


def _nodepool(bundle: Bundle, plan: PoolPlan, nodeclass: str) -> dict[str, Any]:
    a = bundle.blueprint.autoscaling
    pool = plan.pool
    reqs: list[dict[str, Any]] = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": sorted(pool.instance_types)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [pool.capacity_type]},
    ]
    if pool.zones:
        reqs.append({"key": "topology.kubernetes.io/zone", "operator": "In", "values": sorted(pool.zones)})
    protect = pool.workload in ("training", "mixed") and a.consolidation == "protect-training"
    if protect or a.consolidation == "when-empty":
        disruption: dict[str, Any] = {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": a.consolidate_after,
        }
    else:
        disruption = {
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": a.consolidate_after,
        }
    disruption["budgets"] = [{"nodes": "10%"}]
    gpu_limit = max(plan.gpus_per_node * pool.max_nodes, 1)
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": meta(pool.name),
        "spec": {
            "template": {
                "metadata": {"labels": plan.node_labels()},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": nodeclass},
                    "requirements": reqs,
                    "taints": [
                        {
                            k: v
                            for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect))
                            if v is not None
                        }
                        for t in pool.taints
                    ],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "24h",
                },
            },
            "disruption": disruption,
            "limits": {NVIDIA_GPU: str(gpu_limit)},
        },
    }


def _karpenter(bundle: Bundle) -> None:
    bp = bundle.blueprint
    a = bp.autoscaling
    bundle.releases.append(
        helm_release(
            KARPENTER,
            "kube-system",
            # IRSA: the chart's service account carries the controller role (charts/karpenter values.yaml
            # serviceAccount.annotations; Karpenter getting-started "eks.amazonaws.com/role-arn").
            {
                "settings": {"clusterName": bp.cluster_name, "interruptionQueue": bp.cluster_name},
                "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": a.iam_role_arn}},
            },
            order=5,
        )
    )
    bundle.note(
        "10-operators",
        "Karpenter's controller authenticates with IRSA (the role ARN annotated on its service "
        "account). With EKS Pod Identity instead, drop the annotation and create a pod identity association "
        "for the `karpenter` service account in `kube-system`",
    )
    sizes = {p.pool.root_volume_gi for p in bundle.plans if not _own_nodeclass(p.pool)}
    classes: list[tuple[str, int, GpuPool | None]] = [
        (nodeclass_name(d, sizes), d, None) for d in sorted(sizes)
    ]
    classes += [
        (pool_nodeclass(p.pool, sizes), p.pool.root_volume_gi, p.pool)
        for p in bundle.plans
        if _own_nodeclass(p.pool)
    ]
    for name, disk, own in classes:
        spec: dict[str, Any] = {
            "amiSelectorTerms": [{"alias": a.ami_alias}],
            "role": a.node_role,
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": bp.cluster_name}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": bp.cluster_name}}],
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {
                        "volumeSize": f"{disk}Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
        }
        if own is not None and own.placement_group is not None:
            spec["placementGroupSelector"] = {"name": own.placement_group}
        if own is not None and own.capacity_reservations:
            # ODCRs Karpenter uses before on-demand/spot (nodeclasses.md spec.capacityReservationSelectorTerms;
            # the ReservedCapacity feature gate is on by default since v1.6, charts/karpenter values.yaml).
            spec["capacityReservationSelectorTerms"] = [{"id": cr} for cr in own.capacity_reservations]
        bundle.add(
            "50-autoscaling",
            {
                "apiVersion": "karpenter.k8s.aws/v1",
                "kind": "EC2NodeClass",
                "metadata": meta(name),
                "spec": spec,
            },
        )
    for plan in bundle.plans:
        bundle.add("50-autoscaling", _nodepool(bundle, plan, pool_nodeclass(plan.pool, sizes)))
        if plan.pool.min_nodes:
            bundle.note(
                "50-autoscaling",
                f"pool `{plan.name}` asks for min {plan.pool.min_nodes} nodes: Karpenter "
                "has no minimum; keep warm capacity with low-priority placeholder pods",
            )
    bundle.decide(
        "autoscaling",
        "autoscaling.provisioner",
        "karpenter",
        "Karpenter launches the exact GPU instance type a pending pod needs, with no node groups to "
        "pre-create",
        "platform.md §3",
    )
    bundle.decide(
        "autoscaling",
        "autoscaling.consolidation",
        a.consolidation,
        "training and mixed pools use WhenEmpty: consolidating an underutilized node evicts running ranks "
        "and loses the whole job's progress; inference pools may consolidate when underutilized",
        "platform.md §3.1, §3.3",
    )
    bundle.decide(
        "autoscaling",
        "EC2NodeClass",
        f"alias {a.ami_alias}; gp3 root {', '.join(f'{d}Gi' for d in sorted({disk for _, disk, _ in classes}))} "
        "(one class per size, and one per pool with a placement group or reservations)",
        "the alias picks the NVIDIA AMI variant for GPU instances; a pinned version avoids drifting every "
        "node on each AMI release; 20Gi default disks are too small for 10-20 GB CUDA/vLLM images",
        "platform.md §3.2, §4.5",
    )
    for name, _, own in classes:
        if own is None:
            continue
        chosen = [
            *([f"placement group {own.placement_group}"] if own.placement_group else []),
            *(
                [f"capacity reservations {', '.join(own.capacity_reservations)}"]
                if own.capacity_reservations
                else []
            ),
        ]
        bundle.decide(
            "autoscaling",
            f"gpu_pools.{own.name} EC2NodeClass {name}",
            "; ".join(chosen),
            "each EC2NodeClass maps to exactly one placement group, so the pool gets a class of its own; a "
            "cluster placement group keeps EFA ranks on one network segment in one AZ, reservations are "
            "used before on-demand capacity",
            "aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/nodeclasses.md "
            "(spec.placementGroupSelector, spec.capacityReservationSelectorTerms)",
        )
    bundle.decide(
        "autoscaling",
        "NodePool.limits",
        "nvidia.com/gpu = max nodes x GPUs per node",
        "caps what a burst of pending pods can launch",
        "platform.md §3.1",
    )


def _gke_accelerator(plan: PoolPlan) -> str:
    """The ``cloud.google.com/gke-accelerator`` value of the pool's model (catalog data)."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    values = catalog().gke_accelerators(plan.model.name)
    return values[0] if values else plan.model.name.lower()


def _ca_flags(bundle: Bundle) -> list[str]:
    a = bundle.blueprint.autoscaling
    flags = [
        f"--scale-down-gpu-utilization-threshold={a.scale_down_gpu_utilization}",
        "--scale-down-unneeded-time=30m",
        "--max-node-provision-time=25m",
        "--expander=priority,least-waste",
        "--balance-similar-node-groups=true",
    ]
    return flags


@functools.cache
def ca_releases() -> dict[str, Any]:
    """The Cluster Autoscaler chart and image per Kubernetes minor (``data/cluster_autoscaler.yaml``)."""
    data = yaml.load((DATA_DIR / "cluster_autoscaler.yaml").read_text(), Loader=yaml.CSafeLoader)
    return dict(data)


def ca_release(minor: str) -> tuple[str, str] | None:
    """(chart version, image tag) for a Kubernetes minor such as ``1.33``, or None when CA has none."""
    row = ca_releases()["releases"].get(minor)
    return (str(row[0]), str(row[1])) if row else None


def _ca_common_decisions(bundle: Bundle) -> None:
    bundle.decide(
        "autoscaling",
        "autoscaling.provisioner",
        "cluster-autoscaler",
        "node groups per GPU pool scale between min and max; the GPU-utilization threshold (GPU requests / "
        "allocatable) decides scale-down of GPU nodes",
        "platform.md §2.3",
    )
    bundle.decide(
        "autoscaling",
        "max-node-provision-time",
        "25m",
        "a GPU node can take up to 15 minutes after Ready to advertise nvidia.com/gpu; the 15m default "
        "would give up on nodes that are still installing the driver",
        "platform.md §2.2",
    )


def _gke_node_pools(bundle: Bundle) -> None:
    bp = bundle.blueprint
    operator_driver = bp.driver.managed_by == "operator"
    # gpu-driver-version=disabled leaves the driver to the operator, which needs Ubuntu nodes (GKE "Run
    # GPUs in Standard node pools", "Manually install NVIDIA GPU drivers"; NVIDIA GPU Operator GKE guide).
    driver = "disabled" if operator_driver else "latest"
    image = " --image-type=UBUNTU_CONTAINERD" if operator_driver else ""
    for plan in bundle.plans:
        pool = plan.pool
        labels = ",".join(f"{k}={v}" for k, v in plan.node_labels().items())
        taints = ",".join(f"{t.key}={t.value or 'present'}:{t.effect}" for t in pool.taints)
        gke_name = _gke_accelerator(plan)
        zones = f" --node-locations={','.join(pool.zones)}" if pool.zones else ""
        placement = " --placement-type=COMPACT" if pool.workload == "training" and pool.max_nodes > 1 else ""
        bundle.note(
            "50-autoscaling",
            (
                f"`gcloud container node-pools create {pool.name} --cluster={bp.cluster_name} "
                f"--machine-type={pool.instance_types[0]} "
                f"--accelerator=type={gke_name},count={plan.gpus_per_node},gpu-driver-version={driver}{image} "
                f"--enable-autoscaling --min-nodes={pool.min_nodes} --max-nodes={pool.max_nodes}{zones}{placement} "
                f"--disk-size={pool.root_volume_gi} --node-labels={labels},gke-no-default-nvidia-gpu-device-plugin=true "
                f"--node-taints={taints}`"
            ),
        )
    bundle.note(
        "50-autoscaling",
        f"`gcloud container clusters update {bp.cluster_name} "
        "--autoscaling-profile=optimize-utilization` (GKE runs the cluster autoscaler itself)",
    )
    bundle.decide(
        "autoscaling",
        "provider gke",
        "GKE node-pool autoscaling",
        "GKE runs the cluster autoscaler in its control plane; node pools are autoscaled with "
        "--enable-autoscaling instead of a cluster-autoscaler Deployment",
        "GKE cluster autoscaler docs",
    )
    bundle.decide(
        "autoscaling",
        "driver.managed_by (gke)",
        f"gpu-driver-version={driver}",
        "the operator installs the driver on Ubuntu node pools created without GKE's driver"
        if operator_driver
        else "GKE installs the driver; the operator runs with driver.enabled=false",
        "GKE 'Run GPUs in Standard node pools'; NVIDIA GPU Operator with Google GKE",
    )


def _aks_tag_key(key: str) -> str:
    """An Azure tag name for a label or taint key: ``/`` becomes ``_`` and ``_`` becomes ``~2``
    (kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure/README.md, node-template tags)."""
    return key.replace("_", "~2").replace("/", "_")


def _aks(bundle: Bundle) -> None:
    bp = bundle.blueprint
    a = bp.autoscaling
    operator_driver = bp.driver.managed_by == "operator"
    for plan in bundle.plans:
        pool = plan.pool
        labels = " ".join(f"{k}={v}" for k, v in plan.node_labels().items())
        taints = ",".join(f"{t.key}={t.value or 'present'}:{t.effect}" for t in pool.taints)
        zones = f" --zones {' '.join(pool.zones)}" if pool.zones else ""
        # --gpu-driver none: AKS skips its driver so the operator's driver container owns it (Microsoft
        # Learn "Use the NVIDIA GPU Operator on AKS"; Azure CLI >= 2.72.2).
        driver = " --gpu-driver none" if operator_driver else ""
        if a.aks_mode == "node-pool":
            scale = f"--enable-cluster-autoscaler --min-count {pool.min_nodes} --max-count {pool.max_nodes}"
        else:
            scale = f"--node-count {pool.min_nodes}"
        bundle.note(
            "50-autoscaling",
            f"`az aks nodepool add --resource-group {a.azure_resource_group} --cluster-name {bp.cluster_name} "
            f"--name {pool.name.replace('-', '')[:12]} --node-vm-size {pool.instance_types[0]} {scale}{zones}"
            f"{driver} --node-osdisk-size {pool.root_volume_gi} --labels {labels} --node-taints {taints}`",
        )
        if a.aks_mode == "self-managed":
            tags = [
                "k8s.io_cluster-autoscaler_enabled=true",
                f"k8s.io_cluster-autoscaler_{bp.cluster_name}=owned",
                f"min={pool.min_nodes}",
                f"max={pool.max_nodes}",
                f"k8s.io_cluster-autoscaler_node-template_resources_{_aks_tag_key(NVIDIA_GPU)}={plan.gpus_per_node}",
            ]
            tags += [
                f"k8s.io_cluster-autoscaler_node-template_label_{_aks_tag_key(k)}={v}"
                for k, v in plan.node_labels().items()
            ]
            tags += [
                f"k8s.io_cluster-autoscaler_node-template_taint_{_aks_tag_key(t.key)}={t.value or 'present'}:{t.effect}"
                for t in pool.taints
            ]
            bundle.note(
                "50-autoscaling",
                f"scale set of node pool `{pool.name}`: tags " + ", ".join(f"`{t}`" for t in tags),
            )
    if a.aks_mode == "node-pool":
        bundle.note(
            "50-autoscaling",
            f"`az aks update --resource-group {a.azure_resource_group} --name {bp.cluster_name} "
            "--cluster-autoscaler-profile scale-down-unneeded-time=30m max-node-provision-time=25m "
            "balance-similar-node-groups=true expander=least-waste`",
        )
        bundle.decide(
            "autoscaling",
            "provider aks",
            "AKS node-pool cluster autoscaler",
            "AKS runs the cluster autoscaler for node pools created with --enable-cluster-autoscaler and "
            "min/max counts; a self-managed Deployment would compete with it",
            "kubernetes/autoscaler cloudprovider/azure/README.md 'AKS Autoscaler'; Microsoft Learn AKS cluster autoscaler",
        )
        return
    _self_managed_release(
        bundle,
        {
            "cloudProvider": "azure",
            "autoDiscovery": {"clusterName": bp.cluster_name},
            "azureResourceGroup": a.azure_resource_group,
            "azureSubscriptionID": a.azure_subscription_id,
            "azureTenantID": a.azure_tenant_id,
            "azureClientID": a.azure_client_id,
            "azureUseWorkloadIdentityExtension": True,
            "azureVMType": "vmss",
            "podLabels": {"azure.workload.identity/use": "true"},
            "rbac": {
                "serviceAccount": {"annotations": {"azure.workload.identity/client-id": a.azure_client_id}}
            },
        },
    )
    bundle.decide(
        "autoscaling",
        "autoscaling.aks_mode",
        "self-managed",
        "a cluster-autoscaler Deployment discovers the node pools' scale sets by their "
        "k8s.io_cluster-autoscaler_* tags (underscores: Azure tag names cannot hold '/') and reads min/max "
        "from their min and max tags; AKS's own autoscaler must stay off for those pools",
        "kubernetes/autoscaler cloudprovider/azure/README.md; charts/cluster-autoscaler values.yaml azure*",
    )


def _eks(bundle: Bundle) -> None:
    bp = bundle.blueprint
    a = bp.autoscaling
    for plan in bundle.plans:
        pool = plan.pool
        tags = [
            "k8s.io/cluster-autoscaler/enabled=true",
            f"k8s.io/cluster-autoscaler/{bp.cluster_name}=owned",
            f"k8s.io/cluster-autoscaler/node-template/resources/{NVIDIA_GPU}={plan.gpus_per_node}",
            f"k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage={pool.root_volume_gi}G",
        ]
        tags += [
            f"k8s.io/cluster-autoscaler/node-template/label/{k}={v}" for k, v in plan.node_labels().items()
        ]
        tags += [
            f"k8s.io/cluster-autoscaler/node-template/taint/{t.key}={t.value or 'present'}:{t.effect}"
            for t in pool.taints
        ]
        bundle.note(
            "50-autoscaling",
            f"node group `{pool.name}` (min {pool.min_nodes}, max {pool.max_nodes}; node labels "
            + ", ".join(f"`{k}={v}`" for k, v in plan.node_labels().items())
            + "): tags "
            + ", ".join(f"`{t}`" for t in tags),
        )
    _self_managed_release(
        bundle,
        {
            "cloudProvider": "aws",
            "awsRegion": bp.region,
            "autoDiscovery": {"clusterName": bp.cluster_name},
            "rbac": {"serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": a.iam_role_arn}}},
        },
    )
    bundle.decide(
        "autoscaling",
        "provider eks",
        f"awsRegion {bp.region}, IRSA role, k8s.amazonaws.com/accelerator node label",
        "the chart's awsRegion defaults to us-east-1; the controller calls the Auto Scaling API with the IRSA "
        "role; CA treats a node carrying k8s.amazonaws.com/accelerator but no allocatable GPU yet as not "
        "ready instead of scaling up again while the driver loads",
        "kubernetes/autoscaler charts/cluster-autoscaler/values.yaml (awsRegion, rbac.serviceAccount.annotations); "
        "cloudprovider/aws/aws_cloud_provider.go GPULabel",
    )


def _self_managed_release(bundle: Bundle, cloud_values: dict[str, Any]) -> None:
    bp = bundle.blueprint
    release = ca_release(bp.kubernetes_version)
    assert release is not None  # guaranteed by check_blueprint
    chart, image = release
    values = {
        **cloud_values,
        "image": {"tag": image},
        "extraArgs": {f.split("=", 1)[0].lstrip("-"): f.split("=", 1)[1] for f in _ca_flags(bundle)},
    }
    bundle.releases.append(
        HelmRelease(
            release="cluster-autoscaler",
            chart="cluster-autoscaler",
            repo="https://kubernetes.github.io/autoscaler",
            version=chart,
            namespace="kube-system",
            order=5,
            values=values,
            source=f"kubernetes/autoscaler chart {chart} (appVersion {image.rsplit('.', 1)[0].lstrip('v')}.x); "
            f"image {image}, the newest patch of the cluster's minor; {ca_releases()['source']}, "
            f"checked {ca_releases()['checked']}",
        )
    )
    bundle.add(
        "50-autoscaling",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("cluster-autoscaler-priority-expander", "kube-system"),
            "data": {
                "priorities": "".join(
                    f"{10 * (len(bundle.plans) - i)}:\n  - .*{p.name}.*\n" for i, p in enumerate(bundle.plans)
                )
            },
        },
    )
    if bp.autoscaling.gpu_limit is not None:
        bundle.note(
            "50-autoscaling",
            f"cap: the node groups' max sizes add up to the GPU limit {bp.autoscaling.gpu_limit}",
        )


def _cluster_autoscaler(bundle: Bundle) -> None:
    _ca_common_decisions(bundle)
    provider = bundle.blueprint.provider
    if provider == "gke":
        _gke_node_pools(bundle)
    elif provider == "aks":
        _aks(bundle)
    else:
        _eks(bundle)


def render(bundle: Bundle) -> None:
    p = bundle.blueprint.autoscaling.provisioner
    if p == "karpenter":
        _karpenter(bundle)
    elif p == "cluster-autoscaler":
        _cluster_autoscaler(bundle)
