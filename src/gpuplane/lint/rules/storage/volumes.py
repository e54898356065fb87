"""PersistentVolumeClaims of GPU workloads: RWO volumes shared across nodes, Immediate binding,
shared datasets mounted writable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import where
from gpuplane.lint.rules.storage._shared import _mounts, _spec_path, _tokens, _volumes
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

HOSTNAME_LABEL = "kubernetes.io/hostname"

# Provisioners whose volumes live in one zone and get a PV node affinity on that zone
# (block disks, zonal file systems). Sources: reference/platform.md §4.2 and §4.4;
# EBS CSI / PD CSI / Azure Disk CSI publish topology.<driver>/zone or
# topology.kubernetes.io/zone on the PV (their README "topology" sections);
# GKE Managed Lustre is zonal (topology.gke.io/zone, platform.md §4.2).
ZONAL_PROVISIONERS = frozenset(
    {
        "ebs.csi.aws.com",
        "kubernetes.io/aws-ebs",
        "pd.csi.storage.gke.io",
        "kubernetes.io/gce-pd",
        "disk.csi.azure.com",
        "kubernetes.io/azure-disk",
        "lustre.csi.storage.gke.io",
        "cinder.csi.openstack.org",
        "kubernetes.io/cinder",
        "diskplugin.csi.alibabacloud.com",
    }
)
DATASET_WORDS = frozenset({"data", "dataset", "datasets", "corpus", "corpora", "imagenet", "shards"})
# Volumes that are written on purpose even when they carry a dataset-like name.
WRITE_WORDS = frozenset(
    {
        "checkpoint",
        "checkpoints",
        "ckpt",
        "ckpts",
        "output",
        "outputs",
        "out",
        "logs",
        "log",
        "results",
        "scratch",
        "cache",
        "tmp",
        "artifacts",
        "runs",
        "tensorboard",
        "wandb",
    }
)


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _claim_name(vol: dict[str, Any]) -> str | None:
    pvc = vol.get("persistentVolumeClaim")
    if isinstance(pvc, dict) and isinstance(pvc.get("claimName"), str):
        return pvc["claimName"]
    return None


def _claims(ctx: LintContext) -> dict[tuple[str, str], Manifest]:
    """PersistentVolumeClaims of the input and the cluster by (namespace, name)."""
    return {(_ns(c), c.name): c for c in ctx.by_kind("PersistentVolumeClaim", "", include_cluster=True)}


def _access_modes(claim: Manifest) -> list[str]:
    modes = claim.get("spec", "accessModes")
    return [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else []


def _pinned_node(ps: PodSet) -> str | None:
    """The single node every pod of ``ps`` must run on, when the template pins one."""
    spec = pod_spec(ps)
    if isinstance(spec.get("nodeName"), str) and spec["nodeName"]:
        return spec["nodeName"]
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict) and isinstance(selector.get(HOSTNAME_LABEL), str):
        return selector[HOSTNAME_LABEL]
    affinity = spec.get("affinity")
    node_aff = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = (
        node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_aff, dict) else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], dict):
        for expr in terms[0].get("matchExpressions") or ():
            if (
                isinstance(expr, dict)
                and expr.get("key") == HOSTNAME_LABEL
                and expr.get("operator") == "In"
                and isinstance(expr.get("values"), list)
                and len(expr["values"]) == 1
            ):
                return str(expr["values"][0])
    return None


def _count(ps: PodSet) -> int:
    count = ps.count
    return count if isinstance(count, int) and count >= 0 else 1


@rule(
    id="rwo-volume-shared",
    severity="warning",
    category="storage",
    summary="A ReadWriteOnce(Pod) claim is mounted by pods that can run on different nodes (Multi-Attach).",
    context="optional",
)
def rwo_volume_shared(ctx: LintContext) -> Iterator[Finding]:
    claims = _claims(ctx)
    if not claims:
        return
    # (namespace, claim) -> [(podset, volume index, pods, pinned node)]
    users: dict[tuple[str, str], list[tuple[PodSet, int, int, str | None]]] = {}
    for ps in ctx.podsets:
        ns = _ns(ps.source)
        for i, vol in _volumes(ps):
            name = _claim_name(vol)
            if name is not None and (ns, name) in claims:
                users.setdefault((ns, name), []).append((ps, i, _count(ps), _pinned_node(ps)))
    for key, uses in users.items():
        modes = _access_modes(claims[key])
        total = sum(u[2] for u in uses)
        if total < 2:
            continue
        if "ReadWriteOncePod" in modes:
            for ps, i, count, _pin in uses:
                yield ctx.report(
                    ps.source,
                    (*_spec_path(ps), "volumes", i, "persistentVolumeClaim", "claimName"),
                    f"PersistentVolumeClaim {key[0]}/{key[1]} is ReadWriteOncePod but {total} pods mount it "
                    f"({where(ps)}: {count}); only one pod in the cluster can ever use it, the others stay Pending.",
                    "Give each pod its own claim (StatefulSet volumeClaimTemplates or a generic ephemeral volume), "
                    "use a ReadWriteMany/ReadOnlyMany storage class, or run a single pod.",
                    severity="error",
                )
            continue
        if "ReadWriteOnce" not in modes or "ReadWriteMany" in modes or "ReadOnlyMany" in modes:
            continue
        pins = {u[3] for u in uses}
        if len(pins) == 1 and None not in pins:
            continue  # every pod is pinned to the same node: RWO allows that
        for ps, i, count, _pin in uses:
            yield ctx.report(
                ps.source,
                (*_spec_path(ps), "volumes", i, "persistentVolumeClaim", "claimName"),
                f"PersistentVolumeClaim {key[0]}/{key[1]} is ReadWriteOnce but {total} pods mount it ({where(ps)}: {count}) "
                'and they can land on different nodes: the second node gets "Multi-Attach error for volume" '
                "and its pods stay ContainerCreating.",
                "Use a ReadWriteMany (or ReadOnlyMany for read-only data) storage class such as EFS, Filestore, "
                "Azure Files or FSx for Lustre, or give each pod its own claim.",
            )


def _default_class(classes: dict[str, Manifest]) -> str | None:
    """The default StorageClass's name, decided as upstream does (``k8s/storage.py``)."""
    from gpuplane.k8s.storage import default_storage_class  # deferred for start-up time

    found = default_storage_class(classes.values())
    return found.name if found is not None else None


