"""The rule index: every rule's metadata, and what its module reads, without importing it.

``gpuplane rules`` and ``explain`` need only metadata and docs, and ``gpuplane lint`` of one
small file needs only the few rule modules that file can trigger; importing all ~50 rule
modules was a third of a one-file lint (issue 14 item 4). So the first run that loads a set of
rule packages writes their index to the cache folder (:func:`gpuplane.cache.cache_dir`), and
later runs read it instead of importing. The index holds a CRC-32 of every source file it was
built from (the packages' modules and the files that decide what a module reads); when any
differs, or a file was added or removed, it is stale and the packages are imported (and the
index rewritten): a stale or missing index costs time, never a wrong answer.
"""

from __future__ import annotations

import json
import os
import zlib
from functools import cache
from typing import Any

from gpuplane.cache import cache_dir, write_atomically

# What a module reads when nothing finer is known: it must always run.
ALWAYS = "always"
INDEX_VERSION = 2  # 2: records carry fix_safety
# The gpuplane package directory: index paths are relative to it.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_files(packages: tuple[str, ...], extra: tuple[str, ...] = ()) -> list[str]:
    """The ``.py`` files of ``packages`` (found by path, importing nothing) and of the modules
    ``extra``, relative to the gpuplane package directory."""
    found: list[str] = []
    for package in packages:
        top = os.path.join(PACKAGE_ROOT, *package.split(".")[1:])
        for directory, subdirs, names in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            found.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(".py"))
    found.extend(os.path.join(PACKAGE_ROOT, *m.split(".")[1:]) + ".py" for m in extra)
    return [os.path.relpath(p, PACKAGE_ROOT).replace(os.sep, "/") for p in found]


def fingerprint(files: list[str]) -> dict[str, int]:
    out = {}
    for rel in files:
        with open(os.path.join(PACKAGE_ROOT, rel), "rb") as handle:
            out[rel] = zlib.crc32(handle.read())
    return out


def index_path(packages: tuple[str, ...]) -> str | None:
    """The cache file of these packages' index (one per installation: the name hashes where
    gpuplane is installed, so two checkouts sharing a cache folder do not overwrite each other)."""
    folder = cache_dir()
    if folder is None:
        return None
    key = zlib.crc32(f"{INDEX_VERSION}\0{PACKAGE_ROOT}\0{','.join(packages)}".encode())
    return os.path.join(folder, f"rule-index-{key:08x}.json")


@cache
def lookup(packages: tuple[str, ...], extra: tuple[str, ...]) -> dict[str, Any] | None:
    """The index of ``packages`` when one is cached and matches the sources; else None."""
    path = index_path(packages)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
        if doc["fingerprint"] != fingerprint(source_files(packages, extra)):
            return None
        if not isinstance(doc["rules"], list) or not isinstance(doc["reads"], dict):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return doc


def store(
    packages: tuple[str, ...],
    extra: tuple[str, ...],
    records: list[dict[str, Any]],
    reads: dict[str, list[str]],
) -> None:
    """Cache the index of ``packages``: rule ``records`` (:func:`gpuplane.ruleset.registry.record`)
    and what each module ``reads``. A folder that cannot be written is no error."""
    path = index_path(packages)
    if path is None:
        return
    doc = {
        "packages": list(packages),
        "fingerprint": fingerprint(source_files(packages, extra)),
        "rules": records,
        "reads": reads,
    }
    try:
        write_atomically(path, json.dumps(doc, indent=0).encode())
    except OSError:
        return
    lookup.cache_clear()
