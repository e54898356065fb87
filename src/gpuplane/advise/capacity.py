"""``advise capacity``: nodes per GPU model, monthly cost, headroom for cold starts.

Instance types come from the catalog (``gpu/data/instances.yaml``), prices from
``advise/data/prices.yaml`` (each with date and source; ``--prices FILE`` overrides by
provider + instance). For each model the instance type is chosen by shape, never by a
missing price (:func:`_choice_key`): fewest nodes among the sizes that leave at most a
quarter of the provisioned GPUs idle, so multi-GPU demand lands on few large nodes
(multi-GPU pods fit on one node, NVLink inside it, less per-node overhead); price only
breaks ties. The others are listed as alternatives. A chosen type without a price makes
the plan's cost partial, and the plan says which type and why.

Headroom has two parts:

- ``--headroom PCT``: a plain percentage on top of the demand;
- cold-start spare: GPU nodes take minutes to become usable (autoscaler decision, VM
  provisioning, GPU driver / device-plugin readiness, image pull: the catalog's cold-start
  figures from reference/platform.md §2.7). Demand that grows by ``growth`` GPUs per hour
  during that window must be met by warm spare GPUs: ``ceil(growth x cold_start_hours)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuplane.advise.demand import DemandSyntaxError, demand_items
from gpuplane.gpu.catalog import catalog

PRICES_FILE = Path(__file__).resolve().parent / "data" / "prices.yaml"
PROVIDERS = ("aws", "gcp", "azure")
DEFAULT_HOURS_PER_MONTH = 730
# The cold-start path, in order. The worst case uses `high` where known, else `typical`.
COLD_START_PATH = ("autoscaler_decision", "vm_provisioning", "gpu_stack_ready")


class CapacityInputError(ValueError):
    """Unusable input: one line for the user, exit 2."""


@dataclass(frozen=True, slots=True)
class Price:
    usd_per_hour: float
    date: str
    source: str


@dataclass(slots=True)
class PriceTable:
    hours_per_month: float
    regions: dict[str, str]
    prices: dict[tuple[str, str], Price]


def _read_prices(path: Path) -> dict[str, Any]:
    from gpuplane.sources.side_input import SideInputError, read_document  # for start-up time

    try:
        doc = read_document(str(path))
    except SideInputError as exc:
        raise CapacityInputError(f"prices file: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("prices"), dict):
        raise CapacityInputError(
            f"prices file {str(path)!r} needs a 'prices:' mapping of provider -> instances"
        )
    return doc


def load_prices(override: str | Path | None = None) -> PriceTable:
    """The built-in price table, with ``override`` entries replacing same-named ones."""
    table = PriceTable(DEFAULT_HOURS_PER_MONTH, {}, {})
    for path in (PRICES_FILE, Path(override) if override else None):
        if path is None:
            continue
        doc = _read_prices(path)
        if "hours_per_month" in doc:
            table.hours_per_month = float(doc["hours_per_month"])
        for provider, section in doc["prices"].items():
            if not isinstance(section, dict) or not isinstance(section.get("instances"), dict):
                raise CapacityInputError(f"{path}: prices.{provider} needs an 'instances:' mapping")
            if section.get("region"):
                table.regions[provider] = str(section["region"])
            for name, raw in section["instances"].items():
                if not isinstance(raw, dict) or not isinstance(raw.get("usd_per_hour"), int | float):
                    raise CapacityInputError(
                        f"{path}: prices.{provider}.instances.{name} needs a numeric usd_per_hour"
                    )
                table.prices[(provider, str(name))] = Price(
                    float(raw["usd_per_hour"]),
                    str(raw.get("date", "")),
                    str(raw.get("source", "unverified estimate")),
                )
    return table


# A bound on one model's --demand (bounded inputs): beyond any fleet a price table prices.
MAX_DEMAND_GPUS = 1_000_000


def parse_gpu_demand(values: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``MODEL=GPUS[,MODEL=GPUS]`` (repeatable) -> ``{canonical model: GPUs}`` (advise/demand.py)."""
    out: dict[str, int] = {}
    try:
        for item, name, count in demand_items(values, MAX_DEMAND_GPUS):
            if count is None:
                raise CapacityInputError(f"--demand {item!r}: expected MODEL=GPUS, e.g. H100-80GB=16")
            model = catalog().model(name)
            if model is None:
                raise CapacityInputError(f"--demand {item!r}: unknown GPU model {name!r}")
            out[model.name] = out.get(model.name, 0) + count
    except DemandSyntaxError as exc:
        raise CapacityInputError(f"--demand {exc.item!r}: expected MODEL=GPUS, e.g. H100-80GB=16") from None
    if not any(out.values()):
        raise CapacityInputError("--demand is empty: give MODEL=GPUS with GPUS > 0")
    too_many = [name for name, gpus in out.items() if gpus > MAX_DEMAND_GPUS]
    if too_many:
        raise CapacityInputError(f"--demand {too_many[0]}: more than {MAX_DEMAND_GPUS} GPUs of one model")
    return out


