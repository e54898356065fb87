"""GPU metrics: the DCGM exporter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules.operator._shared import _policies
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


@rule(
    id="dcgm-exporter-disabled",
    severity="info",
    category="operator",
    summary="GPU Operator without the DCGM exporter: no GPU metrics for autoscaling or idle detection.",
    fixable=True,
    fix_safety="unsafe",
    tier="opt-in",
)
def dcgm_exporter_disabled(ctx: LintContext) -> Iterator[Finding]:
    for cp in _policies(ctx):
        if cp.get("spec", "dcgmExporter", "enabled") is False:
            yield ctx.report(
                cp,
                ("spec", "dcgmExporter", "enabled"),
                f"ClusterPolicy {cp.name} disables the DCGM exporter: no GPU utilisation, memory, power or XID "
                "metrics for autoscaling, idle-GPU detection or alerts.",
                "Set spec.dcgmExporter.enabled: true (and serviceMonitor.enabled: true with Prometheus Operator).",
                patch=(SetValue(("spec", "dcgmExporter", "enabled"), True),),
            )
