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
        f"gpuplane diagnose: {result.state.source or 'cluster'} ({ver}{s['nodes']} nodes, {s['gpu_nodes']} GPU "
        f"nodes, {s['gpus']} GPUs, {s['pods']} pods, {s['pending_pods']} Pending)"
    )


def summary_line(result: DiagnoseResult) -> str:
    s = result.summary()
    if not s["findings"]:
        return "No findings: the GPU stack, capacity and workloads look healthy."
    from gpuplane.report.lint_text import plural  # deferred for start-up time

    counts = ", ".join(plural(s[level], level) for level in ("error", "warning", "info"))
    return (
        f"{plural(s['findings'], 'finding')} ({counts}): "
        f"{s['cluster_findings']} on the cluster, {s['workload_findings']} on {s['objects']} workload objects"
    )


def finding_lines(finding: Finding, width: int | None = None) -> list[str]:
    """The plain lines of one finding (used by the text report and tests), each wrapped at word
    boundaries to ``width`` (None: unwrapped) with a hanging indent under its own text."""
    from gpuplane.report.console import wrap_hanging  # deferred for start-up time

    wrapped: list[str] = []
    for line in _finding_lines(finding):
        body = line.lstrip(" ")
        lead = len(line) - len(body)
        if body.startswith(("fix: ", "- ")):
            indent = lead + body.index(" ") + 1
        elif lead == 2:
            indent = 11  # the head line: continue under the message column
        else:
            indent = lead
        wrapped.extend(wrap_hanging(line, width, indent))
    return wrapped


def _finding_lines(finding: Finding) -> list[str]:
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


def render_plain(result: DiagnoseResult, width: int | None = None) -> str:
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
            lines.extend(finding_lines(finding, width))
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def render(result: DiagnoseResult, console: Console) -> None:
    """Findings (styled by severity on a terminal), then the inventory tables, then the summary."""
    from rich.text import Text  # deferred for start-up time

    from gpuplane.report.console import wrap_hanging, wrap_width
    from gpuplane.report.inventory_text import render_inventory
    from gpuplane.report.plain_lines import simple, write_lines

    width = wrap_width(console.file) if not console.is_terminal else console.width

    for line in wrap_hanging(header_line(result), width, 2):
        console.print(Text(line, style="bold"))
    console.print()
    for title, findings in (
        ("Cluster findings", result.cluster_findings),
        ("Workload findings", result.workload_findings),
    ):
        console.print(Text(f"{title} ({len(findings)})", style="bold underline"))
        if not findings:
            console.print("  none")
        plain: list[str] = []  # lines written as they are (no terminal: rich prints no style)
        styled: list[Text] = []  # on a terminal: the section's lines, printed by rich at once
        for finding in findings:
            lines = finding_lines(finding, width)
            # written as they are where rich would print the same bytes: a tenth of rich's cost
            # per line (2.2 s of a 1,000-node report's 21,900 lines)
            if not console.is_terminal and all(simple(line) for line in lines):
                plain.extend(lines)
                continue
            write_lines(console, plain)
            head = Text(lines[0])
            head.stylize(_STYLE.get(finding.severity, ""), 2, 9)
            if console.is_terminal:
                styled.append(head)
                styled.extend(Text(line) for line in lines[1:])
                continue
            console.print(head, soft_wrap=True)
            for line in lines[1:]:
                console.print(Text(line), soft_wrap=True)
        write_lines(console, plain)
        if styled:
            # one print of the joined lines: the same bytes as a print of each (soft wrap: none
            # folded or cropped; tabs expanded per line), without rich's cost per print (3.6 s
            # of a 1,000-node report's 28,000 prints on a terminal)
            console.print(Text("\n").join(styled), soft_wrap=True)
        console.print()
    render_inventory(result.inventory, console)
    console.print()
    for line in wrap_hanging(summary_line(result), width, 2):
        console.print(Text(line, style="bold"))
