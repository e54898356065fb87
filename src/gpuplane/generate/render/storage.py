"""StorageClasses and claims: shared datasets, high-performance file systems, checkpoints,
model cache.

Provisioners and parameters: reference platform.md §4.2-4.3 (aws-efs-csi-driver,
gcp-filestore-csi-driver, azurefile-csi-driver, aws-fsx-csi-driver, lustre-csi-driver,
azurelustre-csi-driver, IBM Storage Scale CSI, csi-driver-nfs). Every class binds
``WaitForFirstConsumer`` (§4.4).
"""

from __future__ import annotations

from typing import Any

from gpuplane.generate.blueprint import Volume
from gpuplane.generate.render.base import Bundle, meta

PROVISIONERS = {
    "nfs": "nfs.csi.k8s.io",
    "efs": "efs.csi.aws.com",
    "filestore": "filestore.csi.storage.gke.io",
    "azurefile": "file.csi.azure.com",
    "fsx-lustre": "fsx.csi.aws.com",
    "managed-lustre": "lustre.csi.storage.gke.io",
    "azure-lustre": "azurelustre.csi.azure.com",
    "gpfs": "spectrumscale.csi.ibm.com",
}
# Parameters the driver cannot work without (platform.md §4.2-4.3); the blueprint must give them.
REQUIRED_PARAMETERS = {
    "nfs": ("server", "share"),
    "efs": ("fileSystemId",),
    "fsx-lustre": ("subnetId", "securityGroupIds"),
    "gpfs": ("volBackendFs", "clusterId"),
    "filestore": (),
    "azurefile": (),
    "managed-lustre": (),
    "azure-lustre": (),
}
DEFAULT_PARAMETERS = {
    "efs": {"provisioningMode": "efs-ap", "directoryPerms": "700"},
    "fsx-lustre": {"deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": "250"},
    "filestore": {"tier": "enterprise"},
    "azurefile": {"skuName": "Premium_LRS", "protocol": "nfs"},
    "managed-lustre": {"perUnitStorageThroughput": "1000"},
    "azure-lustre": {"sku-name": "AMLFS-Durable-Premium-125"},
}
MOUNT_OPTIONS = {"fsx-lustre": ["flock"], "azure-lustre": ["noatime", "flock"]}


def _class(vol: Volume) -> dict[str, Any]:
    params = {**DEFAULT_PARAMETERS.get(vol.backend, {}), **vol.parameters}
    sc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta(vol.name),
        "provisioner": PROVISIONERS[vol.backend],
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": vol.backend not in ("fsx-lustre", "azure-lustre"),
    }
    if params:
        sc["parameters"] = dict(sorted(params.items()))
    if vol.backend in MOUNT_OPTIONS:
        sc["mountOptions"] = MOUNT_OPTIONS[vol.backend]
    return sc


def _claim(name: str, namespace: str, vol: Volume, size: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta(name, namespace),
        "spec": {
            "accessModes": [mode],
            "storageClassName": vol.name,
            "resources": {"requests": {"storage": size}},
        },
    }


