"""The rule catalog as the front ends list and explain it (``gpuplane rules``/``explain``, MCP
``list_rules``/``explain_rule``): one row shape, one lookup with its did-you-mean hint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplane.app.outcome import AppError, Surface

if TYPE_CHECKING:
    from gpuplane.ruleset.registry import RuleMeta


def row(meta: RuleMeta) -> dict[str, Any]:
    """One rule as ``gpuplane rules -f json`` lists it."""
    from gpuplane.ruleset.registry import row as rule_row  # deferred for start-up time

    # the registry's row keeps the declared safety (the index reads it back); a rule without a
    # fix lists none
    return {**rule_row(meta), "fix_safety": meta.fix_safety if meta.fixable else None}


def rules(category: str | None = None) -> list[RuleMeta]:
    """Every lint and diagnose rule in catalog order, or those of ``category``."""
    from gpuplane.rule_catalog import all_rules  # deferred for start-up time

    return [m for m in all_rules() if category is None or m.category == category]


def find(rule_id: str, surface: Surface) -> RuleMeta:
    """The rule ``rule_id`` names; unknown, an :class:`AppError` with the closest ids."""
    import difflib  # deferred for start-up time: only an unknown id needs it

    from gpuplane.rule_catalog import all_rules, get_rule  # deferred for start-up time

    meta = get_rule(rule_id.strip())
    if meta is None:
        close = difflib.get_close_matches(rule_id, [m.id for m in all_rules()], n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(close)}?" if close else f" (see {surface.rules_hint})"
        raise AppError(f"unknown rule id '{rule_id}'{hint}")
    return meta


def page(meta: RuleMeta) -> str:
    """The rule's Markdown page (docs/rules/ID.md)."""
    from gpuplane.rule_catalog import render_page  # deferred for start-up time

    return render_page(meta)
