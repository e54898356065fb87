"""What why-pending reports for one pod: the scheduler's verdicts plus structured causes.

An :class:`Explanation` carries kube-scheduler's own result (message, per-node verdicts,
preemption outcome, from ``Scheduler.evaluate``) and the causes this package adds. A
:class:`Cause` is data: its kind, rank and how many nodes it speaks for order it; its text is
only rendered, never parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.framework import FitError, Status
from gpuplane.scheduler.preemption import PreemptionOutcome

# Cause ranks: what explains nodes outright (a taint, an affinity, a renamed or MIG-partitioned
# resource, a PreFilter rejection) comes first, then preemption, fragmentation, plain capacity.
RANK_DECISIVE = 0
RANK_PREEMPTION = 1
RANK_FRAGMENTATION = 2
RANK_CAPACITY = 3
RANK_OTHER = 4


@dataclass(frozen=True, slots=True)
class Cause:
    """One reason a pod waits, with the fix that removes it (None when there is no single fix).

    ``kind`` names the situation (``taint``, ``fragmentation``, ``gang``, ``gated`` ...);
    ``rank`` is one of the ``RANK_*`` values; ``nodes`` is how many nodes it explains (the
    order within a rank: most nodes first); ``subject`` identifies what the cause is about
    when several pods share it (a gang's ``namespace/name``).
    """

    kind: str
    rank: int
    nodes: int
    text: str
    fix: str | None = None
    subject: str = ""


@dataclass(slots=True)
class Explanation:
    """Everything why-pending reports for one pod."""

    pod: Pod
    message: str
    # distinct failing Status -> node names (grouped: 5,000 nodes stay readable)
    groups: list[tuple[Status, list[str]]] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    # scheduler | scheduler-error | schedulable | gated | gang | queue | quota | other-scheduler |
    # claims-pending (DRA PreEnqueue)
    stage: str = "scheduler"
    fit_error: FitError | None = None
    preemption: PreemptionOutcome | None = None
    feasible_nodes: list[str] = field(default_factory=list)
    plugin_order: list[str] = field(default_factory=list)
    # the controller object explained, when no pod exists yet (Kueue, quota)
    subject: dict[str, Any] | None = None
    # per group, its nodes' indexes in the scheduler's index (``Evaluation.group_nodes``):
    # the causes read the index's matrices with them; empty when the groups came without
    node_ids: list[Any] = field(default_factory=list)

    def cause_texts(self) -> list[str]:
        """The causes as the reports print them, in order."""
        return [cause.text for cause in self.causes]

    def cause_of_kind(self, kind: str) -> Cause | None:
        return next((c for c in self.causes if c.kind == kind), None)

    def nodes(self) -> dict[str, list[str]]:
        """``{node: [reasons]}`` for every node that failed."""
        out: dict[str, list[str]] = {}
        for status, names in self.groups:
            reasons = list(status.reasons)
            for name in names:
                out[name] = reasons
        return out

    def table(self) -> list[dict[str, Any]]:
        """kube-scheduler-simulator style rows, grouped: plugins passed, the failing plugin.

        One row per (plugin, reasons): statuses that differ only by code (a newer minor
        returns UnschedulableAndUnresolvable when a request exceeds allocatable) are merged;
        ``code`` then lists the distinct codes, joined with ``/``."""
        rows: list[dict[str, Any]] = []
        by_key: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
        for status, names in self.groups:
            failed = status.plugin
            key = (failed or "PreFilter", tuple(status.reasons))
            row = by_key.get(key)
            if row is not None:
                row["nodes"] += len(names)
                row["_names"].extend(names)
                if status.code.name not in row["code"].split("/"):
                    row["code"] += "/" + status.code.name
                continue
            passed = []
            for plugin in self.plugin_order:
                if plugin == failed:
                    break
                passed.append(plugin)
            row = by_key[key] = {
                "nodes": len(names),
                "sample": [],
                "plugin": failed or "PreFilter",
                "code": status.code.name,
                "reasons": list(status.reasons),
                "passed": passed if failed in self.plugin_order else [],
                "_names": list(names),
            }
            rows.append(row)
        for row in rows:
            row["sample"] = row.pop("_names")[:5]
        rows.sort(key=lambda r: -r["nodes"])
        return rows
