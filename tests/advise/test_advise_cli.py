"""advise CLI: JSON shapes, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(*args: str):
    return CliRunner().invoke(cli, ["advise", *args])


def test_mig_json() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=2,1g.5gb=4", "-f", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert {"feasible", "gpus_needed", "layout", "mig_parted", "unplaced"} <= set(doc)
    assert doc["feasible"] is True and doc["gpus_needed"] == 2
    assert doc["layout"][0]["gpu"] == 0 and doc["layout"][0]["profiles"] == {"1g.5gb": 4}


def test_mig_unknown_profile_exit_1() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.40gb=1", "-f", "json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["feasible"] is False and doc["reason"].startswith("A100-40GB has no MIG profile 3g.40gb")


def test_mig_gpus_and_mixed_fleet() -> None:
    r = run("mig", "--gpu", "A100-80GB", "--demand", "7g.80gb=3", "--gpus", "2", "-f", "json")
    assert r.exit_code == 1 and json.loads(r.stdout)["unplaced"] == {"7g.80gb": 1}
    r = run("mig", "--gpu", "A100-80GB:8", "--gpu", "H100-80GB:4", "--demand", "3g.40gb=10", "-f", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["gpus_needed"] == 5


def test_mig_text() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=2,1g.5gb=4")
    assert r.exit_code == 0
    assert r.stdout.startswith("2 GPUs of A100-40GB host 2 x 3g.20gb + 4 x 1g.5gb (exact minimum).\n")
    assert "mig-configs:" in r.stdout


def test_mig_bad_model_is_one_line_usage_error() -> None:
    r = run("mig", "--gpu", "Z100", "--demand", "1g.5gb=1")
    assert r.exit_code == 2
    assert r.stderr.startswith("gpuplane: unknown GPU model 'Z100' (MIG-capable models: A30, A100-40GB")
    assert r.stderr.count("\n") == 1


def test_sharing_json_and_from_file() -> None:
    r = run(
        "sharing",
        "--gpu",
        "A100-80GB",
        "--from",
        str(FIXTURES / "advise" / "workloads.yaml"),
        "--workload",
        "name=extra,mem=2,util=5",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert {"recommendation", "alternatives", "reasons", "tradeoffs", "config"} <= set(doc)
    assert [w["name"] for w in doc["workloads"]] == ["notebooks", "embeddings", "llm-70b", "extra"]
    assert doc["recommendation"] == "mig"


def test_sharing_bad_workload() -> None:
    r = run("sharing", "--gpu", "L4", "--workload", "name=x,mem=4")
    assert r.exit_code == 2
    assert r.stderr.startswith("gpuplane: workload 'x': util= is required")


def test_capacity_json_and_text() -> None:
    r = run("capacity", "--demand", "H100-80GB=16", "-f", "json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["models"][0]["instance_type"] == "p5.48xlarge" and doc["total_monthly_usd"] == 80358.4
    r = run("capacity", "--demand", "H100-80GB=16,L4=2", "--provider", "aws")
    assert r.exit_code == 0 and "Total: $" in r.stdout


def test_capacity_bad_prices_file(tmp_path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("prices: [1]\n")
    r = run("capacity", "--demand", "L4=1", "--prices", str(bad))
    assert r.exit_code == 2
    assert (
        r.stderr == f"gpuplane: prices file {str(bad)!r} needs a 'prices:' mapping of provider -> instances\n"
    )