def _podset_classes(
    ps: PodSet, claims: dict[tuple[str, str], Manifest], default: str | None
) -> Iterator[tuple[str, Manifest, FieldPath]]:
    """StorageClass names a pod set's volumes use, with where (object + field) the use is written."""
    ns = _ns(ps.source)
    for i, vol in _volumes(ps):
        name = _claim_name(vol)
        if name is not None:
            claim = claims.get((ns, name))
            if claim is None:
                continue
            cls = claim.get("spec", "storageClassName")
            if cls is None:
                cls = default
            if cls:
                yield (
                    str(cls),
                    ps.source,
                    (*_spec_path(ps), "volumes", i, "persistentVolumeClaim", "claimName"),
                )
            continue
        eph = vol.get("ephemeral")
        tmpl = eph.get("volumeClaimTemplate") if isinstance(eph, dict) else None
        spec = tmpl.get("spec") if isinstance(tmpl, dict) else None
        if isinstance(spec, dict):
            cls = spec.get("storageClassName", default)
            if cls:
                yield str(cls), ps.source, (*_spec_path(ps), "volumes", i, "ephemeral")
    if ps.source.kind == "StatefulSet":
        templates = ps.source.get("spec", "volumeClaimTemplates")
        for i, tmpl in enumerate(templates if isinstance(templates, list) else ()):
            spec = tmpl.get("spec") if isinstance(tmpl, dict) else None
            if isinstance(spec, dict):
                cls = spec.get("storageClassName", default)
                if cls:
                    yield str(cls), ps.source, ("spec", "volumeClaimTemplates", i)


