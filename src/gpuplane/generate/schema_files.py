"""Where the strict Kubernetes JSON schemas bundled by kubernetes-validate live on disk.

Found without importing the package: importing it pulls in jsonschema (~60 ms), a third of a
one-file lint's start-up, and only its data files are read. Plain ``os.path`` strings, not
``pathlib``: ``manifest-unknown-field`` runs in every one-file lint, and pathlib (with the
``urllib.parse`` and ``ipaddress`` it imports) is a few milliseconds of that start-up.
"""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=1)
def schema_root() -> str:
    """The folder of kubernetes-validate's ``kubernetes-json-schema`` data (under ``os.devnull``,
    where nothing is found, when the package is not installed)."""
    from importlib.util import find_spec  # for start-up time: only schema validation needs it

    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return os.path.join(os.devnull, "kubernetes-json-schema")
    return os.path.join(next(iter(spec.submodule_search_locations)), "kubernetes-json-schema")


def schema_dir(version: str) -> str:
    """The strict schemas of Kubernetes ``version`` (``"1.36"``)."""
    return os.path.join(schema_root(), f"v{version}.0-local-strict")
