"""Run the registered rules over a set of objects.

The engine expands workloads into PodSets once and shares them with every rule
(design.md "Fast by construction": rules are linear passes over shared data),
applies suppression (``gpuplane.io/ignore`` annotation, config file, --disable /
--enable), severity overrides, and sorts findings by file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from gpuplane.lint.config import LintConfig
from gpuplane.lint.context import LintContext
from gpuplane.lint.coverage import Skipped, not_analysed
from gpuplane.lint.finding import SEVERITY_RANK, Finding
from gpuplane.lint.placeholders import placeholder_fields, under_placeholder
from gpuplane.lint.reads import READS_SOURCES, needed, reads_of_module
from gpuplane.progress import task
from gpuplane.records import Record
from gpuplane.ruleset import RuleMeta, load
from gpuplane.ruleset.registry import module_reads
from gpuplane.sources.gc_policy import paused_gc
from gpuplane.sources.manifest import FieldPath, Manifest

# The rule packages `gpuplane lint` runs by default, given to the neutral registry (gpuplane.ruleset);
# callers that also accept the cluster rules pass the whole catalog (gpuplane.rule_catalog).
LINT_RULE_PACKAGES = ("gpuplane.lint.rules",)

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState

IGNORE_ANNOTATION = "gpuplane.io/ignore"
# kube-linter's per-check form (``ignore-check.kube-linter.io/<check>: "<reason>"``), for gpuplane
RULE_IGNORE_PREFIX = "ignore-rule.gpuplane.io/"


class Suppressed(Record):
    """A finding an annotation silenced: counted and listed, so a suppression stays visible."""

    __slots__ = ("finding", "reason")
    finding: Finding
    reason: str

    def __init__(self, finding: Finding, reason: str) -> None:
        self.finding = finding
        self.reason = reason

    def to_json(self) -> dict[str, object]:
        f = self.finding
        return {
            "rule": f.rule,
            "severity": f.severity,
            "object": f.object.ref(),
            "path": f.object.path,
            "line": f.line,
            "reason": self.reason,
        }


class RuleFailure(Record):
    """A rule that raised on this input: reported on stderr, the run goes on."""

    __slots__ = ("message", "rule")
    rule: str
    message: str

    def __init__(self, rule: str, message: str) -> None:
        self.rule = rule
        self.message = message


class LintResult(Record):
    """The findings of one run, what failed, what was silenced and what no rule could analyse."""

    __slots__ = ("failures", "findings", "objects", "skipped", "suppressed")
    findings: list[Finding]
    objects: int
    failures: list[RuleFailure]
    suppressed: list[Suppressed]
    skipped: list[Skipped]

    def __init__(
        self,
        findings: list[Finding],
        objects: int,
        failures: list[RuleFailure] | None = None,
        suppressed: list[Suppressed] | None = None,
        skipped: list[Skipped] | None = None,
    ) -> None:
        self.findings = findings
        self.objects = objects
        self.failures = [] if failures is None else failures
        self.suppressed = [] if suppressed is None else suppressed
        self.skipped = [] if skipped is None else skipped

    def summary(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        doc = {"objects": self.objects, "findings": len(self.findings), **counts}
        if self.suppressed:
            doc["suppressed"] = len(self.suppressed)
        if self.skipped:
            doc["skipped"] = len(self.skipped)
        return doc

    def skipped_dicts(self) -> list[dict[str, object]]:
        """The ``skipped`` list of the JSON document: objects no rule could analyse."""
        return [s.to_json() for s in self.skipped]

    def to_json(self) -> dict[str, object]:
        """The document of ``gpuplane lint -f json`` (spec/cli.md); ``suppressed`` only when an
        annotation silenced some finding; ``skipped`` always (empty when every object was analysed)."""
        doc: dict[str, object] = {
            "findings": [f.to_json() for f in self.findings],
            "skipped": self.skipped_dicts(),
            "summary": self.summary(),
        }
        if self.suppressed:
            doc["suppressed"] = [s.to_json() for s in self.suppressed]
        return doc

    def reaches(self, fail_on: str) -> bool:
        """True when some finding is at or above ``fail_on`` (exit code 1)."""
        if fail_on == "never":
            return False
        floor = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK.get(f.severity, 0) >= floor for f in self.findings)


def ignored_rules(obj: Manifest) -> frozenset[str]:
    """Rule ids silenced on ``obj`` by ``gpuplane.io/ignore: "id,id"`` (``all`` silences every rule)."""
    value = obj.annotations.get(IGNORE_ANNOTATION)
    if not value or not isinstance(value, str):
        return frozenset()
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def suppressions(obj: Manifest) -> dict[str, tuple[str, str]]:
    """Rule id -> (annotation key, reason) silenced on ``obj``: every id of ``gpuplane.io/ignore``
    (reason empty; ``all`` for every rule) and each ``ignore-rule.gpuplane.io/<id>: "<reason>"``.
    The per-rule form wins for its id, so its reason is the one reported."""
    out: dict[str, tuple[str, str]] = {rid: (IGNORE_ANNOTATION, "") for rid in ignored_rules(obj)}
    for key, value in obj.annotations.items():
        if isinstance(key, str) and key.startswith(RULE_IGNORE_PREFIX):
            rid = key[len(RULE_IGNORE_PREFIX) :].strip()
            if rid and rid != "all":  # "all" is the list form's word; here it is an unknown id
                out[rid] = (key, value.strip() if isinstance(value, str) else "")
    return out


def unknown_suppression_notes(objects: Iterable[Manifest], known_rules: Iterable[str]) -> list[str]:
    """One note per unknown rule id named by a suppression annotation, worded as ``--disable``'s
    error (``unknown rule id 'x'``) with the closest known id: a typo silences nothing.
    ``known_rules`` is the whole catalog (an object may silence a diagnose rule too); the caller
    (gpuplane.app) passes it, as the catalog sits above this engine."""
    import difflib  # for start-up time

    notes: list[str] = []
    known = sorted(set(known_rules))
    known_ids = set(known)
    for obj in objects:
        annotations = obj.annotations
        if not annotations:
            continue
        named = [(IGNORE_ANNOTATION, rid) for rid in sorted(ignored_rules(obj)) if rid != "all"]
        named += sorted(
            (key, key[len(RULE_IGNORE_PREFIX) :].strip())
            for key in annotations
            if isinstance(key, str) and key.startswith(RULE_IGNORE_PREFIX)
        )
        for key, rid in named:
            if rid in known_ids:
                continue
            close = difflib.get_close_matches(rid, known, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]}?" if close else " (see `gpuplane rules`)"
            line = obj.field_line(("metadata", "annotations", key))
            notes.append(f"{obj.path}:{line}: {_label(obj)}: {key}: unknown rule id '{rid}'{hint}")
    return notes


def _label(obj: Manifest) -> str:
    from gpuplane.lint.context import object_label  # deferred for start-up time

    return object_label(obj)


def lint_rules() -> list[RuleMeta]:
    """The lint rules, from the rule index when fresh (which records what each module reads)."""
    return load(LINT_RULE_PACKAGES, reads_of=reads_of_module, extra_sources=READS_SOURCES)


def select_rules(
    config: LintConfig, *, with_cluster: bool, rules: Iterable[RuleMeta] | None = None
) -> list[RuleMeta]:
    """The rules to run: enabled by config/flags; ``required``-context rules only with a cluster.

    From the default catalog, opt-in rules run only when the config asks for them (profile
    ``all``, or their id in ``enable``); a caller that passes ``rules`` has chosen them."""
    chosen = []
    for meta in rules if rules is not None else lint_rules():
        if meta.category == "cluster" and not config.enable:
            continue  # cluster rules belong to `gpuplane diagnose`
        if not config.rule_enabled(meta.id):
            continue
        if rules is None and not config.runs(meta.id, meta.tier):
            continue
        if meta.context == "required" and not with_cluster:
            continue
        chosen.append(meta)
    return chosen


# Built-in kinds that never hold a pod template: input made only of these has no pod set, and
# linting it (a ConfigMap in a pre-commit hook) need not load the workload model.
PODLESS_KINDS = frozenset(
    {
        ("", "ConfigMap"),
        ("", "Namespace"),
        ("", "Service"),
        ("", "ServiceAccount"),
        ("", "PersistentVolumeClaim"),
        ("", "PersistentVolume"),
        ("", "ResourceQuota"),
        ("", "LimitRange"),
        ("", "Node"),
        ("", "Endpoints"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "StorageClass"),
        ("policy", "PodDisruptionBudget"),
        ("autoscaling", "HorizontalPodAutoscaler"),
        ("networking.k8s.io", "Ingress"),
        ("networking.k8s.io", "NetworkPolicy"),
        ("rbac.authorization.k8s.io", "Role"),
        ("rbac.authorization.k8s.io", "RoleBinding"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    }
)


def expand_podsets(
    objects: list[Manifest], cluster: ClusterState | None, problems: list | None = None
) -> list:
    """PodSets of every workload in ``objects`` (expanded once for all rules; never raises), and
    of the pod specs found inside custom resources no expander knows (``discover``).
    Objects or templates that could not be expanded are appended to ``problems``."""
    if all((o.group, o.kind) in PODLESS_KINDS for o in objects):
        return []
    from gpuplane.k8s.workloads import expand_all  # deferred for start-up time

    nodes = cluster.nodes if cluster is not None else None
    return expand_all(objects, nodes=nodes, problems=problems, discover=True)


def run_lint(
    objects: list[Manifest],
    *,
    cluster: ClusterState | None = None,
    config: LintConfig | None = None,
    rules: Iterable[RuleMeta] | None = None,
) -> LintResult:
    """Lint ``objects`` (optionally against ``cluster``) and return sorted findings."""
    config = config or LintConfig()
    with paused_gc():  # rules and lazy line maps allocate millions of short-lived objects
        return _run(objects, cluster, config, rules)


UNRENDERED_RULE = "manifest-unrendered-template"


def _on_placeholder(finding: Finding, cache: dict[int, list[FieldPath]]) -> bool:
    """The finding points at (or inside) a field holding an unrendered template placeholder.
    Findings about the object as a whole (its name or namespace line) stay."""
    path = finding.path
    if len(path) <= 2 and path[:1] == ("metadata",):
        return False
    key = id(finding.object)
    fields = cache.get(key)
    if fields is None:
        fields = cache[key] = placeholder_fields(finding.object)
    return bool(fields) and under_placeholder(fields, path)


def _reporting_modules(
    objects: list[Manifest], podsets: list, problems: list, cluster: ClusterState | None
) -> Callable[[str], bool]:
    """Which rule modules can report on this input: from the rule index's reads, without a
    cluster (with one, a rule may look anywhere in it); every module when the index is stale."""
    reads = module_reads(LINT_RULE_PACKAGES, READS_SOURCES) if cluster is None else None
    if reads is None:
        return lambda module: True
    kinds = {o.kind for o in objects}
    has_podsets = bool(podsets) or bool(problems)

    def can_report(module: str) -> bool:
        module_read = reads.get(module)
        return module_read is None or needed(module_read, kinds, has_podsets)

    return can_report


def _run(
    objects: list[Manifest],
    cluster: ClusterState | None,
    config: LintConfig,
    rules: Iterable[RuleMeta] | None,
) -> LintResult:
    if config.ignore:
        objects = [o for o in objects if not config.path_ignored(o.path)]
    problems: list = []
    podsets = expand_podsets(objects, cluster, problems)
    ctx = LintContext(objects, podsets, cluster, problems, admission_plugins=config.admission_plugins)
    findings: list[Finding] = []
    failures: list[RuleFailure] = []
    overrides = config.severity
    ignore_cache: dict[int, dict[str, tuple[str, str]]] = {}
    suppressed: list[Suppressed] = []
    placeholder_cache: dict[int, list[FieldPath]] = {}
    seen: set[tuple[str, int, tuple]] = set()  # one finding per (rule, object, field): shared templates
    can_report = _reporting_modules(objects, podsets, problems, cluster)
    chosen = select_rules(config, with_cluster=cluster is not None, rules=rules)
    with task(f"running {len(chosen)} rules on {len(objects):,} objects", len(chosen)) as advance:
        for meta in chosen:
            advance(1)
            if not can_report(meta.check.__module__):
                continue  # nothing in the input it reads: not even imported (gpuplane.lint.reads)
            ctx.rule = meta
            try:
                for finding in meta.check(ctx):
                    if id(finding) in ctx.controller_owned:
                        continue  # a field of a pod the controller builds alone: nothing to act on here
                    key = id(finding.object)
                    if meta.id != UNRENDERED_RULE and _on_placeholder(finding, placeholder_cache):
                        continue  # the field is not rendered yet: nothing to judge (manifest-unrendered-template)
                    dedupe = (meta.id, key, finding.path)
                    if dedupe in seen:
                        continue
                    seen.add(dedupe)
                    if meta.id in overrides:
                        finding.severity = overrides[meta.id]
                    silenced = ignore_cache.get(key)
                    if silenced is None:
                        silenced = ignore_cache[key] = suppressions(finding.object)
                    if silenced:
                        hit = silenced.get(meta.id) or silenced.get("all")
                        if hit is not None:
                            suppressed.append(Suppressed(finding, hit[1]))
                            continue
                    findings.append(finding)
            except Exception as exc:  # a rule bug must not hide every other finding
                failures.append(RuleFailure(meta.id, f"{type(exc).__name__}: {exc}"))
    ctx.rule = None
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=lambda s: s.finding.sort_key())
    # built-in kinds without pod templates are never "not analysed": no need to load the workload model
    podless = all((o.group, o.kind) in PODLESS_KINDS for o in objects)
    skipped = [] if podless else not_analysed(objects, podsets, problems, ctx.read_kinds)
    return LintResult(findings, len(objects), failures, suppressed, skipped)
