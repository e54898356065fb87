"""``inventory`` as a service: the cluster read once, its GPU capacity counted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, read_cluster
from gpuplane.app.outcome import Messages, Served, Surface

if TYPE_CHECKING:
    from gpuplane.diagnose.inventory import Inventory


@dataclass(frozen=True, slots=True)
class InventoryRequest:
    cluster: str
    context: str | None = None
    kubeconfig: str | None = None
    progress: bool = False  # a progress line on stderr while a big snapshot is read (CLI on a tty)


def run(
    request: InventoryRequest, messages: Messages, surface: Surface, *, cache: ClusterCache | None = None
) -> Served[Inventory]:
    from gpuplane.diagnose.inventory import build_inventory  # deferred for start-up time

    state, bad_input = read_cluster(request, messages, surface, cache=cache)
    return Served(build_inventory(state), bad_input)
