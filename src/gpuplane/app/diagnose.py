"""``diagnose`` as a service: the cluster rules, lint on the cluster's workloads, the inventory.

A rule that fails on this cluster is an ``error`` message (the other rules ran); a scheduler
model that fails is a note (Pending pods are then explained from their condition only). Only
the cluster source's own errors make the input unusable (``bad_input``: CLI exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, read_cluster
from gpuplane.app.outcome import Messages, Served, Surface

if TYPE_CHECKING:
    from gpuplane.diagnose.engine import DiagnoseResult


@dataclass(frozen=True, slots=True)
class DiagnoseRequest:
    """``namespace`` / ``min_severity`` select findings (the inventory stays whole); None for
    both keeps every finding as the engine returned it. ``report_data``: also the aggregations
    the HTML report charts."""

    cluster: str
    context: str | None = None
    kubeconfig: str | None = None
    progress: bool = False
    namespace: str | None = None
    min_severity: str | None = None
    report_data: bool = False


def run(
    request: DiagnoseRequest, messages: Messages, surface: Surface, *, cache: ClusterCache | None = None
) -> Served[DiagnoseResult]:
    from gpuplane.diagnose.engine import run_diagnose  # deferred for start-up time

    state, bad_input = read_cluster(request, messages, surface, cache=cache)
    result = run_diagnose(state, report_data=request.report_data)
    if request.namespace is not None or request.min_severity is not None:
        result = result.only(namespace=request.namespace, min_severity=request.min_severity)
    for failure in result.failures:
        messages.error(
            f"rule {failure.rule} failed on this cluster ({failure.message}); other rules ran normally"
        )
    if result.model_error:
        messages.note(
            f"the kube-scheduler model failed on this cluster ({result.model_error}); "
            "Pending pods are explained from their PodScheduled condition only"
        )
    return Served(result, bad_input)
