"""Which lint rules become ValidatingAdmissionPolicies, in CEL, and why the others do not.

A rule is exportable when the admitted object alone decides it: no other object (a runtime, a
Service, a PriorityClass), no cluster state (nodes, taints, what is installed) and no heuristic
over names. Each exported rule states, per check, the CEL that is true when the object passes, so
the policy rejects exactly the objects the rule flags; ``tests/policy`` evaluates every expression
against the rule's own fixtures (``tests/fixtures/lint/<rule-id>/``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.policy import cel

# Controllers whose pod specs sit in the object (cel.POD_SPEC_PATHS), in a stable order.
WORKLOAD_KINDS: tuple[tuple[str, str], ...] = tuple(cel.POD_SPEC_PATHS)


@dataclass(frozen=True, slots=True)
class Check:
    """One validation of a rule: ``expression`` is true when the object passes.

    ``variables`` (name, CEL) are evaluated in order and may read earlier ones; ``detail`` is CEL
    for the message text after the object's name, ``message`` the fixed text the API server shows
    when the message expression cannot be evaluated.
    """

    severity: str
    variables: tuple[tuple[str, str], ...]
    expression: str
    detail: str
    message: str
    fix: str


@dataclass(frozen=True, slots=True)
class ExportedRule:
    id: str
    kinds: tuple[tuple[str, str], ...]
    checks: tuple[Check, ...]
    uses_pod_specs: bool = True


def _name(c: str) -> str:
    return f"(has({c}.name) && type({c}.name) == string ? {c}.name : '?')"


def _offenders(bad_keys: str) -> str:
    """CEL list of ``container: resource, ...`` strings, one per pod spec that has offenders;
    ``bad_keys`` is CEL over container ``c`` giving the offending resource names."""
    per_container = f"{cel.containers_of('s')}.map(c, {bad_keys}.map(k, {_name('c')} + ': ' + k).join(', '))"
    return f"variables.podSpecs.map(s, {per_container}.filter(x, x != '').join(', ')).filter(x, x != '')"


def _section_keys(section: str, pred: str) -> str:
    """CEL: keys ``k`` of container ``c``'s ``resources.<section>`` satisfying ``pred``."""
    block = f"c.resources.{section}"
    return (
        f"(has(c.resources) && has({block}) ? {block}.filter(k, {cel.is_extended_resource('k')} && {pred})"
        " : [])"
    )


def _has_limit(key: str) -> str:
    return f"(has(c.resources.limits) && {key} in c.resources.limits)"


_REQ = "c.resources.requests[k]"
_LIM = "c.resources.limits[k]"

_WITHOUT_LIMIT = Check(
    severity="error",
    variables=(
        (
            "offenders",
            _offenders(_section_keys("requests", f"{cel.is_quantity(_REQ)} && !{_has_limit('k')}")),
        ),
    ),
    expression="variables.offenders.size() == 0",
    detail="'requests an extended resource without a limit (' + variables.offenders.join('; ') + "
    "'): the API server rejects the pods (Limit must be set for non overcommitable resources)'",
    message="a container requests an extended resource (GPU) without a limit: the API server rejects the pods",
    fix="set resources.limits[<resource>] to the count (a limit alone is enough: the request defaults to it)",
)

_MISMATCH = Check(
    severity="error",
    variables=(
        (
            "offenders",
            _offenders(
                _section_keys(
                    "requests",
                    f"{_has_limit('k')} && {cel.is_quantity(_REQ)} && {cel.is_quantity(_LIM)} && "
                    f"{cel.quantity(_REQ)}.compareTo({cel.quantity(_LIM)}) != 0",
                )
            ),
        ),
    ),
    expression="variables.offenders.size() == 0",
    detail="'requests an extended resource different from its limit (' + variables.offenders.join('; ') + "
    "'): extended resources cannot be overcommitted, the API server rejects the pods'",
    message="a container's GPU request differs from its limit: the API server rejects the pods",
    fix="remove the request and keep only limits[<resource>] with the count the container needs",
)


def _fractional_in(section: str) -> str:
    value = f"c.resources.{section}[k]"
    return _section_keys(
        section, f"{cel.is_quantity(value)} && !{cel.accepted_as_integer(cel.quantity(value))}"
    )


_FRACTIONAL = Check(
    severity="error",
    variables=(("offenders", _offenders(f"({_fractional_in('limits')} + {_fractional_in('requests')})")),),
    expression="variables.offenders.size() == 0",
    detail="'asks for a fraction of an extended resource (' + variables.offenders.join('; ') + "
    "'): the API server only accepts whole numbers (must be an integer)'",
    message="a container asks for a fractional GPU quantity (0.5, 500m): the API server rejects the pods",
    fix="request a whole device, or share GPUs with device-plugin time-slicing/MPS, a MIG slice or DRA",
)

