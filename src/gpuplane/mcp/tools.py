"""gpuplane's services as MCP tools: a schema and a decorator beside each.

Each tool is a plain function whose typed, described parameters become the tool's JSON input
schema (the SDK reads the signature; the descriptions come from ``Field``). It checks its paths
against the sandbox, builds the request of the command's service (:mod:`gpuplane.app`, the same
function the CLI calls: option checks, config discovery, cluster and manifest loading, the
engine) and returns a :class:`ToolOutput`: the JSON document the matching ``gpuplane ... -f
json`` command prints, the input problems in ``errors``, the listing filters and pages, and a
one-line summary for the assistant. Unusable input raises :class:`ToolInputError` (the service
layer's ``AppError``) with one line; the server turns that into a tool error.

Everything here is read-only: cluster sources are only read (a snapshot, or ``live`` through
the same get/list-only reader as the CLI), and ``generate`` writes only into a folder the caller
names under the server's root, and never applies anything.

Adding a tool touches this module only: write the function with the :func:`tool` decorator
(name, title, description) above it; :data:`TOOLS` lists the tools in declaration order.

This module is imported only by ``gpuplane mcp`` (never at ``gpuplane --help`` time), so it
may import pydantic at the top; the services are still imported inside each tool, so listing
tools stays cheap and one engine's import error cannot take the server down.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from gpuplane.app.inputs import ClusterCache
from gpuplane.app.outcome import MCP, AppError, Messages, plural
from gpuplane.app.paging import ListFilter
from gpuplane.ruleset.registry import CATEGORIES

if TYPE_CHECKING:
    pass

Outcome = TypeVar("Outcome")


# Unusable tool arguments or input, reported to the assistant as one line: the service layer's
# AppError itself, so an app function's refusal needs no translation here.
ToolInputError = AppError


@dataclass(slots=True)
class ToolOutput:
    """A tool's result: the JSON document (structured content) and a short text summary."""

    data: dict[str, Any]
    summary: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool: its name, title, description and the function that runs it."""

    name: str
    title: str
    description: str
    fn: Callable[..., ToolOutput]
    # True when the tool can reach outside the local files (``cluster: live``): MCP openWorldHint.
    reads_cluster: bool = False
    # True when the tool writes local files (``generate``): then it is not readOnlyHint.
    writes_files: bool = False


_TOOLS: list[ToolSpec] = []


def tool(
    name: str, title: str, description: str, *, reads_cluster: bool = False, writes_files: bool = False
) -> Callable[[Callable[..., ToolOutput]], Callable[..., ToolOutput]]:
    """Register the decorated function as the MCP tool ``name`` (its signature is the schema)."""

    def register(fn: Callable[..., ToolOutput]) -> Callable[..., ToolOutput]:
        _TOOLS.append(ToolSpec(name, title, description, fn, reads_cluster, writes_files))
        return fn

    return register


# -- shared parameter types ----------------------------------------------------------------------

Cluster = Annotated[
    str,
    Field(
        description="The cluster to read: a snapshot file or folder (kubectl get -o yaml|json output, or "
        "`gpuplane snapshot` output), or `live` for the current kube-context (read-only get/list).",
        min_length=1,
    ),
]
KubeContext = Annotated[
    str | None, Field(description="Kube-context to use when cluster is `live` (default: the current one).")
]
KubeVersion = Annotated[
    str | None,
    Field(description="Word messages as this kube-scheduler version, e.g. 1.31 (default: from the cluster)."),
]
Kubeconfig = Annotated[
    str | None,
    Field(description="Kubeconfig file for cluster `live` (default: $KUBECONFIG or ~/.kube/config)."),
]
Manifests = Annotated[
    str | None,
    Field(
        description="Kubernetes manifests as text: YAML (multi-document, `kind: List` too) or JSON, "
        "e.g. `helm template` or `kubectl get -o yaml` output."
    ),
]
Paths = Annotated[
    list[str] | None,
    Field(
        description="Files or folders of manifests (*.yaml, *.yml, *.json; folders are walked "
        "recursively). Relative paths are relative to the server's working directory."
    ),
]
MinSeverity = Annotated[
    Literal["info", "warning", "error"] | None,
    Field(description="Keep only findings at or above this severity (warning keeps warnings and errors)."),
]
Namespace = Annotated[
    str | None, Field(description="Keep only the items of this namespace (exact name).", min_length=1)
]
RuleId = Annotated[str | None, Field(description="Keep only the findings of this rule id.", min_length=1)]
Limit = Annotated[
    int | None,
    Field(
        description="Return at most this many items; the result's page.next_cursor continues the list.",
        ge=1,
    ),
]
Cursor = Annotated[
    str | None,
    Field(description="page.next_cursor of an earlier call with the same filters: the next items."),
]


# -- helpers -------------------------------------------------------------------------------------


def _check_path(path: str, what: str) -> str:
    """The path when the sandbox allows it (:mod:`gpuplane.mcp.sandbox`: inside the server's
    roots, not /proc, /dev or /sys; never ``-``, standard input being the MCP channel itself);
    ``cluster: live`` is not a path."""
    from gpuplane.mcp.sandbox import PathRefused, check  # deferred for start-up time
    from gpuplane.sources.cluster import LIVE

    if what == "cluster" and path.strip() == LIVE:
        return LIVE
    try:
        checked = check(path, what)
    except PathRefused as exc:
        raise ToolInputError(str(exc)) from None
    if what not in MAY_BE_NEW and not os.path.exists(checked):
        raise ToolInputError(f"{what}: {path.strip()!r} does not exist{_where_paths_start(path)}")
    return checked


def _check_optional(path: str | None, what: str) -> str | None:
    """:func:`_check_path` of an optional parameter: None (or empty) stays None."""
    return _check_path(path, what) if path else None


def _check_paths(paths: list[str] | None, what: str) -> tuple[str, ...]:
    """:func:`_check_path` of each path of a list parameter."""
    return tuple(_check_path(p, what) for p in paths or ())


def _require_manifests(manifests: str | None, paths: list[str] | None) -> None:
    """Refuse a call that gives neither manifest text nor paths (lint and simulate need input)."""
    if not (manifests and manifests.strip()) and not paths:
        raise ToolInputError("give manifests (YAML/JSON text) or paths (files or folders), or both")


# Parameters naming something the tool creates (generate's output folder): they need not exist.
MAY_BE_NEW = frozenset({"output_dir"})


def _where_paths_start(path: str) -> str:
    """Which folder a relative path was read from, and the roots the server may read: the
    assistant cannot see the server's working directory, so a bare "no such file" does not tell
    it what to fix."""
    from gpuplane.mcp.sandbox import roots  # deferred for start-up time

    configured = roots()
    start = configured[0] if configured else os.getcwd()
    where = (
        ""
        if os.path.isabs(path.strip())
        else f" (relative paths start at the server's working directory {start}"
    )
    if configured and len(configured) > 1:
        where += ("; " if where else " (") + "roots: " + ", ".join(configured)
    return where + (")" if where else "")


CLUSTERS = ClusterCache()


def _serve(run: Callable[..., Outcome], request: Any) -> tuple[Outcome, list[str]]:
    """``run(request, messages, MCP)`` of a service (:mod:`gpuplane.app`), snapshots shared
    through :data:`CLUSTERS`: its outcome and the input problems the document lists in ``errors``."""
    messages = Messages()
    return run(request, messages, MCP, cache=CLUSTERS), messages.errors


def _with_errors(document: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    """The CLI document plus the input problems the CLI prints on stderr."""
    document["errors"] = errors
    return document


def _paged(
    document: dict[str, Any],
    key: str,
    wanted: ListFilter,
    namespace_of: Callable[[dict[str, Any]], str | None] | None = None,
) -> str:
    """Filter and page ``document[key]`` in place (:mod:`gpuplane.app.paging`), add its ``page``
    block (``total``, ``returned``, ``next_cursor``) and return the summary's note on it."""
    from gpuplane.app.paging import finding_namespace, page  # deferred for start-up time

    kept, block = page(document[key], wanted, namespace_of=namespace_of or finding_namespace)
    document[key] = kept
    document["page"] = block
    if (
        block["next_cursor"] is None
        and block["returned"] == block["total"] == len(kept)
        and not (wanted.severity or wanted.namespace or wanted.rule or wanted.cursor)
    ):
        return ""
    note = f"; showing {block['returned']} of {block['total']} {key}"
    if block["next_cursor"] is not None:
        note += f" (more: cursor {block['next_cursor']!r})"
    return note


