"""Human rendering of ``gpuplane usage``: findings with their changes first, then the tables.

Reads :class:`~gpuplane.usage.engine.UsageResult` and computes nothing: every figure is the
engine's (the JSON document has the same numbers).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuplane.report.console import fit_table

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from gpuplane.usage.engine import UsageResult


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"


def _table(title: str, columns: tuple[str, ...], left: tuple[str, ...]) -> Table:
    """One of the report's tables: its columns right-aligned (figures) but for the ``left`` ones
    (names and words)."""
    from rich.table import Table  # deferred for start-up time

    table = Table(title=title, title_justify="left", show_edge=False)
    for col in columns:
        table.add_column(col, justify="left" if col in left else "right")
    return table


def _shrinks(fit: dict[str, Any] | None) -> bool:
    """A pool's right-size block proposes fewer nodes than it has now."""
    return fit is not None and fit["nodes_needed"] < fit["nodes_now"]


FINDING_INDENT = 4  # continuation lines of a finding's message
DETAIL_INDENT = 10  # continuation lines of its change and saving (under the text after "change: ")


def render_usage(result: UsageResult, console: Console) -> None:
    from rich.markup import escape  # deferred for start-up time

    from gpuplane.report.console import wrap_hanging

    width = console.width

    doc = result.to_json()
    window = doc["window"]
    grid = result.series.grid
    console.print(
        f"[bold]GPU usage[/] {_when(grid.start - grid.step)} → {_when(grid.end)} UTC "
        f"({window['hours']:g} h, step {grid.step} s) from {window['source']}"
        + (f", cluster {window['cluster']}" if window["cluster"] else "")
    )
    console.print(f"activity signal: {doc['signals']['activity']}", style="dim")
    summary = doc["summary"]
    console.print(
        f"{summary['workloads']} workloads, {summary['allocated_gpu_hours']:,.1f} GPU-hours allocated, "
        f"{summary['active_gpu_hours']:,.1f} active ({_pct(summary['active_share'])}), "
        f"{summary['idle_gpu_hours']:,.1f} idle"
    )
    console.print()
    findings: list[dict[str, Any]] = doc["findings"]
    if findings:
        console.print(f"[bold]Findings[/] ({len(findings)})")
        for f in findings:
            saving = f["saving"]
            money = (
                f", ~{_usd(saving['usd'])} (~{_usd(saving['usd_per_month'])}/month)"
                if saving["usd"] is not None
                else ""
            )
            # wrapped here, at word boundaries with a hanging indent (as lint and diagnose findings);
            # soft_wrap keeps rich from wrapping the lines again
            severity, rule = f["severity"], f["rule"]
            first, *rest = wrap_hanging(f"{severity} {rule} {f['message']}", width, FINDING_INDENT)
            tail = first[len(severity) + len(rule) + 1 :]
            console.print(
                f"[yellow]{escape(severity)}[/] [bold]{escape(rule)}[/]{escape(tail)}",
                highlight=False,
                soft_wrap=True,
            )
            for line in rest:
                console.print(escape(line), highlight=False, soft_wrap=True)
            for line in wrap_hanging(f"  change: {f['fix']}", width, DETAIL_INDENT):
                console.print(escape(line), highlight=False, soft_wrap=True)
            saving_text = (
                f"  saving: {saving['gpu_hours']:,.1f} GPU-hours over the window{money} (estimate: "
                f"{saving['basis']})"
            )
            for line in wrap_hanging(saving_text, width, DETAIL_INDENT):
                console.print(escape(line), style="green", highlight=False, soft_wrap=True)
        console.print()
    else:
        console.print("No findings: every allocation is used.\n")

    table = _table(
        "Workloads",
        ("workload", "kind", "GPUs", "alloc GPU-h", "active GPU-h", "idle max h", "mean", "p95", "mem peak"),
        left=("workload", "kind"),
    )
    for w in doc["workloads"]:
        obj = w["object"]
        profile = f" ({', '.join(w['mig_profiles'])})" if w["mig_profiles"] else ""
        table.add_row(
            f"{obj['kind']} {obj['namespace']}/{obj['name']}",
            w["category"],
            f"{w['gpus']:g}{profile}",
            _num(w["allocated_gpu_hours"]),
            _num(w["active_gpu_hours"]),
            _num(w["longest_idle_hours"]),
            _pct(w["activity_mean"]),
            _pct(w["activity_p95"]),
            "-" if w["fb_used_peak_mib"] is None else f"{w['fb_used_peak_mib'] / 1024:.1f} GiB",
        )
    # narrow terminals drop the columns least needed to act on a workload first (-f json has all)
    console.print(fit_table(table, console.width, drop=("mem peak", "idle max h", "p95", "kind")))
    console.print()

    teams = _table(
        "By namespace",
        ("namespace", "workloads", "alloc GPU-h", "active", "saving GPU-h", "saving $"),
        left=("namespace",),
    )
    for n in doc["namespaces"]:
        teams.add_row(
            n["namespace"],
            str(n["workloads"]),
            _num(n["allocated_gpu_hours"]),
            _pct(n["active_share"]),
            _num(n["saving_gpu_hours"]),
            _usd(n["saving_usd"]),
        )
    console.print(fit_table(teams, console.width))
    console.print()

    pools = _table(
        "By node pool",
        (
            "pool",
            "GPUs",
            "peak held",
            "alloc GPU-h",
            "active",
            "free GPU-h",
            "cost $",
            "saving GPU-h",
            "at peak",
        ),
        left=("pool", "at peak"),
    )
    for p in doc["pools"]:
        fit = p["right_size"]
        pools.add_row(
            p["pool"],
            f"{p['gpus']:g}",
            f"{p['peak_allocated_gpus']:g}",
            _num(p["allocated_gpu_hours"]),
            _pct(p["active_share"]),
            _num(p["free_gpu_hours"]),
            _usd(p["cost_usd"]),
            _num(p["saving_gpu_hours"]),
            f"{fit['nodes_needed']} x {fit['instance_type']} (now {fit['nodes_now']})"
            if _shrinks(fit)
            else "-",
        )
    console.print(fit_table(pools, console.width, drop=("peak held", "free GPU-h", "cost $", "active")))
    for p in doc["pools"]:
        fit = p["right_size"]
        if _shrinks(fit):
            money = (
                f": ~{_usd(fit['monthly_usd_now'] - fit['monthly_usd_needed'])}/month"
                if fit["monthly_usd_now"] is not None and fit["monthly_usd_needed"] is not None
                else ""
            )
            console.print(
                f"pool {p['pool']}: at most {p['peak_allocated_gpus']:g} GPUs were held at once; "
                f"{fit['nodes_needed']} x {fit['instance_type']} would host them (largest pod: "
                f"{fit['largest_pod_gpus']} GPUs) instead of {fit['nodes_now']} x {fit['instance_type_now']}"
                f"{money} ({fit['advise']})",
                highlight=False,
            )
    if summary["saving_gpu_hours"]:
        money = (
            f", ~{_usd(summary['saving_usd'])} (~{_usd(summary['saving_usd_per_month'])}/month at this rate)"
            if summary["saving_usd"] is not None
            else ""
        )
        console.print(
            f"\n[bold green]Total saving[/]: {summary['saving_gpu_hours']:,.1f} GPU-hours{money}. "
            "Estimates: on-demand list prices per GPU-hour (advise/data/prices.yaml), no discounts.",
            highlight=False,
        )
    for note in doc["notes"]:
        console.print(f"note: {note}", style="dim", highlight=False)
