"""Contradictions a blueprint can carry although every field is well-typed.

A contradicting blueprint is refused, never rendered: rendering it would produce objects
the API server accepts and a cluster that silently does not work (a quota nobody can use,
a ClusterQueue pointing at no flavor, a dataset two nodes cannot mount). Every message
starts with the blueprint field at fault.

Facts checked against:
- MIG profiles and placements: the hardware catalog (``gpu/data/models.yaml``, from the MIG
  user guide) and :func:`gpuplane.gpu.mig.layout_fits`.
- Sharing replicas >= 2: k8s-device-plugin ``api/config/v1/replicas.go``
  ("number of replicas must be >= 2").
- Access modes: Kubernetes "Persistent Volumes" (RWO = one node); a dataset read by every
  worker on many nodes needs ReadWriteMany / ReadOnlyMany (reference platform.md §4.1).
- CSI backends per provider: reference platform.md §4.2.
- Pod sizes against node shapes, vLLM weights against the GPU memory a replica gets:
  :mod:`gpuplane.generate.sizing` (rules and sources there).
- MPIJob: kubeflow/training-operator v1.9 ships an MPIJob ``kubeflow.org/v1`` CRD named
  ``mpijobs.kubeflow.org``, the name mpi-operator's ``v2beta1`` CRD uses; one cluster holds one
  of them (/work/shared/corpus/crds/SOURCES.md, "Kubeflow training-operator v1").
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuplane.generate import sizing
from gpuplane.generate.blueprint import Blueprint, GpuPool, InferenceTemplate, TrainingTemplate
from gpuplane.generate.plan import gpus_per_node
from gpuplane.gpu.catalog import GpuModel, catalog
from gpuplane.gpu.mig import layout_fits
from gpuplane.k8s.quantity import QuantityError, parse_quantity

BACKEND_PROVIDERS: dict[str, tuple[str, ...]] = {
    "nfs": ("eks", "gke", "aks", "on-prem"),
    "efs": ("eks",),
    "fsx-lustre": ("eks",),
    "filestore": ("gke",),
    "managed-lustre": ("gke",),
    "azurefile": ("aks",),
    "azure-lustre": ("aks",),
    "gpfs": ("on-prem", "eks", "gke", "aks"),
}
CATALOG_PROVIDER = {"eks": "aws", "gke": "gcp", "aks": "azure"}
SHARED_MODES = ("ReadWriteMany", "ReadOnlyMany")


def _mig_from_planner(
    model: GpuModel, demand: dict[str, int], gpus: int
) -> tuple[list[dict[str, int]] | None, str]:
    """Per-GPU layouts for a slice demand, from the exact MIG planner (``gpuplane advise mig``).

    GPUs the demand does not need stay carved like the first one, so the pool is uniform.
    """
    from gpuplane.advise.mig_planner import FleetEntry, PlanInputError, plan_mig  # deferred for start-up time

    try:
        plan = plan_mig([FleetEntry(model, gpus)], dict(demand))
    except PlanInputError as exc:
        return None, str(exc)
    if not plan.feasible:
        needed = f"needs {plan.gpus_needed} x {model.name}; " if plan.gpus_needed else ""
        reason = plan.reason or f"the pool has {gpus} at its largest size"
        return None, f"the MIG planner cannot host {demand} on {gpus} x {model.name}: {needed}{reason}"
    layouts = [dict(g.profiles) for g in plan.layout]
    while layouts and len(layouts) < gpus:
        layouts.append(dict(layouts[0]))
    return layouts, ""


def _check_pool(
    bp: Blueprint, i: int, pool: GpuPool, problems: list[str], mig: dict[str, list[dict[str, int]]]
) -> None:
    cat = catalog()
    where = f"gpu_pools[{i}]"
    model = cat.model(pool.gpu)
    if model is None:
        known = ", ".join(sorted(m for m, v in cat.models.items() if v.vendor == "nvidia"))
        problems.append(f"{where}.gpu: unknown GPU model {pool.gpu!r} (catalog: {known})")
        return
    for j, itype in enumerate(pool.instance_types):
        it = cat.instance(itype)
        if it is None:
            problems.append(f"{where}.instance_types[{j}]: {itype!r} is not in the hardware catalog")
            continue
        if bp.provider in CATALOG_PROVIDER and it.provider != CATALOG_PROVIDER[bp.provider]:
            problems.append(
                f"{where}.instance_types[{j}]: {itype} is a {it.provider} instance type, not {bp.provider}"
            )
        if it.gpu_model != model.name:
            problems.append(f"{where}.instance_types[{j}]: {itype} carries {it.gpu_model}, not {model.name}")
    if bp.provider == "on-prem" and pool.instance_types:
        problems.append(f"{where}.instance_types: on-prem pools give gpus_per_node, not cloud instance types")
    if bp.provider != "on-prem" and not pool.instance_types:
        problems.append(f"{where}.instance_types: a {bp.provider} pool needs at least one instance type")
    per_node = gpus_per_node(pool)
    if per_node is None:
        if pool.instance_types:
            problems.append(
                f"{where}.instance_types: the types carry different GPU counts; split them into pools"
            )
        else:
            problems.append(f"{where}.gpus_per_node: required when no instance type is given")
        return
    if bp.provider == "on-prem" or all(cat.instance(t) is not None for t in pool.instance_types):
        shape, missing = sizing.node_shape(pool, per_node)
        if shape is None and bp.provider == "on-prem":
            problems.append(
                f"{where}.{missing}: on-prem pools give host cpus_per_node and memory_per_node_gi (only 8 x "
                f"{sizing.DGX_GPU} nodes default to the DGX H100's 224 CPUs / 2048 GiB); pods are sized from them"
            )
        elif shape is None:
            problems.append(f"{where}.instance_types: {missing}; pods cannot be sized")
    if bp.provider != "on-prem" and (pool.cpus_per_node is not None or pool.memory_per_node_gi is not None):
        problems.append(
            f"{where}.cpus_per_node: cloud pools take host CPUs and memory from the instance type"
        )
    sharing = pool.sharing
    s_where = f"{where}.sharing"
    if sharing.mode in ("time-slicing", "mps"):
        if sharing.replicas is None:
            problems.append(f"{s_where}.replicas: required for {sharing.mode}")
        elif sharing.replicas < 2:
            problems.append(
                f"{s_where}.replicas: number of replicas must be >= 2 (device plugin), got {sharing.replicas}"
            )
    elif sharing.replicas is not None:
        problems.append(f"{s_where}.replicas: only used with time-slicing or mps (mode is {sharing.mode})")
    if sharing.mode != "mig" and (sharing.mig_layout or sharing.mig_demand):
        problems.append(f"{s_where}.mode: mig_layout/mig_demand given but mode is {sharing.mode}")
    if sharing.mode != "mig":
        return
    if not model.mig_capable:
        problems.append(f"{s_where}.mode: {model.name} does not support MIG")
        return
    if sharing.mig_layout and sharing.mig_demand:
        problems.append(f"{s_where}: give mig_layout or mig_demand, not both")
        return
    if sharing.mig_layout:
        unknown = _unoffered_profile(model, sharing.mig_layout, f"{s_where}.mig_layout")
        if unknown:
            problems.append(unknown)
            return
        ok, reason = layout_fits(model, dict(sharing.mig_layout))
        if not ok:
            problems.append(f"{s_where}.mig_layout: {reason}")
            return
        mig[pool.name] = [dict(sharing.mig_layout) for _ in range(per_node)]
        return
    if sharing.mig_demand:
        unknown = _unoffered_profile(model, sharing.mig_demand, f"{s_where}.mig_demand")
        if unknown:
            problems.append(unknown)
            return
        # The demand is per node: every node of the pool is carved the same way.
        layouts, reason = _mig_from_planner(model, dict(sharing.mig_demand), per_node)
        if layouts is None:
            problems.append(f"{s_where}.mig_demand: {reason}")
            return
        for g, layout in enumerate(layouts):
            ok, why = layout_fits(model, layout)
            if not ok:
                problems.append(f"{s_where}.mig_demand: planner layout for GPU {g} is invalid: {why}")
                return
        mig[pool.name] = layouts
        return
    problems.append(f"{s_where}.mig_layout: MIG needs a layout (or a mig_demand for the MIG planner)")


def _unoffered_profile(model: GpuModel, profiles: Iterable[str], where: str) -> str | None:
    """The problem with the first of ``profiles`` (a mig_layout's or mig_demand's keys) that the
    model does not offer, or None when it offers them all."""
    for profile in profiles:
        if model.profile(profile) is None:
            offered = ", ".join(p.name for p in model.mig_profiles)
            return (
                f"{where}.{profile}: {model.name} does not offer MIG profile {profile} (offered: {offered})"
            )
    return None


def _capacity(bp: Blueprint, mig: dict[str, list[dict[str, int]]]) -> dict[str, int]:
    """Largest schedulable units per quota key: GPU model name or MIG profile."""
    cat = catalog()
    cap: dict[str, int] = {}
    for pool in bp.gpu_pools:
        model = cat.model(pool.gpu)
        per_node = gpus_per_node(pool)
        if model is None or per_node is None:
            continue
        if pool.sharing.mode == "mig":
            for layout in mig.get(pool.name, []):
                for profile, n in layout.items():
                    cap[profile] = cap.get(profile, 0) + n * pool.max_nodes
            continue
        replicas = pool.sharing.replicas or 1 if pool.sharing.mode in ("time-slicing", "mps") else 1
        cap[model.name] = cap.get(model.name, 0) + per_node * replicas * pool.max_nodes
    return cap


def _quota_key(key: str) -> str:
    model = catalog().model(key)
    return model.name if model is not None else key


def _check_tenants(bp: Blueprint, problems: list[str], mig: dict[str, list[dict[str, int]]]) -> None:
    cap = _capacity(bp, mig)
    seen: set[str] = set()
    totals: dict[str, int] = {}
    pool_names = {p.name for p in bp.gpu_pools}
    for i, t in enumerate(bp.tenants):
        where = f"tenants[{i}]"
        if t.name in seen:
            problems.append(f"{where}.name: duplicate tenant {t.name}")
        seen.add(t.name)
        for key, n in t.gpu_quota.items():
            k = _quota_key(key)
            if k not in cap:
                have = ", ".join(sorted(cap)) or "none"
                problems.append(f"{where}.gpu_quota.{key}: no pool offers {key} (pools offer: {have})")
                continue
            if n > cap[k]:
                problems.append(
                    f"{where}.gpu_quota.{key}: quota {n} is larger than the pools' {cap[k]} at their largest size"
                )
            totals[k] = totals.get(k, 0) + n
        for j, flavor in enumerate(t.flavors or []):
            if flavor not in pool_names:
                problems.append(
                    f"{where}.flavors[{j}]: queue names flavor {flavor!r}, but no gpu_pool of that name exists "
                    f"(flavors: {', '.join(sorted(pool_names))})"
                )
        if (t.flavors or t.cohort) and bp.scheduler.name != "kueue":
            problems.append(
                f"{where}.flavors: flavors and cohort are Kueue settings; scheduler is {bp.scheduler.name}"
            )


def _check_storage(bp: Blueprint, problems: list[str]) -> None:
    names: dict[str, str] = {}
    tenants = {t.name for t in bp.tenants}
    for section in ("shared_datasets", "high_performance"):
        for i, vol in enumerate(getattr(bp.storage, section)):
            where = f"storage.{section}[{i}]"
            if vol.name in names:
                problems.append(f"{where}.name: duplicate volume name {vol.name}")
            names[vol.name] = vol.backend
            if bp.provider not in BACKEND_PROVIDERS[vol.backend]:
                problems.append(f"{where}.backend: {vol.backend} is not available on {bp.provider}")
            if section == "shared_datasets" and vol.access_mode not in SHARED_MODES:
                problems.append(
                    f"{where}.access_mode: a shared dataset is mounted by pods on many nodes; {vol.access_mode} "
                    "allows one node (use ReadWriteMany or ReadOnlyMany)"
                )
            if section == "shared_datasets" and vol.backend in (
                "fsx-lustre",
                "managed-lustre",
                "azure-lustre",
                "gpfs",
            ):
                problems.append(f"{where}.backend: {vol.backend} is a high_performance backend")
            if section == "high_performance" and vol.backend in ("efs", "filestore", "azurefile", "nfs"):
                problems.append(f"{where}.backend: {vol.backend} is a shared_datasets backend")
            if section == "high_performance" and vol.access_mode != "ReadWriteMany":
                problems.append(f"{where}.access_mode: checkpoints from every rank need ReadWriteMany")
            for j, ns in enumerate(vol.namespaces):
                if ns not in tenants:
                    problems.append(f"{where}.namespaces[{j}]: no tenant {ns!r}")
    volumes = {v.name: v for v in (*bp.storage.shared_datasets, *bp.storage.high_performance)}
    for key in ("checkpoints", "model_cache"):
        ref = getattr(bp.storage, key)
        if ref is None:
            continue
        if ref.volume not in names:
            problems.append(f"storage.{key}.volume: no volume named {ref.volume!r}")
            continue
        vol = volumes[ref.volume]
        if vol.access_mode != "ReadWriteMany":
            problems.append(
                f"storage.{key}.volume: {vol.name} is {vol.access_mode}; {key} are written, it must be ReadWriteMany"
            )
        if ref.size is not None and _bytes(ref.size) > _bytes(vol.size):
            problems.append(f"storage.{key}.size: {ref.size} is larger than volume {vol.name} ({vol.size})")
    for i, vol in enumerate(bp.storage.shared_datasets):
        # A dynamically provisioned claim starts empty; read-only, nothing can ever fill it.
        if vol.access_mode == "ReadOnlyMany" and vol.backend not in STATIC_DATASET_BACKENDS:
            problems.append(
                f"storage.shared_datasets[{i}].access_mode: a ReadOnlyMany claim on a dynamically provisioned "
                f"{vol.backend} volume starts empty and can never be written; use ReadWriteMany (load data with a "
                "writer Job; training pods still mount it read-only)"
            )


STATIC_DATASET_BACKENDS = ("efs", "nfs")  # gpuplane binds these read-only datasets to the existing share


def _bytes(q: str) -> float:
    try:
        return float(parse_quantity(q))
    except QuantityError:
        return 0.0


def _check_fit(
    bp: Blueprint,
    where: str,
    w: TrainingTemplate | InferenceTemplate,
    pool: GpuPool,
    per_node: int,
    mig: dict[str, list[dict[str, int]]],
    problems: list[str],
) -> None:
    """Requests must fit the pod's share of its node; vLLM weights must fit its GPU memory."""
    shape, _ = sizing.node_shape(pool, per_node)
    if shape is None:
        return  # reported on the pool
    units = sizing.node_units(pool, per_node, mig.get(pool.name))
    need = w.gpus_per_worker if isinstance(w, TrainingTemplate) else w.gpus
    share = sizing.pod_share(shape, need if pool.sharing.mode == "none" else 1, units)
    node = ", ".join(pool.instance_types) or f"{pool.name} node"
    share_text = (
        f"a pod's share of a {node} ({shape.cpu_m // 1000} CPUs, {shape.memory_mi // 1024} GiB, "
        f"{units} GPU units) is {share.cpu} CPU / {share.memory} after the system reserve"
    )
    cpu_m, mem_mi = share.cpu_m, share.memory_mi
    pods = units // (need if pool.sharing.mode == "none" else 1)
    disk = bp.storage.model_artifacts_gi * pods
    usable = int(pool.root_volume_gi * sizing.IMAGEFS_USABLE) - sizing.IMAGE_LAYERS_GI
    if bp.provider != "on-prem" and disk > usable:
        problems.append(
            f"storage.model_artifacts_gi: {pods} pods per {pool.name} node x {bp.storage.model_artifacts_gi}Gi "
            f"ephemeral-storage = {disk}Gi; gpu_pools root_volume_gi {pool.root_volume_gi} leaves {usable}Gi "
            f"(85% image-GC threshold, {sizing.IMAGE_LAYERS_GI}Gi of images): raise root_volume_gi or lower it"
        )
    for field, value, have in (("cpu", w.cpu, share.cpu_m), ("memory", w.memory, share.memory_mi)):
        if value is None:
            continue
        asked = float(parse_quantity(value)) * (1000 if field == "cpu" else 1 / (1024 * 1024))
        if asked > have:
            problems.append(f"{where}.{field}: {value} does not fit: {share_text}")
        elif field == "cpu":
            cpu_m = int(asked)
        else:
            mem_mi = int(asked)
    if cpu_m < sizing.MIN_CPU_M or mem_mi < sizing.MIN_MEMORY_MI:
        problems.append(f"{where}.pool: too small for a GPU pod (at least 1 CPU and 4Gi): {share_text}")
        return
    if isinstance(w, TrainingTemplate):
        shm_mi = float(parse_quantity(w.shm_size)) / (1024 * 1024)
        if shm_mi * 2 > mem_mi:
            problems.append(
                f"{where}.shm_size: {w.shm_size} of /dev/shm counts against the pod's memory limit "
                f"({sizing.format_memory(mem_mi)}); keep it at most half of it (platform.md §4.6)"
            )
        return
    _check_model(where, w, pool, mig, problems)


