"""Storage rules: datasets, checkpoints and model artifacts of GPU workloads.

Facts used here (with sources) are in reference/platform.md §4: access modes and
the Multi-Attach errors (§4.1), ``volumeBindingMode`` and the scheduler's volume
node affinity conflict (§4.4), ephemeral storage and kubelet eviction (§4.5).
Claims are looked up in the input first, then in the cluster (``--cluster``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_str, where
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

_TOKEN = re.compile(r"[a-z0-9]+")
# Words in a mount path / volume / claim name that say "model or dataset download lands here".
CACHE_WORDS = frozenset(
    {
        "model",
        "models",
        "cache",
        "hf",
        "huggingface",
        "weights",
        "dataset",
        "datasets",
        "data",
        "checkpoint",
        "checkpoints",
        "ckpt",
        "hub",
        "llm",
        "vllm",
        "torch",
    }
)
# Environment variables that point framework downloads somewhere (Hugging Face, PyTorch, vLLM).
CACHE_ENV = frozenset(
    {
        "HF_HOME",
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "TRANSFORMERS_CACHE",
        "HF_DATASETS_CACHE",
        "TORCH_HOME",
        "XDG_CACHE_HOME",
        "VLLM_CACHE_ROOT",
        "MODEL_DIR",
        "MODEL_PATH",
        "DATA_DIR",
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


def _tokens(*texts: Any) -> set[str]:
    out: set[str] = set()
    for text in texts:
        if isinstance(text, str):
            out.update(_TOKEN.findall(text.lower()))
    return out


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _volumes(ps: PodSet) -> Iterator[tuple[int, dict[str, Any]]]:
    volumes = pod_spec(ps).get("volumes")
    if isinstance(volumes, list):
        for i, vol in enumerate(volumes):
            if isinstance(vol, dict):
                yield i, vol


def _claim_name(vol: dict[str, Any]) -> str | None:
    pvc = vol.get("persistentVolumeClaim")
    if isinstance(pvc, dict) and isinstance(pvc.get("claimName"), str):
        return pvc["claimName"]
    return None


def _spec_path(ps: PodSet) -> FieldPath:
    return (*tuple(ps.template_path), "spec")


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


# ---------------------------------------------------------------------------------------------

RWO_VOLUME_SHARED_DOCS = """
## What it catches

One PersistentVolumeClaim mounted by pods that cannot share it:

- a `ReadWriteOncePod` claim used by more than one pod (error): only one pod in
  the whole cluster can ever use it;
- a `ReadWriteOnce` claim used by pods that can land on different nodes
  (warning): several replicas, a parallel Job, training workers, or several
  workloads mounting the same claim. RWO means one *node*, not one pod, so
  pods pinned to one node (`nodeName`, a `kubernetes.io/hostname` selector) are
  fine and not reported.

The claim's access modes are read from the PVC in the input or in `--cluster`;
without the PVC the rule stays silent.

## Why it hurts

kube-scheduler does not check RWO exclusivity: the second pod is scheduled,
then stays `ContainerCreating` with a `FailedAttachVolume` event from the
attach/detach controller, e.g.

```
Multi-Attach error for volume "pvc-0c1e..." Volume is already exclusively attached to one node and can't be attached to another
Multi-Attach error for volume "pvc-0c1e..." Volume is already used by pod(s) train-worker-0
```

For a distributed training job this means rank 0 runs and holds its GPUs while
the other ranks never start, so the job hangs in rendezvous. A
`ReadWriteOncePod` claim leaves every pod but one Pending for good.

## How to fix

Use a `ReadWriteMany` (or `ReadOnlyMany` for read-only datasets) storage class
(EFS, Filestore, Azure Files, FSx for Lustre, Managed Lustre, WEKA, VAST ...),
give each pod its own claim (StatefulSet `volumeClaimTemplates`, generic
ephemeral volumes), or keep a single replica.

## Bad

```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ckpt}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 500Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.08-py3
        resources: {limits: {nvidia.com/gpu: 8}}
        volumeMounts: [{name: ckpt, mountPath: /ckpt}]
      volumes:
      - name: ckpt
        persistentVolumeClaim: {claimName: ckpt}
```

## Good

```yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ckpt}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: fsx-lustre
  resources: {requests: {storage: 1200Gi}}
```

## References

