"""Helpers shared by the rule modules of this package (split from ``distributed.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplane.lint.rules._common import as_list
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    pass


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _command_line(container: dict[str, Any]) -> str:
    """``command`` and ``args`` joined into one line (a field that is not a list counts as unset:
    the API server rejects it, rule pod-template-invalid reports it)."""
    return " ".join(str(a) for a in (*as_list(container.get("command")), *as_list(container.get("args"))))
