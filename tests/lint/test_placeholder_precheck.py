"""The placeholder pre-check (one JSON encode per object, msgspec's or the stdlib's) never hides a placeholder the field walk
finds: on random nested data whose strings mix ``$``, braces, quotes and letters, either the
pre-check says "may hold one" or the walk finds none."""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.lint.placeholders import _may_hold_placeholder, _walk

text = st.text(alphabet='${}"\\:-_ aZ9\n', max_size=12)
data: st.SearchStrategy[Any] = st.recursive(
    text | st.integers() | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(data)
def test_precheck_never_hides_a_placeholder(value: Any) -> None:
    import msgspec  # the fast encoder, as the cluster loader leaves it imported

    assert sys.modules.get("msgspec") is msgspec
    found = bool(list(_walk(value, ())))
    assert _may_hold_placeholder(value) or not found
    del sys.modules["msgspec"]  # a one-file lint: the stdlib encoder
    try:
        assert _may_hold_placeholder(value) or not found
    finally:
        sys.modules["msgspec"] = msgspec


def test_precheck_examples() -> None:
    assert _may_hold_placeholder({"image": "repo/${TAG}"})
    assert _may_hold_placeholder({"spec": [{"replicas": "$REPLICAS"}]})
    assert _may_hold_placeholder({"{{ .Values.key }}": 1})
    assert not _may_hold_placeholder({"env": [{"value": "a$b"}], "n": 3})
