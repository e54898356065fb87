"""Rule tiers: opt-in rules run only when asked (``--enable-all``, ``profile: all``, ``--enable``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.lint.config import ConfigError, load_config
from gpuplane.rule_catalog import all_rules, get_rule

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "lint" / "_tiers" / "shm-unbounded.yaml"


def _rules_found(*args: str) -> set[str]:
    res = CliRunner().invoke(cli, ["lint", str(FIXTURE), "-f", "json", "--fail-on", "never", *args])
    assert res.exit_code == 0, res.output
    return {f["rule"] for f in json.loads(res.stdout)["findings"]}


def test_opt_in_rule_is_off_by_default() -> None:
    meta = get_rule("shm-unbounded")
    assert meta is not None and meta.tier == "opt-in"
    assert "shm-unbounded" not in _rules_found()


def test_enable_all_runs_opt_in_rules() -> None:
    assert "shm-unbounded" in _rules_found("--enable-all")


def test_enable_by_id_runs_an_opt_in_rule() -> None:
    assert _rules_found("--enable", "shm-unbounded") == {"shm-unbounded"}


def test_profile_all_in_config(tmp_path: Path) -> None:
    config = tmp_path / ".gpuplane.yaml"
    config.write_text("profile: all\n")
    assert "shm-unbounded" in _rules_found("--config", str(config))
    config.write_text("profile: everything\n")
    with pytest.raises(ConfigError, match="'profile' must be one of default, all"):
        load_config(str(config))


def test_rules_listing_shows_the_tier() -> None:
    res = CliRunner().invoke(cli, ["rules"])
    line = next(line for line in res.output.splitlines() if line.strip().startswith("shm-unbounded "))
    assert line.endswith("  unsafe fix  opt-in")  # its sizeLimit fix may evict a pod that used more
    listed = json.loads(CliRunner().invoke(cli, ["rules", "-f", "json"]).stdout)
    assert {r["id"]: r["tier"] for r in listed} == {m.id: m.tier for m in all_rules()}
    assert {r["tier"] for r in listed} == {"default", "opt-in"}