def _static(vol: Volume, namespace: str) -> list[dict[str, Any]]:
    """A PV bound to the existing share plus its claim: a read-only dataset must show existing data.

    Dynamic provisioning creates a new, empty access point (EFS ``efs-ap``) or subdirectory
    (csi-driver-nfs) per claim, so a ReadOnlyMany dataset claim would stay empty forever. Static
    provisioning: aws-efs-csi-driver ``examples/kubernetes/static_provisioning`` (``volumeHandle:
    <fileSystemId>``); csi-driver-nfs ``deploy/example/pv-nfs-csi.yaml`` (``volumeAttributes``
    server/share). The claim binds by ``volumeName`` with ``storageClassName: ""``.
    """
    pv_name = f"{vol.name}-{namespace}"
    read_only = vol.access_mode == "ReadOnlyMany"
    mount_options: list[str] = []
    if vol.backend == "fsx-lustre":
        # aws-fsx-csi-driver examples/kubernetes/static_provisioning: volumeHandle = file system id,
        # volumeAttributes dnsname + mountname (reference platform.md §4.3).
        csi: dict[str, Any] = {
            "driver": PROVISIONERS["fsx-lustre"],
            "volumeHandle": vol.parameters["fileSystemId"],
            "volumeAttributes": {
                "dnsname": vol.parameters["dnsName"],
                "mountname": vol.parameters["mountName"],
            },
        }
        mount_options = MOUNT_OPTIONS["fsx-lustre"]
    elif vol.backend == "efs":
        csi = {"driver": PROVISIONERS["efs"], "volumeHandle": vol.parameters["fileSystemId"]}
    else:
        server, share = vol.parameters["server"], vol.parameters["share"]
        csi = {
            "driver": PROVISIONERS["nfs"],
            "volumeHandle": f"{server}#{share.strip('/')}#{pv_name}",
            "volumeAttributes": {"server": server, "share": share},
        }
    if read_only:
        csi["readOnly"] = True
    pv: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta(pv_name),
        "spec": {
            "capacity": {"storage": vol.size},
            "accessModes": [vol.access_mode],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": vol.name},
            "csi": csi,
        },
    }
    if mount_options:
        pv["spec"]["mountOptions"] = mount_options
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta(vol.name, namespace),
        "spec": {
            "accessModes": [vol.access_mode],
            "storageClassName": "",
            "volumeName": pv_name,
            "resources": {"requests": {"storage": vol.size}},
        },
    }
    return [pv, pvc]


def is_static(vol: Volume) -> bool:
    """Bound to an existing file system: read-only datasets, or an FSx file system given by id."""
    if vol.backend == "fsx-lustre":
        return "fileSystemId" in vol.parameters
    return vol.access_mode == "ReadOnlyMany" and vol.backend in ("efs", "nfs")


def required_parameters(vol: Volume) -> tuple[str, ...]:
    """Parameters the driver cannot work without: static FSx needs the file system's addresses."""
    if vol.backend == "fsx-lustre" and "fileSystemId" in vol.parameters:
        return ("fileSystemId", "dnsName", "mountName")
    return REQUIRED_PARAMETERS[vol.backend]


