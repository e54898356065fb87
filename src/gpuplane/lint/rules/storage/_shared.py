"""Helpers shared by the rule modules of this package (split from ``storage.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.context import pod_spec
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet


_TOKEN = LazyPattern(r"[a-z0-9]+")


def _tokens(*texts: Any) -> set[str]:
    out: set[str] = set()
    for text in texts:
        if isinstance(text, str):
            out.update(_TOKEN.findall(text.lower()))
    return out


def _volumes(ps: PodSet) -> Iterator[tuple[int, dict[str, Any]]]:
    volumes = pod_spec(ps).get("volumes")
    if isinstance(volumes, list):
        for i, vol in enumerate(volumes):
            if isinstance(vol, dict):
                yield i, vol


def _spec_path(ps: PodSet) -> FieldPath:
    return (*tuple(ps.template_path), "spec")


def _mounts(container: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list):
        for j, m in enumerate(mounts):
            if isinstance(m, dict):
                yield j, m
