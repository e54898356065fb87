"""Startup probes of model servers that load for minutes."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_int, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


# Probe defaults (core/v1 Probe: periodSeconds 10, failureThreshold 3, initialDelaySeconds 0).
PROBE_PERIOD_DEFAULT = 10
PROBE_FAILURES_DEFAULT = 3
# Time a GPU server may take to load weights before the kubelet kills it. Weight
# loading alone takes minutes for 10-100+ GB models (reference/platform.md §2.7, §5.1).
STARTUP_BUDGET_S = 600
# A startup probe shorter than this is reported as too short for a model load
# (the Kubernetes docs' own slow-start example allows 300 s).
STARTUP_MIN_S = 300
PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")


def _probe_budget(probe: dict[str, Any]) -> int:
    """Seconds a probe tolerates failures before the kubelet acts (delay + threshold x period)."""
    return as_int(probe.get("initialDelaySeconds"), 0) + as_int(
        probe.get("failureThreshold"), PROBE_FAILURES_DEFAULT
    ) * as_int(probe.get("periodSeconds"), PROBE_PERIOD_DEFAULT)


def _startup_from_liveness(liveness: dict[str, Any]) -> dict[str, Any]:
    """A startupProbe with the liveness handler and a STARTUP_BUDGET_S window."""
    probe: dict[str, Any] = {k: liveness[k] for k in PROBE_HANDLERS if k in liveness}
    period = PROBE_PERIOD_DEFAULT
    probe["periodSeconds"] = period
    probe["failureThreshold"] = math.ceil(STARTUP_BUDGET_S / period)
    if "timeoutSeconds" in liveness:
        probe["timeoutSeconds"] = liveness["timeoutSeconds"]
    return probe


@rule(
    id="inference-no-startup-probe",
    severity="warning",
    category="serving",
    summary="GPU serving container with a liveness probe but no startup probe long enough for model load.",
    fixable=True,
)
def inference_no_startup_probe(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        if not kinds.is_inference(ps):
            continue
        for c in ctx.containers(ps, ("containers",)):
            if not c.gpu_requests():
                continue
            liveness = c.data.get("livenessProbe")
            startup = c.data.get("startupProbe")
            if isinstance(startup, dict):
                budget = _probe_budget(startup)
                if budget >= STARTUP_MIN_S:
                    continue
                period = max(as_int(startup.get("periodSeconds"), PROBE_PERIOD_DEFAULT), 1)
                initial = as_int(startup.get("initialDelaySeconds"), 0)
                needed = max(math.ceil((STARTUP_BUDGET_S - initial) / period), 1)
                yield ctx.report(
                    ps.source,
                    (*c.path, "startupProbe"),
                    f"{where(ps, c)} (GPU server) has a startupProbe that gives up after {budget}s: "
                    "loading model weights takes minutes, so the kubelet restarts the server before it is up.",
                    f"Raise startupProbe.failureThreshold to {needed} (x periodSeconds {period} = "
                    f"{STARTUP_BUDGET_S}s) or more, to cover the worst-case model load.",
                    patch=(SetValue((*c.path, "startupProbe", "failureThreshold"), needed),),
                )
                continue
            if not isinstance(liveness, dict):
                continue
            budget = _probe_budget(liveness)
            if budget >= STARTUP_BUDGET_S:
                continue
            patch: tuple[SetValue, ...] = ()
            if any(k in liveness for k in PROBE_HANDLERS):
                patch = (SetValue((*c.path, "startupProbe"), _startup_from_liveness(liveness)),)
            yield ctx.report(
                ps.source,
                (*c.path, "livenessProbe"),
                f"{where(ps, c)} (GPU server) has a livenessProbe that kills it after {budget}s "
                "and no startupProbe: the server cannot answer while it loads model weights, so it is restarted "
                "in a loop (CrashLoopBackOff) and never serves.",
                f"Add a startupProbe on the same endpoint with failureThreshold x periodSeconds >= "
                f"{STARTUP_BUDGET_S}s (e.g. periodSeconds: 10, failureThreshold: 60).",
                patch=patch,
            )
