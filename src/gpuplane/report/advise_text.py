"""Human rendering of ``advise mig`` / ``sharing`` / ``capacity`` results.

Big plans stay readable: GPUs with the same mix are shown as one row with their count;
the configs to apply are printed as YAML, ready to paste.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from gpuplane.advise.capacity import CapacityPlan
from gpuplane.advise.mig_planner import MIG_PARTED_CONFIG_NAME, MigPlan
from gpuplane.advise.sharing import SharingAdvice
from gpuplane.report.console import fit_table

if TYPE_CHECKING:
    from rich.console import Console


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (a ConfigMap's embedded config file) as ``|`` blocks, not escaped lines."""


def _str_block(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_block)


def _yaml(doc: object) -> str:
    if isinstance(doc, str):
        return doc
    return yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False).rstrip()


def _mix(profiles: dict[str, int]) -> str:
    return " + ".join(f"{n} x {p}" for p, n in profiles.items())


def _gpus(n: int) -> str:
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


# Where each config of an advice goes, one sentence each (sources: the knowledge base sections
# mig-manager-parted, mig-strategies, device-plugin-per-node-config and dra-overview).
_MIG_PARTED_HOWTO = (
    "Apply it with the GPU Operator's MIG manager: add the entry to its mig-parted ConfigMap "
    "(key config.yaml; default-mig-parted-config or the one named by migManager.config.name) and label "
    "the nodes nvidia.com/mig.config={name}. Without the operator: nvidia-mig-parted apply -f FILE -c {name}."
)
_CONFIG_SECTIONS: dict[str, tuple[str, str]] = {
    "mig_parted": (
        "MIG layout (nvidia-mig-parted config)",
        _MIG_PARTED_HOWTO.format(name=MIG_PARTED_CONFIG_NAME),
    ),
    "mig_node_labels": (
        "MIG config per node",
        "Label the nodes of the pool (kubectl label node <node> nvidia.com/mig.config=<config> --overwrite), as many "
        "nodes per config as listed; the MIG manager applies that config to every GPU of the node.",
    ),
    "device_plugin_mig_strategy": (
        "Device plugin MIG strategy",
        "set it in the GPU Operator's ClusterPolicy (Helm: --set mig.strategy={value}) so each MIG profile is "
        "advertised as its own resource, nvidia.com/mig-<profile>, for the pods to request.",
    ),
    "device_plugin_configmap": (
        "Device plugin sharing config (ConfigMap)",
        "kubectl apply it, point the GPU Operator at it (ClusterPolicy spec.devicePlugin.config.name) and label "
        "each node pool with the key of its mode: nvidia.com/device-plugin.config=<key>.",
    ),
    "resource_claim_templates": (
        "DRA ResourceClaimTemplates",
        "kubectl apply them in the workloads' namespace and reference one from each pod's spec.resourceClaims "
        "(needs the NVIDIA DRA driver).",
    ),
}


def render_mig(plan: MigPlan, console: Console) -> None:
    """Verdict, one row per distinct GPU mix, unplaced counts and, when feasible, the mig-parted config."""
    from rich import box  # deferred for start-up time
    from rich.markup import escape
    from rich.table import Table

    demand = _mix(plan.demand)
    fleet = ", ".join(
        e.model.name + (f" (max {e.available})" if e.available is not None else "") for e in plan.fleet
    )
    if plan.feasible:
        verb = "hosts" if plan.gpus_needed == 1 else "host"
        console.print(
            f"[bold]{_gpus(plan.gpus_needed or 0)}[/bold] of {escape(fleet)} {verb} {escape(demand)} "
            "(exact minimum)."
        )
    else:
        console.print(f"[bold red]Not feasible[/bold red] on {escape(fleet)}: {escape(plan.reason)}")
    if plan.layout:
        if not plan.feasible:
            console.print("Best partial layout:")
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
        console.print(fit_table(table, console.width))
    if plan.unplaced:
        console.print(f"Unplaced: {escape(_mix(plan.unplaced))}")
    parted = plan.mig_parted()
    if parted is None:
        console.print("\nNo mig-parted config: the demand does not fit, so there is no layout to apply.")
        return
    heading, howto = _CONFIG_SECTIONS["mig_parted"]
    console.print(f"\n[bold]{heading}[/bold]")
    console.print(escape(howto))
    console.print(escape(_yaml(parted)), soft_wrap=True)


