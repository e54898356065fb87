"""The rule index (gpuplane.ruleset.index) and the reads it records (gpuplane.lint.reads).

The index, cached after the first load, lets ``rules``, ``explain`` and a one-file ``lint`` skip
importing rule modules (issue 14 item 4). It must equal the live registry, go stale with any
source edit, and its reads must never skip a rule that would have reported.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from gpuplane import rule_catalog
from gpuplane.lint import engine
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.lint.reads import PODSETS, READS_SOURCES, _tree_reads, needed
from gpuplane.ruleset import index, registry
from gpuplane.ruleset.index import ALWAYS
from gpuplane.sources import load_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder, and no index loaded in this process yet."""
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", str(tmp_path))
    registry._load.cache_clear()
    index.lookup.cache_clear()
    yield tmp_path
    registry._load.cache_clear()
    index.lookup.cache_clear()


LINT = engine.LINT_RULE_PACKAGES


def test_the_first_load_writes_the_index_and_the_next_reads_it(cache: Path) -> None:
    first = engine.lint_rules()  # imported: no index yet
    assert all(m.check is registry._RULES[m.id].check for m in first)
    (written,) = cache.glob("rule-index-*.json")
    doc = json.loads(written.read_text(encoding="utf-8"))
    assert doc["packages"] == list(LINT)
    assert doc["rules"] == [registry.record(m) for m in first]
    assert doc["reads"]["gpuplane.lint.rules.operator.dcgm"] == ["kind:ClusterPolicy"]
    assert doc["reads"]["gpuplane.lint.rules.gpu.unrendered_template"] == [ALWAYS]  # reads ctx.objects
    registry._load.cache_clear()
    index.lookup.cache_clear()
    second = engine.lint_rules()  # from the index: lazy checks, equal metadata
    assert second == first
    assert [registry.record(m) for m in second] == doc["rules"]
    assert all(m.check is not registry._RULES[m.id].check for m in second)


def test_the_catalog_index_equals_the_imported_registry(cache: Path) -> None:
    rule_catalog.all_rules()
    registry._load.cache_clear()
    index.lookup.cache_clear()
    from_index = rule_catalog.all_rules()
    imported = registry.imported(rule_catalog.RULE_PACKAGES)
    assert [registry.record(m) for m in from_index] == [registry.record(m) for m in imported]
    assert from_index == list(imported)  # every field, docs_path included (check is not compared)
    assert len(imported) == len({m.id for m in imported})


def test_a_lazy_check_runs_the_registered_function() -> None:
    check = registry.lazy_check(
        "gpuplane.lint.rules.gpu.requests", "gpu_fractional_quantity", "gpu-fractional-quantity"
    )
    assert (check.__module__, check.__qualname__) == (
        "gpuplane.lint.rules.gpu.requests",
        "gpu_fractional_quantity",
    )
    fail = sorted((FIXTURES / "gpu-fractional-quantity").glob("fail*.yaml"))[0]
    objects = load_paths([str(fail)]).objects
    meta = next(m for m in registry.imported(LINT) if m.id == "gpu-fractional-quantity")
    lazy = run_lint(objects, rules=[registry._from_record(registry.record(meta))])
    real = run_lint(objects, rules=[meta])
    assert [f.to_json() for f in lazy.findings] == [f.to_json() for f in real.findings] != []


def test_an_edited_source_makes_the_index_stale(cache: Path) -> None:
    engine.lint_rules()
    assert index.lookup(LINT, READS_SOURCES) is not None
    (written,) = cache.glob("rule-index-*.json")
    doc = json.loads(written.read_text(encoding="utf-8"))
    doc["fingerprint"]["lint/rules/gpu/requests.py"] += 1  # as if the module had changed since
    written.write_text(json.dumps(doc), encoding="utf-8")
    index.lookup.cache_clear()
    assert index.lookup(LINT, READS_SOURCES) is None
    del doc["fingerprint"]["lint/rules/gpu/requests.py"]  # as if a module had been added since
    written.write_text(json.dumps(doc), encoding="utf-8")
    assert index.lookup(LINT, READS_SOURCES) is None
    written.write_text("{not json", encoding="utf-8")
    assert index.lookup(LINT, READS_SOURCES) is None


