"""why-pending's JSON ``nodes`` (``{node: [reasons]}`` for every node that failed), rendered per Status.

Why: spec/cli.md has every failing node listed with its reasons, for every Pending pod: on 5,000
nodes that is most of a 1 GB document, and nearly all of it repeats a few reason lists. Building
the map (one entry per node per pod) and encoding it node by node cost more than the explaining
of some pods. The nodes of one Status share its reasons, so each group is written as one join of
its nodes' names (each encoded once per run) around one formatted reasons text, byte for byte what
the formatter makes of :meth:`Explanation.nodes` (``tests/test_json_pieces.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplane.report.json_pieces import Formatted, format_value

if TYPE_CHECKING:
    from gpuplane.scheduler.scheduler import Scheduler
    from gpuplane.why_pending.model import Explanation


class NameCodes:
    """Node index -> its name as a JSON string (bytes), encoded once per run; and the last
    ``nodes`` map rendered, with the verdict groups it was rendered from: scheduling-equivalent
    Pending pods share one evaluation (``why_pending.evaluations``), so a replica next to the
    pod rendered before it gets the same bytes without joining them again (one entry only, so
    the document is never held twice)."""

    __slots__ = ("_codes", "_sched", "last")

    def __init__(self, sched: Scheduler | None) -> None:
        self._sched = sched
        self._codes: np.ndarray | None = None
        self.last: tuple[Any, Any, int, bytes] | None = None  # groups, node ids, depth, bytes

    def names_unique(self) -> bool:
        """Every node of the index has a name of its own (a dump may repeat one)."""
        index = self._sched.index if self._sched is not None else None
        return index is not None and len(index.by_name) == index.num_nodes

    def of(self, expl: Explanation) -> list[list[bytes]] | None:
        """Per group of ``expl``, its nodes' encoded names; None when the explanation holds no
        node indexes to read them by."""
        import msgspec  # deferred for start-up time

        if self._sched is None or len(expl.node_ids) != len(expl.groups):
            return None
        names = self._sched.node_names()
        if self._codes is None or len(self._codes) != len(names):
            encode = msgspec.json.encode
            self._codes = np.array([encode(name) for name in names.tolist()], dtype=object)
        codes = self._codes
        return [codes[ids].tolist() for ids in expl.node_ids]


class NodeReasons(Formatted):
    """``Explanation.nodes()`` of one explanation, rendered one group at a time."""

    __slots__ = ("_codes", "_expl")

    def __init__(self, expl: Explanation, codes: NameCodes) -> None:
        self._expl = expl
        self._codes = codes

    def plain(self) -> Any:
        return self._expl.nodes()

    def render(self, depth: int) -> bytes:
        expl = self._expl
        last = self._codes.last
        if last is not None and last[0] is expl.groups and last[1] is expl.node_ids and last[2] == depth:
            return last[3]
        out = self._render(depth)
        self._codes.last = (expl.groups, expl.node_ids, depth, out)
        return out

    def _render(self, depth: int) -> bytes:
        import msgspec  # deferred for start-up time

        expl = self._expl
        if not _distinct(expl, self._codes):
            # a name met twice keeps its first place and its last reasons: the map says how
            return format_value(expl.nodes(), depth)
        names = self._codes.of(expl)
        if names is None:
            encode = msgspec.json.encode
            names = [[encode(name) for name in group] for _, group in expl.groups]
        inner = b"  " * (depth + 1)
        sep = b",\n" + inner
        blocks = []
        for (status, _), group in zip(expl.groups, names, strict=True):
            if group:
                after = b": " + format_value(list(status.reasons), depth + 1)
                blocks.append((after + sep).join(group) + after)
        if not blocks:
            return b"{}"
        return b"{\n" + inner + sep.join(blocks) + b"\n" + b"  " * depth + b"}"


def _distinct(expl: Explanation, codes: NameCodes) -> bool:
    """No node name is in two groups (always so for the scheduler's verdicts: a node fails once)."""
    if codes.names_unique() and len(expl.node_ids) == len(expl.groups):
        if not expl.node_ids:
            return True
        ids = np.concatenate(expl.node_ids)
        return not len(ids) or int(np.bincount(ids).max()) <= 1
    total = sum(len(group) for _, group in expl.groups)
    return len({name for _, group in expl.groups for name in group}) == total
