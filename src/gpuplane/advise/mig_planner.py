"""``advise mig``: the fewest GPUs whose valid MIG layouts host a slice demand.

Input: a fleet (one or more GPU models, each with an optional count available) and a demand
(GPU-instance profile -> count). Profile names are resolved per model, exactly as the
catalog spells them (``3g.40gb`` exists on A100-80GB and H100-80GB but not on A100-40GB);
MIG resource names (``nvidia.com/mig-1g.10gb.me``) are accepted and mapped back to the
profile (``1g.10gb+me``) the way the device plugin's ``mixed`` strategy names them.

Method: per model the maximal valid mixes (:mod:`gpuplane.advise.mig_configs`) are the bin
patterns of an exact integer program (:mod:`gpuplane.advise.packing`); the optimum is then
trimmed to the exact demand (every part of a valid mix is valid) and each GPU gets a concrete
placement from :func:`gpuplane.gpu.mig.place_layout`. The output carries a mig-parted
``version: v1`` config (NVIDIA/mig-parted ``api/spec/v1/spec.go``) grouping identical GPUs.

When the fleet's counts are too small, the plan is a best-effort partial layout (greedy:
each GPU takes the mix that places the most SM slices still wanted) plus the unplaced counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.advise.demand import DemandSyntaxError, demand_items, whole
from gpuplane.advise.mig_configs import projected_patterns
from gpuplane.advise.packing import Pattern, min_bins
from gpuplane.gpu.catalog import GpuModel, catalog
from gpuplane.gpu.mig import layout_fits, place_layout
from gpuplane.gpu.resources import classify, parse_mig_profile

MIG_PARTED_CONFIG_NAME = "gpuplane-plan"


class PlanInputError(ValueError):
    """Unusable input (unknown model, malformed demand): reported as one line, exit 2."""


@dataclass(frozen=True, slots=True)
class FleetEntry:
    """A GPU model of the fleet and how many of its GPUs may be used (``None``: any number)."""

    model: GpuModel
    available: int | None = None


@dataclass(slots=True)
class GpuLayout:
    """One GPU of the plan: its model, the instances it carries and where they sit."""

    gpu: int
    model: str
    profiles: dict[str, int]
    placements: list[tuple[str, int, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "model": self.model,
            "profiles": dict(self.profiles),
            "placements": [{"profile": p, "start": s, "size": n} for p, s, n in self.placements],
        }


@dataclass(slots=True)
class MigPlan:
    """The answer of ``advise mig``; :meth:`to_json` is the spec/cli.md document."""

    feasible: bool
    gpus_needed: int | None
    fleet: list[FleetEntry]
    demand: dict[str, int]
    layout: list[GpuLayout]
    unplaced: dict[str, int]
    reason: str = ""

    def used(self, model: str) -> int:
        return sum(1 for g in self.layout if g.model == model)

    def mig_parted(self) -> dict[str, Any] | None:
        """A mig-parted config applying the plan; identical GPUs share one entry.

        In a mixed fleet each entry carries the model's PCI ``device-filter`` (the ids NVIDIA's
        default config uses, from the catalog) so one file is safe on every node.

        None when the plan is not feasible: a partial layout, or worse a ``mig-enabled:
        false`` placeholder, is not something to paste and apply to nodes.
        """
        if not self.feasible or not self.layout:
            return None
        mixed = len(self.fleet) > 1
        groups: dict[tuple[str, tuple[tuple[str, int], ...]], list[int]] = {}
        for g in self.layout:
            groups.setdefault((g.model, tuple(g.profiles.items())), []).append(g.gpu)
        entries: list[dict[str, Any]] = []
        models = {e.model.name: e.model for e in self.fleet}
        for (model_name, profiles), devices in groups.items():
            entry: dict[str, Any] = {}
            pci = models[model_name].pci_device_ids
            if mixed and pci:
                entry["device-filter"] = list(pci)
            entry["devices"] = devices
            entry["mig-enabled"] = True
            entry["mig-devices"] = dict(profiles)
            entries.append(entry)
        return {"version": "v1", "mig-configs": {MIG_PARTED_CONFIG_NAME: entries}}

    def to_json(self) -> dict[str, Any]:
        """spec/cli.md's document; ``mig_parted`` is null when the demand does not fit."""
        doc: dict[str, Any] = {
            "feasible": self.feasible,
            "gpus_needed": self.gpus_needed,
            "fleet": [
                {"model": e.model.name, "available": e.available, "used": self.used(e.model.name)}
                for e in self.fleet
            ],
            "demand": dict(self.demand),
            "layout": [g.to_json() for g in self.layout],
            "mig_parted": self.mig_parted(),
            "unplaced": dict(self.unplaced),
        }
        if self.reason:
            doc["reason"] = self.reason
        return doc


