"""The bundle renderers fill: stages of objects, Helm releases, notes and decisions.

Stages are applied in name order (``00-namespaces`` first, ``70-workloads`` last): CRDs and
operators before the objects that need them. Each stage becomes a folder with a
``kustomization.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.generate.blueprint import Blueprint
from gpuplane.generate.components import Component
from gpuplane.generate.explain import Decision
from gpuplane.generate.plan import PoolPlan

STAGES = {
    "00-namespaces": "Namespaces (tenants and operator namespaces)",
    "10-operators": "Operators and controllers (Helm releases; CRDs come with them)",
    "20-gpu-sharing": "GPU sharing: device-plugin configs and mig-parted layouts",
    "25-network": "Fabric for multi-node training: NicClusterPolicy and RDMA networks",
    "30-scheduling": "Scheduler and queue configuration",
    "40-tenancy": "PriorityClasses, ResourceQuotas, LimitRanges",
    "50-autoscaling": "Node autoscaling",
    "60-storage": "StorageClasses and claims",
    "70-workloads": "Workload templates",
}


@dataclass(slots=True)
class HelmRelease:
    """A chart to install before the manifests that use it (README command + kustomize generator)."""

    release: str
    chart: str
    repo: str
    version: str
    namespace: str
    values: dict[str, Any]
    source: str
    order: int = 0


def helm_release(pinned: Component, namespace: str, values: dict[str, Any], order: int) -> HelmRelease:
    """The release of a pinned Helm chart, named as the chart: chart, repository, version and
    citation come from ``data/components.yaml``, the renderer gives where and with what values."""
    if pinned.chart is None or pinned.repo is None:
        raise ValueError(f"{pinned.source}: not a Helm chart (no chart/repo in data/components.yaml)")
    return HelmRelease(
        release=pinned.chart,
        chart=pinned.chart,
        repo=pinned.repo,
        version=pinned.version,
        namespace=namespace,
        values=values,
        source=pinned.source,
        order=order,
    )


@dataclass(slots=True)
class Stage:
    key: str
    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Files shown for review but not applied (e.g. the ClusterPolicy the operator chart creates).
    reference: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Bundle:
    """Everything one blueprint renders to."""

    blueprint: Blueprint
    plans: list[PoolPlan]
    stages: dict[str, Stage] = field(default_factory=lambda: {k: Stage(k) for k in STAGES})
    releases: list[HelmRelease] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    # Side data renderers share: e.g. the device-plugin ConfigMap name for the operator values.
    shared: dict[str, Any] = field(default_factory=dict)

    def add(self, stage: str, obj: dict[str, Any]) -> None:
        self.stages[stage].objects.append(obj)

    def note(self, stage: str, text: str) -> None:
        self.stages[stage].notes.append(text)

    def decide(self, component: str, subject: str, choice: str, why: str, source: str = "") -> None:
        self.decisions.append(Decision(component, subject, choice, why, source))

    def plan(self, pool: str) -> PoolPlan:
        return next(p for p in self.plans if p.name == pool)

    def all_objects(self) -> list[dict[str, Any]]:
        out = []
        for stage in self.stages.values():
            out.extend(stage.objects)
            out.extend(stage.reference)
        return out


def meta(
    name: str,
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``metadata`` with the generator's label so generated objects are easy to find."""
    m: dict[str, Any] = {
        "name": name,
        "labels": {"app.kubernetes.io/managed-by": "gpuplane", **(labels or {})},
    }
    if namespace:
        m["namespace"] = namespace
    if annotations:
        m["annotations"] = annotations
    return m
