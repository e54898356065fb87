"""``LintContext.once``: a walk several rules share is made once per run, never across runs."""

from __future__ import annotations

import pytest

from gpuplane.lint.context import LintContext


def test_once_builds_on_first_ask_and_shares_the_value() -> None:
    ctx = LintContext([], [])
    calls: list[int] = []

    def build() -> list[int]:
        calls.append(1)
        return [len(calls)]

    first = ctx.once("walk", build)
    assert ctx.once("walk", build) is first
    assert calls == [1]
    assert ctx.once("other", build) == [2]  # another key is another value
    assert LintContext([], []).once("walk", build) == [3]  # another run builds its own


def test_a_failed_build_is_not_remembered() -> None:
    ctx = LintContext([], [])

    def broken() -> int:
        raise ValueError("rule bug")

    with pytest.raises(ValueError):
        ctx.once("walk", broken)
    assert ctx.once("walk", lambda: 7) == 7