# -- input parsing -------------------------------------------------------------------------------


def resolve_model(name: str) -> GpuModel:
    """A catalog model by canonical name, alias or GFD product label; PlanInputError if unknown."""
    model = catalog().model(name.strip())
    if model is None:
        known = ", ".join(m.name for m in catalog().models.values() if m.mig_capable)
        raise PlanInputError(f"unknown GPU model {name!r} (MIG-capable models: {known})")
    return model


# Bounds on the work one plan may take (issue 11: a demand of 10^7 ran 31 s in 4.7 GB). 100,000
# MIG instances is ~14,000 fully split A100s, past any single pool; the planner runs such a
# demand in about a second. Plan bigger fleets pool by pool.
MAX_DEMAND = 100_000  # MIG instances asked for, all profiles together
MAX_GPUS = 100_000  # GPUs of one model (--gpu MODEL:COUNT, --gpus)


def parse_fleet(values: list[str] | tuple[str, ...], gpus: int | None = None) -> list[FleetEntry]:
    """``--gpu MODEL[:COUNT]`` values (repeatable) and ``--gpus N`` into fleet entries."""
    if not values:
        raise PlanInputError("give at least one --gpu MODEL")
    fleet: list[FleetEntry] = []
    seen: set[str] = set()
    for raw in values:
        name, sep, count_text = raw.rpartition(":") if ":" in raw else (raw, "", "")
        available: int | None = None
        if sep:
            available = whole(count_text, MAX_GPUS)
            if available is None or available < 1:
                raise PlanInputError(f"--gpu {raw!r}: the count after ':' must be a whole number >= 1")
            if available > MAX_GPUS:
                raise PlanInputError(
                    f"--gpu {name}: more than {MAX_GPUS} GPUs; the planner plans at most {MAX_GPUS} per model"
                )
        model = resolve_model(name)
        if model.name in seen:
            raise PlanInputError(f"--gpu {model.name} is given twice")
        seen.add(model.name)
        fleet.append(FleetEntry(model, available))
    if gpus is not None:
        if gpus < 1:
            raise PlanInputError(f"--gpus {gpus}: must be a whole number >= 1")
        if gpus > MAX_GPUS:
            raise PlanInputError(
                f"--gpus: more than {MAX_GPUS} GPUs; the planner plans at most {MAX_GPUS} per model"
            )
        if len(fleet) > 1:
            raise PlanInputError(
                "--gpus applies to a single --gpu; for a fleet give --gpu MODEL:COUNT per model"
            )
        if fleet[0].available is not None and fleet[0].available != gpus:
            raise PlanInputError(f"--gpus {gpus} contradicts --gpu {values[0]}")
        fleet[0] = FleetEntry(fleet[0].model, gpus)
    return fleet


def profile_from_token(token: str) -> str:
    """``3g.40gb``, ``1g.10gb+me`` or ``nvidia.com/mig-1g.10gb.me`` -> the profile name."""
    token = token.strip()
    if "/" in token:
        res = classify(token)
        if res is None or res.kind != "mig" or res.mig_profile is None:
            raise PlanInputError(
                f"{token!r} is not a MIG resource name (expected nvidia.com/mig-<profile>, e.g. nvidia.com/mig-3g.40gb)"
            )
        return res.mig_profile
    if token.startswith("mig-"):
        res = classify("nvidia.com/" + token)
        if res is not None and res.kind == "mig" and res.mig_profile is not None:
            return res.mig_profile
    parsed = parse_mig_profile(token)
    if parsed is None:
        raise PlanInputError(
            f"{token!r} is not a MIG profile name (e.g. 3g.40gb, 1g.10gb+me, nvidia.com/mig-3g.40gb)"
        )
    return parsed.name


