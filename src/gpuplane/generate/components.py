"""The component versions ``generate`` pins, read from ``data/components.yaml``.

Versions change on their own schedule (a GPU Operator or Kueue release), so they live in one
data file with the citation of where each was read, not as literals spread over the renderers.
A renderer asks for a component by name; an unknown name is a programming error (KeyError).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import msgspec
import yaml

DATA_FILE = Path(__file__).resolve().parent / "data" / "components.yaml"


class Component(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One pinned upstream component (Helm chart, release manifest or image)."""

    version: str
    source: str
    ref: str | None = None
    chart: str | None = None  # Helm charts: chart name and repository (render/base.py helm_release)
    repo: str | None = None


class _File(msgspec.Struct, forbid_unknown_fields=True):
    checked: str
    components: dict[str, Component]


@lru_cache(maxsize=1)
def _data_file() -> _File:
    """The data file read and checked once per process (it ships with the package)."""
    with DATA_FILE.open("rb") as fh:
        raw = yaml.load(fh, Loader=yaml.CSafeLoader)
    return msgspec.convert(raw, _File)


def components() -> dict[str, Component]:
    """Every pinned component by name."""
    return _data_file().components


def checked() -> str:
    """The date every pinned version was last checked against its upstream releases."""
    return _data_file().checked


def component(name: str) -> Component:
    """The pinned component ``name`` (a key of ``data/components.yaml``)."""
    return components()[name]