def _check_model(
    where: str, w: InferenceTemplate, pool: GpuPool, mig: dict[str, list[dict[str, int]]], problems: list[str]
) -> None:
    model = catalog().model(pool.gpu)
    if model is None:
        return
    size = sizing.model_size_gb(w.model, w.model_size_gb)
    shared = pool.sharing.mode in ("time-slicing", "mps")
    if size is None:
        if shared:
            problems.append(
                f"{where}.model_size_gb: required to serve {w.model} on {pool.sharing.mode} GPUs "
                "(vLLM pre-allocates its GPU memory and shared replicas get no memory isolation)"
            )
        return
    replicas = pool.sharing.replicas or 1 if shared else 1
    profile = None
    if pool.sharing.mode == "mig":
        layouts = mig.get(pool.name) or []
        profiles = sorted(
            {p for layout in layouts for p in layout}, key=lambda p: -sizing.device_memory_gb(model, p)
        )
        profile = profiles[0] if profiles else None
    device_gb = sizing.device_memory_gb(model, profile)
    util = sizing.gpu_memory_utilization(replicas)
    # A multi-node replica splits the weights over every GPU of its group (tensor x pipeline parallel).
    gpus = w.gpus * w.nodes
    ok, budget = sizing.weights_fit(size, device_gb, util, gpus)
    if not ok:
        what = (
            f"{replicas}-way {pool.sharing.mode} share"
            if shared
            else (f"{profile} MIG device" if profile else "GPU")
        )
        problems.append(
            f"{where}.model: {w.model} needs {size:g} GB of weights; a {what} of {model.name} gives vLLM "
            f"{budget:.1f} GB (--gpu-memory-utilization {float(util):g} x {device_gb:g} GB x {gpus}), and weights may "
            "take at most 80% of it (the rest is KV cache); use whole GPUs, fewer replicas or a smaller model"
        )


