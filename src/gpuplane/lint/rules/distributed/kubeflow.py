"""Kubeflow training jobs (PyTorchJob, MPIJob, ...): replica roles and failure policy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_int, obj_label, where
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.lint.context import ContainerRef, LintContext


@rule(
    id="pytorchjob-master-replicas",
    severity="error",
    category="distributed",
    summary="PyTorchJob Master replicas != 1 (rejected by the training-operator webhook).",
    fixable=True,
    fix_safety="unsafe",
)
def pytorchjob_master_replicas(ctx: LintContext) -> Iterator[Finding]:
    for job in ctx.by_kind("PyTorchJob", "kubeflow.org"):
        master = job.get("spec", "pytorchReplicaSpecs", "Master")
        if not isinstance(master, dict):
            continue
        base = ("spec", "pytorchReplicaSpecs", "Master")
        replicas = master.get("replicas")
        if replicas is None:
            yield ctx.report(
                job,
                base,
                f"{obj_label(job)}: Master.replicas is not set; training-operator v1.8+ rejects it "
                "(spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1).",
                "Set spec.pytorchReplicaSpecs.Master.replicas: 1.",
                severity="warning",
                patch=(SetValue((*base, "replicas"), 1),),
            )
        elif as_int(replicas, None) != 1:
            yield ctx.report(
                job,
                (*base, "replicas"),
                f"{obj_label(job)}: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 "
                f"(got {replicas}); there is exactly one rank-0 master.",
                "Set Master.replicas: 1 and move the other ranks to Worker.",
                patch=(SetValue((*base, "replicas"), 1),),
            )


def _gpu_field(c: ContainerRef, resource: str) -> FieldPath:
    limits = c.resources("limits")
    kind = "limits" if resource in limits else "requests"
    return (*c.path, "resources", kind, resource)


@rule(
    id="mpijob-launcher-gpu",
    severity="warning",
    category="distributed",
    summary="MPIJob launcher requests GPUs it will not use.",
)
def mpijob_launcher_gpu(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.kind != "MPIJob" or ps.name != "launcher" or src.get("spec", "runLauncherAsWorker") is True:
            continue
        for c in ctx.containers(ps):
            for resource, count in c.gpu_requests().items():
                yield ctx.report(
                    src,
                    _gpu_field(c, resource),
                    f"{where(ps, c)} (the MPIJob launcher) requests {count} {resource} but the launcher "
                    "only runs mpirun and is not a rank: the GPUs stay idle and reserved for the whole job.",
                    f"Remove {resource} from the launcher's resources, or set spec.runLauncherAsWorker: true.",
                )


@rule(
    id="training-no-failure-policy",
    severity="info",
    category="distributed",
    summary="GPU Job without podFailurePolicy or a tuned backoffLimit: retries non-retriable failures.",
    tier="opt-in",
)
def training_no_failure_policy(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.group != "batch" or id(src) in seen:
            continue
        if src.kind == "Job":
            base: FieldPath = ("spec",)
        elif src.kind == "CronJob":
            base = ("spec", "jobTemplate", "spec")
        else:
            continue
        seen.add(id(src))
        spec = src.get(*base)
        if not isinstance(spec, dict):
            continue
        if any(k in spec for k in ("podFailurePolicy", "backoffLimit", "backoffLimitPerIndex")):
            continue
        yield ctx.report(
            src,
            base,
            f"GPU {obj_label(src)} has no podFailurePolicy and the default backoffLimit (6): a bug or "
            "CUDA OOM is retried up to 6 times on GPUs, and preemptions count against the same budget.",
            "Add a podFailurePolicy (FailJob on your program's non-retriable exit codes, Ignore on "
            "DisruptionTarget) and set backoffLimit explicitly.",
        )