def parse_demand(values: list[str] | tuple[str, ...] | str) -> dict[str, int]:
    """``PROFILE=COUNT[,PROFILE=COUNT...]`` (one string or several) into ``{profile: count}``.

    Repeated profiles add up. A count is a whole number >= 1: asking for zero (or fewer)
    slices is a typo, not a demand, so 0, -1 and ``x`` get the same one message.
    """
    items = [values] if isinstance(values, str) else list(values)
    demand: dict[str, int] = {}
    try:
        for item, name, count in demand_items(items, MAX_DEMAND):
            if not name:
                raise DemandSyntaxError(item)
            if count is None or count < 1:
                raise PlanInputError(f"--demand {item!r}: COUNT must be a whole number >= 1")
            profile = profile_from_token(name)
            demand[profile] = demand.get(profile, 0) + count
    except DemandSyntaxError as exc:
        raise PlanInputError(f"--demand {exc.item!r}: expected PROFILE=COUNT, e.g. 3g.40gb=2") from None
    if not demand:
        raise PlanInputError("--demand is empty: give PROFILE=COUNT with COUNT >= 1")
    total = sum(demand.values())
    if total > MAX_DEMAND:
        raise PlanInputError(
            f"--demand asks for more than {MAX_DEMAND} MIG instances; the planner plans at most "
            f"{MAX_DEMAND} at once (plan large fleets pool by pool)"
        )
    return demand


# -- planning ------------------------------------------------------------------------------------


def _unknown_reason(profile: str, fleet: list[FleetEntry]) -> str:
    reasons = [layout_fits(e.model, {profile: 1})[1] for e in fleet]
    if len(fleet) == 1:
        return reasons[0]
    return f"no GPU model of the fleet has MIG profile {profile}: " + "; ".join(reasons)


def _weights(profiles: tuple[str, ...], fleet: list[FleetEntry]) -> list[tuple[int, int]]:
    """Value of placing one instance: (SM slices, memory slices) on the first model having it."""
    out = []
    for name in profiles:
        for e in fleet:
            p = e.model.profile(name)
            if p is not None:
                out.append((p.compute_slices, p.size))
                break
        else:
            out.append((0, 0))
    return out


def _greedy_partial(
    demand: tuple[int, ...], patterns: list[Pattern], fleet: list[FleetEntry], profiles: tuple[str, ...]
) -> list[int]:
    """Best-effort multiplicities within the fleet's counts: each GPU places the most SM slices."""
    weights = _weights(profiles, fleet)
    left = list(demand)
    room = [e.available for e in fleet]
    x = [0] * len(patterns)
    while any(left):
        best, best_gain = -1, (0, 0)
        for i, pat in enumerate(patterns):
            if room[pat.group] == 0:
                continue
            placed = [min(c, r) for c, r in zip(pat.counts, left, strict=True)]
            gain = (
                sum(n * w[0] for n, w in zip(placed, weights, strict=True)),
                sum(n * w[1] for n, w in zip(placed, weights, strict=True)),
            )
            if gain > best_gain:
                best, best_gain = i, gain
        if best < 0:
            break
        x[best] += 1
        pat = patterns[best]
        left = [max(0, r - c) for r, c in zip(left, pat.counts, strict=True)]
        spare = room[pat.group]
        if spare is not None:
            room[pat.group] = spare - 1
    return x


