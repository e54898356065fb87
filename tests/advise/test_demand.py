"""The ``KEY=COUNT[,KEY=COUNT...]`` reader both ``--demand`` options use (advise/demand.py)."""

from __future__ import annotations

import pytest

from gpuplane.advise.demand import DemandSyntaxError, demand_items, whole


def test_items_split_at_commas_and_the_last_equals_sign() -> None:
    assert list(demand_items([" a=1,, b = 2 ", "c=x=3", "d="], 100)) == [
        ("a=1", "a", 1),
        ("b = 2", "b", 2),
        ("c=x=3", "c=x", 3),  # a key may hold '='
        ("d=", "d", None),  # no count: the caller says what it expected
    ]


def test_an_item_without_equals_sign_is_a_syntax_error_naming_it() -> None:
    with pytest.raises(DemandSyntaxError) as info:
        list(demand_items(["a=1, L4 "], 100))
    assert info.value.item == "L4"


def test_whole_numbers_are_bounded_without_converting_long_digit_strings() -> None:
    assert [whole(t, 100) for t in ("0", " 42 ", "100", "101", "-1", "1.5", "x", "")] == [
        0,
        42,
        100,
        101,
        None,
        None,
        None,
        None,
    ]
    assert whole("1" + "0" * 5000, 100) == 101  # longer than the limit: limit + 1, never int()
