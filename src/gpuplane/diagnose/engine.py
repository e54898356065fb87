"""``gpuplane diagnose``: the cluster rules plus every lint rule, over one cluster snapshot.

Two passes share one :class:`~gpuplane.k8s.cluster.ClusterState`:

1. the ``cluster`` rules (:mod:`gpuplane.diagnose.rules`) on live state: nodes,
   GPU-stack pods, gangs, Pending pods;
2. the lint engine on the cluster's own objects: every controller and config
   object of the snapshot (PodGroups, ConfigMaps, ClusterPolicy, quotas ...),
   plus one pod per controller that the snapshot does not hold (bare pods, pods
   of ReplicaSets/DaemonSets/Jobs whose owners were not captured), so the
   workload rules see the workloads even in a pods-and-nodes-only snapshot.
   The ClusterState is the lint context (``--cluster`` semantics).

The JSON is spec/cli.md's ``{"findings", "inventory", "summary"}``: cluster
findings first (they are about the cluster as it is now), then workload findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpuplane.lint.finding import SEVERITY_RANK, Finding
from gpuplane.progress import task
from gpuplane.sources.gc_policy import paused_gc
from gpuplane.sources.manifest import Manifest

# The rule packages of `gpuplane diagnose`, given to the neutral registry (gpuplane.ruleset).
CLUSTER_RULE_PACKAGES = ("gpuplane.diagnose.rules",)

if TYPE_CHECKING:
    from gpuplane.diagnose.inventory import Inventory
    from gpuplane.diagnose.report_data import ReportData
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.k8s.objects import Pod
    from gpuplane.lint.config import LintConfig
    from gpuplane.lint.engine import RuleFailure


@dataclass(slots=True)
class DiagnoseResult:
    """Everything ``gpuplane diagnose`` reports."""

    state: ClusterState
    inventory: Inventory
    cluster_findings: list[Finding]
    workload_findings: list[Finding]
    workload_objects: int
    failures: list[RuleFailure] = field(default_factory=list)
    # Why the kube-scheduler model could not be built for this cluster (None: it was, or it
    # was not needed). Pending pods are then explained from their own PodScheduled condition
    # only: the CLI says so instead of reporting a healthy cluster in silence.
    model_error: str | None = None
    # The HTML report's aggregations (None unless run_diagnose was asked for them).
    report_data: ReportData | None = None

    @property
    def findings(self) -> list[Finding]:
        return [*self.cluster_findings, *self.workload_findings]

    def only(self, *, namespace: str | None = None, min_severity: str | None = None) -> DiagnoseResult:
        """The same result with only the findings at or above ``min_severity`` and, with
        ``namespace``, on objects of that namespace or cluster-scoped ones (a node's finding
        concerns every namespace that schedules on it). Inventory and chart data are kept whole:
        they describe the cluster, not the selection."""
        floor = SEVERITY_RANK.get(min_severity or "info", 1)

        def keep(finding: Finding) -> bool:
            if SEVERITY_RANK.get(finding.severity, 0) < floor:
                return False
            ns = finding.object.namespace
            return namespace is None or not ns or ns == namespace

        return replace(
            self,
            cluster_findings=[f for f in self.cluster_findings if keep(f)],
            workload_findings=[f for f in self.workload_findings if keep(f)],
        )

    def summary(self) -> dict[str, Any]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for finding in self.findings:
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        state = self.state
        inventory = self.inventory
        return {
            "nodes": len(state.nodes),
            "gpu_nodes": len(inventory.nodes),
            "gpus": sum(node.gpus for node in inventory.nodes),
            "pods": len(state.pods),
            "pending_pods": len(state.pending_pods),
            "objects": self.workload_objects,
            "findings": len(self.findings),
            "cluster_findings": len(self.cluster_findings),
            "workload_findings": len(self.workload_findings),
            **counts,
        }

    def to_json(self) -> dict[str, Any]:
        """spec/cli.md: ``{"findings": [...], "inventory": {...}, "summary": {...}}``."""
        findings = [finding.to_json() for finding in self.findings]
        for document in findings:
            if not document["line"]:  # lines are 1-based: 0 means the object has no known position
                document["line"] = None
        return {
            "findings": findings,
            "inventory": self.inventory.to_json(),
            "summary": self.summary(),
        }

    def reaches(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        floor = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK.get(f.severity, 0) >= floor for f in self.findings)


def cluster_rules() -> list[Any]:
    """The ``cluster`` rules, loaded from diagnose's own rule package."""
    from gpuplane.ruleset import load  # for start-up time: loading imports every rule module

    return load(CLUSTER_RULE_PACKAGES)


