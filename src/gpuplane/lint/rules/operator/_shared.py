"""Helpers shared by the rule modules of this package (split from ``operator.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


GROUP = "nvidia.com"


def _policies(ctx: LintContext) -> list[Manifest]:
    return [p for p in ctx.by_kind("ClusterPolicy", GROUP) if isinstance(p.data.get("spec"), dict)]
