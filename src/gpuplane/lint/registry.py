"""The rule registry: every rule registers itself with its metadata and docs.

Rules are discovered by importing every module of :mod:`gpuplane.lint.rules`
(pkgutil), so adding a rule touches one file (design.md "Rules are small and
declarative"; the kube-linter/Ruff model: docs are generated from the registry).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.lint.finding import SEVERITIES

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext
    from gpuplane.lint.finding import Finding

# Category order of spec/rules.md; used for listing and docs.
CATEGORIES = (
    "gpu",
    "placement",
    "sharing",
    "distributed",
    "tenancy",
    "storage",
    "serving",
    "autoscaling",
    "operator",
    "cluster",
)
CONTEXTS = ("none", "optional", "required")

CheckFn = Callable[["LintContext"], Iterable["Finding"]]


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleMeta:
    """A registered rule.

    ``context``: ``none`` (manifests only), ``optional`` (exact with --cluster),
    ``required`` (silent without --cluster). ``docs`` is the Markdown page body.
    """

    id: str
    severity: str
    category: str
    summary: str
    docs: str
    context: str = "none"
    fixable: bool = False
    check: CheckFn


_RULES: dict[str, RuleMeta] = {}
_loaded = False


def rule(
    *,
    id: str,
    severity: str,
    category: str,
    summary: str,
    docs: str,
    context: str = "none",
    fixable: bool = False,
) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated check function as rule ``id``."""
    if severity not in SEVERITIES:
        raise ValueError(f"rule {id}: unknown severity {severity!r}")
    if context not in CONTEXTS:
        raise ValueError(f"rule {id}: unknown context {context!r}")
    if category not in CATEGORIES:
        raise ValueError(f"rule {id}: unknown category {category!r}")

    def decorate(func: CheckFn) -> CheckFn:
        existing = _RULES.get(id)
        if existing is not None and existing.check.__qualname__ != func.__qualname__:
            raise ValueError(f"rule id {id!r} registered twice")
        _RULES[id] = RuleMeta(
            id=id,
            severity=severity,
            category=category,
            summary=summary,
            docs=docs.strip() + "\n",
            context=context,
            fixable=fixable,
            check=func,
        )
        return func

    return decorate


def _load_rule_modules() -> None:
    global _loaded
    if _loaded:
        return
    import gpuplane.lint.rules as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    # The `cluster` category lives with diagnose (it reads live state, not manifests); it is
    # registered here too so `gpuplane rules` and `explain` cover the whole catalog. The lint
    # engine never runs it on manifests.
    importlib.import_module("gpuplane.diagnose.rules")
    _loaded = True


def _order(meta: RuleMeta) -> tuple[int, str]:
    try:
        return (CATEGORIES.index(meta.category), meta.id)
    except ValueError:
        return (len(CATEGORIES), meta.id)


def all_rules() -> list[RuleMeta]:
    """Every registered rule, sorted by category (catalog order) then id."""
    _load_rule_modules()
    return sorted(_RULES.values(), key=_order)


def get_rule(id: str) -> RuleMeta | None:
    _load_rule_modules()
    return _RULES.get(id)
