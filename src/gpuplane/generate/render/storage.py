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
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta(vol.name),
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
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(name, namespace),
        "spec": {"accessModes": [mode], "storageClassName": vol.name, "resources": {"requests": {"storage": size}}},
    }


def claim_names(bundle: Bundle, tenant: str) -> dict[str, str]:
    """Claims a tenant's pods can mount: role -> PVC name (dataset claims keyed by volume name)."""
    return bundle.shared.get("claims", {}).get(tenant, {})


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    st = bp.storage
    tenants = [t.name for t in bp.tenants]
    volumes = {v.name: v for v in (*st.shared_datasets, *st.high_performance)}
    claims: dict[str, dict[str, str]] = {t: {} for t in tenants}
    for vol in volumes.values():
        bundle.add("60-storage", _class(vol))
    for vol in st.shared_datasets:
        for ns in vol.namespaces or tenants:
            bundle.add("60-storage", _claim(vol.name, ns, vol, vol.size, vol.access_mode))
            claims[ns][f"dataset:{vol.name}"] = vol.name
    if st.checkpoints:
        vol = volumes[st.checkpoints.volume]
        for ns in tenants:
            bundle.add("60-storage", _claim("checkpoints", ns, vol, st.checkpoints.size, "ReadWriteMany"))
            claims[ns]["checkpoints"] = "checkpoints"
        bundle.decide("storage", "storage.checkpoints", f"RWX claim 'checkpoints' on {vol.name} per tenant",
                      "every rank writes its shard; a ReadWriteOnce volume would attach to one node only "
                      "(Multi-Attach error)", "platform.md §4.1")
    if st.model_cache:
        vol = volumes[st.model_cache.volume]
        serving = sorted({w.tenant for w in bp.workloads.inference}) or tenants
        for ns in serving:
            bundle.add("60-storage", _claim("model-cache", ns, vol, st.model_cache.size, "ReadWriteMany"))
            claims[ns]["model-cache"] = "model-cache"
        bundle.decide("storage", "storage.model_cache", f"RWX claim 'model-cache' on {vol.name}",
                      "weights downloaded once and shared by every replica; downloads into the container filesystem "
                      "land on imagefs and get pods evicted", "platform.md §4.5, §4.8")
    bundle.shared["claims"] = claims
    if volumes:
        bundle.decide("storage", "StorageClass.volumeBindingMode", "WaitForFirstConsumer",
                      "provisioning waits for the first pod so zonal file systems are created where the GPU nodes "
                      "are; Immediate can create them in a zone with no GPU capacity (volume node affinity conflict)",
                      "platform.md §4.4")
        bundle.decide("storage", "StorageClass.reclaimPolicy", "Retain",
                      "datasets and checkpoints outlive the claims that mount them", "Kubernetes Persistent Volumes")
    for vol in st.high_performance:
        bundle.decide("storage", f"storage.high_performance.{vol.name}", f"{vol.backend} ({PROVISIONERS[vol.backend]})",
                      "a parallel file system feeds many GPUs at once and takes checkpoints at line rate",
                      "platform.md §4.2")
