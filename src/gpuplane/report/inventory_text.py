"""Human rendering of a GPU inventory: tables per model, per pool, per node.

Big clusters stay readable: with more than :data:`MAX_NODE_ROWS` GPU nodes the
node table lists only nodes with problems (the pools table already carries the
totals of the healthy ones); ``-f json`` always has every node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplane.diagnose.inventory import Inventory, NodeInventory, ResourceUse

if TYPE_CHECKING:
    from rich.console import Console

MAX_NODE_ROWS = 40


def _short(name: str) -> str:
    """``nvidia.com/mig-3g.20gb`` -> ``mig-3g.20gb``; ``nvidia.com/gpu`` -> ``gpu`` (tables are narrow)."""
    prefix, sep, rest = name.partition("/")
    return rest if sep and prefix == "nvidia.com" else name


def _usage(use: ResourceUse) -> str:
    return f"{use.allocated}/{use.allocatable}"


def _resources_cell(resources: dict[str, ResourceUse]) -> str:
    """One line per resource: ``gpu 5/7 used``; capacity shown when devices are unhealthy."""
    lines = []
    for name, use in sorted(resources.items()):
        extra = f" (capacity {use.capacity})" if use.capacity != use.allocatable else ""
        lines.append(f"{_short(name)} {_usage(use)}{extra}")
    return "\n".join(lines) or "-"


def _layout_cell(node: NodeInventory) -> str:
    parts = []
    if node.mig is not None:
        devices = ", ".join(f"{count}x {profile}" for profile, count in node.mig.devices.items())
        head = f"MIG {node.mig.strategy or '?'}"
        if node.mig.config:
            head += f" [{node.mig.config}]"
        parts.append(f"{head}: {devices}" if devices else head)
    if node.sharing is not None:
        names = ", ".join(_short(n) for n in node.sharing.resources)
        parts.append(f"{node.sharing.strategy} x{node.sharing.replicas}" + (f" ({names})" if names else ""))
    return "\n".join(parts) or "whole GPUs"


def _status_cell(node: NodeInventory, styled: bool) -> str:
    if not node.flags:
        return "[green]ok[/green]" if styled else "ok"
    text = ", ".join(flag.flag for flag in node.flags)
    return f"[red]{text}[/red]" if styled else text


NARROW_WIDTH = 100  # below this console width the tables shorten headers and drop low-value columns
_SHORT_HEADERS = {
    "allocatable": "alloc",
    "allocated": "used",
    "problem nodes": "problems",
    "used/allocatable": "used/alloc",
}


def _header(column: str, narrow: bool) -> str:
    return _SHORT_HEADERS.get(column, column) if narrow else column


def _identifier(column: str, names: list[str]) -> dict[str, Any]:
    """Column options: a column of row identifiers (names) is never wrapped or cut (its minimum
    width is its longest name); every other column folds its text rather than cutting it."""
    if names:
        return {"no_wrap": True, "min_width": max(len(name) for name in names)}
    return {"overflow": "fold"}


def render_inventory(inventory: Inventory, console: Console) -> None:
    """Print the inventory tables and the problem list to ``console``."""
    from rich import box  # deferred for start-up time
    from rich.markup import escape
    from rich.table import Table

    from gpuplane.report.console import fit_table, wrap_hanging

    styled = console.color_system is not None
    doc_summary = inventory.to_json()["summary"]
    version = f", Kubernetes {inventory.kubernetes_version}" if inventory.kubernetes_version else ""
    console.print(
        f"[bold]GPU inventory[/bold] of {escape(inventory.source or 'cluster')}: {doc_summary['gpu_nodes']} GPU nodes "
        f"of {doc_summary['nodes']}, {doc_summary['gpus']} GPUs{version}"
    )
    if not inventory.nodes:
        console.print("No GPU nodes found (no GPU resources or GPU labels on any node).")
        return
    console.print(
        f"Schedulable GPU units: {doc_summary['allocated']} allocated of {doc_summary['allocatable']} allocatable, "
        f"{inventory.free_text()}."
    )

    narrow = console.width < NARROW_WIDTH
    models = Table(title="By model", box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    for column in ("model", "nodes", "GPUs", "allocatable", "allocated", "free", "by resource"):
        models.add_column(
            _header(column, narrow),
            justify="right" if column in ("nodes", "GPUs", "allocatable", "allocated", "free") else "left",
            **_identifier(column, [group.key for group in inventory.models] if column == "model" else []),
        )
    for group in inventory.models:
        models.add_row(
            escape(group.key),
            str(group.nodes),
            str(group.gpus),
            str(group.units.allocatable),
            str(group.units.allocated),
            str(group.units.free),
            escape(_resources_cell(group.resources)),
        )
    console.print()
    console.print(fit_table(models, console.width))

    pools = Table(title="By pool", box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    for column in ("pool", "model", "nodes", "GPUs", "allocatable", "allocated", "free", "problem nodes"):
        pools.add_column(
            _header(column, narrow),
            justify="right" if column not in ("pool", "model") else "left",
            **_identifier(column, [group.key for group in inventory.pools] if column == "pool" else []),
        )
    for group in inventory.pools:
        problem_cell = str(group.problem_nodes) if group.problem_nodes else "-"
        if styled and group.problem_nodes:
            problem_cell = f"[red]{problem_cell}[/red]"
        pools.add_row(
            escape(group.key),
            escape(", ".join(sorted(group.models))),
            str(group.nodes),
            str(group.gpus),
            str(group.units.allocatable),
            str(group.units.allocated),
            str(group.units.free),
            problem_cell,
        )
    console.print(fit_table(pools, console.width))

    shown = inventory.nodes
    hidden = 0
    title = "Nodes"
    if len(shown) > MAX_NODE_ROWS:
        shown = inventory.problem_nodes
        hidden = len(inventory.nodes) - len(shown)
        title = "Nodes with problems"
    if shown:
        nodes = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
        # at 80 columns the model column goes (the pool names it, and the tables above map
        # pools to models) so that node and pool names, which identify a row, stay whole
        columns = ["node", "pool", "model", "GPUs", "used/allocatable", "layout", "status"]
        if narrow:
            columns.remove("model")
        for column in columns:
            names = {"node": [n.name for n in shown], "pool": [n.pool for n in shown]}.get(column, [])
            nodes.add_column(
                _header(column, narrow),
                justify="right" if column == "GPUs" else "left",
                **_identifier(column, names),
            )
        for node in shown:
            cells = {
                "node": escape(node.name),
                "pool": escape(node.pool),
                "model": escape(node.model_key),
                "GPUs": str(node.gpus),
                "used/allocatable": escape(_resources_cell(node.resources)),
                "layout": escape(_layout_cell(node)),
                "status": _status_cell(node, styled),
            }
            nodes.add_row(*(cells[column] for column in columns))
        # too narrow for every column's longest word: the model goes first (the pool names it),
        # then the layout (the Problems list and -f json keep it), never a word split in two
        console.print(
            fit_table(nodes, console.width, drop=(_header("model", narrow), _header("layout", narrow)))
        )
    if hidden:
        console.print(
            f"{hidden} healthy GPU nodes not listed (see the pools table; -f json lists every node)."
        )

    problems = inventory.problem_nodes
    if problems:
        console.print()
        console.print("[bold]Problems[/bold]" if styled else "Problems")
        for node in problems:
            for flag in node.flags:
                for line in wrap_hanging(f"  {node.name}: {flag.message}", console.width, 4):
                    console.print(line, markup=False, highlight=False)
