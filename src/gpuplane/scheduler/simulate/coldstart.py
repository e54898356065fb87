"""GPU node cold start: the phases between "a pod needs a new node" and "its containers run".

Figures are data (``gpu/data/cold_start.yaml``, each with its upstream source, reference
platform.md §2.7 and §3.6), never constants here. A phase uses the component's ``typical``
figure; where the sources publish only an upper bound (``gpu_stack_ready``: "up to 15
minutes" for the GPU to become allocatable after the node is Ready) that bound is used and
marked as such, so the total is a documented pessimistic estimate. Every value can be
overridden (``--autoscaler FILE`` with a ``ColdStart`` object, or a scenario's ``coldStart``).

Phases per autoscaler:
- Cluster Autoscaler: ``autoscaler_decision`` (scan + simulation, CA FAQ SLO) +
  ``vm_provisioning`` + ``gpu_stack_ready`` (GPU nodes);
- Karpenter: ``karpenter_batching`` (batch window, settings.md) + ``vm_provisioning`` +
  ``gpu_stack_ready`` (GPU nodes).
Then per pod on a fresh node: image pull = image size (GiB) x ``image_pull_per_gib``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PHASES = {
    "cluster-autoscaler": ("autoscaler_decision", "vm_provisioning", "gpu_stack_ready"),
    "karpenter": ("karpenter_batching", "vm_provisioning", "gpu_stack_ready"),
}
GPU_ONLY = frozenset({"gpu_stack_ready"})
IMAGE_PULL = "image_pull_per_gib"


@dataclass(slots=True)
class Phase:
    name: str
    seconds: float
    figure: str  # typical | high | low | override
    source: str


@dataclass(slots=True)
class ColdStartModel:
    """Seconds per component, with where each figure comes from."""

    values: dict[str, Phase] = field(default_factory=dict)

    def seconds(self, name: str) -> float:
        phase = self.values.get(name)
        return phase.seconds if phase is not None else 0.0

    def node_phases(self, autoscaler: str, gpu_node: bool) -> list[Phase]:
        out = []
        for name in PHASES.get(autoscaler, ()):
            if name in GPU_ONLY and not gpu_node:
                continue
            phase = self.values.get(name)
            if phase is not None:
                out.append(phase)
        return out

    def node_ready_after(self, autoscaler: str, gpu_node: bool) -> float:
        """Seconds from the scale-up decision point to a Ready node with allocatable GPUs."""
        return sum(p.seconds for p in self.node_phases(autoscaler, gpu_node))

    def image_pull(self, size_gib: float | None) -> float:
        """Pull + extract time of an image of ``size_gib`` on a node without it cached."""
        if not size_gib:
            return 0.0
        return size_gib * self.seconds(IMAGE_PULL)

    def to_json(self) -> dict[str, dict[str, object]]:
        return {
            name: {"seconds": p.seconds, "figure": p.figure, "source": p.source}
            for name, p in sorted(self.values.items())
        }


def default_model(overrides: dict[str, float] | None = None) -> ColdStartModel:
    """The catalog's cold-start components (typical, else the only published bound), then overrides."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    model = ColdStartModel()
    for name, comp in catalog().cold_start.items():
        if comp.unit not in ("s", "s/GiB"):
            continue
        for figure in ("typical", "high", "low"):
            value = getattr(comp, figure)
            if value is not None:
                model.values[name] = Phase(name, float(value), figure, comp.source)
                break
    for name, value in (overrides or {}).items():
        model.values[name] = Phase(name, float(value), "override", "user override")
    return model


def parse_overrides(data: object) -> tuple[dict[str, float], list[str]]:
    """``{component: seconds}`` from a mapping; errors for non-numeric values or unknown names."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    out: dict[str, float] = {}
    errors: list[str] = []
    if not isinstance(data, dict):
        return out, ["coldStart must be a mapping of component name to seconds"]
    known = set(catalog().cold_start)
    for name, value in data.items():
        if name not in known:
            errors.append(f"unknown cold-start component {name!r} (known: {', '.join(sorted(known))})")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            errors.append(
                f"cold-start component {name!r} must be a non-negative number of seconds, got {value!r}"
            )
            continue
        out[str(name)] = float(value)
    return out, errors
