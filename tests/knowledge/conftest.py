"""The knowledge tests ask as ``gpuplane ask`` does: with the rule catalog installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpuplane.knowledge import rule_source
from gpuplane.rule_catalog import RULE_SOURCE


@pytest.fixture(autouse=True)
def _rule_catalog() -> Iterator[None]:
    previous = rule_source.current()
    rule_source.use(RULE_SOURCE)
    yield
    rule_source.use(previous)
