"""Every GPU-instance mix one GPU of a model can carry at the same time.

The planner packs demand into GPUs whose contents are *configurations*: a count per MIG
profile. Which counts are valid is decided by :func:`gpuplane.gpu.mig.layout_fits` (profile
maxima, SM slices, one media-extension instance, non-overlapping placements from the
catalog's ``nvidia-smi mig -lgipp`` data: reference/nvidia-gpu-stack.md §4.2). The set is
small (a few hundred mixes on an 8-slice GPU) and downward closed: dropping an instance from
a valid mix leaves a valid mix. So only the *maximal* mixes matter for covering a demand,
and they are computed once per model and cached.
"""

from __future__ import annotations

from functools import lru_cache

from gpuplane.gpu.catalog import GpuModel
from gpuplane.gpu.mig import layout_fits


def _is_media(name: str) -> bool:
    # Same rule as layout_fits: "+me" and "+me.all" need the GPU's single OFA engine.
    return "+me" in name


@lru_cache(maxsize=64)
def valid_configs(model: GpuModel) -> tuple[tuple[int, ...], ...]:
    """All non-empty valid mixes, as count tuples aligned with ``model.mig_profiles``.

    Depth-first over profiles with the cheap necessary conditions (instance maxima, memory
    and SM slice totals, at most one media instance) pruning the tree; every survivor is
    then confirmed by :func:`layout_fits`, the placement oracle.
    """
    profiles = model.mig_profiles
    if not model.mig_capable:
        return ()
    out: list[tuple[int, ...]] = []
    counts = [0] * len(profiles)

    def walk(i: int, memory: int, compute: int, media: int) -> None:
        if i == len(profiles):
            if memory:
                mix = {p.name: c for p, c in zip(profiles, counts) if c}
                if layout_fits(model, mix)[0]:
                    out.append(tuple(counts))
            return
        p = profiles[i]
        limit = p.max_instances
        if _is_media(p.name):
            limit = min(limit, 1 - media)
        for c in range(limit + 1):
            mem = memory + c * p.size
            cmp = compute + c * p.compute_slices
            if mem > model.memory_slices or cmp > model.total_compute_slices:
                break
            counts[i] = c
            walk(i + 1, mem, cmp, media + (c if _is_media(p.name) else 0))
        counts[i] = 0

    walk(0, 0, 0, 0)
    return tuple(out)


def maximal(vectors: set[tuple[int, ...]] | list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The vectors not dominated component-wise by another one (largest first).

    Sorting by total descending means a vector can only be dominated by one already kept.
    """
    ordered = sorted(set(vectors), key=lambda v: (-sum(v), v), reverse=False)
    kept: list[tuple[int, ...]] = []
    for v in ordered:
        if not any(v) or any(all(a <= b for a, b in zip(v, k)) for k in kept):
            continue
        kept.append(v)
    return kept


def projected_patterns(model: GpuModel, profile_names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Maximal mixes of ``model`` restricted to ``profile_names`` (counts in that order).

    Profiles the model does not have count 0. Restricting first and then keeping the maximal
    vectors shrinks the pattern set to what the demand can use (often under ten).
    """
    return list(_projected(model, profile_names))


@lru_cache(maxsize=256)
def _projected(model: GpuModel, profile_names: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    index = {p.name: i for i, p in enumerate(model.mig_profiles)}
    cols = [index.get(n) for n in profile_names]
    projected = {tuple(cfg[c] if c is not None else 0 for c in cols) for cfg in valid_configs(model)}
    return tuple(maximal(projected))
