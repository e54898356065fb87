"""Human output of ``gpuplane diagnose``: cluster findings with their evidence, workload
findings, then the GPU inventory.

Cluster findings come first and carry their proof (the evidence lines) because
there is no file to open for them; workload findings are the lint report's
lines (file:line, rule, message, fix). Plain when piped, styled on a terminal
(:func:`gpuplane.report.console.make_console`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.diagnose.evidence import ClusterFinding
from gpuplane.lint.finding import Finding

if TYPE_CHECKING:
    from rich.console import Console

    from gpuplane.diagnose.engine import DiagnoseResult

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
MAX_EVIDENCE = 8


def _object_label(finding: Finding) -> str:
    obj = finding.object
    where = f"{obj.namespace}/" if obj.namespace else ""
    return f"{obj.kind} {where}{obj.name}"


def header_line(result: DiagnoseResult) -> str:
    s = result.summary()
    version = result.inventory.kubernetes_version
    ver = f"Kubernetes {version}, " if version else ""
    return (
        f"gpuplane diagnose: {result.state.source or 'cluster'} ({ver}{s['nodes']} nodes, {s['gpuNodes']} GPU "
        f"nodes, {s['gpus']} GPUs, {s['pods']} pods, {s['pendingPods']} Pending)"
    )


def summary_line(result: DiagnoseResult) -> str:
    s = result.summary()
    if not s["findings"]:
        return "No findings: the GPU stack, capacity and workloads look healthy."
    from gpuplane.report.lint_text import plural

    counts = ", ".join(plural(s[level], level) for level in ("error", "warning", "info"))
    return (
        f"{plural(s['findings'], 'finding')} ({counts}): "
        f"{s['clusterFindings']} on the cluster, {s['workloadFindings']} on {s['objects']} workload objects"
    )


def finding_lines(finding: Finding) -> list[str]:
    """The plain lines of one finding (used by the text report and tests)."""
    lines = [f"  {finding.severity:<7}  {finding.rule}  {_object_label(finding)}"]
    if finding.object.path and finding.line > 0:
        lines[0] += f"  ({finding.object.path}:{finding.line})"
    elif finding.object.path and not isinstance(finding, ClusterFinding):
        lines[0] += f"  ({finding.object.path})"  # a workload object without a known line
    lines.append(f"           {finding.message}")
    fix_lines = finding.fix.splitlines() or [""]
    lines.append(f"           fix: {fix_lines[0]}")
    lines.extend(f"                {line}" for line in fix_lines[1:])
    if isinstance(finding, ClusterFinding) and finding.evidence:
        lines.append("           evidence:")
        for item in finding.evidence[:MAX_EVIDENCE]:
            lines.append(f"             - {item.text()}")
        if len(finding.evidence) > MAX_EVIDENCE:
            lines.append(f"             - ... {len(finding.evidence) - MAX_EVIDENCE} more (-f json has all)")
    return lines


def render_plain(result: DiagnoseResult) -> str:
    """The findings part of the report as plain text (no inventory tables)."""
    lines = [header_line(result), ""]
    for title, findings in (
        ("Cluster findings", result.cluster_findings),
        ("Workload findings", result.workload_findings),
    ):
        lines.append(f"{title} ({len(findings)})")
        if not findings:
            lines.append("  none")
        for finding in findings:
            lines.extend(finding_lines(finding))
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def render(result: DiagnoseResult, console: Console) -> None:
    """Findings (styled by severity on a terminal), then the inventory tables, then the summary."""
    from rich.text import Text

    from gpuplane.report.inventory_text import render_inventory

    console.print(Text(header_line(result), style="bold"))
    console.print()
    for title, findings in (
        ("Cluster findings", result.cluster_findings),
        ("Workload findings", result.workload_findings),
    ):
        console.print(Text(f"{title} ({len(findings)})", style="bold underline"))
        if not findings:
            console.print("  none")
        for finding in findings:
            lines = finding_lines(finding)
            head = Text("  ")
            head.append(f"{finding.severity:<7}", style=_STYLE.get(finding.severity, ""))
            head.append(lines[0][9:])
            console.print(head, soft_wrap=True)
            for line in lines[1:]:
                console.print(Text(line), soft_wrap=True)
        console.print()
    render_inventory(result.inventory, console)
    console.print()
    console.print(Text(summary_line(result), style="bold"))
