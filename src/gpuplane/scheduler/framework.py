"""The skeleton of kube-scheduler's framework: Status codes, cycle state, NodeInfo, FitError.

Mirrors kubernetes/kubernetes ``staging/src/k8s.io/kube-scheduler/framework/interface.go``
(Code, Status), ``pkg/scheduler/framework/types.go`` (NodeInfo, FitError, Diagnosis) and
``pkg/scheduler/framework/runtime/framework.go`` (RunPreFilterPlugins, RunFilterPlugins), so a
reader can hold this beside the Go source. The per-node loop is replaced by a per-*group*
loop (nodes that cannot differ for a plugin share one evaluation) to stay fast on 5,000-node
clusters; the results are the ones upstream's per-node loop would produce.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypeVar

from gpuplane.k8s.objects import Node, Pod

# pkg/scheduler/framework/types.go
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
# pkg/scheduler/scheduler.go ErrNoNodesAvailable
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class Code(IntEnum):
    """Status codes, same values as upstream's ``Code`` iota."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict: a code, its reasons (each counted in the FitError histogram), the plugin."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        """``Status.Message()``: the reasons joined with ``", "``."""
        return ", ".join(self.reasons)

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code in (U, UU)


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(U, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(UU, reasons, plugin)


StateT = TypeVar("StateT")


class CycleState:
    """Per-pod state a plugin's PreFilter computes and its Filter / PostFilter read.

    Upstream ``CycleState`` (pkg/scheduler/framework/cycle_state.go) maps a plugin's state key
    to a ``StateData`` value; here the key is the value's own class (each plugin defines one),
    so a read is typed: ``state.read(SpreadState)`` is a ``SpreadState`` or None. ``None`` is
    upstream's ``ErrNotFound`` (DynamicResources' PostFilter reports it as ``not found``).
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[type, object] = {}

    def write(self, data: object) -> None:
        self._data[type(data)] = data

    def read(self, kind: type[StateT]) -> StateT | None:
        found = self._data.get(kind)
        return found if isinstance(found, kind) else None

    def require(self, kind: type[StateT]) -> StateT:
        """The state a Filter needs from its own PreFilter (a missing one is a bug: KeyError)."""
        found = self.read(kind)
        if found is None:
            raise KeyError(kind.__name__)
        return found


@dataclass(slots=True)
class NodeInfo:
    """One node with what is already on it, computed once per cluster (upstream NodeInfo).

    ``requested`` and ``allocatable`` use NodeResourcesFit units: cpu in millicores, every
    other resource in plain units (bytes, devices).
    """

    index: int
    name: str
    node: Node
    pods: list[Pod]
    allocatable: dict[str, int]
    requested: dict[str, int]
    used_ports: set[tuple[str, str, int]] = field(default_factory=set)

    @property
    def labels(self) -> dict[str, str]:
        return self.node.metadata.labels


@dataclass(slots=True)
class FitError:
    """Why no node fits: upstream ``FitError`` with its ``Diagnosis``.

    ``groups`` holds each distinct node Status with the indexes of the nodes that got it
    (nodes absent from every group passed the filters, which cannot happen in a FitError
    except for nodes cut by a PreFilterResult: those get ``absent_status``).
    """

    num_all_nodes: int
    groups: list[tuple[Status, list[int]]]
    prefilter_msg: str = ""
    absent_status: Status | None = None
    absent_count: int = 0
    postfilter_msg: str = ""
    # "." before v1.30, whose FitError appended the PostFilter text with the `" %v."` separator
    # (see versions.Wording.postfilter_double_period)
    postfilter_suffix: str = ""

    def histogram(self) -> Counter[str]:
        hist: Counter[str] = Counter()
        for status, nodes in self.groups:
            count = len(nodes)
            for reason in status.reasons:
                hist[reason] += count
        if self.absent_status is not None and self.absent_count > 0:
            for reason in self.absent_status.reasons:
                hist[reason] += self.absent_count
        return hist

    def filter_message(self) -> str:
        """The ``0/N nodes are available: ...`` part, before any PostFilter text."""
        return build_fit_message(self.num_all_nodes, self.prefilter_msg, self.histogram())

    def message(self) -> str:
        """``FitError.Error()`` (pkg/scheduler/framework/types.go)."""
        text = self.filter_message()
        if self.postfilter_msg:
            text += " " + self.postfilter_msg + self.postfilter_suffix
        return text


def build_fit_message(num_all_nodes: int, prefilter_msg: str, hist: Counter[str]) -> str:
    """``0/N nodes are available:`` + the PreFilter message or the sorted reason histogram.

    Sorting is Go's ``sort.Strings`` over ``"<count> <reason>"`` (byte order, so ``10 ...``
    sorts before ``2 ...``); Python's ``sorted`` on str compares code points, which is
    the same order for these ASCII texts.
    """
    text = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    if prefilter_msg:
        return f"{text} {prefilter_msg}."
    items = sorted(f"{count} {reason}" for reason, count in hist.items())
    if items:
        text += " " + ", ".join(items) + "."
    return text


@dataclass(slots=True)
class ScheduleResult:
    """A successful cycle: the chosen node and how many nodes were feasible."""

    node: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: dict[str, int] = field(default_factory=dict)


def join_plugins(names: Iterable[str]) -> str:
    """A Go ``%v`` of a string slice: ``[A B]``."""
    return "[" + " ".join(names) + "]"