_QUOTA_KEY = (
    "!k.startsWith('count/') && !k.contains('.storageclass.storage.k8s.io/') && "
    f"((k.startsWith('limits.') && {cel.is_extended_resource('k.substring(7)')}) || "
    f"{cel.is_extended_resource('k')})"
)
_QUOTA = Check(
    severity="error",
    variables=(
        (
            "invalidKeys",
            f"has(object.spec) && has(object.spec.hard) ? object.spec.hard.filter(k, {_QUOTA_KEY}) : []",
        ),
    ),
    expression="variables.invalidKeys.size() == 0",
    detail="'limits ' + variables.invalidKeys.join(', ') + ': quota only charges extended resources "
    "under requests.<resource>, so it enforces nothing'",
    message="ResourceQuota limits GPUs with limits.<resource> or a bare <resource> key: it enforces nothing",
    fix="rename the key to requests.<resource>",
)

_MASTER = "object.spec.pytorchReplicaSpecs.Master"
_HAS_MASTER = (
    f"has(object.spec) && has(object.spec.pytorchReplicaSpecs) && has({_MASTER}) && type({_MASTER}) == map"
)
_MASTER_ONE = f"((type({_MASTER}.replicas) == int && {_MASTER}.replicas == 1) || (type({_MASTER}.replicas) == string && {_MASTER}.replicas.matches('^\\\\s*0*1\\\\s*$')))"

_MASTER_NOT_ONE = Check(
    severity="error",
    variables=(),
    expression=f"!({_HAS_MASTER} && has({_MASTER}.replicas)) || {_MASTER_ONE}",
    detail="'spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 (got ' + "
    f"string({_MASTER}.replicas) + '); there is exactly one rank-0 master'",
    message="PyTorchJob Master replicas must be 1: training-operator rejects the job",
    fix="set Master.replicas: 1 and move the other ranks to Worker",
)
_MASTER_UNSET = Check(
    severity="warning",
    variables=(),
    expression=f"!({_HAS_MASTER}) || has({_MASTER}.replicas)",
    detail="'Master.replicas is not set; training-operator v1.8+ rejects it (must be 1)'",
    message="PyTorchJob Master.replicas is not set: training-operator v1.8+ rejects it",
    fix="set spec.pytorchReplicaSpecs.Master.replicas: 1",
)

EXPORTED: dict[str, ExportedRule] = {
    r.id: r
    for r in (
        ExportedRule(id="gpu-request-without-limit", kinds=WORKLOAD_KINDS, checks=(_WITHOUT_LIMIT,)),
        ExportedRule(id="gpu-request-limit-mismatch", kinds=WORKLOAD_KINDS, checks=(_MISMATCH,)),
        ExportedRule(id="gpu-fractional-quantity", kinds=WORKLOAD_KINDS, checks=(_FRACTIONAL,)),
        ExportedRule(
            id="quota-gpu-invalid-key", kinds=(("", "ResourceQuota"),), checks=(_QUOTA,), uses_pod_specs=False
        ),
        ExportedRule(
            id="pytorchjob-master-replicas",
            kinds=(("kubeflow.org", "PyTorchJob"),),
            checks=(_MASTER_NOT_ONE, _MASTER_UNSET),
            uses_pod_specs=False,
        ),
    )
}

# Why each other rule is not exported. Categories of reasons, spelled once:
_CLUSTER = "needs cluster state (nodes, their labels, taints, allocatable or what is installed)"
_MULTI = "decided across several objects"
_HEURISTIC = (
    "decided by image or name heuristics that are right for lint findings, not for an admission decision"
)

