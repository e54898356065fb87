"""``advise capacity``: nodes per GPU model, monthly cost, headroom for cold starts.

Instance types come from the catalog (``gpu/data/instances.yaml``), prices from
``advise/data/prices.yaml`` (each with date and source; ``--prices FILE`` overrides by
provider + instance). For each model the cheapest priced instance type that carries it is
chosen; the others are listed as alternatives.

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

import yaml

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
    try:
        with path.open("rb") as fh:
            doc = yaml.load(fh, Loader=yaml.CSafeLoader)
    except OSError as exc:
        raise CapacityInputError(f"cannot read prices file {str(path)!r}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise CapacityInputError(f"prices file {str(path)!r} is not valid YAML: {' '.join(str(exc).split())}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("prices"), dict):
        raise CapacityInputError(f"prices file {str(path)!r} needs a 'prices:' mapping of provider -> instances")
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
                    raise CapacityInputError(f"{path}: prices.{provider}.instances.{name} needs a numeric usd_per_hour")
                table.prices[(provider, str(name))] = Price(
                    float(raw["usd_per_hour"]), str(raw.get("date", "")), str(raw.get("source", "unverified estimate"))
                )
    return table


def parse_gpu_demand(values: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``MODEL=GPUS[,MODEL=GPUS]`` (repeatable) -> ``{canonical model: GPUs}``."""
    out: dict[str, int] = {}
    for text in values:
        for part in text.split(","):
            if not part.strip():
                continue
            name, sep, count = part.rpartition("=")
            if not sep or not count.strip().isdigit():
                raise CapacityInputError(f"--demand {part.strip()!r}: expected MODEL=GPUS, e.g. H100-80GB=16")
            model = catalog().model(name.strip())
            if model is None:
                raise CapacityInputError(f"--demand {part.strip()!r}: unknown GPU model {name.strip()!r}")
            out[model.name] = out.get(model.name, 0) + int(count)
    if not any(out.values()):
        raise CapacityInputError("--demand is empty: give MODEL=GPUS with GPUS > 0")
    return out


@dataclass(frozen=True, slots=True)
class ColdStart:
    """Seconds from "more GPUs needed" to "a pod runs on a new GPU node"."""

    typical_s: float
    worst_s: float
    components: list[dict[str, Any]]


def cold_start(image_gib: float) -> ColdStart:
    """Sum of the catalog's cold-start phases plus an image pull of ``image_gib`` GiB."""
    cs = catalog().cold_start
    typical = worst = 0.0
    parts: list[dict[str, Any]] = []
    for name in COLD_START_PATH:
        c = cs[name]
        hi = c.high if c.high is not None else c.typical
        ty = c.typical if c.typical is not None else hi
        typical += ty or 0.0
        worst += hi or 0.0
        parts.append({"phase": name, "typical_s": ty, "worst_s": hi, "source": c.source})
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
        costs = [m.choice.monthly_usd for m in self.models if m.choice is not None]
        if not costs or any(c is None for c in costs) or len(costs) != len(self.models):
            return None
        return round(sum(c for c in costs if c is not None), 2)

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
            # Priced and cheapest first; then fewest nodes (less per-node overhead), then name.
            options.sort(key=lambda o: (o.monthly_usd is None, o.monthly_usd or 0.0, o.nodes, o.instance))
            mc.choice, mc.alternatives = options[0], options[1:]
            if mc.choice.price is None:
                mc.note = f"no price for any {provider} instance type with {model}: add one with --prices FILE"
        out.append(mc)
    return CapacityPlan(
        provider, table.regions.get(provider, ""), table.hours_per_month, headroom_pct, growth_gpus_per_hour, cs, out
    )