def _layout(
    x: tuple[int, ...] | list[int],
    patterns: list[Pattern],
    fleet: list[FleetEntry],
    profiles: tuple[str, ...],
    demand: tuple[int, ...],
) -> tuple[list[GpuLayout], dict[str, int]]:
    """Turn multiplicities into per-GPU mixes trimmed to the exact demand, numbered per model."""
    left = list(demand)
    mixes: list[tuple[int, tuple[int, ...]]] = []
    # Big mixes first: trimming then removes slack from the last GPUs only.
    order = sorted(
        range(len(patterns)), key=lambda i: (patterns[i].group, -sum(patterns[i].counts), patterns[i].counts)
    )
    for i in order:
        for _ in range(x[i]):
            take = tuple(min(c, r) for c, r in zip(patterns[i].counts, left, strict=True))
            if not any(take):
                continue
            left = [r - t for r, t in zip(left, take, strict=True)]
            mixes.append((patterns[i].group, take))
    mixes.sort(key=lambda m: (m[0], -sum(m[1]), tuple(-c for c in m[1])))
    layout: list[GpuLayout] = []
    placement_cache: dict[tuple[int, tuple[int, ...]], list[tuple[str, int, int]]] = {}
    for gpu, (group, take) in enumerate(mixes):
        model = fleet[group].model
        order_names = [p.name for p in model.mig_profiles]
        mix = {profiles[i]: n for i, n in enumerate(take) if n}
        mix = dict(sorted(mix.items(), key=lambda kv: order_names.index(kv[0]), reverse=True))
        key = (group, take)
        if key not in placement_cache:
            placed = place_layout(model, mix) or []
            placement_cache[key] = sorted(
                ((p.name, start, p.size) for p, start in placed), key=lambda t: t[1]
            )
        layout.append(GpuLayout(gpu, model.name, mix, placement_cache[key]))
    unplaced = {profiles[i]: r for i, r in enumerate(left) if r}
    return layout, unplaced


def plan_mig(fleet: list[FleetEntry], demand: dict[str, int], *, dp_limit: int | None = None) -> MigPlan:
    """The exact fewest-GPU plan for ``demand`` on ``fleet`` (see module docstring)."""
    kwargs: dict[str, Any] = {} if dp_limit is None else {"dp_limit": dp_limit}
    unknown = [p for p in demand if not any(e.model.profile(p) is not None for e in fleet)]
    profiles = tuple(p for p in demand if p not in unknown)
    vector = tuple(demand[p] for p in profiles)
    patterns = (
        [Pattern(g, counts) for g, e in enumerate(fleet) for counts in projected_patterns(e.model, profiles)]
        if profiles
        else []
    )
    caps = tuple(e.available for e in fleet)
    uncapped = min_bins(vector, patterns, **kwargs) if profiles else ()
    gpus_needed = sum(uncapped) if uncapped is not None else None
    if unknown:
        reason = "; ".join(_unknown_reason(p, fleet) for p in unknown)
        x = (
            min_bins(vector, patterns, caps, **kwargs) or _greedy_partial(vector, patterns, fleet, profiles)
            if profiles
            else []
        )
        layout, unplaced = _layout(x, patterns, fleet, profiles, vector)
        unplaced.update({p: demand[p] for p in unknown})
        return MigPlan(False, None, fleet, dict(demand), layout, _ordered(unplaced, demand), reason)
    if all(c is None for c in caps):
        assert uncapped is not None  # every profile exists on some model, so uncapped is feasible
        layout, unplaced = _layout(uncapped, patterns, fleet, profiles, vector)
        return MigPlan(True, gpus_needed, fleet, dict(demand), layout, unplaced)
    capped = min_bins(vector, patterns, caps, **kwargs)
    if capped is not None:
        layout, unplaced = _layout(capped, patterns, fleet, profiles, vector)
        return MigPlan(True, sum(capped), fleet, dict(demand), layout, unplaced)
    x = _greedy_partial(vector, patterns, fleet, profiles)
    layout, unplaced = _layout(x, patterns, fleet, profiles, vector)
    available = ", ".join(
        f"{e.available if e.available is not None else 'any number of'} x {e.model.name}" for e in fleet
    )
    reason = (
        f"the demand needs {_count(gpus_needed or 0, 'GPU')}; the fleet has {available}; "
        f"best partial layout leaves {_count(sum(unplaced.values()), 'instance')} unplaced"
    )
    return MigPlan(False, gpus_needed, fleet, dict(demand), layout, unplaced, reason)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _ordered(unplaced: dict[str, int], demand: dict[str, int]) -> dict[str, int]:
    return {p: unplaced[p] for p in demand if p in unplaced}


