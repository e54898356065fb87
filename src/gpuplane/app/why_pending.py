"""``why-pending`` as a service: which pods, worded for which kube-scheduler version.

Checks the options, reads the cluster (its version warnings only when no version is forced:
``--kubernetes-version`` makes them moot), builds the scheduler model and explains the Pending
pods; the front ends render the explanations (text, or the JSON of
:func:`gpuplane.report.why_pending_text.to_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuplane.app.inputs import ClusterCache, read_cluster
from gpuplane.app.outcome import AppError, Messages, Surface

if TYPE_CHECKING:
    from gpuplane.scheduler.scheduler import Scheduler
    from gpuplane.why_pending.model import Explanation


@dataclass(frozen=True, slots=True)
class WhyPendingRequest:
    """``cluster`` is the source to read (``live`` included); ``label`` how the caller named it
    (None: the state's own source) in "pod ... not found in <label>"; ``namespace`` keeps only
    that namespace's explanations."""

    cluster: str
    context: str | None = None
    kubeconfig: str | None = None
    label: str | None = None
    pod: str | None = None
    kubernetes_version: str | None = None
    namespace: str | None = None
    progress: bool = False


@dataclass(slots=True)
class WhyPendingOutcome:
    explanations: list[Explanation]
    scheduler: Scheduler
    bad_input: bool  # the cluster source had errors: the CLI exits 2 after its report

    def to_json(self, *, streamed: bool = False) -> dict[str, Any]:
        """The JSON document; ``streamed``: for ``emit_json(..., spread=3)`` (see ``to_json``)."""
        from gpuplane.report.why_pending_text import to_json  # deferred for start-up time

        return to_json(self.explanations, self.scheduler, streamed=streamed)


def run(
    request: WhyPendingRequest,
    messages: Messages,
    surface: Surface,
    *,
    cache: ClusterCache | None = None,
) -> WhyPendingOutcome:
    """Explain the Pending pods (or the one ``request.pod``); an unusable option or cluster, and
    a pod that is not Pending, are an :class:`AppError`."""
    from gpuplane.scheduler.scheduler import Scheduler  # deferred for start-up time
    from gpuplane.why_pending.explain import pending

    version, pod = request.kubernetes_version, request.pod
    check(pod, version, surface)
    state, bad_input = read_cluster(request, messages, surface, cache=cache, warnings=version is None)
    scheduler = Scheduler(state, version=version)
    clamped = clamped_version_note(version or state.kubernetes_version())
    if clamped:
        messages.note(clamped)
    if pod is not None and not any(p.key == pod for p in state.pending_pods):
        known = any(p.key == pod for p in state.pods)
        where = request.label or state.source or "the cluster"
        raise AppError(f"pod {pod} is not Pending in {where}" if known else f"pod {pod} not found in {where}")
    explanations = pending(scheduler, pod)
    if request.namespace is not None:
        keep = request.namespace
        explanations = [e for e in explanations if (e.pod.metadata.namespace or "default") == keep]
    return WhyPendingOutcome(explanations, scheduler, bad_input)


def check(pod: str | None, kubernetes_version: str | None, surface: Surface) -> None:
    """The options, before anything is read: a version like 1.31, a pod as NAMESPACE/NAME."""
    from gpuplane.scheduler.versions import parse_minor  # deferred for start-up time

    if kubernetes_version is not None and parse_minor(kubernetes_version) is None:
        raise AppError(
            f"{surface.option('kubernetes-version')} {kubernetes_version!r} is not a Kubernetes version like 1.31"
        )
    if pod is not None and pod.count("/") != 1:
        raise AppError(f"{surface.option('pod')} {pod!r}: expected NAMESPACE/NAME")


def clamped_version_note(requested: str | None) -> str | None:
    """``note: ...`` when the cluster's minor is outside the wordings gpuplane knows."""
    # deferred for start-up time
    from gpuplane.scheduler.versions import NEWEST_MINOR, OLDEST_MINOR, parse_minor

    minor = parse_minor(requested) if requested else None
    if minor is None or OLDEST_MINOR <= minor <= NEWEST_MINOR:
        return None
    used = NEWEST_MINOR if minor > NEWEST_MINOR else OLDEST_MINOR
    why = "the newest" if minor > NEWEST_MINOR else "the oldest"
    return f"note: kube-scheduler 1.{minor} wording is not modelled; using 1.{used} ({why} gpuplane knows)"
