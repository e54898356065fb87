"""Kubernetes release numbers: which minors gpuplane models, and reading ``1.MINOR[.PATCH]``.

Kept in the model layer, apart from the scheduler's wording table
(:mod:`gpuplane.scheduler.versions`), because lint's schema rule also needs the newest modelled
minor and the parser: importing the wording table for them would build its dataclass on every
lint start-up, and a lint rule must not reach up into the scheduler.

The range is the one the scheduler's wording table covers (its docstring says how each release
was checked): 1.28 to 1.36; newer versions are worded as 1.36.
"""

from __future__ import annotations

import re

OLDEST_MINOR = 28
NEWEST_MINOR = 36

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(version: str | None) -> tuple[int, int | None] | None:
    """``"1.31"`` -> (31, None); ``"v1.34.2-eks-1234"`` -> (34, 2); anything else -> None."""
    if not version:
        return None
    match = _VERSION_RE.match(version.strip())
    if match is None or match.group(1) != "1":
        return None
    patch = match.group(3)
    return int(match.group(2)), (int(patch) if patch is not None else None)


def parse_minor(version: str | None) -> int | None:
    """``"1.31"``, ``"v1.31.4"``, ``"v1.30.2-eks-1234"`` -> 31; anything else -> None."""
    parsed = parse_version(version)
    return parsed[0] if parsed is not None else None
