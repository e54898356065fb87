"""``simulate`` as a service: the cluster and the workloads read, the simulation run.

Messages come in the order the CLI has always printed them: the cluster's errors, skipped
files, the manifests' load errors, the run's input problems, the cluster's version warnings,
then the run's notes. Manifests that give nothing but errors are an
:class:`~gpuplane.app.outcome.AppError`: for a caller that cannot show the errors as they come
(MCP) before the cluster is read, with the first error in the line; for the CLI after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.inputs import INLINE_NAME, ClusterCache, nothing_usable, read_cluster
from gpuplane.app.outcome import AppError, Messages, Surface

if TYPE_CHECKING:
    from gpuplane.k8s.manifest import Manifest
    from gpuplane.scheduler.simulate.run import SimulateRun


@dataclass(frozen=True, slots=True)
class SimulateRequest:
    """``autoscaler`` and ``scenario`` as the options take them (a mode word or a file)."""

    cluster: str
    context: str | None = None
    kubeconfig: str | None = None
    paths: tuple[str, ...] = ()
    inline: str | None = None
    scheduler: str = "default"
    autoscaler: str | None = None
    scenario: str | None = None
    kubernetes_version: str | None = None
    # -n: the namespace the workloads are submitted to, as ``kubectl apply -n`` (k8s/scope.py)
    namespace: str | None = None
    progress: bool = False


@dataclass(slots=True)
class SimulateOutcome:
    run: SimulateRun
    bad_input: bool  # an error in the cluster, the manifests or the run's inputs: CLI exit 2

    def reaches(self, fail_on: str) -> bool:
        """``--fail-on``: ``deadlock`` when a distributed job is partly placed; ``pending`` when any
        pod stays Pending (a deadlock leaves pods Pending, so it counts too)."""
        if fail_on == "never":
            return False
        if self.run.document.get("deadlock"):
            return True
        return fail_on == "pending" and bool(self.run.document.get("pending"))


def run(
    request: SimulateRequest, messages: Messages, surface: Surface, *, cache: ClusterCache | None = None
) -> SimulateOutcome:
    # deferred for start-up time
    from gpuplane.scheduler.simulate.run import SimulateInputError, run_simulation
    from gpuplane.sources.loader import LoadResult, load_bytes, load_paths

    loaded = LoadResult()
    if request.inline is not None and request.inline.strip():
        loaded.extend(load_bytes(request.inline.encode("utf-8"), INLINE_NAME))
    if request.paths:
        loaded.extend(load_paths(list(request.paths)))
    unusable = bool(loaded.errors) and not loaded.objects
    if unusable and not surface.streams:
        raise AppError(nothing_usable([str(e) for e in loaded.errors]))
    before = len(messages.errors)
    # version warnings come after the run's own messages (below)
    state, _ = read_cluster(request, messages, surface, cache=cache, warnings=False)
    for note in loaded.skipped:
        messages.note(f"skipped {note}")
    for error in loaded.errors:
        messages.error(str(error))
    if request.namespace is not None:
        loaded.objects = _in_namespace(loaded.objects, request.namespace, messages)
    if unusable:  # nothing to submit: no empty simulation (some objects read: simulate them)
        raise AppError(f"nothing usable in {', '.join(request.paths)}")
    try:
        simulation = run_simulation(
            state,
            list(loaded.objects),
            scheduler=request.scheduler,
            autoscaler=request.autoscaler,
            scenario=request.scenario,
            kubernetes_version=request.kubernetes_version,
        )
    except SimulateInputError as exc:
        raise AppError(str(exc)) from None
    for problem in simulation.problems:
        messages.error(problem)
    for warning in state.version_warnings():
        messages.warning(warning)
    for note in simulation.notes:
        messages.note(f"note: {note}")
    return SimulateOutcome(simulation, len(messages.errors) > before)


def _in_namespace(objects: list[Manifest], namespace: str, messages: Messages) -> list[Manifest]:
    """The workloads as ``kubectl apply -n namespace`` submits them: a namespaced object without
    a namespace gets it; one naming another namespace is refused with kubectl's error (and left
    out of the run, exit 2) (k8s/scope.py)."""
    from gpuplane.k8s.scope import apply_namespace  # deferred for start-up time

    kept: list[Manifest] = []
    for obj in objects:
        problem = apply_namespace(obj, namespace)
        if problem is None:
            kept.append(obj)
            continue
        where = f"{obj.path}:{obj.line}: " if obj.path else ""
        messages.error(f"{where}{obj.kind} {obj.name}: {problem}")
    return kept
