"""Human rendering of ``advise mig`` / ``sharing`` / ``capacity`` results.

Big plans stay readable: GPUs with the same mix are shown as one row with their count;
the configs to apply are printed as YAML, ready to paste.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from gpuplane.advise.capacity import CapacityPlan
from gpuplane.advise.mig_planner import MigPlan
from gpuplane.advise.sharing import SharingAdvice

if TYPE_CHECKING:
    from rich.console import Console


def _yaml(doc: object) -> str:
    if isinstance(doc, str):
        return doc
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False).rstrip()


def _mix(profiles: dict[str, int]) -> str:
    return " + ".join(f"{n} x {p}" for p, n in profiles.items())


def render_mig(plan: MigPlan, console: Console) -> None:
    """Verdict, one row per distinct GPU mix, unplaced counts and the mig-parted config."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    demand = _mix(plan.demand)
    fleet = ", ".join(e.model.name + (f" (max {e.available})" if e.available is not None else "") for e in plan.fleet)
    if plan.feasible:
        console.print(f"[bold]{plan.gpus_needed} GPU(s)[/bold] of {escape(fleet)} host {escape(demand)} (exact minimum).")
    else:
        console.print(f"[bold red]Not feasible[/bold red] on {escape(fleet)}: {escape(plan.reason)}")
    if plan.layout:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False)
        for col in ("GPUs", "model", "MIG devices", "placement (start:size)"):
            table.add_column(col)
        rows: dict[tuple[str, tuple[tuple[str, int], ...]], list[int]] = {}
        places: dict[tuple[str, tuple[tuple[str, int], ...]], str] = {}
        for g in plan.layout:
            key = (g.model, tuple(g.profiles.items()))
            rows.setdefault(key, []).append(g.gpu)
            places[key] = " ".join(f"{p}@{s}:{n}" for p, s, n in g.placements)
        for key, gpus in rows.items():
            ids = f"{len(gpus)} (#{gpus[0]})" if len(gpus) == 1 else f"{len(gpus)} (#{gpus[0]}-#{gpus[-1]})"
            table.add_row(ids, escape(key[0]), escape(_mix(dict(key[1]))), escape(places[key]))
        console.print(table)
    if plan.unplaced:
        console.print(f"Unplaced: {escape(_mix(plan.unplaced))}")
    console.print("\nmig-parted config (nvidia-mig-parted apply -f FILE -c gpuplane-plan):")
    console.print(escape(_yaml(plan.mig_parted())), soft_wrap=True)


def render_sharing(advice: SharingAdvice, console: Console) -> None:
    """Recommendation, per-workload table, reasons, trade-offs and configs."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    console.print(f"[bold]Recommendation for {escape(advice.gpu_model)}: {advice.recommendation}[/bold]")
    if advice.alternatives:
        console.print(f"Alternatives: {', '.join(advice.alternatives)}")
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("workload", "mode", "GPUs", "detail"):
        table.add_column(col)
    for a in advice.workloads:
        detail = a.profile or (f"{a.replicas} replicas/GPU" if a.mode in ("time-slicing", "mps") else "whole GPUs")
        table.add_row(escape(a.workload.name), a.mode, str(a.gpus) if a.gpus else "-", escape(detail))
    console.print(table)
    console.print("[bold]Why[/bold]")
    for r in advice.reasons:
        console.print(f"- {escape(r)}")
    console.print("[bold]Trade-offs[/bold]")
    for t in advice.tradeoffs:
        console.print(f"- {escape(t)}")
    for key, doc in advice.config.items():
        console.print(f"\n[bold]{escape(key)}[/bold]")
        console.print(escape(_yaml(doc)), soft_wrap=True)


def render_capacity(plan: CapacityPlan, console: Console) -> None:
    """Per-model nodes and cost, cold-start assumptions and price provenance."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    region = f" ({plan.region})" if plan.region else ""
    console.print(f"[bold]Capacity on {plan.provider}{escape(region)}[/bold], {plan.hours_per_month:g} h/month, on-demand")
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("model", "GPUs (demand+headroom+spare)", "instance type", "nodes", "$/h", "$/month", "price source"):
        table.add_column(col, justify="right" if col in ("nodes", "$/h", "$/month") else "left")
    for m in plan.models:
        gpus = f"{m.gpus_total} ({m.gpus_demand}+{m.headroom_gpus}+{m.cold_start_spare_gpus})"
        c = m.choice
        if c is None:
            table.add_row(escape(m.model), gpus, "-", "-", "-", "-", escape(m.note))
            continue
        table.add_row(
            escape(m.model), gpus, escape(c.instance), str(c.nodes),
            f"{c.price.usd_per_hour:,.2f}" if c.price else "-",
            f"{c.monthly_usd:,.0f}" if c.monthly_usd is not None else "-",
            escape(f"{c.price.source} ({c.price.date})" if c.price else m.note),
        )
    console.print(table)
    total = plan.total_monthly_usd
    if total is not None:
        console.print(f"Total: [bold]${total:,.0f}[/bold] per month")
    cs = plan.cold_start
    console.print(
        f"Cold start of a GPU node: ~{cs.typical_s / 60:.0f} min typical, up to {cs.worst_s / 60:.0f} min "
        f"(autoscaler + VM + GPU driver/device plugin + image pull); spare GPUs cover --growth over the worst case."
    )
    if any(m.choice and m.choice.price and m.choice.price.source == "unverified estimate" for m in plan.models):
        console.print("Some prices are unverified estimates: pass --prices FILE with your own rate card.")