@rule(
    id="storage-immediate-binding",
    severity="warning",
    category="storage",
    summary="Zonal StorageClass with Immediate binding used by GPU pods: volume node affinity conflict.",
    context="optional",
    fixable=True,
    fix_safety="unsafe",
)
def storage_immediate_binding(ctx: LintContext) -> Iterator[Finding]:
    classes = {sc.name: sc for sc in ctx.by_kind("StorageClass", "storage.k8s.io", include_cluster=True)}
    if not classes:
        return
    input_classes = {id(sc) for sc in ctx.by_kind("StorageClass", "storage.k8s.io")}
    claims = _claims(ctx)
    default = _default_class(classes)
    reported: set[str] = set()
    for ps in ctx.gpu_podsets():
        for cls, obj, path in _podset_classes(ps, claims, default):
            sc = classes.get(cls)
            if sc is None or cls in reported:
                continue
            mode = sc.data.get("volumeBindingMode") or "Immediate"
            provisioner = str(sc.data.get("provisioner") or "")
            if mode != "Immediate" or provisioner not in ZONAL_PROVISIONERS:
                continue
            reported.add(cls)
            message = (
                f"StorageClass {cls} ({provisioner}) binds volumes Immediately, before GPU pod {where(ps)} is "
                "scheduled: the zonal volume can land in a zone without free GPUs and the pod then fails with "
                '"node(s) had volume node affinity conflict".'
            )
            fix = "Set volumeBindingMode: WaitForFirstConsumer on the StorageClass (immutable: recreate it)."
            if id(sc) in input_classes:
                field = ("volumeBindingMode",) if "volumeBindingMode" in sc.data else ("provisioner",)
                yield ctx.report(
                    sc, field, message, fix, patch=(SetValue(("volumeBindingMode",), "WaitForFirstConsumer"),)
                )
            else:
                yield ctx.report(obj, path, message, fix)


@rule(
    id="shared-dataset-writable",
    severity="info",
    category="storage",
    summary="Dataset volume shared by many GPU pods is mounted read-write.",
    tier="opt-in",
)
def shared_dataset_writable(ctx: LintContext) -> Iterator[Finding]:
    # First pass: how many pods mount each (namespace, claim); second: report writable mounts.
    pods_per_claim: dict[tuple[str, str], int] = {}
    candidates: list[tuple[PodSet, dict[str, tuple[int, str]]]] = []
    for ps in ctx.gpu_podsets():
        ns = _ns(ps.source)
        dataset_vols: dict[str, tuple[int, str]] = {}
        for i, vol in _volumes(ps):
            claim = _claim_name(vol)
            if claim is None:
                continue
            pods_per_claim[(ns, claim)] = pods_per_claim.get((ns, claim), 0) + _count(ps)
            if vol["persistentVolumeClaim"].get("readOnly") is True:
                continue
            dataset_vols[str(vol.get("name"))] = (i, claim)
        if dataset_vols:
            candidates.append((ps, dataset_vols))
    for ps, dataset_vols in candidates:
        ns = _ns(ps.source)
        for c in ctx.containers(ps):
            for j, m in _mounts(c.data):
                found = dataset_vols.get(str(m.get("name")))
                if found is None or m.get("readOnly") is True:
                    continue
                _i, claim = found
                words = _tokens(m.get("name"), claim, m.get("mountPath"))
                if not (words & DATASET_WORDS) or (words & WRITE_WORDS):
                    continue
                sharing = pods_per_claim.get((ns, claim), 0)
                if sharing < 2:
                    continue
                yield ctx.report(
                    ps.source,
                    (*c.path, "volumeMounts", j),
                    f"Dataset claim {claim} is shared by {sharing} GPU pods but {where(ps, c)} "
                    f"mounts it read-write at {m.get('mountPath')}: one job can corrupt the data every other "
                    "job reads.",
                    f"Add readOnly: true to the volumeMount {m.get('name')} of container {c.name} and write "
                    "outputs to a separate volume.",
                )
