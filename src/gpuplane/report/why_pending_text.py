"""Renderers for ``why-pending``: the JSON contract (spec/cli.md) and a readable text report.

The text form groups nodes by identical reasons (one table row per distinct verdict), so a
5,000-node cluster prints a handful of rows, not 5,000.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.scheduler.scheduler import Scheduler
    from gpuplane.why_pending.model import Explanation


def to_json(
    explanations: list[Explanation], scheduler: Scheduler, *, streamed: bool = False
) -> dict[str, Any]:
    """``{"pods": [{"pod", "message", "nodes", "causes", "fixes", ...}], "kubernetes_version"}``.

    ``streamed``: each pod's ``nodes`` is a :class:`~gpuplane.report.why_pending_nodes.NodeReasons`
    that renders itself per Status when the document is written in pieces
    (``emit_json(..., spread=3)``), instead of a map with an entry per node."""
    codes = None
    if streamed:
        from gpuplane.report.why_pending_nodes import NameCodes, NodeReasons  # deferred for start-up time

        codes = NameCodes(scheduler)
    pods = []
    for expl in explanations:
        item: dict[str, Any] = {
            "pod": expl.pod.key,
            "message": expl.message,
            "nodes": NodeReasons(expl, codes) if codes is not None else expl.nodes(),
            "causes": expl.cause_texts(),
            "fixes": expl.fixes,
            "stage": expl.stage,
            "table": expl.table(),
        }
        if expl.subject is not None:
            item["object"] = expl.subject
        if expl.preemption is not None and expl.preemption.nominated_node:
            item["preemption"] = {
                "nominatedNode": expl.preemption.nominated_node,
                "victims": [p.key for p in expl.preemption.victims],
                "pdbViolations": expl.preemption.pdb_violations,
            }
        if expl.feasible_nodes:
            item["feasibleNodes"] = expl.feasible_nodes
        pods.append(item)
    return {
        "kubernetes_version": scheduler.wording.label,
        "nodes": scheduler.index.num_nodes,
        "pods": pods,
    }


def render_text(explanations: list[Explanation], scheduler: Scheduler) -> None:
    """Rich text on stdout: per pod the message, a grouped node table, causes and fixes."""
    from rich.table import Table  # deferred for start-up time

    from gpuplane.report.console import make_console, wrap_hanging, wrap_width

    # Messages, causes and fixes wrap at word boundaries to the terminal ($COLUMNS when set);
    # piped without $COLUMNS they stay one line each, for grep. The node table gets the
    # console's width (160 columns when piped).
    console = make_console()
    width = console.width if console.is_terminal else wrap_width(console.file)
    if not explanations:
        console.print(
            f"No Pending pods ({scheduler.index.num_nodes} nodes, kube-scheduler {scheduler.wording.label} wording)."
        )
        return
    console.print(
        f"[bold]{len(explanations)} Pending[/bold] on {scheduler.index.num_nodes} nodes "
        f"(kube-scheduler {scheduler.wording.label} wording)\n"
    )
    for expl in explanations:
        title = expl.pod.key if expl.subject is None else f"{expl.subject['kind']} {expl.pod.key}"
        console.print(f"[bold cyan]{title}[/bold cyan]  [dim]({expl.stage})[/dim]")
        if expl.message:
            for line in wrap_hanging(f"  {expl.message}", width, 4):
                console.print(f"[yellow]{_escape(line)}[/yellow]", soft_wrap=True)
        if expl.groups:
            table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
            table.add_column("nodes", justify="right")
            table.add_column("plugin", no_wrap=True)
            table.add_column("reasons")
            table.add_column("e.g.")
            for row in expl.table():
                sample = ", ".join(row["sample"][:3]) + (", ..." if row["nodes"] > 3 else "")
                table.add_row(str(row["nodes"]), row["plugin"], _escape("; ".join(row["reasons"])), sample)
            console.print(table)
        for cause in expl.cause_texts():
            first, *rest = wrap_hanging(f"  cause: {cause}", width, 9)
            console.print(f"  [bold]cause:[/bold] {_escape(first[9:])}", soft_wrap=True)
            for line in rest:
                console.print(_escape(line), soft_wrap=True)
        for fix in expl.fixes:
            lines = fix.splitlines()
            first, *rest = wrap_hanging(f"  fix: {lines[0]}", width, 7)
            console.print(f"  [green]fix:[/green] {_escape(first[7:])}", soft_wrap=True)
            for line in rest + [w for extra in lines[1:] for w in wrap_hanging(f"       {extra}", width, 7)]:
                console.print(_escape(line), soft_wrap=True)
        console.print()


def _escape(text: str) -> str:
    from rich.markup import escape  # deferred for start-up time

    return escape(text)