def claim_names(bundle: Bundle, tenant: str) -> dict[str, tuple[str, str | None]]:
    """Mounts a tenant's pods can use: role -> (PVC name, subPath or None).

    Roles: ``dataset:<volume>`` (mounted read-only), ``checkpoints`` and ``model-cache`` (a
    folder of their volume's claim).
    """
    return bundle.shared.get("claims", {}).get(tenant, {})


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    st = bp.storage
    tenants = [t.name for t in bp.tenants]
    volumes = {v.name: v for v in (*st.shared_datasets, *st.high_performance)}
    claims: dict[str, dict[str, tuple[str, str | None]]] = {t: {} for t in tenants}
    training = sorted({w.tenant for w in bp.workloads.training}) or tenants
    serving = sorted({w.tenant for w in bp.workloads.inference}) or tenants
    # Namespaces that need a claim on each volume: its own list (datasets: every tenant by default),
    # plus the tenants whose checkpoints / model cache live on it.
    users: dict[str, set[str]] = {}
    for vol in st.shared_datasets:
        users[vol.name] = set(vol.namespaces or tenants)
    for vol in st.high_performance:
        users[vol.name] = set(vol.namespaces)
    if st.checkpoints:
        users[st.checkpoints.volume] |= set(training)
    if st.model_cache:
        users[st.model_cache.volume] |= set(serving)
    for vol in volumes.values():
        if not is_static(vol):
            bundle.add("60-storage", _class(vol))
        for ns in sorted(users[vol.name] & set(tenants)):
            objs = (
                _static(vol, ns) if is_static(vol) else [_claim(vol.name, ns, vol, vol.size, vol.access_mode)]
            )
            for obj in objs:
                bundle.add("60-storage", obj)
    for vol in st.shared_datasets:
        for ns in vol.namespaces or tenants:
            claims[ns][f"dataset:{vol.name}"] = (vol.name, None)
    if st.checkpoints:
        vol = volumes[st.checkpoints.volume]
        for ns in training:
            claims[ns]["checkpoints"] = (vol.name, "checkpoints")
        bundle.decide(
            "storage",
            "storage.checkpoints",
            f"folder checkpoints/ of the '{vol.name}' claim",
            "every rank writes its shard to one RWX file system; a claim of its own would provision "
            "another file system per namespace. Only training tenants mount it",
            "platform.md §4.1-4.3",
        )
    if st.model_cache:
        vol = volumes[st.model_cache.volume]
        for ns in serving:
            claims[ns]["model-cache"] = (vol.name, "model-cache")
        bundle.decide(
            "storage",
            "storage.model_cache",
            f"folder model-cache/ of the '{vol.name}' claim",
            "weights downloaded once and shared by every replica; downloads into the container filesystem "
            "land on imagefs and get pods evicted",
            "platform.md §4.5, §4.8",
        )
    bundle.shared["claims"] = claims
    dynamic = [v for v in volumes.values() if not is_static(v)]
    if dynamic:
        bundle.decide(
            "storage",
            "StorageClass.volumeBindingMode",
            "WaitForFirstConsumer",
            "provisioning waits for the first pod so zonal file systems are created where the GPU nodes "
            "are; Immediate can create them in a zone with no GPU capacity (volume node affinity conflict)",
            "platform.md §4.4",
        )
        bundle.decide(
            "storage",
            "StorageClass.reclaimPolicy",
            "Retain",
            "datasets and checkpoints outlive the claims that mount them",
            "Kubernetes Persistent Volumes",
        )
        bundle.decide(
            "storage",
            "one claim per volume and namespace",
            ", ".join(sorted(v.name for v in dynamic)),
            "each dynamically provisioned claim is its own file system (FSx, Filestore) or access point "
            "(EFS): checkpoints and the model cache reuse their volume's claim as folders. Claims are "
            "namespaced, so each tenant gets its own; to share one existing file system across tenants, "
            "replace the claims with static PVs (FSx: volumeHandle fs-id + dnsname/mountname)",
            "platform.md §4.3",
        )
    for vol in volumes.values():
        if is_static(vol) and vol.backend == "fsx-lustre":
            bundle.decide(
                "storage",
                f"storage.high_performance.{vol.name}",
                "static PV per namespace, one file system",
                f"every tenant's claim binds to the existing file system {vol.parameters['fileSystemId']}, so "
                "checkpoints and the model cache share it instead of provisioning one per claim",
                "platform.md §4.3 (static provisioning)",
            )
        elif is_static(vol):
            bundle.decide(
                "storage",
                f"storage.shared_datasets.{vol.name}",
                "static PV per namespace, ReadOnlyMany",
                "a dynamically provisioned read-only claim is a new empty access point; binding to the "
                "existing file system shows the data already on it",
                "aws-efs-csi-driver static_provisioning",
            )
        elif vol in st.shared_datasets and vol.access_mode == "ReadWriteMany":
            bundle.note(
                "60-storage",
                f"dataset `{vol.name}` starts empty: load it with a writer Job that mounts the "
                f"`{vol.name}` claim read-write (workloads mount it read-only at /data/{vol.name})",
            )
    for vol in st.high_performance:
        bundle.decide(
            "storage",
            f"storage.high_performance.{vol.name}",
            f"{vol.backend} ({PROVISIONERS[vol.backend]})",
            "a parallel file system feeds many GPUs at once and takes checkpoints at line rate",
            "platform.md §4.2",
        )
