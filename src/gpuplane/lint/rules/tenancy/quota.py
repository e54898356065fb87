"""ResourceQuotas for GPUs: invalid keys, namespaces without a GPU quota."""

from __future__ import annotations

from collections.abc import Iterator

from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext
from gpuplane.lint.finding import DeleteKey, Finding, RenameKey
from gpuplane.lint.rules._common import is_extended_resource, obj_label, where
from gpuplane.ruleset import rule


def _quota_extended(key: str) -> tuple[str, str] | None:
    """(prefix, resource) for an extended-resource quota key that is never charged."""
    if key.startswith("count/") or ".storageclass.storage.k8s.io/" in key:
        return None
    if key.startswith("limits."):
        name = key[len("limits.") :]
        return ("limits.", name) if is_extended_resource(name) else None
    if is_extended_resource(key):
        return ("", key)
    return None


@rule(
    id="quota-gpu-invalid-key",
    severity="error",
    category="tenancy",
    summary="ResourceQuota limits GPUs with limits.<res> or a bare <res> key: accepted, never enforced",
    fixable=True,
)
def quota_gpu_invalid_key(ctx: LintContext) -> Iterator[Finding]:
    for quota in ctx.by_kind("ResourceQuota"):
        hard = quota.get("spec", "hard")
        if not isinstance(hard, dict):
            continue
        for key in hard:
            parsed = _quota_extended(str(key))
            if parsed is None:
                continue
            prefix, name = parsed
            good = f"requests.{name}"
            path = ("spec", "hard", key)
            patch: tuple[DeleteKey | RenameKey, ...]
            if good in hard:
                fix, patch = f"remove {key} (requests.{name} already limits it)", (DeleteKey(path),)
            else:
                fix, patch = f"rename the key to {good}", (RenameKey(path, good),)
            yield ctx.report(
                quota,
                path,
                f"{obj_label(quota)} limits {key}: quota never charges extended resources "
                f"{'under limits.' if prefix else 'under a bare name'}: it enforces nothing",
                fix,
                patch=patch,
                # renaming starts enforcing a quota that enforced nothing: pods may be refused
                unsafe=isinstance(patch[0], RenameKey),
            )


def _quota_resources(ctx: LintContext) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for quota in ctx.by_kind("ResourceQuota", include_cluster=True):
        hard = quota.get("spec", "hard")
        if isinstance(hard, dict):
            ns = quota.namespace or "default"
            out.setdefault(ns, set()).update(
                str(k)[len("requests.") :] for k in hard if str(k).startswith("requests.")
            )
    return out


@rule(
    id="namespace-without-gpu-quota",
    severity="warning",
    category="tenancy",
    summary="namespace runs GPU workloads without a ResourceQuota on its GPUs",
    context="optional",
    tier="opt-in",
)
def namespace_without_gpu_quota(ctx: LintContext) -> Iterator[Finding]:
    if not (
        ctx.by_kind("Namespace", include_cluster=True) or ctx.by_kind("ResourceQuota", include_cluster=True)
    ):
        return
    # Kueue admits the workload against ClusterQueue quotas: that is a GPU quota too.
    quotas = _quota_resources(ctx)
    namespaces = {ns.name: ns for ns in ctx.by_kind("Namespace")}
    reported: set[str] = set()
    for ps in ctx.gpu_podsets():
        ns = ps.source.namespace or "default"
        if ns in reported or ps.queue or kinds.is_daemon(ps):
            continue
        wanted = ctx.gpu_requests(ps)
        covered = quotas.get(ns, set())
        missing = sorted(name for name in wanted if name not in covered)
        if not missing:
            continue
        reported.add(ns)
        target = namespaces.get(ns)
        obj, path = (
            (target, ("metadata", "name")) if target is not None else (ps.source, ("metadata", "namespace"))
        )
        yield ctx.report(
            obj,
            path,
            f"namespace {ns} runs GPU workloads ({where(ps)}) with no ResourceQuota on {', '.join(missing)}",
            f"add a ResourceQuota in {ns} with hard: {{requests.{missing[0]}: <team share>}}",
        )