@dataclass(frozen=True, slots=True)
class ColdStart:
    """Seconds from "more GPUs needed" to "a pod runs on a new GPU node"."""

    typical_s: float
    worst_s: float
    components: list[dict[str, Any]]

    @property
    def estimated(self) -> list[str]:
        """Phases whose typical figure is gpuplane's estimate (no source gives one)."""
        return [c["phase"] for c in self.components if c.get("typical_estimated")]


def cold_start(image_gib: float) -> ColdStart:
    """Sum of the catalog's cold-start phases plus an image pull of ``image_gib`` GiB.

    The typical total sums typical figures and the worst total sums high figures
    (reference/platform.md §2.7: CA decision avg ~5 s / <=30 s; VM "usually 3 to 4
    minutes"; GPU allocatable "up to 15 minutes" after Ready; ~1 min per GiB pulled). A
    phase with no sourced typical figure (the GPU stack: only an upper bound is published)
    uses the midpoint of its sourced range, ``low`` (0 when unknown) to ``high``, and is
    flagged ``typical_estimated`` so reports label it; using the upper bound there made the
    "typical" total almost the worst case.
    """
    cs = catalog().cold_start
    typical = worst = 0.0
    parts: list[dict[str, Any]] = []
    for name in COLD_START_PATH:
        c = cs[name]
        hi = c.high if c.high is not None else c.typical
        estimated = c.typical is None and hi is not None
        ty = c.typical if c.typical is not None else ((c.low or 0.0) + hi) / 2 if hi is not None else None
        typical += ty or 0.0
        worst += hi or 0.0
        part: dict[str, Any] = {"phase": name, "typical_s": ty, "worst_s": hi, "source": c.source}
        if estimated and hi is not None:
            part["typical_estimated"] = True
            part["estimate"] = f"midpoint of the sourced {(c.low or 0) / 60:g}-{hi / 60:g} min range"
        parts.append(part)
    pull = cs["image_pull_per_gib"]
    pull_s = (pull.typical or 0.0) * image_gib
    typical += pull_s
    worst += pull_s
    parts.append({"phase": "image_pull", "typical_s": pull_s, "worst_s": pull_s, "source": pull.source})
    return ColdStart(typical, worst, parts)


@dataclass(slots=True)
class Option:
    instance: str
    gpus_per_node: int
    nodes: int
    price: Price | None
    monthly_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "instance_type": self.instance,
            "gpus_per_node": self.gpus_per_node,
            "nodes": self.nodes,
            "usd_per_hour": self.price.usd_per_hour if self.price else None,
            "monthly_usd": round(self.monthly_usd, 2) if self.monthly_usd is not None else None,
            "price_date": self.price.date if self.price else None,
            "price_source": self.price.source if self.price else None,
        }


@dataclass(slots=True)
class ModelCapacity:
    model: str
    gpus_demand: int
    headroom_gpus: int
    cold_start_spare_gpus: int
    choice: Option | None
    alternatives: list[Option] = field(default_factory=list)
    note: str = ""

    @property
    def gpus_total(self) -> int:
        return self.gpus_demand + self.headroom_gpus + self.cold_start_spare_gpus

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "model": self.model,
            "gpus_demand": self.gpus_demand,
            "headroom_gpus": self.headroom_gpus,
            "cold_start_spare_gpus": self.cold_start_spare_gpus,
            "gpus_total": self.gpus_total,
        }
        if self.choice is not None:
            doc.update(self.choice.to_json())
            doc["gpus_provisioned"] = self.choice.nodes * self.choice.gpus_per_node
        doc["alternatives"] = [a.to_json() for a in self.alternatives]
        if self.note:
            doc["note"] = self.note
        return doc


