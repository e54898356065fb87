"""Which kinds are cluster-scoped, and the namespace ``kubectl apply -n NS`` gives an object.

kubectl asks the API server's REST mapper whether a kind is namespaced; offline, gpuplane knows
the cluster-scoped kinds of the APIs it reads (built-in: ``kubectl api-resources
--namespaced=false``; CRDs: ``spec.scope: Cluster`` in each project's CRD manifest) and treats
every other kind as namespaced, as the API server does for a namespaced CRD.

:func:`apply_namespace` mirrors cli-runtime ``pkg/resource/visitor.go`` ``RequireNamespace``,
which ``kubectl apply -n NS`` uses (``enforceNamespace`` when ``-n`` is given): a namespaced
object without a namespace gets NS; one with another namespace is refused with kubectl's words.
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest

# (API group, kind) of the cluster-scoped kinds gpuplane reads.
CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset(
    {
        # kubernetes/kubernetes: kubectl api-resources --namespaced=false
        ("", "Node"),
        ("", "Namespace"),
        ("", "PersistentVolume"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("node.k8s.io", "RuntimeClass"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceSlice"),
        # aws/karpenter-provider-aws pkg/apis/crds: NodePool, NodeClaim, EC2NodeClass
        ("karpenter.sh", "NodePool"),
        ("karpenter.sh", "NodeClaim"),
        ("karpenter.k8s.aws", "EC2NodeClass"),
        # kubernetes-sigs/kueue config/components/crd/bases
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("kueue.x-k8s.io", "Cohort"),
        ("kueue.x-k8s.io", "Topology"),
        ("kueue.x-k8s.io", "WorkloadPriorityClass"),
        # volcano-sh/volcano config/crd/volcano/bases: scheduling.volcano.sh_queues.yaml
        ("scheduling.volcano.sh", "Queue"),
        # kubeflow/trainer, kserve/kserve
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
        ("serving.kserve.io", "ClusterServingRuntime"),
        # NVIDIA/gpu-operator: ClusterPolicy, NVIDIADriver
        ("nvidia.com", "ClusterPolicy"),
        ("nvidia.com", "NVIDIADriver"),
        # gpuplane's own simulate inputs: node groups and cold-start settings describe the cluster
        ("gpuplane.io", "ClusterAutoscalerNodeGroup"),
        ("gpuplane.io", "ColdStart"),
        ("gpuplane.io", "Scenario"),
    }
)


def is_namespaced(obj: Manifest) -> bool:
    return (obj.group, obj.kind) not in CLUSTER_SCOPED


def apply_namespace(obj: Manifest, namespace: str) -> str | None:
    """Give ``obj`` the namespace of ``-n namespace`` as ``kubectl apply -n`` does; the error
    kubectl prints when the object names another namespace, else None."""
    if not is_namespaced(obj):
        return None
    own = obj.namespace
    if own is None:
        metadata = obj.data.get("metadata")
        if not isinstance(metadata, dict):
            metadata = obj.data["metadata"] = {}
        metadata["namespace"] = namespace
        return None
    if own != namespace:
        return (
            f'the namespace from the provided object "{own}" does not match the namespace "{namespace}". '
            f"You must pass '--namespace={own}' to perform this operation."
        )
    return None