DEFAULT_GPUS_PER_NODE = 8
"""GPUs per node when the pool's node size is not given: the 8-GPU HGX/DGX-class servers that
carry MIG-capable data-centre GPUs (A100, H100, H200, B200 SXM)."""


@dataclass(slots=True)
class NodeMigConfig:
    """One mig-parted config to label nodes with, and how many nodes get it."""

    name: str
    nodes: int
    gpus: list[dict[str, int]]

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.name,
            "nodes": self.nodes,
            "label": f"nvidia.com/mig.config={self.name}",
        }


def per_node_mig_parted(
    plan: MigPlan, gpus_per_node: int
) -> tuple[dict[str, Any], list[NodeMigConfig]] | None:
    """The plan as mig-parted configs that apply per node.

    mig-parted runs on each node and its ``devices`` are that node's GPU indices
    (NVIDIA/mig-parted ``api/spec/v1/spec.go``; the MIG manager applies the config named by
    the node's ``nvidia.com/mig.config`` label). So the pool's GPU layouts are cut into nodes
    of ``gpus_per_node`` GPUs; every GPU of a labelled node gets a layout (the last node's
    GPUs beyond the demand take the plan's fullest layout: spare slices, never an
    unconfigured GPU, and so does a GPU whose trimmed layout is part of the fullest one); a
    node whose GPUs all share one layout uses ``devices: all``. Nodes with
    the same layout share one config. None for an infeasible or single-model-less plan.
    """
    if not plan.feasible or not plan.layout or gpus_per_node < 1 or len({g.model for g in plan.layout}) != 1:
        return None
    layouts = [dict(g.profiles) for g in plan.layout]
    fullest = max(layouts, key=lambda p: sum(p.values()))
    # A GPU trimmed to the exact demand whose layout is a part of the fullest one takes the
    # fullest layout: still valid, more nodes become ``devices: all``, the rest are spare slices.
    layouts = [dict(fullest) if all(fullest.get(k, 0) >= n for k, n in p.items()) else p for p in layouts]
    distinct: dict[tuple[Any, ...], NodeMigConfig] = {}
    for start in range(0, len(layouts), gpus_per_node):
        chunk = layouts[start : start + gpus_per_node]
        chunk += [dict(fullest) for _ in range(gpus_per_node - len(chunk))]
        key = tuple(tuple(p.items()) for p in chunk)
        found = distinct.get(key)
        if found is None:
            distinct[key] = NodeMigConfig("", 1, chunk)
        else:
            found.nodes += 1
    single = len(distinct) == 1
    configs: dict[str, Any] = {}
    out: list[NodeMigConfig] = []
    for i, cfg in enumerate(distinct.values()):
        cfg.name = MIG_PARTED_CONFIG_NAME if single else f"{MIG_PARTED_CONFIG_NAME}-{i + 1}"
        groups: dict[tuple[tuple[str, int], ...], list[int]] = {}
        for index, profiles in enumerate(cfg.gpus):
            groups.setdefault(tuple(profiles.items()), []).append(index)
        entries: list[dict[str, Any]] = []
        for layout, devices in groups.items():
            entries.append(
                {
                    "devices": "all" if len(groups) == 1 else devices,
                    "mig-enabled": True,
                    "mig-devices": dict(layout),
                }
            )
        configs[cfg.name] = entries
        out.append(cfg)
    return {"version": "v1", "mig-configs": configs}, out


def configured_slices(configs: list[NodeMigConfig]) -> dict[str, int]:
    """MIG instances the per-node configs create in total (profile -> count)."""
    total: dict[str, int] = {}
    for cfg in configs:
        for profiles in cfg.gpus:
            for name, n in profiles.items():
                total[name] = total.get(name, 0) + n * cfg.nodes
    return total
