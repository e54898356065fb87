"""A JSON document written in pieces (report/json_pieces.py) is byte for byte the whole document
formatted by msgspec, on random documents walked to every depth; and why-pending's per-Status
rendering of ``nodes`` (report/why_pending_nodes.py) is byte for byte the formatted
``Explanation.nodes()`` map, names with quotes, escapes and non-ASCII, groups without nodes or
without reasons, a name met in two groups, at every depth it could be printed at."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.k8s.objects import Pod
from gpuplane.report.json_pieces import Formatted, format_value, pieces
from gpuplane.report.why_pending_nodes import NameCodes, NodeReasons
from gpuplane.scheduler.framework import Code, Status
from gpuplane.why_pending.model import Explanation

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8) | st.sampled_from(
    ('"', "\\", "\n", "\t", "é", "\u2028", "")
)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | text
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=30,
)


def whole(value: Any) -> bytes:
    return msgspec.json.format(msgspec.json.encode(value), indent=2)


class Wrapped(Formatted):
    """A value that renders itself through the generic formatter (stands for any producer)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def render(self, depth: int) -> bytes:
        return format_value(self.value, depth)

    def plain(self) -> Any:
        return self.value


@settings(max_examples=300, deadline=None)
@given(documents, st.integers(0, 5))
def test_pieces_equal_the_whole_document(doc: Any, spread: int) -> None:
    assert b"".join(pieces(doc, spread)) == whole(doc)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(text, documents, max_size=3), st.lists(documents, max_size=3), st.integers(0, 4))
def test_formatted_values_render_in_place_or_encode_plain(head: dict, items: list, spread: int) -> None:
    doc = {**head, "items": [Wrapped(v) for v in items], "last": Wrapped(head)}
    plain = {**head, "items": items, "last": head}
    assert b"".join(pieces(doc, spread)) == whole(plain)


names_st = st.lists(text | st.sampled_from(("n0", "n1", "n2")), min_size=0, max_size=5)
groups_st = st.lists(st.tuples(st.lists(text, max_size=2), names_st), max_size=4)


class FakeIndex:
    def __init__(self, names: list[str]) -> None:
        self.by_name = {n: i for i, n in enumerate(names)}
        self.num_nodes = len(names)


class FakeScheduler:
    """What NameCodes reads of a Scheduler: node names by index, and the name index."""

    def __init__(self, names: list[str]) -> None:
        self.names = np.array(names, dtype=object)
        self.index = FakeIndex(names)

    def node_names(self) -> np.ndarray:
        return self.names


@settings(max_examples=300, deadline=None)
@given(groups_st, st.integers(0, 4), st.booleans())
def test_node_reasons_equal_the_formatted_map(groups: list, depth: int, with_ids: bool) -> None:
    statuses = [
        (Status(Code.UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit"), names) for reasons, names in groups
    ]
    expl = Explanation(Pod(), "", groups=statuses)
    sched: Any = None
    if with_ids:
        every = list(dict.fromkeys(n for _, names in statuses for n in names))
        sched = FakeScheduler(every)
        position = {n: i for i, n in enumerate(every)}
        expl.node_ids = [np.array([position[n] for n in names], dtype=np.intp) for _, names in statuses]
    rendered = NodeReasons(expl, NameCodes(sched)).render(depth)
    expected = whole(expl.nodes())
    assert rendered == (expected.replace(b"\n", b"\n" + b"  " * depth) if depth else expected)