def render_sharing(advice: SharingAdvice, console: Console) -> None:
    """Recommendation, per-workload table, reasons, trade-offs, then each config with where it goes."""
    from rich import box  # deferred for start-up time
    from rich.markup import escape
    from rich.table import Table

    console.print(
        f"[bold]Recommendation for {escape(advice.gpu_model)}: {_MODE_NAMES.get(advice.recommendation, advice.recommendation)}[/bold]"
    )
    if advice.alternatives:
        console.print("Alternatives: " + ", ".join(_MODE_NAMES.get(m, m) for m in advice.alternatives))
    console.print()
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("workload", "mode", "GPUs", "detail"):
        table.add_column(col)
    for a in advice.workloads:
        detail = a.profile or (
            f"{a.replicas} replicas/GPU" if a.mode in ("time-slicing", "mps") else "whole GPUs"
        )
        table.add_row(
            escape(a.workload.name),
            _MODE_NAMES.get(a.mode, a.mode),
            str(a.gpus) if a.gpus else "-",
            escape(detail),
        )
    console.print(fit_table(table, console.width))
    console.print("[bold]Why[/bold]")
    for r in advice.reasons:
        console.print(f"- {escape(r)}")
    console.print("\n[bold]Trade-offs[/bold]")
    for t in advice.tradeoffs:
        console.print(f"- {escape(t)}")
    for key, doc in advice.config.items():
        heading, howto = _CONFIG_SECTIONS.get(key, (key.replace("_", " "), ""))
        if key == "mig_parted":
            howto = (
                _MIG_PARTED_HOWTO.format(name="<config>")
                + " Configs are per node: devices are the node's GPU indices."
            )
        console.print(f"\n[bold]{escape(heading)}[/bold]")
        if isinstance(doc, str):  # a single setting, e.g. the MIG strategy: say it in the sentence
            console.print(f"Use {escape(doc)}: " + escape(howto.format(value=doc)))
            continue
        if howto:
            console.print(escape(howto))
        console.print(escape(_yaml(doc)), soft_wrap=True)


_MODE_NAMES = {
    "none": "whole GPUs (no sharing)",
    "time-slicing": "time-slicing",
    "mps": "MPS",
    "mig": "MIG",
    "dra": "DRA (Dynamic Resource Allocation)",
}


def render_capacity(plan: CapacityPlan, console: Console) -> None:
    """Per-model nodes and cost, cold-start assumptions and price provenance."""
    from rich import box  # deferred for start-up time
    from rich.markup import escape
    from rich.table import Table

    region = f" ({plan.region})" if plan.region else ""
    console.print(
        f"[bold]Capacity on {plan.provider}{escape(region)}[/bold], {plan.hours_per_month:g} h/month, on-demand"
    )
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col in (
        "model",
        "GPUs (demand + headroom + spare)",
        "instance type",
        "nodes",
        "$/h",
        "$/month",
        "price source",
    ):
        table.add_column(col, justify="right" if col in ("nodes", "$/h", "$/month") else "left")
    for m in plan.models:
        gpus = f"{m.gpus_total} ({m.gpus_demand}+{m.headroom_gpus}+{m.cold_start_spare_gpus})"
        c = m.choice
        if c is None:
            table.add_row(escape(m.model), gpus, "-", "-", "-", "-", escape(m.note))
            continue
        table.add_row(
            escape(m.model),
            gpus,
            escape(c.instance),
            str(c.nodes),
            f"{c.price.usd_per_hour:,.2f}" if c.price else "-",
            f"{c.monthly_usd:,.0f}" if c.monthly_usd is not None else "-",
            escape(f"{c.price.source} ({c.price.date})" if c.price else m.note),
        )
    # a narrow terminal drops the price source (its file path would not fit unbroken)
    console.print(fit_table(table, console.width, drop=("price source",)))
    total = plan.total_monthly_usd
    gaps = plan.cost_gaps
    if total is not None:
        console.print(f"Total: [bold]${total:,.0f}[/bold] per month")
    elif gaps:
        priced = plan.priced_monthly_usd
        head = (
            f"Total: [bold]${priced:,.0f}[/bold] per month, partial"
            if priced is not None
            else "Total: unknown"
        )
        console.print(
            f"{head} (not priced: {escape('; '.join(gaps))}); pass --prices FILE with your rate card"
        )
    cs = plan.cold_start
    console.print(
        f"Cold start of a GPU node: ~{cs.typical_s / 60:.0f} min typical, up to {cs.worst_s / 60:.0f} min "
        f"(autoscaler + VM + GPU driver/device plugin + image pull); spare GPUs cover --growth over the worst case."
    )
    for part in cs.components:
        if part.get("typical_estimated"):
            console.print(
                f"  typical {escape(part['phase'].replace('_', ' '))}: ~{part['typical_s'] / 60:.1f} min is an estimate, the "
                f"{escape(part['estimate'])} (no typical figure is published)"
            )
    if any(
        m.choice and m.choice.price and m.choice.price.source == "unverified estimate" for m in plan.models
    ):
        console.print("Some prices are unverified estimates: pass --prices FILE with your own rate card.")