- Kubernetes docs, Persistent Volumes, "Access Modes" (RWOP stable since v1.29).
- kubernetes/kubernetes `pkg/controller/volume/attachdetach/reconciler/reconciler.go`
  (Multi-Attach error texts; reference/platform.md §4.1).
"""


@rule(
    id="rwo-volume-shared",
    severity="warning",
    category="storage",
    summary="A ReadWriteOnce(Pod) claim is mounted by pods that can run on different nodes (Multi-Attach).",
    docs=RWO_VOLUME_SHARED_DOCS,
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


# ---------------------------------------------------------------------------------------------

STORAGE_IMMEDIATE_BINDING_DOCS = """
## What it catches

A StorageClass for zonal storage (EBS, GCE PD, Azure Disk, GKE Managed Lustre,
Cinder ...) with `volumeBindingMode: Immediate`, or with no binding mode (the
default is `Immediate`), whose claims are used by GPU pods in the input. The
finding is on the StorageClass when it is in the input, else on the GPU
workload's volume (class found in `--cluster`).

## Why it hurts

With `Immediate` the volume is provisioned as soon as the claim exists, in a
zone chosen without looking at the pod. GPU capacity is usually in one or two
zones only; when the disk lands elsewhere the pod can never be placed:

```
0/12 nodes are available: 4 node(s) had volume node affinity conflict, 8 Insufficient nvidia.com/gpu.
```

(Kubernetes 1.33+ words it `node(s) didn't match PersistentVolume's node affinity`.)
Cluster Autoscaler and Karpenter cannot help unless they can add GPU nodes in
the disk's zone.

## How to fix

Set `volumeBindingMode: WaitForFirstConsumer`: the volume is then created in
the zone the scheduler picked for the pod. The field is immutable, so recreate
the StorageClass (existing PVs keep their zone).

## Bad

```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: Immediate
```

## Good

```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
```

## References

- Kubernetes docs, Storage Classes, "Volume Binding Mode".
- kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumebinding/binder.go`
  (`node(s) had volume node affinity conflict`, renamed by PR #129887).
- reference/platform.md §4.4.
"""


def _default_class(classes: dict[str, Manifest]) -> str | None:
    """The default StorageClass's name, decided as upstream does (``k8s/storage.py``)."""
    from gpuplane.k8s.storage import default_storage_class

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
    docs=STORAGE_IMMEDIATE_BINDING_DOCS,
    context="optional",
    fixable=True,
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


# ---------------------------------------------------------------------------------------------

MODEL_CACHE_DOCS = """
## What it catches

A GPU workload that downloads models or datasets into a disk-backed `emptyDir`
with no `sizeLimit`, from a container with no `ephemeral-storage` request or
limit. A volume counts as a model/dataset cache when its name or mount path
says so (`models`, `cache`, `hf`, `huggingface`, `weights`, `data`,
`datasets` ...) or when `HF_HOME`, `HF_HUB_CACHE`, `TRANSFORMERS_CACHE`,
`TORCH_HOME`, `VLLM_CACHE_ROOT` ... point into it.

## Why it hurts

A disk-backed `emptyDir` lives on the node's root file system. The scheduler
does not account for it (no `ephemeral-storage` request), so several 15-140 GB
model downloads on one node push it over the kubelet eviction threshold
(`nodefs.available<10%`) and pods are evicted mid-download:

```
The node was low on resource: ephemeral-storage. Threshold quantity: 10%, available: 8Gi.
```

## How to fix

Give the volume a `sizeLimit` and the container an `ephemeral-storage`
request of the same size (the scheduler then places the pod on a node with
room), or put the cache on a PVC / generic ephemeral volume / node-local
cache (KServe LocalModelCache, image volumes).

## Bad

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  env: [{name: HF_HOME, value: /models}]
  resources: {limits: {nvidia.com/gpu: 1}}
  volumeMounts: [{name: models, mountPath: /models}]
volumes:
- name: models
  emptyDir: {}
```

## Good

```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  env: [{name: HF_HOME, value: /models}]
  resources:
    requests: {ephemeral-storage: 200Gi}
    limits: {nvidia.com/gpu: 1, ephemeral-storage: 200Gi}
  volumeMounts: [{name: models, mountPath: /models}]
volumes:
- name: models
  emptyDir: {sizeLimit: 200Gi}
```

## References