def _check_workloads(bp: Blueprint, problems: list[str], mig: dict[str, list[dict[str, int]]]) -> None:
    kinds = {w.kind for w in bp.workloads.training}
    if "pytorchjob" in kinds and "mpijob" in kinds:
        problems.append(
            "workloads.training: pytorchjob needs Kubeflow training-operator v1.9, whose install ships an MPIJob "
            "kubeflow.org/v1 CRD with the same name (mpijobs.kubeflow.org) as mpi-operator's v2beta1 CRD that "
            "mpijob needs; a cluster holds one of them: use one of the two kinds"
        )
    for section in ("training", "inference"):
        for i, w in enumerate(getattr(bp.workloads, section)):
            where = f"workloads.{section}[{i}]"
            if bp.tenant(w.tenant) is None:
                problems.append(f"{where}.tenant: no tenant {w.tenant!r}")
            pool = bp.pool(w.pool)
            if pool is None:
                problems.append(f"{where}.pool: no gpu_pool {w.pool!r}")
                continue
            per_node = gpus_per_node(pool)
            need = w.gpus_per_worker if section == "training" else w.gpus
            if pool.sharing.mode == "mig":
                if need != 1:
                    problems.append(
                        f"{where}: a MIG pool gives each container one MIG device; request 1, not {need}"
                    )
            elif pool.sharing.mode in ("time-slicing", "mps"):
                if need != 1 and pool.sharing.fail_requests_greater_than_one:
                    problems.append(
                        f"{where}: {pool.name} shares GPUs with failRequestsGreaterThanOne; request 1, not {need}"
                    )
            elif per_node is not None and need > per_node:
                problems.append(f"{where}: {need} GPUs per pod; {pool.name} nodes have {per_node}")
                continue
            if per_node is not None:
                _check_fit(bp, where, w, pool, per_node, mig, problems)
            if section == "training":
                if w.kind == "volcano-job" and bp.scheduler.name != "volcano":
                    problems.append(
                        f"{where}.kind: a Volcano Job needs scheduler volcano (scheduler is {bp.scheduler.name})"
                    )
                if w.kind == "rayjob" and bp.scheduler.name == "coscheduling":
                    # ray-project/kuberay v1.7.0 batchscheduler/scheduler-plugins/scheduler_plugins.go
                    # DoBatchSchedulingOnSubmission: "currently only RayCluster is supported"; the RayJob
                    # controller calls it for every RayJob and requeues on the error.
                    problems.append(
                        f"{where}.kind: KubeRay 1.7's scheduler-plugins integration gang-schedules RayClusters "
                        "only: a RayJob is refused by it and never gets its cluster; use scheduler volcano or "
                        "kueue for rayjob"
                    )
            elif w.nodes > 1 and bp.scheduler.name == "coscheduling":
                # kubernetes-sigs/lws v0.10.0 pkg/schedulerprovider: Volcano is the only provider.
                problems.append(
                    f"{where}.nodes: LeaderWorkerSet 0.10 has no coscheduling provider (Volcano only): its groups "
                    "would not be gang-scheduled; use scheduler volcano or kueue for multi-node serving"
                )
            elif w.nodes > 1 and pool.sharing.mode != "none":
                problems.append(
                    f"{where}.nodes: a multi-node replica needs whole GPUs; {pool.name} shares them "
                    f"({pool.sharing.mode})"
                )
            if section == "inference" and w.min_replicas > w.max_replicas:
                problems.append(
                    f"{where}.min_replicas: {w.min_replicas} is larger than max_replicas {w.max_replicas}"
                )


