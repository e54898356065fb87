"""``inventory`` as a service: the cluster read once, its GPU capacity counted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, load_cluster
from gpuplane.app.outcome import Messages, Surface

if TYPE_CHECKING:
    from gpuplane.diagnose.inventory import Inventory


@dataclass(frozen=True, slots=True)
class InventoryRequest:
    cluster: str
    context: str | None = None
    kubeconfig: str | None = None
    progress: bool = False  # a progress line on stderr while a big snapshot is read (CLI on a tty)


@dataclass(slots=True)
class InventoryOutcome:
    inventory: Inventory
    bad_input: bool  # the cluster source had errors: the CLI exits 2 after its report


def run(
    request: InventoryRequest, messages: Messages, surface: Surface, *, cache: ClusterCache | None = None
) -> InventoryOutcome:
    from gpuplane.diagnose.inventory import build_inventory  # deferred for start-up time

    before = len(messages.errors)
    state = load_cluster(
        request.cluster,
        request.context,
        request.kubeconfig,
        messages,
        surface,
        progress=request.progress,
        cache=cache,
    )
    return InventoryOutcome(build_inventory(state), len(messages.errors) > before)
