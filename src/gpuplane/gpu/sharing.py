"""Which GPU units of a node are shared replicas (time-slicing or MPS), and how to count them.

With sharing configured, the NVIDIA device plugin advertises each physical device ``replicas``
times: under ``nvidia.com/gpu`` itself (the default, ``renameByDefault: false``) or renamed to
``nvidia.com/gpu.shared``. kube-scheduler counts those replicas like any other unit, so a
time-sliced L4 with 4 replicas has "4 free" where a whole-GPU node would have 4 GPUs. Texts that
add free units across nodes (why-pending's fragmentation and shortage causes, diagnose's
``gpu-fragmentation``, the inventory summary) keep replicas apart from whole GPUs with
:class:`UnitCount`, and name the strategy.

What signals sharing, per resource (GPU Feature Discovery, k8s-device-plugin
``internal/lm/resource.go``): the ``<resource>.replicas`` label above 1, a
``<resource>.sharing-strategy`` label of ``time-slicing`` or ``mps``, the ``-SHARED`` suffix of
``<resource>.product``, or the resource's own ``.shared`` name (``rename``/``renameByDefault``,
whose labels stay under the original name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpuplane.gpu.labels import (
    MIG_STRATEGY,
    PRODUCT_SUFFIX,
    REPLICAS_SUFFIX,
    SHARED_PRODUCT_SUFFIX,
    SHARING_STRATEGIES,
    SHARING_STRATEGY_SUFFIX,
)
from gpuplane.gpu.resources import SHARED_SUFFIX, classify

TIME_SLICING = "time-slicing"
# How a text names the replicas of each strategy.
REPLICA_ADJECTIVE = {"time-slicing": "time-sliced", "mps": "MPS"}


@dataclass(frozen=True, slots=True)
class Replication:
    """A resource a node advertises as shared replicas."""

    resource: str  # the advertised name (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-1g.5gb)
    strategy: str  # "time-slicing" | "mps"
    replicas: int | None  # replicas per physical device; None when the labels do not say
    renamed: bool  # advertised under a ``.shared`` name


def labelled_resource(resource: str) -> str:
    """The resource name GFD's labels of ``resource`` are keyed by (the name before a rename)."""
    info = classify(resource)
    if info is not None and info.kind == "shared" and resource.endswith(SHARED_SUFFIX):
        return resource.removesuffix(SHARED_SUFFIX)
    return resource


def replication(labels: Mapping[str, str], resource: str) -> Replication | None:
    """How ``resource`` is shared on a node with ``labels``; ``None`` when its units are whole
    devices (GPUs or MIG devices)."""
    info = classify(resource)
    if info is None or info.kind not in ("gpu", "mig", "shared"):
        return None
    base = labelled_resource(resource)
    renamed = base != resource
    try:
        replicas: int | None = int(labels.get(base + REPLICAS_SUFFIX, ""))
    except ValueError:
        replicas = None
    strategy = labels.get(base + SHARING_STRATEGY_SUFFIX, "")
    suffixed = labels.get(base + PRODUCT_SUFFIX, "").endswith(SHARED_PRODUCT_SUFFIX)
    shared = renamed or (replicas is not None and replicas > 1) or strategy in SHARING_STRATEGIES or suffixed
    if not shared:
        return None
    return Replication(
        resource,
        strategy if strategy in SHARING_STRATEGIES else TIME_SLICING,
        replicas if replicas is not None and replicas > 1 else None,
        renamed,
    )


def _count(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


@dataclass(slots=True)
class UnitCount:
    """Units added across nodes, whole devices apart from shared replicas."""

    whole: int = 0
    replicas: dict[str, int] = field(default_factory=dict)  # strategy -> replicas
    shared_nodes: set[str] = field(default_factory=set)  # nodes the replicas are on

    def add(self, node: str, amount: int, shared: Replication | None) -> None:
        """Count ``amount`` units of ``node`` (nothing for ``amount <= 0``)."""
        if amount <= 0:
            return
        if shared is None:
            self.whole += amount
            return
        self.replicas[shared.strategy] = self.replicas.get(shared.strategy, 0) + amount
        self.shared_nodes.add(node)

    @property
    def total(self) -> int:
        return self.whole + sum(self.replicas.values())

    def replica_text(self) -> str:
        """``+8 time-sliced replicas on 2 shared nodes`` (empty without replicas)."""
        if not self.replicas:
            return ""
        kinds = ", ".join(
            f"+{_count(n, REPLICA_ADJECTIVE.get(strategy, strategy) + ' replica')}"
            for strategy, n in sorted(self.replicas.items())
        )
        return f"{kinds} on {_count(len(self.shared_nodes), 'shared node')}"

    def text(self, unit: str, *, free: bool = False) -> str:
        """``unit`` is the plural word (``GPUs``). ``3 free GPUs +8 time-sliced replicas on 2 shared nodes``; ``14`` (``14 free``) when no
        replica is counted, as the texts said before sharing was told apart."""
        adjective = "free " if free else ""
        if not self.replicas:
            return f"{self.whole} free" if free else str(self.whole)
        if self.whole == 1:
            unit = unit.replace("GPUs", "GPU").replace("devices", "device")
        return f"{self.whole} {adjective}{unit} {self.replica_text()}"


def unit_word(resource: str, node_labels: Iterable[Mapping[str, str]] = ()) -> str:
    """What one whole unit of ``resource`` is called in a count: ``GPUs``, ``MIG devices``.
    Under the MIG ``single`` strategy a node advertises its MIG devices as ``nvidia.com/gpu``,
    so a count over ``node_labels`` that include such a node says ``GPUs or MIG devices``."""
    info = classify(labelled_resource(resource))
    if info is not None and info.kind == "mig":
        return "MIG devices"
    if info is None or info.kind != "gpu":
        return "devices"
    if resource == "nvidia.com/gpu" and any(labels.get(MIG_STRATEGY) == "single" for labels in node_labels):
        return "GPUs or MIG devices"
    return "GPUs"
