"""``advise mig``, ``advise sharing`` and ``advise capacity`` as services.

Offline calculators over the GPU catalog: a request in, the plan out; unusable input (an
unknown model or profile, a bad count, an unreadable ``--from`` or ``--prices`` file, read
through the bounded side-input loader) is an :class:`~gpuplane.app.outcome.AppError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuplane.app.outcome import AppError

if TYPE_CHECKING:
    from gpuplane.advise.capacity import CapacityPlan
    from gpuplane.advise.mig_planner import MigPlan
    from gpuplane.advise.sharing import SharingAdvice


def pairs(counts: Mapping[str, int], what: str) -> tuple[str, ...]:
    """A ``{name: count}`` map (MCP's form) as the ``NAME=COUNT`` words the parsers read; a
    negative ``what`` ("count", "GPU count") is refused with the name."""
    for name, count in counts.items():
        if count < 0:
            raise AppError(f"demand {name}: the {what} must be >= 0")
    return tuple(f"{name}={count}" for name, count in counts.items())


@dataclass(frozen=True, slots=True)
class MigRequest:
    gpu: tuple[str, ...]  # MODEL or MODEL:COUNT, one per model
    demand: tuple[str, ...]  # PROFILE=COUNT[,PROFILE=COUNT...]
    gpus: int | None = None  # GPUs available for a single model


def mig(request: MigRequest) -> MigPlan:
    """The fewest GPUs whose valid MIG layouts host the demand (``plan.feasible`` says if any)."""
    # deferred for start-up time
    from gpuplane.advise.mig_planner import PlanInputError, parse_demand, parse_fleet, plan_mig

    try:
        return plan_mig(parse_fleet(list(request.gpu), request.gpus), parse_demand(list(request.demand)))
    except PlanInputError as exc:
        raise AppError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class SharingRequest:
    """The mix: the ``from_file`` workloads, then ``mappings`` (MCP's objects), then ``workloads``
    (the CLI's ``key=value,...`` words), numbered in that order in errors."""

    gpu: str
    workloads: tuple[str, ...] = ()
    mappings: tuple[dict[str, Any], ...] = field(default=())
    from_file: str | None = None
    kubernetes_version: str | None = None
    dra_driver: bool = False
    gpus_per_node: int | None = None


def sharing(request: SharingRequest) -> SharingAdvice:
    from gpuplane.advise.mig_planner import PlanInputError, resolve_model  # deferred for start-up time
    from gpuplane.advise.sharing import (
        SharingInputError,
        advise_sharing,
        load_workloads,
        parse_workload,
        workload_from_mapping,
    )

    try:
        model = resolve_model(request.gpu)
        items = load_workloads(request.from_file) if request.from_file else []
        items += [workload_from_mapping(raw, len(items) + i) for i, raw in enumerate(request.mappings)]
        items += [parse_workload(text, len(items) + i) for i, text in enumerate(request.workloads)]
        return advise_sharing(
            items,
            model,
            k8s_version=request.kubernetes_version,
            dra_driver=request.dra_driver,
            gpus_per_node=request.gpus_per_node,
        )
    except (PlanInputError, SharingInputError) as exc:
        raise AppError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class CapacityRequest:
    demand: tuple[str, ...]  # MODEL=GPUS[,MODEL=GPUS]
    provider: str = "aws"
    headroom_pct: float = 0.0
    growth_gpus_per_hour: float = 0.0
    image_gib: float = 10.0
    prices: str | None = None  # a price table overriding the built-in one


def capacity(request: CapacityRequest) -> CapacityPlan:
    # deferred for start-up time
    from gpuplane.advise.capacity import CapacityInputError, load_prices, parse_gpu_demand, plan_capacity

    try:
        return plan_capacity(
            parse_gpu_demand(list(request.demand)),
            request.provider,
            headroom_pct=request.headroom_pct,
            growth_gpus_per_hour=request.growth_gpus_per_hour,
            image_gib=request.image_gib,
            prices=load_prices(request.prices),
        )
    except CapacityInputError as exc:
        raise AppError(str(exc)) from None
