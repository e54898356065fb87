"""Which input objects no lint rule could analyse, and why (``-f json``'s ``skipped``).

Why: a linter that says nothing about forty KubeAI Models reads as "forty clean Models". Every
object that produced no pod set and that no rule reads is listed with its reason, so silence is
never mistaken for a clean bill (spec/cli.md ``gpuplane lint``).

What counts as analysed: an object whose pods were expanded (explicitly, or pod specs found
inside an unknown custom resource), an object whose template could not be built (reported by
``pod-template-invalid``), and an object of a kind some rule of the run read
(:meth:`gpuplane.lint.context.LintContext.by_kind`: PriorityClasses, queues, NodePools ...).
Objects of Kubernetes' own API groups that create no pods (Services, RBAC, webhooks) are not
listed: no GPU rule is about them, and listing them would bury the objects that matter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuplane.lint.placeholders import placeholder_fields, under_placeholder
from gpuplane.records import Record
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import ExpansionProblem, PodSet

NO_TEMPLATE = "no pod template found"
UNKNOWN_KIND = "no rule of this run reads this kind and no pod template was found in it"
UNRENDERED = "unrendered template placeholder where the pod template belongs"
# Kinds whose expander knows why some objects give no pod template
KIND_REASONS: dict[tuple[str, str], str] = {
    (
        "kaito.sh",
        "Workspace",
    ): "preset workspace: KAITO builds its pods from its preset catalogue (not modelled)",
    (
        "kaito.sh",
        "InferenceSet",
    ): "preset workspace: KAITO builds its pods from its preset catalogue (not modelled)",
}


class Skipped(Record):
    """One object no rule could analyse."""

    __slots__ = ("reason", "source")
    source: Manifest
    reason: str

    def __init__(self, source: Manifest, reason: str) -> None:
        self.source = source
        self.reason = reason

    def to_json(self) -> dict[str, object]:
        """The object's reference (``Manifest.ref``) with where it is and why it was skipped,
        flat, as spec/cli.md's ``skipped`` entries."""
        obj = self.source
        return {**obj.ref(), "path": obj.path, "line": obj.line, "reason": self.reason}


def not_analysed(
    objects: Iterable[Manifest],
    podsets: Iterable[PodSet],
    problems: Iterable[ExpansionProblem],
    read_kinds: set[str] | frozenset[str],
) -> list[Skipped]:
    """The objects of ``objects`` nothing analysed (see the module), in input order."""
    from gpuplane.k8s.workloads import is_workload  # deferred for start-up time
    from gpuplane.k8s.workloads.discover import BUILTIN_GROUPS
    from gpuplane.k8s.workloads.operators import referenced_runtimes

    objects = list(objects)
    runtimes = referenced_runtimes(objects)  # checked through the InferenceServices that name them

    expanded: set[int] = set()
    for ps in podsets:
        expanded.add(id(ps.source))
        if ps.template_source is not None:
            expanded.add(id(ps.template_source))
    problem_paths: dict[int, list] = {}
    for problem in problems:
        problem_paths.setdefault(id(problem.source), []).append(problem.path)
    out: list[Skipped] = []
    for obj in objects:
        key = id(obj)
        if key in expanded or (obj.group == "serving.kserve.io" and obj.name in runtimes):
            continue
        workload = is_workload(obj)
        if not workload and (obj.kind in read_kinds or obj.group in BUILTIN_GROUPS):
            continue
        paths = problem_paths.get(key)
        if paths:
            fields = placeholder_fields(obj)
            if fields and all(under_placeholder(fields, p) for p in paths):
                out.append(Skipped(obj, UNRENDERED))
            continue  # pod-template-invalid reports the other problems
        reason = KIND_REASONS.get((obj.group, obj.kind), NO_TEMPLATE) if workload else UNKNOWN_KIND
        out.append(Skipped(obj, reason))
    return out


def summary_line(skipped: list[Skipped]) -> str:
    """``3 objects not analysed: 2 Model (unknown kind: ...), 1 Job (no pod template found)``."""
    counts: dict[tuple[str, str], int] = {}
    for item in skipped:
        pair = (item.source.kind or "?", item.reason)
        counts[pair] = counts.get(pair, 0) + 1
    n = len(skipped)
    parts = [f"{c} {kind} ({reason})" for (kind, reason), c in sorted(counts.items(), key=lambda x: -x[1])]
    return f"{n} object{'' if n == 1 else 's'} not analysed: " + ", ".join(parts)