NOT_EXPORTED: dict[str, str] = {
    "gpu-unknown-resource-name": "needs the names the cluster's device plugins advertise; without them it is a "
    "spelling heuristic (nvidia.com/gpus)",
    "gpu-init-container-hoards": "a waste warning on the pod formula, left to lint (not yet exported)",
    "gpu-request-exceeds-node": _CLUSTER,
    "gpu-visible-devices-env": "depends on each container's allocation and the node agent exemption; not yet exported",
    "gpu-privileged-access": "needs the GPU-node label and toleration heuristics of lint; not yet exported",
    "gpu-unrequested-cuda-image": _HEURISTIC,
    "gpu-taint-not-tolerated": _CLUSTER,
    "gpu-selector-matches-no-node": _CLUSTER,
    "gpu-type-unpinned": _CLUSTER,
    "cpu-pod-on-gpu-nodes": _CLUSTER,
    "training-spread-across-zones": _HEURISTIC,
    "serving-replicas-not-spread": _HEURISTIC,
    "device-plugin-config-invalid": "parses YAML inside a ConfigMap data key, which CEL cannot",
    "device-plugin-config-unreferenced": _MULTI + " (ConfigMap and ClusterPolicy or Helm values)",
    "shared-gpu-request-gt1": "needs which resources the device plugin shares (its config)",
    "timeslicing-multi-tenant": _MULTI + " (namespaces sharing nodes)",
    "mig-profile-unknown": "needs the MIG profile grammar and the hardware catalog; not yet exported",
    "mig-strategy-mismatch": _CLUSTER,
    "mig-config-invalid": "needs the MIG geometry of each GPU model (placement search)",
    "mig-multiple-devices-per-container": "needs the MIG resource-name grammar; not yet exported",
    "gang-scheduling-missing": _MULTI + " (PodGroups, queues, operator settings)",
    "gang-min-exceeds-replicas": _MULTI + " (PodGroup and its job)",
    "gang-min-below-replicas": _MULTI + " (PodGroup and its job)",
    "mpijob-gang-launcher-deadlock": _MULTI + " (PodGroup and its MPIJob)",
    "efa-not-requested": "needs which instance types carry EFA (the fabric catalog) and the NodePools a pod lands on",
    "volcano-queue-reclaimable-without-reclaim": _MULTI + " (Queue and the Volcano scheduler configuration)",
    "kueue-clusterqueue-unused": _MULTI + " (ClusterQueue and LocalQueues)",
    "kueue-workload-without-queue": _MULTI + " (workload and the namespace's LocalQueues)",
    "gke-critical-pods-without-quota": _MULTI + " (pods or operator install and ResourceQuotas)",
    "scheduler-not-installed": _CLUSTER,
    "gang-queue-missing": _CLUSTER,
    "indexed-job-no-stable-dns": _MULTI + " (Job and headless Service)",
    "indexed-job-partial-parallelism": "not yet exported",
    "mpijob-launcher-gpu": "not yet exported",
    "shm-too-small": _HEURISTIC + " (what counts as training, controller-managed /dev/shm)",
    "shm-unbounded": "not yet exported",
    "training-no-failure-policy": "info: a practice, not an admission decision",
    "namespace-without-gpu-quota": _MULTI + " (Namespace, ResourceQuotas and workloads)",
    "gpu-workload-without-priority": _MULTI + " (PriorityClasses)",
    "system-priority-misuse": _HEURISTIC + " (node agents are exempt by what they are)",
    "batch-priority-preempts-serving": _MULTI + " (PriorityClasses of both tiers)",
    "pod-priority-set-directly": _MULTI + " (the Priority admission plugin and PriorityClasses)",
    "rwo-volume-shared": _MULTI + " (claims and the pods that mount them)",
    "storage-immediate-binding": _MULTI + " (StorageClass and the GPU pods that use it)",
    "model-cache-ephemeral-unbounded": _HEURISTIC,
    "shared-dataset-writable": _MULTI,
    "inference-no-startup-probe": _HEURISTIC + " (model-server images)",
    "hpa-cpu-for-gpu-serving": _MULTI + " (HPA and its Deployment)",
    "gpu-rollout-surge-deadlock": "not yet exported",
    "image-pull-always-large": _HEURISTIC + " (image sizes)",
    "karpenter-gpu-nodepool-untainted": "needs which instance types have GPUs (the instance catalog)",
    "karpenter-consolidation-disrupts-training": _MULTI + " (NodePools and training pods)",
    "karpenter-gpu-limit-missing": "needs which instance types have GPUs (the instance catalog)",
    "gpu-node-root-volume-small": _MULTI + " (node classes and the images their pods pull)",
    "clusterpolicy-invalid": _MULTI + " (ClusterPolicy, ConfigMaps, node labels)",
    "dcgm-exporter-disabled": "info: a practice, not an admission decision",
    "pod-template-invalid": "reported by the API server's own validation already",
    "manifest-unknown-field": "the API server's strict field validation (kubectl --validate=strict) already does it",
    "manifest-unrendered-template": "about the file (unrendered placeholders), not an object being admitted",
}


def reason_not_exported(rule_id: str, category: str, context: str) -> str:
    """Why ``rule_id`` has no policy: its entry above, else what its registry metadata implies."""
    if rule_id in NOT_EXPORTED:
        return NOT_EXPORTED[rule_id]
    if category == "cluster":
        return "reads live cluster state (diagnose), not an object being admitted"
    if context == "required":
        return _CLUSTER
    return "not yet exported"
