"""The same answers from a real Prometheus server and from the offline file, checked by hand.

Hand computation (tests/usage/scenario.py): 12 h window, 1-minute step (720 points), p4d.24xlarge
at $21.957642 per hour for 8 GPUs = $2.74470525 per GPU-hour.

- Notebook team-a/ana: 1 GPU x 12 h = 12 GPU-h allocated; active 4 h (0.30 >= 5 %); one idle
  stretch of exactly 8 h. gpu-allocated-idle with the 60-minute timeout saves 8 - 1 = 7 GPU-h
  ($19.21). p95 0.30 and 12,000 MiB (x 1.1 = 12.89 GB) -> advise sharing (interactive, team):
  MIG 3g.20gb (20 GB, 3/7 = 42.9 % >= 30 %), half a GPU: gpu-underused saves (12 - 7) x 0.5 = 2.5.
- Deployment serving/chat: 2 GPUs x 12 h = 24 GPU-h, active 2 of each 10 minutes = 4.8 GPU-h;
  20,000 MiB x 1.1 = 21.5 GB fits no MIG slice short of the whole GPU and 40 GB / 21.5 GB gives
  one replica: advise sharing keeps whole GPUs, no finding.
- PyTorchJob team-b/train-llm: 4 x 12 = 48 GPU-h, all active; no finding.
- Deployment serving/embed: one 3g.20gb (4 of 8 memory slices) -> 6 GPU-h; 3,000 MiB x 1.1 =
  3.2 GB and 0.15 x 3 = 0.45 compute slices fit 1g.5gb: gpu-memory-oversized saves 6 x 3/4 = 4.5
  GPU-h ($12.35).
- Pool a100: 8 GPUs, 12 GPU-h free (GPU 7).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import scenario
from click.testing import CliRunner

from gpuplane.cli.main import cli


def _run(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["usage", *args, "-f", "json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module", params=["offline", "prometheus"])
def answer(request: pytest.FixtureRequest, scenario_file: Path, usage_cluster: Path) -> dict[str, Any]:
    if request.param == "offline":
        source = ["--metrics", str(scenario_file)]
    else:
        url = request.getfixturevalue("prometheus_url")
        source = ["--prometheus", url, "--end", str(scenario.END), "--since", "12h"]
    code, doc = _run([*source, "--cluster", str(usage_cluster)])
    assert code == 0
    return doc


def _workload(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(w for w in doc["workloads"] if w["object"]["name"] == name)


def test_window_and_signals(answer: dict[str, Any]) -> None:
    window = answer["window"]
    assert (window["start"], window["end"], window["step_s"], window["points"]) == (
        scenario.T0 + 60,
        scenario.END,
        60,
        720,
    )
    assert answer["signals"]["activity"] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    assert answer["signals"]["present"] == ["engine", "fb_used", "fb_free", "iowait"]


def test_workload_gpu_hours(answer: dict[str, Any]) -> None:
    got = {
        (w["object"]["kind"], w["object"]["name"]): (
            w["gpus"],
            w["allocated_gpu_hours"],
            w["active_gpu_hours"],
            w["longest_idle_hours"],
            w["activity_p95"],
            w["fb_used_peak_mib"],
            w["category"],
        )
        for w in answer["workloads"]
    }
    assert got == {
        ("Notebook", "ana"): (1.0, 12.0, 4.0, 8.0, 0.3, 12000.0, "notebook"),
        ("Deployment", "chat"): (2.0, 24.0, 4.8, 0.133, 0.4, 20000.0, "inference"),
        ("PyTorchJob", "train-llm"): (4.0, 48.0, 48.0, 0.0, 0.9, 38000.0, "training"),
        ("Deployment", "embed"): (0.5, 6.0, 6.0, 0.0, 0.15, 3000.0, "inference"),
    }
    assert _workload(answer, "chat")["activity_mean"] == pytest.approx(0.096)
    assert _workload(answer, "train-llm")["host_iowait_mean"] == pytest.approx(0.02, abs=1e-9)
    assert _workload(answer, "embed")["mig_profiles"] == ["3g.20gb"]


def test_findings_and_savings(answer: dict[str, Any]) -> None:
    got = [
        (f["rule"], f["object"]["name"], f["saving"]["gpu_hours"], f["saving"]["usd"])
        for f in answer["findings"]
    ]
    assert got == [
        ("gpu-allocated-idle", "ana", 7.0, 19.21),
        ("gpu-memory-oversized", "embed", 4.5, 12.35),
        ("gpu-underused", "ana", 2.5, 6.86),
    ]
    idle = answer["findings"][0]
    assert idle["change"]["kubeflow_notebook_controller_env"] == {
        "ENABLE_CULLING": "true",
        "CULL_IDLE_TIME": "60",
    }
    under = answer["findings"][2]["change"]
    assert (under["mode"], under["mig_profile"], under["gpus_after"]) == ("mig", "3g.20gb", 0.5)
    oversized = answer["findings"][1]["change"]
    assert (oversized["from"], oversized["to"], oversized["mig_plan"]["gpus_needed"]) == (
        "3g.20gb",
        "1g.5gb",
        1,
    )
    assert all(
        f["saving"]["estimate"] and f["saving"]["price"]["instance_type"] == "p4d.24xlarge"
        for f in answer["findings"]
    )


def test_pools_and_teams(answer: dict[str, Any]) -> None:
    pools = {p["pool"]: (p["gpus"], p["allocated_gpu_hours"], p["free_gpu_hours"]) for p in answer["pools"]}
    assert pools == {"a100": (8.0, 84.0, 12.0), "a100-mig": (0.5, 6.0, 0.0)}
    teams = {n["namespace"]: (n["allocated_gpu_hours"], n["saving_gpu_hours"]) for n in answer["namespaces"]}
    assert teams == {"team-b": (48.0, 0.0), "serving": (30.0, 4.5), "team-a": (12.0, 9.5)}
    assert answer["summary"]["saving_gpu_hours"] == 14.0


def test_prometheus_queries_are_the_documented_ones(prometheus_url: str, usage_cluster: Path) -> None:
    code, doc = _run(["--prometheus", prometheus_url, "--end", str(scenario.END), "--since", "12h"])
    assert code == 0
    assert doc["signals"]["queries"]["engine"] == "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[1m])"
    assert doc["signals"]["queries"]["fb_used"] == "max_over_time(DCGM_FI_DEV_FB_USED[1m])"
    docs = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text(encoding="utf-8")
    for query in doc["signals"]["queries"].values():
        assert query in docs


def test_prometheus_error_is_one_line(prometheus_url: str) -> None:
    result = CliRunner().invoke(
        cli, ["usage", "--prometheus", prometheus_url, "--end", str(scenario.END), "--selector", 'bad=="x"']
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"gpuplane: Prometheus {prometheus_url} query ")
    assert "bad_data" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