- Kubernetes docs, "Local ephemeral storage" and "Volumes / emptyDir".
- kubernetes/kubernetes `pkg/kubelet/eviction/helpers.go` (eviction messages).
- reference/platform.md §4.5, §4.8.
"""


def _mounts(container: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list):
        for j, m in enumerate(mounts):
            if isinstance(m, dict):
                yield j, m


def _cache_env_paths(container: dict[str, Any]) -> list[str]:
    env = container.get("env")
    out: list[str] = []
    for item in env if isinstance(env, list) else ():
        if (
            isinstance(item, dict)
            and as_str(item.get("name")) in CACHE_ENV
            and isinstance(item.get("value"), str)
        ):
            out.append(item["value"].rstrip("/") or "/")
    return out


def _has_ephemeral_storage(container: dict[str, Any]) -> bool:
    res = container.get("resources")
    if not isinstance(res, dict):
        return False
    return any(isinstance(res.get(k), dict) and "ephemeral-storage" in res[k] for k in ("requests", "limits"))


def _under(path: str, mount: str) -> bool:
    mount = mount.rstrip("/") or "/"
    return path == mount or path.startswith(mount + "/")


@rule(
    id="model-cache-ephemeral-unbounded",
    severity="warning",
    category="storage",
    summary="Model or dataset downloaded into an emptyDir with no sizeLimit or ephemeral-storage request.",
    docs=MODEL_CACHE_DOCS,
)
def model_cache_ephemeral_unbounded(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        unbounded: dict[str, int] = {}
        for i, vol in _volumes(ps):
            ed = vol.get("emptyDir")
            if "emptyDir" in vol and (ed is None or isinstance(ed, dict)):
                ed = ed or {}
                if ed.get("medium") != "Memory" and ed.get("sizeLimit") in (None, "", 0):
                    unbounded[str(vol.get("name"))] = i
        if not unbounded:
            continue
        done: set[str] = set()
        for c in ctx.containers(ps):
            if _has_ephemeral_storage(c.data):
                continue
            env_paths = _cache_env_paths(c.data)
            for _j, m in _mounts(c.data):
                name = str(m.get("name"))
                mount_path = m.get("mountPath")
                if name not in unbounded or name in done or not isinstance(mount_path, str):
                    continue
                via_env = any(_under(p, mount_path) for p in env_paths)
                if not via_env and not (_tokens(name, mount_path) & CACHE_WORDS):
                    continue
                done.add(name)
                yield ctx.report(
                    ps.source,
                    (*_spec_path(ps), "volumes", unbounded[name], "emptyDir"),
                    f"{where(ps, c)} downloads models/data into emptyDir {name} "
                    f"({mount_path}) with no sizeLimit and no ephemeral-storage request: large downloads fill the "
                    'node\'s disk and the kubelet evicts pods ("The node was low on resource: ephemeral-storage").',
                    f"Set emptyDir.sizeLimit on volume {name} and a matching resources.requests.ephemeral-storage "
                    f"on container {c.name}, or put the cache on a PVC / generic ephemeral volume.",
                )


# ---------------------------------------------------------------------------------------------

SHARED_DATASET_DOCS = """
## What it catches

A dataset volume (a PersistentVolumeClaim whose volume name, claim name or
mount path says `data`, `dataset`, `corpus` ..., and not `checkpoint`,
`output`, `logs`, `cache` ...) mounted read-write by GPU pods that share it
(several pods of one workload, or several workloads).

## Why it hurts

Training reads datasets; nothing should write them. A read-write mount lets a
bug in one rank (or one team's job) corrupt or delete the data every other
job reads, and some storage classes only allow many readers when every mount is
read-only (ReadOnlyMany). It also hides the intent from reviewers.

## How to fix

Mount it with `readOnly: true` (on the `volumeMount`, or on the volume's
`persistentVolumeClaim`), and write checkpoints and outputs to a separate
volume.

## Bad

```yaml
volumeMounts:
- {name: dataset, mountPath: /data}
```

## Good

```yaml
volumeMounts:
- {name: dataset, mountPath: /data, readOnly: true}
```

## References

- Kubernetes API reference, `VolumeMount.readOnly` and
  `PersistentVolumeClaimVolumeSource.readOnly`.
- reference/platform.md §4.1 (access modes).
"""


@rule(
    id="shared-dataset-writable",
    severity="info",
    category="storage",
    summary="Dataset volume shared by many GPU pods is mounted read-write.",
    docs=SHARED_DATASET_DOCS,
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