@dataclass(slots=True)
class CapacityPlan:
    provider: str
    region: str
    hours_per_month: float
    headroom_pct: float
    growth_gpus_per_hour: float
    cold_start: ColdStart
    models: list[ModelCapacity]

    @property
    def total_monthly_usd(self) -> float | None:
        """The whole plan's monthly cost; None unless every model has a priced choice."""
        costs = [m.choice.monthly_usd for m in self.models if m.choice is not None]
        if not costs or any(c is None for c in costs) or len(costs) != len(self.models):
            return None
        return round(sum(c for c in costs if c is not None), 2)

    @property
    def priced_monthly_usd(self) -> float | None:
        """The monthly cost of the models that have a priced choice (None when none has)."""
        costs = [
            m.choice.monthly_usd
            for m in self.models
            if m.choice is not None and m.choice.monthly_usd is not None
        ]
        return round(sum(costs), 2) if costs else None

    @property
    def cost_gaps(self) -> list[str]:
        """Why the cost is partial: one line per model left out of the total."""
        gaps = []
        for m in self.models:
            if m.choice is None:
                gaps.append(f"{m.model}: {m.note}")
            elif m.choice.price is None:
                gaps.append(f"{m.model}: no price for {self.provider} {m.choice.instance} in the price table")
        return gaps

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "region": self.region,
            "hours_per_month": self.hours_per_month,
            "headroom_pct": self.headroom_pct,
            "growth_gpus_per_hour": self.growth_gpus_per_hour,
            "cold_start": {
                "typical_s": self.cold_start.typical_s,
                "worst_s": self.cold_start.worst_s,
                "components": self.cold_start.components,
            },
            "models": [m.to_json() for m in self.models],
            "total_monthly_usd": self.total_monthly_usd,
            "priced_monthly_usd": self.priced_monthly_usd,
            "cost_partial": bool(self.cost_gaps),
            "cost_gaps": self.cost_gaps,
        }


def plan_capacity(
    demand: dict[str, int],
    provider: str = "aws",
    *,
    headroom_pct: float = 0.0,
    growth_gpus_per_hour: float = 0.0,
    image_gib: float = 10.0,
    prices: PriceTable | None = None,
) -> CapacityPlan:
    """Nodes and monthly cost per model for ``demand`` (GPUs per model) on ``provider``."""
    if provider not in PROVIDERS:
        raise CapacityInputError(f"unknown provider {provider!r} (choose from {', '.join(PROVIDERS)})")
    if headroom_pct < 0 or growth_gpus_per_hour < 0 or image_gib < 0:
        raise CapacityInputError("--headroom, --growth and --image-gib must be >= 0")
    table = prices or load_prices()
    cs = cold_start(image_gib)
    spare = math.ceil(growth_gpus_per_hour * cs.worst_s / 3600 - 1e-9) if growth_gpus_per_hour else 0
    types = [it for it in catalog().instance_types.values() if it.provider == provider]
    out: list[ModelCapacity] = []
    for model, gpus in demand.items():
        headroom = math.ceil(gpus * headroom_pct / 100 - 1e-9)
        mc = ModelCapacity(model, gpus, headroom, spare, None)
        need = mc.gpus_total
        options = []
        for it in types:
            if it.gpu_model != model:
                continue
            nodes = math.ceil(need / it.gpu_count)
            price = table.prices.get((provider, it.name))
            monthly = nodes * price.usd_per_hour * table.hours_per_month if price else None
            options.append(Option(it.name, it.gpu_count, nodes, price, monthly))
        if not options:
            mc.note = f"no {provider} instance type with {model} in the catalog"
        else:
            least_idle = min(o.nodes * o.gpus_per_node - need for o in options)
            options.sort(key=lambda o: _choice_key(o, need, least_idle))
            mc.choice, mc.alternatives = options[0], options[1:]
            if mc.choice.price is None:
                priced = [o.instance for o in options if o.price is not None]
                mc.note = f"no price for {mc.choice.instance}: add one with --prices FILE" + (
                    f" (priced alternatives: {', '.join(priced)})" if priced else ""
                )
        out.append(mc)
    return CapacityPlan(
        provider,
        table.regions.get(provider, ""),
        table.hours_per_month,
        headroom_pct,
        growth_gpus_per_hour,
        cs,
        out,
    )


# Less than this share of a choice's GPUs may sit idle for it to compete on node count.
MAX_IDLE_SHARE = 0.25


def _choice_key(option: Option, need: int, least_idle: int) -> tuple[Any, ...]:
    """Sort key of an instance option: shape first, price only to break ties.

    Options that leave less than :data:`MAX_IDLE_SHARE` of their GPUs idle (or as few idle as
    any option can) rank by fewest nodes, then fewest idle GPUs; the rest come after, by idle
    GPUs. So 8 A100s on GCP are one ``a2-highgpu-8g``, not eight ``a2-highgpu-1g``, and 4 GPUs
    are not put on an 8-GPU node. A missing price never decides: priced options win only
    among equal shapes, and then the cheaper one.
    """
    provisioned = option.nodes * option.gpus_per_node
    idle = provisioned - need
    compact = idle == least_idle or idle < MAX_IDLE_SHARE * provisioned
    return (
        not compact,
        option.nodes if compact else idle,
        idle,
        option.price is None,
        option.monthly_usd or 0.0,
        option.instance,
    )