def run_cluster_rules(
    state: ClusterState, *, config: LintConfig | None = None
) -> tuple[list[Finding], list[RuleFailure]]:
    """The cluster rules over ``state``; findings ordered by severity, rule, object."""
    from gpuplane.lint.context import LintContext  # deferred for start-up time
    from gpuplane.lint.engine import RuleFailure, ignored_rules

    ctx = LintContext([], [], state)
    findings: list[Finding] = []
    failures: list[RuleFailure] = []
    rules = cluster_rules()  # once: the registry walk is not free, and the order below reuses it
    with task(f"running {len(rules)} cluster rules", len(rules)) as advance:
        for meta in rules:
            advance(1)
            if config is not None and not config.rule_enabled(meta.id):
                continue
            ctx.rule = meta
            try:
                for finding in meta.check(ctx):
                    silenced = ignored_rules(finding.object)
                    if meta.id in silenced or "all" in silenced:
                        continue
                    if config is not None and meta.id in config.severity:
                        finding.severity = config.severity[meta.id]
                    findings.append(finding)
            except Exception as exc:  # a rule bug must not hide every other finding
                failures.append(RuleFailure(meta.id, f"{type(exc).__name__}: {exc}"))
    ctx.rule = None
    order = {meta.id: i for i, meta in enumerate(rules)}
    # Stable sort: within a rule, the rule's own order (enablement chain, inventory order) is kept.
    findings.sort(key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), order.get(f.rule, 99)))
    return findings, failures


def workload_objects(state: ClusterState) -> list[Manifest]:
    """What the lint rules see of a cluster: its plain objects plus one pod per uncaptured controller."""
    from gpuplane.diagnose.facts import facts_for  # deferred for start-up time

    facts = facts_for(state)  # shares the pods' Manifests (and their file positions) with the cluster rules
    objects = list(state.objects)
    present = {(obj.group, obj.kind, obj.namespace or "default", obj.name) for obj in objects}
    seen_owners: set[Owner] = set()
    for pod in state.pods:
        if pod.status.phase in ("Succeeded", "Failed"):
            continue
        owner = _controller(pod)
        if owner is not None:
            if _owner_captured(owner, present):
                continue
            if owner in seen_owners:
                continue
            seen_owners.add(owner)
        objects.append(facts.manifest(pod))
    return objects


# (API group, kind, namespace, name): the group tells a Volcano ``batch.volcano.sh`` Job
# from a ``batch`` Job of the same name.
Owner = tuple[str, str, str, str]


def _controller(pod: Pod) -> Owner | None:
    namespace = pod.metadata.namespace or "default"
    refs = pod.metadata.owner_references
    if not refs:
        return None
    ref = next((r for r in refs if r.controller), refs[0])
    api_version = ref.api_version
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return (group, ref.kind, namespace, ref.name)


def _owner_captured(owner: Owner, present: set[Owner]) -> bool:
    """The pod's controller (or the Deployment / CronJob above it) is among the snapshot's objects."""
    group, kind, namespace, name = owner
    if owner in present:
        return True
    if (group, kind) == ("apps", "ReplicaSet") and "-" in name:
        return ("apps", "Deployment", namespace, name.rsplit("-", 1)[0]) in present
    if (group, kind) == ("batch", "Job") and "-" in name:
        return ("batch", "CronJob", namespace, name.rsplit("-", 1)[0]) in present
    return False


def run_diagnose(
    state: ClusterState, *, config: LintConfig | None = None, report_data: bool = False
) -> DiagnoseResult:
    """Diagnose ``state``: cluster rules, lint on its workloads, inventory; with
    ``report_data``, also the aggregations the HTML report charts (:mod:`.report_data`)."""
    from gpuplane.diagnose.facts import facts_for  # deferred for start-up time
    from gpuplane.diagnose.report_data import build_report_data
    from gpuplane.lint.config import LintConfig
    from gpuplane.lint.engine import run_lint

    with paused_gc():  # many short-lived objects (findings, manifests, explanations)
        cluster_findings, failures = run_cluster_rules(state, config=config)
        objects = workload_objects(state)
        # diagnose reviews a whole live cluster: the opt-in (advisory) rules run too
        lint_config = replace(config, profile="all") if config is not None else LintConfig(profile="all")
        lint = run_lint(objects, cluster=state, config=lint_config)
        facts = facts_for(state)
        inventory = facts.inventory
        data = build_report_data(facts, inventory) if report_data else None
    return DiagnoseResult(
        state,
        inventory,
        cluster_findings,
        lint.findings,
        len(objects),
        [*failures, *lint.failures],
        facts.scheduler_error,
        data,
    )
