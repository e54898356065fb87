"""QA regressions of ``advise mig`` / ``advise sharing``: no config for an infeasible plan, one
message for every bad count, GPU/GPUs grammar, a human sharing report."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gpuplane.cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["advise", *args])


def test_infeasible_mig_prints_no_config() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.40gb=1")
    assert r.exit_code == 1
    assert r.stdout == (
        "Not feasible on A100-40GB: A100-40GB has no MIG profile 3g.40gb (profiles: 1g.5gb, 1g.5gb+me, 1g.10gb, "
        "2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)\n"
        "Unplaced: 1 x 3g.40gb\n"
        "\n"
        "No mig-parted config: the demand does not fit, so there is no layout to apply.\n"
    )
    assert "mig-enabled" not in r.stdout
    r = run("mig", "--gpu", "L4", "--demand", "1g.5gb=1")
    assert r.exit_code == 1 and r.stdout.splitlines()[0] == "Not feasible on L4: L4 does not support MIG"
    assert "devices: all" not in r.stdout


def test_infeasible_mig_json_has_null_config() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=3", "--gpus", "1", "-f", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["feasible"] is False and doc["mig_parted"] is None
    assert doc["reason"] == (
        "the demand needs 2 GPUs; the fleet has 1 x A100-40GB; best partial layout leaves 1 instance unplaced"
    )
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=1", "-f", "json")
    assert json.loads(r.stdout)["mig_parted"]["mig-configs"]["gpuplane-plan"] == [
        {"devices": [0], "mig-enabled": True, "mig-devices": {"3g.20gb": 1}}
    ]


def test_singular_gpu_and_where_to_apply() -> None:
    r = run("mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=1")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "1 GPU of A100-40GB hosts 1 x 3g.20gb (exact minimum)."
    assert "MIG layout (nvidia-mig-parted config)" in lines
    assert "nvidia.com/mig.config=gpuplane-plan" in r.stdout


def test_bad_counts_are_one_line_usage_errors() -> None:
    for args, message in [
        (("--demand", "3g.20gb=1", "--gpus", "0"), "gpuplane: --gpus 0: must be a whole number >= 1\n"),
        (("--demand", "3g.20gb=0"), "gpuplane: --demand '3g.20gb=0': COUNT must be a whole number >= 1\n"),
        (("--demand", "3g.20gb=-1"), "gpuplane: --demand '3g.20gb=-1': COUNT must be a whole number >= 1\n"),
    ]:
        r = run("mig", "--gpu", "A100-40GB", *args)
        assert r.exit_code == 2 and r.stdout == "" and r.stderr == message


def test_sharing_text_is_human() -> None:
    r = run(
        "sharing",
        "--gpu",
        "A100-80GB",
        "--workload",
        "name=notebooks,mem=10,util=15,isolation=tenant,latency=interactive,count=20",
        "--workload",
        "name=batch-embed,mem=8,util=20,count=12",
    )
    assert r.exit_code == 0
    out = r.stdout
    assert out.splitlines()[0] == "Recommendation for A100-80GB: MIG"
    for raw in ("mig_parted", "device_plugin_mig_strategy", "device_plugin_configmap", "\\n"):
        assert raw not in out
    lines = out.splitlines()
    for heading in (
        "MIG layout (nvidia-mig-parted config)",
        "Device plugin MIG strategy",
        "Device plugin sharing config (ConfigMap)",
    ):
        assert heading in lines
    assert "  time-slicing: |" in lines  # the embedded device plugin config is a readable block
    assert "          replicas: 5" in lines


def test_sharing_memory_budget_is_rounded_down() -> None:
    r = run("sharing", "--gpu", "A100-80GB", "--workload", "name=embed,mem=8,util=15,count=12", "-f", "json")
    reasons = " ".join(json.loads(r.stdout)["reasons"])
    assert "within 13.3 GB each" in reasons and "13.3333" not in reasons