def test_no_cache_folder_means_no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")
    index.lookup.cache_clear()
    try:
        assert index.index_path(LINT) is None
        assert index.lookup(LINT, READS_SOURCES) is None
    finally:
        index.lookup.cache_clear()


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.yaml") if p.name != "cluster.yaml")


def test_skipping_unread_modules_never_loses_a_finding(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lint fixture, alone and without a cluster, with every rule (opt-in ones too): the
    same findings whether the engine skips the modules the input cannot trigger or runs all."""
    config = LintConfig(profile="all")
    engine.lint_rules()  # writes the index the gate reads
    reads = registry.module_reads(LINT, READS_SOURCES)
    assert reads is not None
    files = _fixture_files()
    assert len(files) > 150
    skipped_any = False
    for path in files:
        loaded = load_paths([str(path)])
        if not loaded.objects:
            continue
        gated = run_lint(loaded.objects, config=config)
        with monkeypatch.context() as patch:
            patch.setattr(engine, "module_reads", lambda *args: None)
            everything = run_lint(loaded.objects, config=config)
        assert [f.to_json() for f in gated.findings] == [f.to_json() for f in everything.findings], path
        assert gated.failures == everything.failures, path
        kinds = {o.kind for o in loaded.objects}
        skipped_any = skipped_any or any(not needed(r, kinds, True) for r in reads.values())
    assert skipped_any  # the gate did skip modules on some fixture


def _reads_of(source: str, namespace: dict | None = None, defined: set[str] | None = None) -> set[str]:
    return _tree_reads(ast.parse(source), namespace or {}, defined or set())


def test_reads_of_kinds_constants_and_loops() -> None:
    assert _reads_of('def r(ctx):\n    return ctx.by_kind("NodePool")\n') == {"kind:NodePool"}
    assert _reads_of("def r(ctx):\n    return ctx.by_kind(KIND, PSEUDO)\n", {"KIND": "MigPartedConfig"}) == {
        "kind:MigPartedConfig"
    }
    loop = 'def r(ctx):\n    for kind in ("Deployment", "StatefulSet"):\n        ctx.by_kind(kind)\n'
    assert _reads_of(loop) == {"kind:Deployment", "kind:StatefulSet"}
    named_loop = "def r(ctx):\n    for k in GENERATORS:\n        ctx.by_kind(k)\n"
    assert _reads_of(named_loop, {"GENERATORS": ("HelmRelease",)}) == {"kind:HelmRelease"}
    assert _reads_of("def r(ctx):\n    return [p for p in ctx.gpu_podsets()]\n") == {PODSETS}


def test_reads_are_always_when_unsure() -> None:
    assert _reads_of("def r(ctx, k):\n    return ctx.by_kind(k)\n") == {ALWAYS}  # unresolvable kind
    assert _reads_of("def r(ctx):\n    return ctx.objects\n") == {ALWAYS}
    assert _reads_of("def r(ctx):\n    return ctx.expansion_problems\n") == {PODSETS}  # workloads only
    # ctx handed to code outside the rule modules: anything may be read there
    assert _reads_of("def r(ctx):\n    return elsewhere(ctx)\n") == {ALWAYS}
    assert _reads_of("def r(ctx):\n    return helper(ctx)\n", defined={"helper"}) == set()


def test_needed() -> None:
    assert needed([ALWAYS], set(), False)
    assert needed([PODSETS], set(), True) and not needed([PODSETS], {"ConfigMap"}, False)
    assert needed(["kind:ConfigMap"], {"ConfigMap"}, False) and not needed(["kind:Node"], {"ConfigMap"}, True)
