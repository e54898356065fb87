"""Every rule has a folder of failing and passing fixtures (tests/fixtures/lint/<rule-id>/).

A fail file starts with ``# expect: L1,L2``: the exact lines (of the offending fields)
where the rule must report. Pass files must produce no finding of that rule. A
``cluster.yaml`` in the folder is used as ``--cluster`` for every file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import all_rules
from gpuplane.sources import load_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
_EXPECT = re.compile(r"^#\s*expect:\s*([\d,\s]+)$")


def _cases() -> list[tuple[str, Path]]:
    cases = []
    # folders starting with "_" hold inputs of other tests (e.g. _mistyped: test_lint_robustness.py)
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")):
        for file in sorted(folder.glob("*.yaml")):
            if file.name != "cluster.yaml":
                cases.append((folder.name, file))
        # manifests-only/: the same rule on manifests alone, without the folder's cluster.yaml
        for file in sorted((folder / "manifests-only").glob("*.yaml")):
            cases.append((folder.name, file))
    return cases


def _cluster(folder: Path):
    cluster_file = folder / "cluster.yaml"
    if not cluster_file.exists():
        return None
    from gpuplane.sources.cluster import load_cluster_state

    state, errors = load_cluster_state(str(cluster_file))
    assert not errors, errors
    return state


def _lines(rule_id: str, file: Path) -> list[int]:
    loaded = load_paths([str(file)])
    assert not loaded.errors, loaded.errors
    meta = next(m for m in all_rules() if m.id == rule_id)
    result = run_lint(loaded.objects, cluster=_cluster(file.parent), config=LintConfig(), rules=[meta])
    assert not result.failures, result.failures
    return sorted(f.line for f in result.findings)


@pytest.mark.parametrize(("rule_id", "file"), _cases(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_fixture(rule_id: str, file: Path) -> None:
    assert any(m.id == rule_id for m in all_rules()), f"fixture folder for unknown rule {rule_id}"
    got = _lines(rule_id, file)
    if file.name.startswith("fail"):
        first = file.read_text().splitlines()[0]
        match = _EXPECT.match(first)
        assert match, f"{file}: first line must be '# expect: L1,L2'"
        expected = sorted(int(x) for x in match.group(1).replace(" ", "").split(",") if x)
        assert got == expected
    else:
        assert got == []


def test_every_rule_has_fail_and_pass_fixtures() -> None:
    missing = []
    for meta in all_rules():
        if meta.category == "cluster":
            continue
        folder = FIXTURES / meta.id
        fails = list(folder.glob("fail*.yaml")) if folder.is_dir() else []
        passes = list(folder.glob("pass*.yaml")) if folder.is_dir() else []
        if not fails or not passes:
            missing.append(meta.id)
    assert missing == []
