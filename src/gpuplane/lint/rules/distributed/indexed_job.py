"""Indexed Jobs used as distributed training: stable DNS and parallelism."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_int, as_str, obj_label
from gpuplane.lint.rules.distributed._shared import _command_line, _ns
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

# Signs that the pods of an Indexed Job form one distributed program (ranks talk to each other).
_DIST_ENV = frozenset(
    {
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "NODE_RANK",
        "PET_NNODES",
        "NCCL_SOCKET_IFNAME",
        "NCCL_DEBUG",
        "OMPI_MCA_orte_default_hostfile",
    }
)
_DIST_CMD = LazyPattern(
    r"torchrun|torch\.distributed|deepspeed|mpirun|horovodrun|accelerate launch|--nnodes|"
    r"--master[_-]addr|jax\.distributed|megatron"
)


def _indexed_job(ps: PodSet) -> dict[str, Any] | None:
    """The Job spec of a plain batch/v1 Indexed Job pod set, else None."""
    src = ps.source
    if src.kind != "Job" or src.group != "batch":
        return None
    spec = src.data.get("spec")
    if not isinstance(spec, dict) or spec.get("completionMode") != "Indexed":
        return None
    return spec


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    """Whether a Service's ``spec.selector`` (a label map, ANDed) selects pods with ``labels``.

    An empty or missing selector selects no pods for the Service's own endpoints (the
    endpoints controller skips selector-less Services), so it never counts as selecting.
    """
    return (
        isinstance(selector, dict)
        and bool(selector)
        and label_selector_matches({"matchLabels": selector}, labels)
    )


@rule(
    id="indexed-job-no-stable-dns",
    severity="warning",
    category="distributed",
    summary="Indexed GPU Job with parallelism > 1 but no subdomain + headless Service: ranks cannot reach rank 0.",
    context="optional",
)
def indexed_job_no_stable_dns(ctx: LintContext) -> Iterator[Finding]:
    services: dict[tuple[str, str], Manifest] | None = None
    for ps in ctx.gpu_podsets():
        spec = _indexed_job(ps)
        if spec is None or (as_int(spec.get("parallelism"), 1) or 0) < 2:
            continue
        src = ps.source
        subdomain = pod_spec(ps).get("subdomain")
        if not subdomain:
            yield ctx.report(
                src,
                ps.spec_path,
                f"Indexed {obj_label(src)} runs {spec.get('parallelism')} GPU ranks in parallel but its pods have no "
                "subdomain: their hostnames (<job>-<index>) do not resolve, so ranks cannot reach rank 0 "
                "(MASTER_ADDR).",
                f"Create a headless Service (clusterIP: None, selector batch.kubernetes.io/job-name: {src.name}) and "
                "set spec.template.spec.subdomain to its name.",
            )
            continue
        if services is None:
            services = {(_ns(s), s.name): s for s in ctx.by_kind("Service", "", include_cluster=True)}
        svc = services.get((_ns(src), str(subdomain)))
        path = (*ps.spec_path, "subdomain")
        if svc is None:
            if ctx.cluster is None:
                continue
            problem = f"no Service {subdomain} exists in namespace {_ns(src)}"
        else:
            labels = dict(ps.pod().metadata.labels)  # typed: a mistyped label map counts as none
            labels.setdefault("batch.kubernetes.io/job-name", src.name)
            labels.setdefault("job-name", src.name)
            if svc.get("spec", "clusterIP") != "None":
                problem = f"Service {subdomain} is not headless (clusterIP: None)"
            elif not _selects(svc.get("spec", "selector"), labels):
                problem = f"Service {subdomain} does not select the Job's pods"
            else:
                continue
        yield ctx.report(
            src,
            path,
            f"Indexed {obj_label(src)}: {problem}, so the ranks' hostnames (<job>-<index>.{subdomain}) get no DNS "
            "records and ranks cannot reach rank 0.",
            f"Use a headless Service {subdomain} (clusterIP: None) selecting batch.kubernetes.io/job-name: "
            f"{src.name} in namespace {_ns(src)}.",
        )


def _looks_distributed(ctx: LintContext, ps: PodSet) -> bool:
    if pod_spec(ps).get("subdomain"):
        return True
    for c in ctx.containers(ps, ("containers",)):
        if any(as_str(e.get("name")) in _DIST_ENV for _i, e in c.env()):
            return True
        if _DIST_CMD.search(_command_line(c.data)):
            return True
    return False


@rule(
    id="indexed-job-partial-parallelism",
    severity="warning",
    category="distributed",
    summary="Distributed Indexed GPU Job with parallelism < completions: ranks never run together.",
    fixable=True,
    fix_safety="unsafe",
)
def indexed_job_partial_parallelism(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        spec = _indexed_job(ps)
        if spec is None:
            continue
        parallelism = as_int(spec.get("parallelism"), 1) or 0
        completions = as_int(spec.get("completions"), None)
        if (
            completions is None
            or parallelism < 1
            or parallelism >= completions
            or not _looks_distributed(ctx, ps)
        ):
            continue
        src = ps.source
        path: FieldPath = ("spec", "parallelism") if "parallelism" in spec else ("spec", "completions")
        yield ctx.report(
            src,
            path,
            f"Indexed {obj_label(src)} is a distributed GPU job with {completions} ranks but parallelism "
            f"{parallelism}: only {parallelism} ranks run at once and they wait in rendezvous for ranks that "
            "cannot start.",
            f"Set spec.parallelism to {completions} (= completions).",
            patch=(SetValue(("spec", "parallelism"), completions),),
        )
