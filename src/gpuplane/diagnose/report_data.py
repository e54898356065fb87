"""The aggregations the HTML report charts, computed by the diagnose engine.

Reports never compute (docs/architecture.md): explaining Pending pods runs the scheduler
model, and summing GPU requests per namespace walks every pod, so both happen here, once,
and :mod:`gpuplane.report.html` only draws what :class:`ReportData` holds. Built on request
(``run_diagnose(..., report_data=True)``): text and JSON output do not pay for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplane.diagnose.facts import ClusterFacts
    from gpuplane.diagnose.inventory import Inventory

# The fragmentation histogram's last bin is "N+": N is the largest Pending request, at least
# MIN (a MIG node with 28 free devices must not stretch the axis) and at most MAX (a request
# of 10^18 GPUs, which the API accepts as a quantity, must not build 10^18 bins).
MIN_FRAGMENTATION_CAP = 8
MAX_FRAGMENTATION_CAP = 64


@dataclass(slots=True)
class Fragmentation:
    """Free GPU units per schedulable GPU node (Ready, not cordoned, something allocatable)."""

    bins: list[tuple[str, int]] = field(default_factory=list)  # ("0", nodes), ..., ("8+", nodes)
    free_units: int = 0
    schedulable_nodes: int = 0
    largest_pending_request: int = 0  # GPU units the biggest Pending GPU pod asks for on one node
    nodes_hosting_largest: int = 0  # schedulable nodes with at least that many free


@dataclass(slots=True)
class AllocationRow:
    """One bar of the allocation charts: GPU units of a model or node pool, by state.

    ``dark`` units are GPUs of nodes that advertise none (``gpu-node-not-advertising``);
    ``dark_causes`` says why, as diagnose finds it ("MIG config failed", "device plugin down").
    """

    label: str
    allocated: int = 0
    free: int = 0
    unhealthy: int = 0
    dark: int = 0
    dark_causes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ReportData:
    """What the HTML report's charts show."""

    # Pending GPU pods per scheduler reason (a pod counts once for each distinct reason).
    pending_reasons: dict[str, int] = field(default_factory=dict)
    # (namespace, GPU units held by placed pods, GPU units asked by Pending pods), largest first.
    namespaces: list[tuple[str, int, int]] = field(default_factory=list)
    fragmentation: Fragmentation = field(default_factory=Fragmentation)
    # GPU units per GPU model and per node pool, sorted by label.
    by_model: list[AllocationRow] = field(default_factory=list)
    by_pool: list[AllocationRow] = field(default_factory=list)


def build_report_data(facts: ClusterFacts, inventory: Inventory) -> ReportData:
    """The report's aggregations over one cluster's facts (explanations are the cached ones)."""
    causes = _dark_causes(facts, inventory)
    return ReportData(
        _pending_reasons(facts),
        _namespaces(facts),
        _fragmentation(facts, inventory),
        _allocation(inventory, "model", causes),
        _allocation(inventory, "pool", causes),
    )


def _dark_causes(facts: ClusterFacts, inventory: Inventory) -> dict[str, str]:
    """Node -> why its GPUs are not advertised: the first failing link of its enablement chain
    (the same words as the ``gpu-node-not-advertising`` finding)."""
    from gpuplane.diagnose import inventory as inv  # deferred for start-up time
    from gpuplane.diagnose.rules.enablement import not_advertised_cause

    out: dict[str, str] = {}
    for node in inventory.nodes:
        if not any(flag.flag == inv.FLAG_NOT_ADVERTISING for flag in node.flags):
            continue
        obj = facts.state.node_by_name.get(node.name)
        if obj is None:
            continue
        try:
            out[node.name] = not_advertised_cause(facts, obj)
        except Exception:  # a label is a nicety: the chart still shows the count
            continue
    return out


def _allocation(inventory: Inventory, key: str, causes: dict[str, str]) -> list[AllocationRow]:
    from gpuplane.diagnose import inventory as inv  # deferred for start-up time

    rows: dict[str, AllocationRow] = {}
    for node in inventory.nodes:
        label = node.model_key if key == "model" else node.pool
        row = rows.setdefault(label, AllocationRow(label))
        units = node.units()
        dark = node.gpus if any(flag.flag == inv.FLAG_NOT_ADVERTISING for flag in node.flags) else 0
        row.allocated += min(units.allocated, units.allocatable)
        row.free += units.free
        row.unhealthy += max(units.capacity - units.allocatable, 0)
        row.dark += dark
        cause = causes.get(node.name)
        if dark and cause and cause not in row.dark_causes:
            row.dark_causes.append(cause)
    for row in rows.values():
        row.dark_causes.sort()
    return [rows[label] for label in sorted(rows)]


def _pending_reasons(facts: ClusterFacts) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for pod in facts.pending_gpu_pods():
        expl = facts.explanation(pod)
        reasons: set[str] = set()
        for row in expl.get("table", []):
            reasons.update(row["reasons"] or [row["plugin"]])
        if expl.get("stage") not in (None, "scheduler", "scheduler-error", "schedulable"):
            reasons.add(f"blocked before scheduling: {expl['stage']}")
        if not reasons:
            reasons.add(expl.get("message") or "no reason recorded")
        counts.update(reasons)
    return dict(counts)


def _namespaces(facts: ClusterFacts) -> list[tuple[str, int, int]]:
    state = facts.state
    running: Counter[str] = Counter()
    pending: Counter[str] = Counter()
    for pods in state.pods_by_node.values():
        for pod in pods:
            amount = sum(facts.gpu_requests(pod).values())
            if amount:
                running[pod.metadata.namespace or "default"] += amount
    for pod in state.pending_pods:
        amount = sum(facts.gpu_requests(pod).values())
        if amount:
            pending[pod.metadata.namespace or "default"] += amount
    names = sorted(set(running) | set(pending), key=lambda n: (-(running[n] + pending[n]), n))
    return [(name, running[name], pending[name]) for name in names]


def _fragmentation(facts: ClusterFacts, inventory: Inventory) -> Fragmentation:
    counts: Counter[int] = Counter()
    for node in inventory.nodes:
        units = node.units()
        if node.cordoned or node.ready is False or not units.allocatable:
            continue
        counts[units.free] += 1
    if not counts:
        return Fragmentation()
    biggest = max((max(facts.gpu_requests(p).values()) for p in facts.pending_gpu_pods()), default=0)
    cap = max(MIN_FRAGMENTATION_CAP, min(biggest, MAX_FRAGMENTATION_CAP))
    bins = [(str(free), counts.get(free, 0)) for free in range(0, cap)]
    bins.append((f"{cap}+", sum(n for free, n in counts.items() if free >= cap)))
    return Fragmentation(
        bins=bins,
        free_units=sum(free * n for free, n in counts.items()),
        schedulable_nodes=sum(counts.values()),
        largest_pending_request=biggest,
        nodes_hosting_largest=sum(n for free, n in counts.items() if free >= biggest) if biggest else 0,
    )