def _errors_note(errors: list[str]) -> str:
    return f" ({plural(len(errors), 'input error')}: {errors[0]})" if errors else ""


def _answer(document: dict[str, Any], errors: list[str], summary: str) -> ToolOutput:
    """The tool's output: the CLI document with its ``errors``, and the summary with their note."""
    return ToolOutput(_with_errors(document, errors), summary + _errors_note(errors))


def _rules_named(rules: list[str]) -> str:
    """The summary's list of the rules that found something: the first eight, then "..."."""
    if not rules:
        return ""
    return ": " + ", ".join(rules[:8]) + (", ..." if len(rules) > 8 else "")


# -- lint and rules --------------------------------------------------------------------------------


@tool(
    "lint",
    "Lint Kubernetes manifests for GPU/AI mistakes",
    "Find what in Kubernetes manifests will break, stall, waste GPUs or leak isolation (GPU requests "
    "without limits, missing tolerations, training jobs without gang scheduling, shared RWO volumes "
    "...). Input: manifest text and/or paths, optionally a cluster for context. Returns findings "
    "with rule id, severity, file, line, message and fix, like `gpuplane lint -f json`. Read-only: "
    "never edits files. Filters: severity (minimum), namespace, rule, limit with cursor (the result's page says total and "
    "next_cursor).",
    reads_cluster=True,
)
def lint(
    manifests: Manifests = None,
    paths: Paths = None,
    cluster: Annotated[
        str | None,
        Field(
            description="Optional cluster to check against (snapshot file/folder or `live`): enables the "
            "rules that need cluster context (node labels, taints, quotas ...)."
        ),
    ] = None,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
    disable: Annotated[list[str] | None, Field(description="Rule ids to turn off.")] = None,
    enable: Annotated[list[str] | None, Field(description="Rule ids to run (only these when given).")] = None,
    config: Annotated[
        str | None,
        Field(description="A .gpuplane.yaml config file (default: the nearest one above the first path)."),
    ] = None,
    severity: MinSeverity = None,
    namespace: Namespace = None,
    rule: RuleId = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ToolOutput:
    """Same engine and document as ``gpuplane lint -f json``; never rewrites files (no --fix)."""
    from gpuplane.app import lint as lint_app  # deferred for start-up time
    from gpuplane.app.inputs import config_start
    from gpuplane.report.lint_text import summary_line

    _require_manifests(manifests, paths)
    request = lint_app.LintRequest(
        paths=_check_paths(paths, "paths"),
        inline=manifests,
        cluster=_check_optional(cluster, "cluster"),
        context=context,
        kubeconfig=kubeconfig,
        disable=frozenset(disable or ()),
        enable=frozenset(enable or ()),
        config=_check_optional(config, "config"),
        config_start=config_start(paths or ()),
    )
    outcome, errors = _serve(lint_app.run, request)
    result = outcome.result
    summary = summary_line(result.summary())
    summary += _rules_named(sorted({f.rule for f in result.findings}))
    document = result.to_json()
    summary += _paged(document, "findings", ListFilter(severity, namespace, rule, limit, cursor))
    return _answer(document, errors, summary)


# The rule categories of the shared registry (spec/rules.md order), as the schema's enum.
if TYPE_CHECKING:
    Category = str
else:
    Category = Literal[CATEGORIES]


@tool(
    "list_rules",
    "List gpuplane lint rules",
    "List every lint rule (id, severity, category, summary), like `gpuplane rules -f json`.",
)
def list_rules(
    category: Annotated[Category | None, Field(description="Only the rules of this category.")] = None,
) -> ToolOutput:
    """The rule catalog, as ``gpuplane rules -f json`` lists it (wrapped in ``{"rules": [...]}``)."""
    from gpuplane.app import rules as rules_app  # deferred for start-up time

    rules = [rules_app.row(m) for m in rules_app.rules(category)]
    where = f" in category {category}" if category else ""
    return ToolOutput({"rules": rules}, f"{plural(len(rules), 'rule')}{where}")


@tool(
    "explain_rule",
    "Explain a lint rule",
    "The docs page (Markdown) of one lint rule: what it catches, why it matters, how to fix it, like "
    "`gpuplane explain ID`.",
)
def explain_rule(
    rule_id: Annotated[
        str, Field(description="A lint rule id, e.g. gpu-request-without-limit.", min_length=1)
    ],
) -> ToolOutput:
    """The rule's docs page, as ``gpuplane explain ID`` prints it, plus its metadata."""
    from gpuplane.app import rules as rules_app  # deferred for start-up time

    meta = rules_app.find(rule_id, MCP)
    document = rules_app.row(meta)
    del document["tier"]
    document["page"] = rules_app.page(meta)
    return ToolOutput(document, f"{meta.id} ({meta.severity}, {meta.category}): {meta.summary}")


# -- cluster engines -------------------------------------------------------------------------------


@tool(
    "why_pending",
    "Explain Pending pods as kube-scheduler would",
    "Explain why pods are Pending: the exact FailedScheduling message kube-scheduler would write for "
    "this cluster state and Kubernetes version, the per-node reasons, plus gang/quota/queue causes "
    "and fixes, like `gpuplane why-pending -f json`. Filters: namespace, limit with cursor (the result's "
    "page says total and next_cursor).",
    reads_cluster=True,
)
def why_pending(
    cluster: Cluster,
    pod: Annotated[str | None, Field(description="Explain only this pod, as NAMESPACE/NAME.")] = None,
    kubernetes_version: KubeVersion = None,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
    namespace: Namespace = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane why-pending -f json``."""
    from gpuplane.app import why_pending as why_pending_app  # deferred for start-up time

    pod = pod.strip() if pod is not None else None
    why_pending_app.check(pod, kubernetes_version, MCP)
    request = why_pending_app.WhyPendingRequest(
        cluster=_check_path(cluster, "cluster"),
        context=context,
        kubeconfig=kubeconfig,
        label=cluster,
        pod=pod,
        kubernetes_version=kubernetes_version,
    )
    outcome, errors = _serve(why_pending_app.run, request)
    document = outcome.to_json()
    note = _paged(
        document,
        "pods",
        ListFilter(namespace=namespace, limit=limit, cursor=cursor),
        namespace_of=lambda item: str(item["pod"]).split("/", 1)[0],
    )
    pods = document["pods"]
    if not pods:
        summary = (
            "No Pending pods" + (" match the filters" if document["page"]["total"] or namespace else "") + "."
        )
    else:
        first = pods[0]
        summary = f"{plural(document['page']['total'], 'Pending pod')} explained; {first['pod']}: {first['message']}"
    summary += note
    return _answer(document, errors, summary)


@tool(
    "simulate",
    "Simulate submitting workloads to a cluster over time",
    "Place workloads on a model of the cluster as the chosen scheduler would (kube-scheduler with "
    "preemption, Volcano, coscheduling or Kueue), over time, with ResourceQuota admission, API "
    "validation and Karpenter / Cluster Autoscaler scale-up with cold starts: placements, pods left "
    "pending with the exact message, a GPU timeline, utilization, makespan and gang deadlocks, like "
    "`gpuplane simulate -f json`. Read-only: the cluster is only read and nothing is applied.",
    reads_cluster=True,
)
def simulate(
    cluster: Cluster,
    manifests: Manifests = None,
    paths: Paths = None,
    scheduler: Annotated[
        Literal["default", "volcano", "coscheduling", "kueue"],
        Field(
            description="Which scheduler places the pods: kube-scheduler alone (with preemption), Volcano "
            "gangs and queues, scheduler-plugins coscheduling, or Kueue admission in front of kube-scheduler."
        ),
    ] = "default",
    autoscaler: Annotated[
        str | None,
        Field(
            description="auto (default: the Karpenter NodePools / gpuplane ClusterAutoscalerNodeGroups found in "
            "the inputs), none, karpenter, cluster-autoscaler, or a YAML file with NodePools, node groups and "
            "a ColdStart override object."
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        Field(
            description="Scenario file: arrival / duration / image size per workload, cold-start and "
            "Kueue/coscheduling settings."
        ),
    ] = None,
    kubernetes_version: KubeVersion = None,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane simulate -f json``."""
    from gpuplane.app import simulate as simulate_app  # deferred for start-up time

    _require_manifests(manifests, paths)
    request = simulate_app.SimulateRequest(
        _check_path(cluster, "cluster"),
        context,
        kubeconfig,
        paths=_check_paths(paths, "paths"),
        inline=manifests,
        scheduler=scheduler,
        autoscaler=_check_optional(autoscaler, "autoscaler"),
        scenario=_check_optional(scenario, "scenario"),
        kubernetes_version=kubernetes_version,
    )
    outcome, errors = _serve(simulate_app.run, request)
    document = _with_errors(outcome.run.document, errors)
    document["input_notes"] = outcome.run.notes
    summary = document["summary"]
    text = (
        f"{summary['scheduled']} pod(s) placed, {summary['pending']} pending, GPU utilization "
        f"{summary['gpu_utilization'] * 100:.1f}%, makespan "
        + (
            f"{summary['makespan_s']:.0f} s"
            if summary["makespan_s"] is not None
            else "never (pods left pending)"
        )
    )
    if document.get("deadlock"):
        text += "; " + document["deadlock"]["message"]
    return ToolOutput(document, text + _errors_note(errors))


@tool(
    "inventory",
    "GPU inventory of a cluster",
    "GPU capacity by node, pool and model: GPU model, count, allocatable, allocated, free, MIG and "
    "time-slicing layout, problem flags, like `gpuplane inventory -f json`. The node list pages with "
    "limit and cursor (the result's page says total and next_cursor); summary, pools and models "
    "always cover the whole cluster.",
    reads_cluster=True,
)
def inventory(
    cluster: Cluster,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane inventory -f json``."""
    from gpuplane.app import inventory as inventory_app  # deferred for start-up time

    request = inventory_app.InventoryRequest(_check_path(cluster, "cluster"), context, kubeconfig)
    outcome, errors = _serve(inventory_app.run, request)
    inventory_ = outcome.result
    document = inventory_.to_json()
    totals = document["summary"]
    models = ", ".join(f"{m['model']}: {m['gpus']} GPUs, {m['free']} free" for m in document["models"])
    summary = (
        f"{plural(totals['gpu_nodes'], 'GPU node')} of {totals['nodes']}, {totals['allocatable']} allocatable "
        f"GPU units, {inventory_.free_text()}" + (f" ({models})" if models else "")
    )
    summary += _paged(document, "nodes", ListFilter(limit=limit, cursor=cursor))
    return _answer(document, errors, summary)


@tool(
    "diagnose",
    "Diagnose a GPU cluster",
    "What is wrong with a cluster's GPU stack and capacity right now: the cluster rules (device "
    "plugin, GPU Operator, drivers, MIG, gangs partially running, Pending pods ...) plus every lint "
    "rule on the cluster's own workloads, with the GPU inventory, like `gpuplane diagnose -f json`. Filters: severity (minimum), namespace, rule, limit with cursor (the result's page says total and "
    "next_cursor).",
    reads_cluster=True,
)
def diagnose(
    cluster: Cluster,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
    severity: MinSeverity = None,
    namespace: Namespace = None,
    rule: RuleId = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane diagnose -f json``."""
    from gpuplane.app import diagnose as diagnose_app  # deferred for start-up time

    request = diagnose_app.DiagnoseRequest(_check_path(cluster, "cluster"), context, kubeconfig)
    outcome, errors = _serve(diagnose_app.run, request)
    result = outcome.result
    document = result.to_json()
    counts = document["summary"]
    summary = (
        f"{plural(counts['findings'], 'finding')} ({plural(counts['error'], 'error')}, "
        f"{plural(counts['warning'], 'warning')}, {counts['info']} info) on {plural(counts['gpu_nodes'], 'GPU node')}, "
        f"{plural(counts['pending_pods'], 'Pending pod')}"
    ) + _rules_named(list(dict.fromkeys(f.rule for f in result.findings)))
    summary += _paged(document, "findings", ListFilter(severity, namespace, rule, limit, cursor))
    return _answer(document, errors, summary)


@tool(
    "usage",
    "GPU usage from DCGM metrics",
    "What the GPUs really do: the NVIDIA DCGM exporter's series (engine activity, memory, MIG "
    "instances) from a Prometheus server or offline files, joined with the cluster's pods. Per "
    "workload, namespace and node pool: GPU-hours allocated and active, mean/p95 activity, peak "
    "memory, idle stretches; findings gpu-allocated-idle, gpu-underused, gpu-memory-oversized, "
    "gpu-data-starved with the change that fixes each and its saving in GPU-hours and dollars "
    "(estimates), like `gpuplane usage -f json`. Read-only: only GET /api/v1/query_range. Filters: severity (minimum), namespace, rule, limit with cursor (the result's page says total and "
    "next_cursor).",
    reads_cluster=True,
)
def usage(
    metrics_files: Annotated[
        list[str] | None,
        Field(
            description="Offline metrics: saved Prometheus range-query answers (JSON) or OpenMetrics / "
            "text samples with timestamps (docs/usage.md)."
        ),
    ] = None,
    prometheus: Annotated[
        str | None,
        Field(
            description="Prometheus URL instead of files. Credentials come from the server's environment "
            "(GPUPLANE_PROMETHEUS_TOKEN, or GPUPLANE_PROMETHEUS_USERNAME/PASSWORD) or prometheus_token_file."
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        Field(description="Cluster for owners, teams, pools and prices: a snapshot file/folder or `live`."),
    ] = None,
    since: Annotated[str, Field(description="Window to read from Prometheus, e.g. 7d, 24h.")] = "7d",
    end: Annotated[
        str | None, Field(description="End of the window (RFC 3339 or Unix seconds; default now).")
    ] = None,
    selector: Annotated[
        str, Field(description='Extra matchers for every DCGM series, e.g. cluster="prod".')
    ] = "",
    prometheus_token_file: Annotated[str | None, Field(description="A file holding a bearer token.")] = None,
    prometheus_ca: Annotated[str | None, Field(description="CA bundle for an https Prometheus.")] = None,
    idle_hours: Annotated[
        float, Field(description="An idle stretch at least this long is gpu-allocated-idle.", gt=0)
    ] = 4.0,
    active_threshold: Annotated[
        float,
        Field(description="Engine activity (%) at or above which a GPU counts as working.", ge=0, le=100),
    ] = 5.0,
    notebook_idle_timeout: Annotated[
        int, Field(description="Idle timeout (minutes) proposed for notebooks.", ge=1)
    ] = 60,
    context: KubeContext = None,
    kubeconfig: Kubeconfig = None,
    severity: MinSeverity = None,
    namespace: Namespace = None,
    rule: RuleId = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane usage -f json``."""
    from gpuplane.app import usage as usage_app  # deferred for start-up time

    request = usage_app.UsageRequest(
        prometheus=prometheus,
        metrics_files=_check_paths(metrics_files, "metrics_files"),
        since=since,
        end=end,
        selector=selector,
        token_file=prometheus_token_file,
        ca_file=prometheus_ca,
        active_threshold_pct=active_threshold,
        idle_hours=idle_hours,
        notebook_idle_timeout_min=notebook_idle_timeout,
        cluster=_check_optional(cluster, "cluster"),
        context=context,
        kubeconfig=kubeconfig,
    )
    outcome, errors = _serve(usage_app.run, request)
    result = outcome.result
    document = result.to_json()
    totals = document["summary"]
    rules = list(dict.fromkeys(f["rule"] for f in document["findings"]))
    money = f", ~${totals['saving_usd']:,.0f}" if totals["saving_usd"] is not None else ""
    summary = (
        f"{plural(totals['workloads'], 'workload')}, {totals['allocated_gpu_hours']:,.1f} GPU-hours allocated, "
        f"{totals['active_gpu_hours']:,.1f} active; {plural(totals['findings'], 'finding')}"
        + (f" ({', '.join(rules)})" if rules else "")
        + f", saving {totals['saving_gpu_hours']:,.1f} GPU-hours{money} (estimates)"
    )
    summary += _paged(document, "findings", ListFilter(severity, namespace, rule, limit, cursor))
    return _answer(document, errors, summary)


# -- advise and ask --------------------------------------------------------------------------------


@tool(
    "advise_mig",
    "Plan a MIG layout",
    "The fewest GPUs of the given model(s) whose valid MIG configurations host a demand of MIG "
    "instances, with the per-GPU layout and a ready mig-parted config, like `gpuplane advise mig -f "
    "json`. An unknown profile for the model gives feasible=false with the reason.",
)
def advise_mig(
    gpu: Annotated[
        list[str],
        Field(
            description="GPU models of the fleet as MODEL or MODEL:COUNT, one entry per model, e.g. "
            '["A100-80GB"] or ["A100-80GB:8", "H100-80GB:4"]. Catalog names (A100-40GB, A100-80GB, A30, '
            "H100-80GB, H200-141GB ...) and GFD product labels are accepted.",
            min_length=1,
        ),
    ],
    demand: Annotated[
        dict[str, int],
        Field(
            description='MIG instances wanted: profile -> count, e.g. {"3g.40gb": 2, "1g.10gb": 4}; '
            "MIG resource names (nvidia.com/mig-1g.10gb) are accepted.",
            min_length=1,
        ),
    ],
    gpus: Annotated[
        int | None, Field(description="GPUs available for a single model (default: as many as needed).", ge=0)
    ] = None,
) -> ToolOutput:
    """Same service and document as ``gpuplane advise mig -f json``."""
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    plan = advise_app.mig(advise_app.MigRequest(tuple(gpu), advise_app.pairs(demand, "count"), gpus))
    document = plan.to_json()
    if plan.feasible:
        summary = f"feasible: {plural(plan.gpus_needed or 0, 'GPU')} host the demand"
    else:
        summary = f"not feasible: {plan.reason}"
    return ToolOutput(document, summary)


class SharingWorkload(BaseModel):
    """One workload of the mix (per replica), as ``advise sharing --workload`` takes it."""

    name: str = Field(description="Workload name.")
    mem: float = Field(description="GPU memory needed per replica, in GB.", ge=0)
    util: float = Field(
        description="Typical utilisation of one GPU per replica, in percent (0-100).", ge=0, le=100
    )
    isolation: Literal["none", "team", "tenant"] = Field(
        "none", description="Isolation needed between replicas: none, team or tenant (untrusted neighbours)."
    )
    latency: Literal["batch", "interactive", "realtime"] = Field("batch", description="Latency class.")
    count: int = Field(1, description="Number of replicas.", ge=1)


@tool(
    "advise_sharing",
    "Choose a GPU sharing mode",
    "Recommend none / time-slicing / MPS / MIG / DRA for a workload mix on one GPU model, with "
    "reasons, trade-offs and the configs to apply, like `gpuplane advise sharing -f json`.",
)
def advise_sharing(
    gpu: Annotated[str, Field(description="GPU model of the pool, e.g. A100-80GB or L4.", min_length=1)],
    workloads: Annotated[list[SharingWorkload], Field(description="The workload mix.", min_length=1)],
    kubernetes_version: Annotated[
        str | None, Field(description="Cluster Kubernetes version MAJOR.MINOR (DRA needs >= 1.34).")
    ] = None,
    dra_driver: Annotated[bool, Field(description="True when the NVIDIA DRA driver is installed.")] = False,
) -> ToolOutput:
    """Same service and document as ``gpuplane advise sharing -f json``."""
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    request = advise_app.SharingRequest(
        gpu,
        mappings=tuple(w.model_dump() for w in workloads),
        kubernetes_version=kubernetes_version,
        dra_driver=dra_driver,
    )
    result = advise_app.sharing(request)
    document = result.to_json()
    modes = ", ".join(f"{w['name']}: {w['mode']}" for w in document["workloads"])
    return ToolOutput(document, f"recommendation: {result.recommendation} ({modes})")


@tool(
    "advise_capacity",
    "Size GPU node pools and cost",
    "Nodes per GPU model and monthly cost for a GPU demand on a cloud provider, with headroom and "
    "cold-start spares, like `gpuplane advise capacity -f json`.",
)
def advise_capacity(
    demand: Annotated[
        dict[str, int],
        Field(description='GPUs needed per model, e.g. {"H100-80GB": 16, "L4": 8}.', min_length=1),
    ],
    provider: Annotated[Literal["aws", "gcp", "azure"], Field(description="Cloud provider.")] = "aws",
    headroom: Annotated[float, Field(description="Extra GPUs, in percent of the demand.", ge=0)] = 0.0,
    growth: Annotated[
        float,
        Field(
            description="Expected demand growth in GPUs per hour; adds warm spares covering a worst-case "
            "cold start.",
            ge=0,
        ),
    ] = 0.0,
    image_gib: Annotated[
        float, Field(description="Container image size (GiB) for the cold-start estimate.", ge=0)
    ] = 10.0,
) -> ToolOutput:
    """Same service and document as ``gpuplane advise capacity -f json`` (built-in price table)."""
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    demand_words = advise_app.pairs(demand, "GPU count")
    plan = advise_app.capacity(
        advise_app.CapacityRequest(demand_words, provider, headroom, growth, image_gib)
    )
    document = plan.to_json()
    # The priced part of the plan, flagged partial when some model has no priced choice
    # (document["cost_partial"]; the reasons are in document["cost_gaps"]).
    priced, gaps = plan.priced_monthly_usd, plan.cost_gaps
    if priced is None:
        cost = ", cost unknown (no priced choice)" if gaps else ""
    elif gaps:
        cost = f", about ${priced:,.0f}/month (partial: {plural(len(gaps), 'model')} not priced)"
    else:
        cost = f", about ${priced:,.0f}/month"
    return ToolOutput(
        document, f"{plural(sum(m.gpus_total for m in plan.models), 'GPU')} on {provider}{cost}"
    )


# -- generate --------------------------------------------------------------------------------------


@tool(
    "generate",
    "Render a GPU platform blueprint into manifests",
    "Render a platform blueprint (GPU Operator, sharing/MIG, scheduler, quotas, autoscaler, storage, "
    "workload templates) into validated manifests and Helm values in a folder, like `gpuplane "
    "generate BLUEPRINT -o DIR`. Returns the files (with their content unless written), objects and "
    "design decisions; writes only when output_dir (a folder under the server's root) is given, and "
    "never applies anything to a cluster. A "
    "blueprint with contradictions is refused with every problem named.",
    writes_files=True,
)
def generate(
    blueprint: Annotated[
        str | None, Field(description="The platform blueprint as YAML text (see the blueprint_schema tool).")
    ] = None,
    blueprint_path: Annotated[
        str | None, Field(description="A blueprint YAML file, instead of blueprint text.")
    ] = None,
    output_dir: Annotated[
        str | None,
        Field(
            description="Folder under the server's root to write into (new, empty, or an earlier "
            "generate's output, whose files are replaced). Default: nothing is written, the files "
            "come back in the result."
        ),
    ] = None,
    include_contents: Annotated[
        bool, Field(description="Also return the text of every written file (can be long).")
    ] = False,
) -> ToolOutput:
    """``gpuplane generate BLUEPRINT -o DIR``: same engine, same refusal rules, same files; never applies.

    Without ``output_dir`` nothing is written: the files come back in the result. With it, the
    folder must lie inside the server's root (and follows ``generate -o``'s rules)."""
    from gpuplane.app import generate as generate_app  # deferred for start-up time

    if (blueprint is None or not blueprint.strip()) == (blueprint_path is None):
        raise ToolInputError("give exactly one of blueprint (YAML text) or blueprint_path")
    request = generate_app.GenerateRequest(
        blueprint_path=_check_path(blueprint_path, "blueprint_path") if blueprint_path is not None else None,
        blueprint_text=blueprint,
    )
    try:
        result = generate_app.render(request)
    except generate_app.BlueprintRefused as exc:
        raise ToolInputError(
            f"{exc.name}: blueprint refused ({plural(len(exc.problems), 'problem')}); "
            f"nothing written: {'; '.join(exc.problems)}"
        ) from None
    if result.schema_errors:
        raise ToolInputError(
            "generated configuration failed schema validation; nothing written: "
            + "; ".join(result.schema_errors)
        )
    out = _check_optional(output_dir, "output_dir")
    if out is not None:
        generate_app.write(result, out, "output_dir")
    document = generate_app.bundle_document(result, out, include_contents=include_contents)
    files = document["files"]
    objects = document["objects"]
    where = (
        f"wrote to {document['output_dir']}"
        if out is not None
        else "returned in files[].content, not written"
    )
    summary = (
        f"{plural(len(files), 'file')} ({plural(len(objects), 'object')}, "
        f"{plural(len(document['helm_releases']), 'Helm release')}) {where}; "
        "nothing was applied (review, `gpuplane lint`, then apply)"
    )
    return ToolOutput(document, summary)


@tool(
    "blueprint_schema",
    "Blueprint JSON Schema",
    "The JSON Schema of the blueprint the generate tool takes, like `gpuplane generate --schema`.",
)
def blueprint_schema() -> ToolOutput:
    """``gpuplane generate --schema``: the JSON Schema of a blueprint, to write one for generate."""
    from gpuplane.generate.blueprint import json_schema  # deferred for start-up time

    schema = json_schema()
    return ToolOutput(
        {"schema": schema},
        f"blueprint JSON Schema ({plural(len(schema.get('properties', {})), 'top-level field')})",
    )


@tool(
    "ask",
    "Ask the GPU-on-Kubernetes knowledge base",
    "Answer a question from gpuplane's built-in knowledge base (device plugin, GPU Operator, MIG, "
    "time-slicing, MPS, DRA, Kueue, Volcano, gang scheduling, quotas ...), offline, with the "
    "sections it used, like `gpuplane ask -f json`.",
)
def ask(
    question: Annotated[
        str, Field(description="A question about GPUs on Kubernetes, in plain words.", min_length=1)
    ],
    max_sections: Annotated[
        int, Field(description="How many knowledge-base sections the answer may draw on.", ge=1, le=5)
    ] = 3,
) -> ToolOutput:
    """Same service and document as ``gpuplane ask -f json``, always offline (the caller is the LLM)."""
    from gpuplane.app import ask as ask_app  # deferred for start-up time

    result = ask_app.run(ask_app.AskRequest(question, max_sections), Messages())
    sources = ", ".join(str(s["section"]) for s in result.sources)
    summary = f"answer from {sources}" if sources else "no knowledge-base section matches this question"
    return ToolOutput(result.to_json(), summary)


# Every tool, in the order the server lists them (the order of the decorators above).
TOOLS: tuple[ToolSpec, ...] = tuple(_TOOLS)
