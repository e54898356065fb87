"""Typed shapes of the simulate side inputs the engine reads field by field.

Karpenter NodePools (karpenter.sh/v1 ``NodePool``: ``spec.template.{metadata,spec}``,
``spec.limits``, ``spec.weight``), gpuplane node groups (``ClusterAutoscalerNodeGroup``) and
Kueue ClusterQueues (kueue.x-k8s.io/v1beta1 ``resourceGroups[].flavors[].resources[]``) are
checked once, where the inputs are read (:func:`check_objects`), so a field of the wrong type is
one line ``file:line: field.path: problem`` (exit 2) instead of a traceback inside the
autoscaler or the Kueue layer. Only the fields the simulation reads are typed; every other
field passes through (``extra="allow"``). Required fields follow the upstream types: a
NodeSelectorRequirement has a ``key`` and an ``operator`` (k8s.io/api core/v1 types.go), a
Kueue FlavorQuotas has a ``name`` and ResourceQuota a ``name`` (kueue apis/kueue/v1beta1
clusterqueue_types.go).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:
    from gpuplane.k8s.manifest import Manifest

_models: dict[str, Any] | None = None


def _build() -> dict[str, Any]:
    from pydantic import BaseModel, ConfigDict, StringConstraints  # for start-up time

    scalar = str | int | float | bool
    quantity = str | int | float

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow", strict=True)

    class Taint(Open):
        """core/v1 Taint as Karpenter's NodePool CRD types it (kubernetes-sigs/karpenter
        pkg/apis/crds/karpenter.sh_nodepools.yaml, ``spec.template.spec.taints`` and
        ``startupTaints`` items; the Go type is k8s.io/api core/v1 Taint): ``key`` (non-empty) and
        ``effect`` required, ``effect`` one of the three effects the API server accepts, ``value``
        and ``timeAdded`` strings."""

        key: Annotated[str, StringConstraints(min_length=1)]
        value: str | None = None
        effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
        timeAdded: str | None = None

    class Requirement(Open):
        key: str
        operator: str
        values: list[scalar] | None = None

    class TemplateSpec(Open):
        requirements: list[Requirement] | None = None
        taints: list[Taint] | None = None
        startupTaints: list[Taint] | None = None

    class TemplateMeta(Open):
        labels: dict[str, scalar | None] | None = None

    class Template(Open):
        metadata: TemplateMeta | None = None
        spec: TemplateSpec | None = None

    class NodePoolSpec(Open):
        template: Template | None = None
        limits: dict[str, quantity] | None = None
        weight: int | None = None

    class NodePool(Open):
        spec: NodePoolSpec | None = None

    class NodeGroupSpec(Open):
        instanceType: str | None = None
        labels: dict[str, scalar | None] | None = None
        taints: list[Taint] | None = None
        allocatable: dict[str, quantity] | None = None
        maxSize: int | None = None
        priority: int | None = None

    class NodeGroup(Open):
        spec: NodeGroupSpec | None = None

    class ResourceQuota(Open):
        name: str
        nominalQuota: quantity | None = None
        borrowingLimit: quantity | None = None
        lendingLimit: quantity | None = None

    class FlavorQuotas(Open):
        name: str
        resources: list[ResourceQuota] | None = None

    class ResourceGroup(Open):
        coveredResources: list[str] | None = None
        flavors: list[FlavorQuotas] | None = None

    class Preemption(Open):
        withinClusterQueue: str | None = None

    class ClusterQueueSpec(Open):
        resourceGroups: list[ResourceGroup] | None = None
        cohort: str | None = None
        cohortName: str | None = None
        preemption: Preemption | None = None

    class ClusterQueue(Open):
        spec: ClusterQueueSpec | None = None

    return {
        "karpenter.sh/NodePool": NodePool,
        "gpuplane.io/ClusterAutoscalerNodeGroup": NodeGroup,
        "kueue.x-k8s.io/ClusterQueue": ClusterQueue,
    }


def check_objects(objects: list[Manifest]) -> None:
    """Raise :class:`~gpuplane.sources.typed.TypedInputError` for the first mistyped object."""
    global _models
    from gpuplane.sources.typed import validate_object  # for start-up time

    for obj in objects:
        key = f"{obj.group}/{obj.kind}"
        if key not in (
            "karpenter.sh/NodePool",
            "gpuplane.io/ClusterAutoscalerNodeGroup",
            "kueue.x-k8s.io/ClusterQueue",
        ):
            continue
        if _models is None:
            _models = _build()
        validate_object(_models[key], obj)
