"""Scenario settings of the wrong type are one line with file:line and the field path, exit 2
(issue 11 item 2 reproducers; they were tracebacks in the coscheduling and Kueue layers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
JOBS = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")


@pytest.mark.parametrize(
    ("scheduler", "text", "message"),
    [
        (
            "coscheduling",
            "coscheduling: {permitWaitingTimeSeconds: x}\n",
            "1: coscheduling.permitWaitingTimeSeconds: Input should be a valid number (got 'x')",
        ),
        (
            "kueue",
            "kueue: {waitForPodsReady: 5}\n",
            "1: kueue.waitForPodsReady: Input should be a valid dictionary or instance of WaitForPodsReady "
            "(got 5)",
        ),
        (
            "kueue",
            "kueue:\n  waitForPodsReady:\n    timeoutSeconds: 5m\n",
            "3: kueue.waitForPodsReady.timeoutSeconds: Input should be a valid number (got '5m')",
        ),
        (
            "kueue",
            "kueue:\n  waitForPodReady: {}\n",
            "2: kueue.waitForPodReady: Extra inputs are not permitted (got dict)",
        ),
    ],
)
def test_wrong_types_are_one_line_exit_2(tmp_path: Path, scheduler: str, text: str, message: str) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(
        cli, ["simulate", "--cluster", CLUSTER, JOBS, "--scheduler", scheduler, "--scenario", str(scenario)]
    )
    assert res.exit_code == 2
    assert res.stderr == f"gpuplane: {scenario}:{message}\n"


def test_valid_settings_still_run(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("kueue: {waitForPodsReady: {timeoutSeconds: 600}}\n", encoding="utf-8")
    res = CliRunner().invoke(
        cli, ["simulate", "--cluster", CLUSTER, JOBS, "--scheduler", "kueue", "--scenario", str(scenario)]
    )
    assert res.exit_code in (0, 1), res.stderr
