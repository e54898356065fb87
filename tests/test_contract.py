"""One contract across commands (issue 17 item 3): exit codes in every --help, --kubernetes-version
everywhere, --color with NO_COLOR/FORCE_COLOR, simulate --fail-on, diagnose --min-severity."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.cli.registry import COMMANDS
from gpuplane.report import console

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
SIM_CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
DEADLOCK = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")
FRACTIONAL = str(ROOT / "tests" / "fixtures" / "lint" / "gpu-fractional-quantity" / "fail.yaml")


def _commands() -> list[list[str]]:
    ctx = click.Context(cli)
    out: list[list[str]] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        out.append(path)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])

    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        walk(command, [name])
    return out


@pytest.mark.parametrize("path", _commands(), ids=" ".join)
def test_every_help_states_exit_codes(path: list[str]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    assert "Exit codes: 0 " in result.output


@pytest.mark.parametrize("path", _commands(), ids=" ".join)
def test_version_option_is_spelled_kubernetes_version(path: list[str]) -> None:
    text = CliRunner().invoke(cli, [*path, "--help"]).output
    assert "--k8s-version" not in text


def test_old_k8s_version_spelling_still_read_with_a_note() -> None:
    args = [
        "advise",
        "sharing",
        "--gpu",
        "H100-80GB",
        "--workload",
        "name=svc,mem=20,util=30,count=4",
        "-f",
        "json",
    ]
    new = CliRunner().invoke(cli, [*args, "--kubernetes-version", "1.34", "--dra-driver"])
    old = CliRunner().invoke(cli, [*args, "--k8s-version", "1.34", "--dra-driver"])
    assert new.exit_code == old.exit_code == 0
    assert new.stdout == old.stdout
    assert (
        old.stderr
        == "gpuplane: --k8s-version is now --kubernetes-version (the old name goes in the next release)\n"
    )


def test_simulate_fail_on() -> None:
    base = ["simulate", "--cluster", SIM_CLUSTER, DEADLOCK, "-f", "json"]
    runner = CliRunner()
    assert runner.invoke(cli, base).exit_code == 0  # default: never (unchanged)
    assert runner.invoke(cli, [*base, "--fail-on", "deadlock"]).exit_code == 1
    assert runner.invoke(cli, [*base, "--fail-on", "pending"]).exit_code == 1
    gang = [*base, "--scheduler", "volcano"]  # gang scheduling: no deadlock, nothing left Pending
    assert runner.invoke(cli, [*gang, "--fail-on", "deadlock"]).exit_code == 0
    assert runner.invoke(cli, [*gang, "--fail-on", "pending"]).exit_code == 0


def test_diagnose_min_severity() -> None:
    def findings(*extra: str) -> list[dict]:
        out = CliRunner().invoke(cli, ["diagnose", "--cluster", DEMO, "-f", "json", *extra])
        return json.loads(out.stdout)["findings"]

    every = findings()
    warn = findings("--min-severity", "warning")
    errors = findings("--min-severity", "error")
    assert {f["severity"] for f in warn} == {"error", "warning"}
    assert {f["severity"] for f in errors} == {"error"}
    assert len(warn) == sum(f["severity"] != "info" for f in every)
    assert len(errors) < len(warn) < len(every)


@pytest.fixture
def color_env(monkeypatch: pytest.MonkeyPatch):
    for var in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)
    yield monkeypatch
    console.set_color_mode(None)


def test_color_modes(color_env: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    plain = runner.invoke(cli, ["lint", FRACTIONAL]).stdout
    assert "\x1b[" not in plain  # piped: plain
    coloured = runner.invoke(cli, ["--color", "always", "lint", FRACTIONAL]).stdout
    assert "\x1b[1;31merror" in coloured
    console.set_color_mode(None)
    color_env.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in runner.invoke(cli, ["lint", FRACTIONAL]).stdout
    assert runner.invoke(cli, ["--color", "never", "lint", FRACTIONAL]).stdout == plain
    console.set_color_mode(None)
    color_env.setenv("NO_COLOR", "1")  # NO_COLOR wins over FORCE_COLOR; --color over both
    assert console.color_mode() == "never"
    console.set_color_mode("always")
    assert console.color_mode() == "always"
