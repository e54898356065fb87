"""The knowledge base: Markdown sections a GPU-platform engineer would write.

Each section is one file under ``sections/`` with YAML front matter (``id``,
``title``, ``topics``, ``keywords``, ``rules``) and a Markdown body that ends in
a ``## References`` list. Knowledge is data (design.md): the files are the
source of truth, loaded once per process and never duplicated in code.

Public API used by the other engines:

- :func:`sections` -> every :class:`Section`, sorted by id;
- :func:`section` -> one section by id;
- :func:`section_for_rule` -> the section that explains a lint rule id (the lint
  docs pages link it); :func:`rule_section` -> its id and title alone, from a map kept in the
  cache folder, so that ``gpuplane explain RULE`` neither imports PyYAML nor parses the front
  matter of every section (most of its start-up, issue 14 item 4).
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from dataclasses import dataclass
from functools import lru_cache

from gpuplane.cache import cache_dir, write_atomically

SECTIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sections")

_REQUIRED = ("id", "title", "topics", "keywords")


class KnowledgeError(ValueError):
    """A section file that cannot be used (bad front matter); names the file."""


@dataclass(frozen=True, slots=True)
class Section:
    """One knowledge-base section: metadata from the front matter plus its Markdown body."""

    id: str
    title: str
    topics: tuple[str, ...]
    keywords: tuple[str, ...]
    rules: tuple[str, ...]
    body: str
    path: str

    def references(self) -> list[str]:
        """The bullet items of the ``## References`` list (empty when the section has none)."""
        refs: list[str] = []
        inside = False
        for line in self.body.splitlines():
            if line.startswith("## "):
                inside = line.strip().lower() == "## references"
                continue
            if inside and line.lstrip().startswith(("- ", "* ")):
                refs.append(line.lstrip()[2:].strip())
        return refs


def _as_tuple(value: object, field: str, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise KnowledgeError(f"{path}: front matter field {field!r} must be a list of strings")
    return tuple(str(v) for v in value)


def parse_section(text: str, path: str) -> Section:
    """Parse one section file's text. Raises :class:`KnowledgeError` naming ``path``."""
    if not text.startswith("---\n"):
        raise KnowledgeError(f"{path}: section must start with YAML front matter ('---')")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise KnowledgeError(f"{path}: front matter is not closed by '---'")
    import yaml  # deferred for start-up time: `explain` reads the cached rule map instead

    try:
        meta = yaml.load(text[4:end], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path}: front matter is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise KnowledgeError(f"{path}: front matter must be a mapping")
    missing = [k for k in _REQUIRED if not meta.get(k)]
    if missing:
        raise KnowledgeError(f"{path}: front matter lacks {', '.join(missing)}")
    body = text[end + 5 :].lstrip("\n")
    return Section(
        id=str(meta["id"]),
        title=str(meta["title"]),
        topics=_as_tuple(meta.get("topics"), "topics", path),
        keywords=_as_tuple(meta.get("keywords"), "keywords", path),
        rules=_as_tuple(meta.get("rules"), "rules", path),
        body=body,
        path=path,
    )


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[Section, ...], dict[str, Section], dict[str, Section]]:
    found: list[Section] = []
    for name in sorted(os.listdir(SECTIONS_DIR)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(SECTIONS_DIR, name)
        with open(path, encoding="utf-8") as handle:
            found.append(parse_section(handle.read(), path))
    by_id: dict[str, Section] = {}
    by_rule: dict[str, Section] = {}
    for sec in found:
        if sec.id in by_id:
            raise KnowledgeError(f"{sec.path}: duplicate section id {sec.id!r}")
        by_id[sec.id] = sec
        for rule_id in sec.rules:
            # The first section (by id order) that claims a rule is its docs link.
            by_rule.setdefault(rule_id, sec)
    return tuple(sorted(found, key=lambda s: s.id)), by_id, by_rule


def sections() -> list[Section]:
    """Every section of the knowledge base, sorted by id (loaded once per process)."""
    return list(_load()[0])


def section(section_id: str) -> Section | None:
    """The section with this id, or None."""
    return _load()[1].get(section_id)


def section_for_rule(rule_id: str) -> Section | None:
    """The section that explains lint rule ``rule_id`` (its ``rules:`` front matter), or None."""
    return _load()[2].get(rule_id)


# 1: {rule id: [section id, title]}; a change of what the map holds changes this.
RULE_MAP_VERSION = 1


def rule_section(rule_id: str) -> tuple[str, str] | None:
    """``(id, title)`` of :func:`section_for_rule`, or None."""
    return _rule_sections().get(rule_id)


@lru_cache(maxsize=1)
def _rule_sections() -> dict[str, tuple[str, str]]:
    """Rule id -> (id, title) of its section. Cached in the cache folder with a CRC-32 of every
    section file: reading the small files is cheap, parsing their YAML front matter is not. Any
    edited, added or removed section makes the cached map stale and it is rebuilt from
    :func:`section_for_rule`'s own data: a stale map costs time, never a wrong link."""
    names = sorted(n for n in os.listdir(SECTIONS_DIR) if n.endswith(".md"))
    fingerprint = {}
    for name in names:
        with open(os.path.join(SECTIONS_DIR, name), "rb") as handle:
            fingerprint[name] = zlib.crc32(handle.read())
    folder = cache_dir()
    key = zlib.crc32(f"{RULE_MAP_VERSION}\0{SECTIONS_DIR}".encode())
    path = os.path.join(folder, f"kb-rule-sections-{key:08x}.json") if folder is not None else None
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                doc = json.load(handle)
            if doc["fingerprint"] == fingerprint:
                return {rule: (str(sid), str(title)) for rule, (sid, title) in doc["rules"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            pass
    found = {rule: (sec.id, sec.title) for rule, sec in _load()[2].items()}
    if path is not None:
        with contextlib.suppress(OSError):  # a folder that cannot be written only costs time
            write_atomically(path, json.dumps({"fingerprint": fingerprint, "rules": found}).encode())
    return found


def sections_for_rule(rule_id: str) -> list[Section]:
    """Every section that lists ``rule_id``; the first is :func:`section_for_rule`."""
    return [s for s in _load()[0] if rule_id in s.rules]


__all__ = [
    "SECTIONS_DIR",
    "KnowledgeError",
    "Section",
    "parse_section",
    "rule_section",
    "section",
    "section_for_rule",
    "sections",
    "sections_for_rule",
]
