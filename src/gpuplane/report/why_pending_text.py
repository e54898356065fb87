"""Renderers for ``why-pending``: the JSON contract (spec/cli.md) and a readable text report.

The text form groups nodes by identical reasons (one table row per distinct verdict), so a
5,000-node cluster prints a handful of rows, not 5,000.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

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
    """Rich text on stdout: per pod the message, a grouped node table, causes and fixes.

    Piped or redirected without colour (no styles to print), each line whose bytes are known
    without rich (:mod:`gpuplane.report.plain_lines`) is written as plain text, and only the rest
    (a table wider than the console, text rich would sanitise) goes through rich: at 2,000
    Pending pods the report was 8-10 s of rich layout and markup parsing for plain bytes."""
    from gpuplane.report.console import make_console, wrap_width  # deferred for start-up time

    # Messages, causes and fixes wrap at word boundaries to the terminal ($COLUMNS when set);
    # piped without $COLUMNS they stay one line each, for grep. The node table gets the
    # console's width (160 columns when piped).
    console = make_console()
    width = console.width if console.is_terminal else wrap_width(console.file)
    out = _out_for(console)
    if not explanations:
        text = f"No Pending pods ({scheduler.index.num_nodes} nodes, kube-scheduler {scheduler.wording.label} wording)."
        out.line(text, text)
        out.flush()
        return
    head = f"{len(explanations)} Pending on {scheduler.index.num_nodes} nodes (kube-scheduler {scheduler.wording.label} wording)\n"
    out.line(
        f"[bold]{len(explanations)} Pending[/bold] on {scheduler.index.num_nodes} nodes "
        f"(kube-scheduler {scheduler.wording.label} wording)\n",
        head,
    )
    for expl in explanations:
        _render_one(expl, out, width)
        out.flush()


def _render_one(expl: Explanation, out: _Out, width: int | None) -> None:
    from gpuplane.report.console import wrap_hanging  # deferred for start-up time

    title = expl.pod.key if expl.subject is None else f"{expl.subject['kind']} {expl.pod.key}"
    out.line(f"[bold cyan]{title}[/bold cyan]  [dim]({expl.stage})[/dim]", f"{title}  ({expl.stage})")
    if expl.message:
        for line in wrap_hanging(f"  {expl.message}", width, 4):
            out.soft(f"[yellow]{_escape(line)}[/yellow]", line)
    if expl.groups:
        rows = []
        for row in expl.table():
            sample = ", ".join(row["sample"][:3]) + (", ..." if row["nodes"] > 3 else "")
            rows.append((str(row["nodes"]), row["plugin"], "; ".join(row["reasons"]), sample))
        out.table(rows)
    for cause in expl.cause_texts():
        first, *rest = wrap_hanging(f"  cause: {cause}", width, 9)
        out.soft(f"  [bold]cause:[/bold] {_escape(first[9:])}", first)
        for line in rest:
            out.soft(_escape(line), line)
    for fix in expl.fixes:
        lines = fix.splitlines()
        first, *rest = wrap_hanging(f"  fix: {lines[0]}", width, 7)
        out.soft(f"  [green]fix:[/green] {_escape(first[7:])}", first)
        for line in rest + [w for extra in lines[1:] for w in wrap_hanging(f"       {extra}", width, 7)]:
            out.soft(_escape(line), line)
    out.line("", "")


def _out_for(console: Console) -> _Out:
    """Rich for a terminal (styles), plain lines where no style is printed."""
    if console.is_terminal:
        return _RichOut(console)
    from gpuplane.report.plain_lines import PlainOut  # deferred for start-up time

    return PlainOut(console, node_table)


class _Out(Protocol):
    """Where the report's lines go: each given as rich markup and as the plain text it shows."""

    def line(self, markup: str, plain: str) -> None: ...  # console.print(markup)
    def soft(self, markup: str, plain: str) -> None: ...  # console.print(markup, soft_wrap=True)
    def table(self, rows: list[tuple[str, str, str, str]]) -> None: ...  # the grouped node table
    def flush(self) -> None: ...


class _RichOut:
    """Every line through rich: on a terminal (styles, its width) or with ``--color always``."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, markup: str, plain: str) -> None:
        if markup:
            self.console.print(markup)
        else:
            self.console.print()

    def soft(self, markup: str, plain: str) -> None:
        self.console.print(markup, soft_wrap=True)

    def table(self, rows: list[tuple[str, str, str, str]]) -> None:
        self.console.print(node_table(rows))

    def flush(self) -> None:
        pass


def node_table(rows: list[tuple[str, str, str, str]]) -> Table:
    """The rich table of one pod's node groups (``nodes, plugin, reasons, e.g.``); the reasons
    are data, escaped, the other cells are read as markup, as they always were."""
    from rich.table import Table  # deferred for start-up time

    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
    table.add_column("nodes", justify="right")
    table.add_column("plugin", no_wrap=True)
    table.add_column("reasons")
    table.add_column("e.g.")
    for nodes, plugin, reasons, sample in rows:
        table.add_row(nodes, plugin, _escape(reasons), sample)
    return table


def _escape(text: str) -> str:
    from rich.markup import escape  # deferred for start-up time

    return escape(text)
