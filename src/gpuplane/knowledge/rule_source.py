"""The rule pages the knowledge base indexes, supplied by the layer that owns the rule catalog.

``gpuplane ask`` searches every rule's docs page beside the sections, and LLM mode's
``explain_rule`` tool returns a rule's page. The catalog (:mod:`gpuplane.rule_catalog`) sits above
this package, because its pages link back to knowledge sections, so knowledge never imports it:
the front ends that answer questions (``gpuplane ask``, the MCP ``ask`` tool) install the catalog
here with :func:`use` before they ask. With no source installed the index holds sections only.
The in-memory index is keyed by the source, so installing another one never serves a stale index.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol

from gpuplane.ruleset import RuleMeta


class RuleSource(Hashable, Protocol):
    """What knowledge needs from a rule catalog: its rules, one rule's page, and the files
    whose change must invalidate the on-disk index cache (so a warm ``ask`` imports no rule).
    Hashable: the in-memory index is cached per source."""

    def rules(self) -> Sequence[RuleMeta]: ...

    def page(self, rule_id: str) -> str | None: ...

    def input_files(self) -> list[str]: ...


_source: RuleSource | None = None


def use(source: RuleSource | None) -> None:
    """Install the rule catalog the index and the LLM tools read (None removes it)."""
    global _source
    _source = source


def current() -> RuleSource | None:
    """The installed rule catalog, or None."""
    return _source