def _check_platform(bp: Blueprint, problems: list[str]) -> None:
    a = bp.autoscaling
    if a.provisioner == "karpenter" and bp.provider != "eks":
        problems.append(
            f"autoscaling.provisioner: Karpenter NodePools + EC2NodeClass need provider eks, not {bp.provider}"
        )
    if a.provisioner == "karpenter" and a.node_role is None:
        problems.append("autoscaling.node_role: Karpenter's EC2NodeClass needs the node IAM role")
    if a.provisioner == "karpenter" and bp.provider == "eks" and a.iam_role_arn is None:
        problems.append(
            "autoscaling.iam_role_arn: the Karpenter controller needs an IAM role (IRSA: annotated on its service "
            "account as eks.amazonaws.com/role-arn), e.g. arn:aws:iam::111122223333:role/KarpenterController"
        )
    if a.provisioner == "cluster-autoscaler" and bp.provider == "eks":
        # The chart's awsRegion defaults to us-east-1 (kubernetes/autoscaler charts/cluster-autoscaler
        # values.yaml "awsRegion -- AWS region (required if cloudProvider=aws)").
        if bp.region is None:
            problems.append(
                "region: the Cluster Autoscaler on EKS needs the cluster's AWS region (awsRegion)"
            )
        if a.iam_role_arn is None:
            problems.append(
                "autoscaling.iam_role_arn: the Cluster Autoscaler needs an IAM role allowed to describe and resize "
                "the node groups' Auto Scaling groups (IRSA: eks.amazonaws.com/role-arn on its service account)"
            )
    if a.provisioner == "cluster-autoscaler" and bp.provider in ("eks", "aks"):
        from gpuplane.generate.render.autoscaling import ca_release  # deferred for start-up time

        needs_deployment = bp.provider == "eks" or a.aks_mode == "self-managed"
        if needs_deployment and ca_release(bp.kubernetes_version) is None:
            problems.append(
                f"kubernetes_version: no Cluster Autoscaler release for {bp.kubernetes_version} in "
                "generate/data/cluster_autoscaler.yaml (CA's minor must match the cluster's)"
            )
    if a.aks_mode == "self-managed" and bp.provider != "aks":
        problems.append(f"autoscaling.aks_mode: self-managed applies to provider aks, not {bp.provider}")
    if a.provisioner == "cluster-autoscaler" and bp.provider == "aks":
        if a.azure_resource_group is None:
            problems.append(
                "autoscaling.azure_resource_group: AKS node pools are created in the cluster's resource group"
            )
        if a.aks_mode == "self-managed":
            for key in ("azure_subscription_id", "azure_tenant_id", "azure_client_id"):
                if getattr(a, key) is None:
                    problems.append(
                        f"autoscaling.{key}: required by a self-managed Cluster Autoscaler on Azure (chart values "
                        "azureSubscriptionID / azureTenantID / azureClientID with workload identity)"
                    )
    karpenter = bp.provider == "eks" and a.provisioner == "karpenter"
    for i, pool in enumerate(bp.gpu_pools):
        if (pool.placement_group is not None or pool.capacity_reservations) and not karpenter:
            problems.append(
                f"gpu_pools[{i}]: placement_group and capacity_reservations are Karpenter EC2NodeClass selectors "
                "(provider eks, provisioner karpenter); with other node groups set them on the node group"
            )
        elif karpenter and pool.capacity_type == "reserved" and not pool.capacity_reservations:
            # Karpenter launches reserved capacity only from the reservations its EC2NodeClass selects
            # (karpenter-provider-aws v1.14.1 nodeclasses.md spec.capacityReservationSelectorTerms).
            problems.append(
                f"gpu_pools[{i}].capacity_reservations: capacity_type reserved needs the reservation ids (cr-...) "
                "the pool's EC2NodeClass selects; without them Karpenter finds no reserved capacity to launch"
            )
    if a.provisioner != "none" and bp.provider == "on-prem":
        problems.append("autoscaling.provisioner: on-prem pools are fixed; use provisioner none")
    if a.provisioner == "none":
        for i, pool in enumerate(bp.gpu_pools):
            if pool.count is None:
                problems.append(
                    f"gpu_pools[{i}].max: min/max need an autoscaler; give count or autoscaling.provisioner"
                )
    if a.provisioner != "none" and bp.cluster_name is None:
        problems.append("cluster_name: required by the autoscaler configuration")
    if bp.provider == "eks" and a.provisioner == "karpenter" and bp.driver.managed_by == "operator":
        problems.append(
            "driver.managed_by: Karpenter's al2023/bottlerocket alias selects the NVIDIA AMI variant, which ships the "
            "driver; use preinstalled"
        )
    minor = int(bp.kubernetes_version.split(".")[1])
    if not 25 <= minor <= 37:
        problems.append(f"kubernetes_version: {bp.kubernetes_version} has no bundled schema (1.25 to 1.37)")
    names = [p.name for p in bp.gpu_pools]
    for i, name in enumerate(names):
        if names.index(name) != i:
            problems.append(f"gpu_pools[{i}].name: duplicate pool {name}")


