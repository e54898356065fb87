"""One ``gpuplane simulate`` run from user-level options: the CLI and the MCP tool share it.

Why one function: ``gpuplane simulate -f json`` and the MCP ``simulate`` tool must return the
same document for the same inputs; both parse ``--autoscaler`` / ``--scenario`` here, apply the
inputs on top of the cluster once (``inputs.py``) and run the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources.manifest import Manifest

AUTOSCALER_MODES = ("auto", "none", "karpenter", "cluster-autoscaler")
SCHEDULERS = ("default", "volcano", "coscheduling", "kueue")


class SimulateInputError(ValueError):
    """An option or file the run cannot use: one clear line (the CLI exits 2 with it)."""


@dataclass(slots=True)
class SimulateRun:
    """The JSON document, input problems (the CLI prints them and exits 2) and notes about
    how the inputs were applied (printed on stderr, not failures)."""

    document: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_simulation(
    state: ClusterState,
    objects: list[Manifest],
    *,
    scheduler: str = "default",
    autoscaler: str | None = None,
    scenario: str | None = None,
    kubernetes_version: str | None = None,
) -> SimulateRun:
    """Simulate ``objects`` submitted to ``state``; ``autoscaler`` is a mode of
    :data:`AUTOSCALER_MODES` or a YAML file with NodePools / node groups / a ColdStart object."""
    from gpuplane.scheduler.simulate.autoscaler import Autoscaler  # deferred for start-up time
    from gpuplane.scheduler.simulate.coldstart import default_model, parse_overrides
    from gpuplane.scheduler.simulate.engine import Engine, Options
    from gpuplane.scheduler.simulate.inputs import apply_inputs
    from gpuplane.scheduler.simulate.result import to_document
    from gpuplane.scheduler.simulate.scenario import ScenarioError, load_scenario
    from gpuplane.scheduler.versions import parse_minor
    from gpuplane.sources import load_paths

    if scheduler not in SCHEDULERS:
        raise SimulateInputError(f"scheduler {scheduler!r} is not one of {', '.join(SCHEDULERS)}")
    if kubernetes_version is not None and parse_minor(kubernetes_version) is None:
        raise SimulateInputError(
            f"--kubernetes-version {kubernetes_version!r} is not a Kubernetes version like 1.31"
        )
    try:
        plan = load_scenario(scenario) if scenario else None
    except ScenarioError as exc:
        raise SimulateInputError(str(exc)) from None
    mode = autoscaler or "auto"
    extra: list[Manifest] = []
    overrides: dict[str, float] = dict(plan.cold_start) if plan else {}
    if mode not in AUTOSCALER_MODES:
        spec = load_paths([mode])
        if spec.errors:
            raise SimulateInputError(f"--autoscaler {mode}: {spec.errors[0]}")
        extra = list(spec.objects)
        for obj in extra:
            if obj.kind == "ColdStart" and obj.group == "gpuplane.io":
                values, problems = parse_overrides(obj.get("spec") or {})
                if problems:
                    raise SimulateInputError(f"--autoscaler {mode}: {problems[0]}")
                overrides.update(values)
        mode = "auto"
    from gpuplane.scheduler.simulate.input_models import check_objects  # deferred for start-up time
    from gpuplane.sources.typed import TypedInputError

    try:
        check_objects([*objects, *extra, *state.objects])
    except TypedInputError as exc:
        raise SimulateInputError(str(exc)) from None
    inputs = apply_inputs(state, objects)
    problems = list(inputs.problems)
    scaler = None
    if mode != "none":
        scaler, found = Autoscaler.from_objects([*inputs.cluster_objects, *inputs.workloads, *extra], mode)
        problems.extend(found)
    options = Options(
        scheduler=scheduler,
        autoscaler=scaler,
        cold_start=default_model(overrides),
        scenario=plan,
        kubernetes_version=kubernetes_version,
    )
    try:
        engine = Engine(state, objects, options, inputs=inputs).run()
    except ScenarioError as exc:
        raise SimulateInputError(str(exc)) from None
    return SimulateRun(to_document(engine), problems, list(inputs.notes))
