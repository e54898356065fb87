"""Rule metadata, the ``@rule`` decorator and loading rule packages.

Every rule is one function registered with its metadata (the kube-linter/Ruff model: docs are
generated from the registry). Its docs are the Markdown file ``<rule-id>.md`` beside its module,
read only when a page is rendered, so loading the rules to lint stays cheap. The registry never
imports a rule package on its own: :func:`load` is given the packages by the layer above
(``lint.engine`` its own rules, ``diagnose.engine`` the cluster rules, ``rule_catalog`` both), so
a lower layer never loads a higher one.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, TypeVar

from gpuplane.records import FrozenRecord, set_field
from gpuplane.ruleset import index

# Severities of spec/rules.md, most severe first (gpuplane.lint.finding.SEVERITIES).
SEVERITIES = ("error", "warning", "info")
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
# Rule tiers (Ruff's preview, kube-linter's non-default checks): ``default`` rules run unless
# disabled; ``opt-in`` rules are advisory by nature and run only when asked for (``--enable-all``,
# ``profile: all`` in .gpuplane.yaml, or their id in ``enable``).
TIERS = ("default", "opt-in")
# Fix safety (Ruff's applicability, astral-sh/ruff#7769): --fix applies "safe" fixes,
# --unsafe-fixes adds the "unsafe" ones.
FIX_SAFETIES = ("safe", "unsafe")

# A rule's check: the engine's context in, the engine's findings out. The registry only stores
# it: lint and diagnose call it with their ``LintContext`` and read back their ``Finding``s, so
# this neutral layer names neither (the decorator hands each rule back with its own signature).
CheckFn = Callable[[Any], Iterable[Any]]
Check = TypeVar("Check", bound=CheckFn)


@cache
def _read_docs(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip() + "\n"


class RuleMeta(FrozenRecord):
    """A registered rule (a record: every command imports it, gpuplane.records).

    ``context``: ``none`` (manifests only), ``optional`` (exact with --cluster),
    ``required`` (silent without --cluster). ``docs_path`` is the rule's Markdown page body,
    read on first use of :attr:`docs`. ``fix_safety``: the default safety of the rule's fixes
    (Ruff's model): "safe" keeps what the manifest means, "unsafe" may change how it behaves
    and is applied only with --unsafe-fixes. ``check`` is not compared.
    """

    __slots__ = (
        "category",
        "check",
        "context",
        "docs_path",
        "fix_safety",
        "fixable",
        "id",
        "severity",
        "summary",
        "tier",
    )
    _not_compared = ("check",)
    id: str
    severity: str
    category: str
    summary: str
    docs_path: str
    context: str
    fixable: bool
    fix_safety: str
    tier: str
    check: CheckFn

    def __init__(
        self,
        *,
        id: str,
        severity: str,
        category: str,
        summary: str,
        docs_path: str,
        check: CheckFn,
        context: str = "none",
        fixable: bool = False,
        fix_safety: str = "safe",
        tier: str = "default",
    ) -> None:
        set_field(self, "id", id)
        set_field(self, "severity", severity)
        set_field(self, "category", category)
        set_field(self, "summary", summary)
        set_field(self, "docs_path", docs_path)
        set_field(self, "context", context)
        set_field(self, "fixable", fixable)
        set_field(self, "fix_safety", fix_safety)
        set_field(self, "tier", tier)
        set_field(self, "check", check)

    @property
    def docs(self) -> str:
        """The Markdown body of the rule's page (without the header the catalog adds)."""
        return _read_docs(self.docs_path)


_RULES: dict[str, RuleMeta] = {}


def _docs_beside(func: Callable[..., Any], rule_id: str) -> str:
    """``<rule-id>.md`` in the folder of the module defining ``func`` (being imported now)."""
    module = sys.modules.get(func.__module__)
    module_file = getattr(module, "__file__", None)
    if not module_file:
        raise ValueError(f"rule {rule_id}: cannot locate the module {func.__module__!r}")
    path = os.path.join(os.path.dirname(module_file), f"{rule_id}.md")
    if not os.path.isfile(path):
        raise ValueError(f"rule {rule_id}: its docs file {path} is missing")
    return path


def rule(
    *,
    id: str,
    severity: str,
    category: str,
    summary: str,
    context: str = "none",
    fixable: bool = False,
    fix_safety: str = "safe",
    tier: str = "default",
) -> Callable[[Check], Check]:
    """Register the decorated check function as rule ``id`` (docs: ``<id>.md`` beside it)."""
    if severity not in SEVERITIES:
        raise ValueError(f"rule {id}: unknown severity {severity!r}")
    if context not in CONTEXTS:
        raise ValueError(f"rule {id}: unknown context {context!r}")
    if category not in CATEGORIES:
        raise ValueError(f"rule {id}: unknown category {category!r}")
    if tier not in TIERS:
        raise ValueError(f"rule {id}: unknown tier {tier!r}")
    if fix_safety not in FIX_SAFETIES:
        raise ValueError(f"rule {id}: unknown fix safety {fix_safety!r}")

    def decorate(func: Check) -> Check:
        existing = _RULES.get(id)
        if existing is not None and existing.check.__qualname__ != func.__qualname__:
            raise ValueError(f"rule id {id!r} registered twice")
        _RULES[id] = RuleMeta(
            id=id,
            severity=severity,
            category=category,
            summary=summary,
            docs_path=_docs_beside(func, id),
            context=context,
            fixable=fixable,
            fix_safety=fix_safety,
            tier=tier,
            check=func,
        )
        return func

    return decorate


def lazy_check(module: str, qualname: str, rule_id: str) -> CheckFn:
    """A rule's check function from the rule index: it imports ``module`` on first call (which
    registers the real function) and calls that. It carries the real function's module and
    qualified name."""

    def check(ctx: Any, *args: Any) -> Any:
        importlib.import_module(module)
        return _RULES[rule_id].check(ctx, *args)

    check.__module__ = module
    check.__qualname__ = qualname
    return check


def row(meta: RuleMeta) -> dict[str, Any]:
    """``meta`` as ``gpuplane rules -f json`` lists it (and the MCP ``list_rules`` tool)."""
    return {
        "id": meta.id,
        "severity": meta.severity,
        "category": meta.category,
        "summary": meta.summary,
        "context": meta.context,
        "fixable": meta.fixable,
        "fix_safety": meta.fix_safety,
        "tier": meta.tier,
    }


def record(meta: RuleMeta) -> dict[str, Any]:
    """``meta`` as a rule-index record (:mod:`gpuplane.ruleset.index`): its row and where its
    check lives."""
    return {**row(meta), "module": meta.check.__module__, "function": meta.check.__qualname__}


def _from_record(rec: dict[str, Any]) -> RuleMeta:
    module = rec["module"]
    module_dir = os.path.dirname(os.path.join(index.PACKAGE_ROOT, *module.split(".")[1:]))
    return RuleMeta(
        id=rec["id"],
        severity=rec["severity"],
        category=rec["category"],
        summary=rec["summary"],
        docs_path=os.path.join(module_dir, f"{rec['id']}.md"),
        context=rec["context"],
        fixable=rec["fixable"],
        fix_safety=rec.get("fix_safety", "safe"),
        tier=rec["tier"],
        check=lazy_check(module, rec["function"], rec["id"]),
    )


def _import_tree(package_name: str) -> None:
    """Import a rule package and every module below it (private ``_`` modules are imported by
    the rule modules that need them)."""
    import pkgutil  # deferred for start-up time: only a stale or missing rule index walks packages

    package = importlib.import_module(package_name)
    paths = getattr(package, "__path__", None)
    if paths is None:
        return
    for info in sorted(pkgutil.iter_modules(paths), key=lambda m: m.name):
        if not info.name.startswith("_"):
            _import_tree(f"{package_name}.{info.name}")


def _order(meta: RuleMeta) -> tuple[int, str]:
    return (CATEGORIES.index(meta.category), meta.id)


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


ReadsOf = Callable[[str], list[str]]


@cache
def _load(
    packages: tuple[str, ...], reads_of: ReadsOf | None, extra: tuple[str, ...]
) -> tuple[RuleMeta, ...]:
    doc = index.lookup(packages, extra)
    if doc is not None:  # a fresh rule index: metadata without importing any rule module
        return tuple(_from_record(r) for r in doc["rules"])
    metas = imported(packages)
    modules = sorted({m.check.__module__ for m in metas})
    reads = {m: reads_of(m) if reads_of is not None else [index.ALWAYS] for m in modules}
    index.store(packages, extra, [record(m) for m in metas], reads)
    return metas


@cache
def imported(packages: tuple[str, ...]) -> tuple[RuleMeta, ...]:
    """The rules of these packages as their modules register them (importing every module)."""
    for name in packages:
        _import_tree(name)
    return tuple(sorted((m for m in _RULES.values() if _in(m.check.__module__, packages)), key=_order))


def load(
    packages: Iterable[str], *, reads_of: ReadsOf | None = None, extra_sources: tuple[str, ...] = ()
) -> list[RuleMeta]:
    """The rules of these packages, by category (catalog order), then id.

    From the cached rule index (:mod:`gpuplane.ruleset.index`) when it matches the sources,
    with checks that import their module on first call; else every module is imported and the
    index rewritten, with ``reads_of(module)`` (what a module reads, for the layer above to skip
    modules; always run when not given) and a fingerprint of the packages and of the
    ``extra_sources`` modules that decide the reads."""
    return list(_load(tuple(packages), reads_of, extra_sources))


def module_reads(packages: Iterable[str], extra_sources: tuple[str, ...] = ()) -> dict[str, list[str]] | None:
    """What each module of ``packages`` reads, from a fresh index (None without one)."""
    doc = index.lookup(tuple(packages), extra_sources)
    return None if doc is None else doc["reads"]


def find(rule_id: str, packages: Iterable[str], **kwargs: Any) -> RuleMeta | None:
    """One rule of these packages by id, or None (``kwargs`` as for :func:`load`)."""
    return next((m for m in load(packages, **kwargs) if m.id == rule_id), None)