def _check_network(bp: Blueprint, problems: list[str]) -> None:
    """The fabric the blueprint names must exist on the pools that run multi-node training."""
    from gpuplane.generate.plan import catalog_fabric, multi_node_pools  # deferred for start-up time

    fabric = bp.network.fabric
    if bp.network.mode == "sriov":
        if fabric not in ("auto", "infiniband", "roce"):
            problems.append(
                f"network.mode: sriov hands out InfiniBand/RoCE devices; network.fabric is {fabric}"
            )
        elif bp.provider == "on-prem" and bp.network.rdma_devices_per_node is None:
            problems.append(
                "network.rdma_devices_per_node: sriov on-prem needs the RDMA devices (PFs/VFs) each node offers, "
                "so every rank can request its share"
            )
    if fabric in ("auto", "none"):
        return
    where = "network.fabric"
    if fabric == "gpudirect-tcpx":
        # What the upstream set-up needs, each checked in GoogleCloudPlatform/container-engine-accelerators
        # (gpudirect-tcpx/nccl-tcpx-installer.yaml, nccl-test-latest.yaml; gpudirect-tcpxo/ for A3 Mega).
        # The networking.gke.io objects have no schema here to validate against and the node pool's
        # extra NICs sit in VPCs the blueprint does not describe, so the fabric is refused, not guessed.
        problems.append(
            f"{where}: gpudirect-tcpx is not rendered by gpuplane; it needs (1) VPCs and subnets you create for "
            "the node pool's additional gVNICs (4 on A3 High, 8 on A3 Mega; gcloud --additional-node-network) "
            "and a GKENetworkParamSet + Network (networking.gke.io/v1) per VPC, (2) the NCCL plugin installer "
            "DaemonSet (container-engine-accelerators gpudirect-tcpx/nccl-tcpx-installer.yaml, or "
            "gpudirect-tcpxo/nccl-tcpxo-installer.yaml), (3) per training pod the networking.gke.io/interfaces "
            "and devices.gke.io/container.tcpx-daemon annotations and the tcpx-daemon (tcpgpudmarxd) sidecar "
            "with /run/tcpx, /sys and /proc/sys from the host; use none and follow GKE's GPUDirect-TCPX guide"
        )
        return
    if fabric == "efa" and bp.provider != "eks":
        problems.append(f"{where}: EFA exists on AWS only, not {bp.provider}")
        return
    if fabric in ("infiniband", "roce") and bp.provider in ("eks", "gke"):
        problems.append(f"{where}: {bp.provider} offers no {fabric} to pods; use auto (EFA on AWS) or none")
        return
    if fabric == "roce" and bp.network.mode == "shared" and bp.network.roce_interface is None:
        problems.append(
            "network.roce_interface: roce needs the host device of the RoCE port (macvlan master)"
        )
    pools = multi_node_pools(bp)
    for i, pool in enumerate(bp.gpu_pools):
        if pool.name not in pools or bp.provider == "on-prem":
            continue
        have = catalog_fabric(pool)[0]
        if have != fabric:
            kinds = ", ".join(pool.instance_types)
            problems.append(
                f"gpu_pools[{i}].instance_types: {kinds} carry {have if have != 'none' else 'no'} fabric, but "
                f"network.fabric is {fabric} and the pool runs multi-node training (gpu/data/fabric.yaml)"
            )


def check_blueprint(bp: Blueprint) -> tuple[list[str], dict[str, list[dict[str, int]]]]:
    """All contradictions (field first) and the per-GPU MIG layouts of every MIG pool."""
    problems: list[str] = []
    mig: dict[str, list[dict[str, int]]] = {}
    _check_platform(bp, problems)
    for i, pool in enumerate(bp.gpu_pools):
        _check_pool(bp, i, pool, problems, mig)
    _check_tenants(bp, problems, mig)
    _check_storage(bp, problems)
    _check_workloads(bp, problems, mig)
    _check_network(bp, problems)
    return problems, mig
