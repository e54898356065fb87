"""The hand-triaged real-world cases (../shared/realworld/lint/cases, issue 12 item 7).

Each case is a public manifest nobody here wrote, with ``expect.yaml``: ``must`` = findings that
are real problems, ``must_not`` = findings that are wrong or noise on it. Lint runs as the CLI
does (default rule tier, no cluster). Every ``must`` is asserted (the last rule a case named,
serving-parallelism-gpu-mismatch, is in the catalog: no expected failures remain). Skipped with a
reason where ../shared is absent; nothing of it is copied into the project.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.sources import load_paths

CASES = Path(__file__).resolve().parents[2].parent / "shared" / "realworld" / "lint" / "cases"


def _expectations() -> list[tuple[str, str, str]]:
    """(case, "must" | "must_not", rule) for every case, or one placeholder when absent."""
    if not CASES.is_dir():
        return [("", "", "")]
    out = []
    for case in sorted(p for p in CASES.iterdir() if p.is_dir()):
        expect = yaml.safe_load((case / "expect.yaml").read_text(encoding="utf-8")) or {}
        out += [(case.name, "must", r) for r in expect.get("must") or []]
        out += [(case.name, "must_not", r) for r in expect.get("must_not") or []]
    return out


@cache
def _found(case: str) -> frozenset[str]:
    loaded = load_paths([str(CASES / case / "manifests.yaml")])
    return frozenset(f.rule for f in run_lint(loaded.objects, config=LintConfig()).findings)


def _params() -> list:
    return [
        pytest.param(case, kind, rule_id, id=f"{case}-{kind}-{rule_id}")
        for case, kind, rule_id in _expectations()
    ]


@pytest.mark.parametrize(("case", "kind", "rule_id"), _params())
def test_realworld_case(case: str, kind: str, rule_id: str) -> None:
    if not case:
        pytest.skip(f"{CASES} is absent (the real-world set lives in ../shared)")
    found = _found(case)
    if kind == "must":
        assert rule_id in found, f"{case}: {rule_id} is a real problem there and was not reported"
    else:
        assert rule_id not in found, f"{case}: {rule_id} is wrong or noise there and was reported"


def _must_analyse() -> list[tuple[str, str]]:
    """(case, kind) for every ``must_analyse`` kind, or one placeholder when absent."""
    if not CASES.is_dir():
        return [("", "")]
    out = []
    for case in sorted(p for p in CASES.iterdir() if p.is_dir()):
        expect = yaml.safe_load((case / "expect.yaml").read_text(encoding="utf-8")) or {}
        out += [(case.name, kind) for kind in expect.get("must_analyse") or []]
    return out or [("", "")]


@pytest.mark.parametrize(("case", "kind"), _must_analyse())
def test_realworld_kinds_are_analysed(case: str, kind: str) -> None:
    """Objects of the kinds a case lists under ``must_analyse`` are analysed: not in ``skipped``."""
    if not case:
        pytest.skip(f"{CASES} is absent or lists no must_analyse kinds")
    loaded = load_paths([str(CASES / case / "manifests.yaml")])
    result = run_lint(loaded.objects, config=LintConfig())
    assert any(o.kind == kind for o in loaded.objects)
    assert [s.reason for s in result.skipped if s.source.kind == kind] == []
