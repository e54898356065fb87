"""The CLI contract: every command of spec/cli.md is registered, --help is fast and light."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from gpuplane.cli.main import COMMANDS, cli

SPEC_COMMANDS = {
    "lint",
    "rules",
    "explain",
    "why-pending",
    "diagnose",
    "inventory",
    "simulate",
    "generate",
    "advise",
    "ask",
    "snapshot",
    "mcp",
    "policy",  # issue 17: in-cluster guardrails (docs/policy.md), beyond spec/cli.md
    "usage",  # issue 18: DCGM metrics from Prometheus (docs/usage.md), beyond spec/cli.md
}


def test_every_spec_command_is_registered() -> None:
    assert set(COMMANDS) == SPEC_COMMANDS


def test_each_command_has_help() -> None:
    runner = CliRunner()
    for name in COMMANDS:
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage: " in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == "gpuplane, version 0.1.0\n"


def test_help_imports_nothing_heavy() -> None:
    """reference/python-stack.md: heavy modules must stay out of --help."""
    code = (
        "import sys\n"
        "from gpuplane.cli.entry import main\n"
        "sys.argv = ['gpuplane', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'click', 'rich', 'pydantic', 'ruamel', 'lightkube', 'mcp', 'jsonschema_rs', 'yaml', 'numpy', 'msgspec'}\n"
        "loaded = sorted(m for m in heavy if m in sys.modules)\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in proc.stderr


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["frobnicate"])
    assert result.exit_code == 2


def test_fast_help_is_clicks_help() -> None:
    """The click-free ``--help`` fast path prints exactly what click would."""
    from gpuplane.cli.registry import TOP_HELP

    rendered = CliRunner().invoke(cli, ["--help"], prog_name="gpuplane").output
    assert rendered == TOP_HELP


def test_fast_paths_through_the_console_script() -> None:
    code = "import sys; from gpuplane.cli.entry import main; sys.argv = ['gpuplane', sys.argv[1]]; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout == "gpuplane, version 0.1.0\n"
    out = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("Usage: gpuplane [OPTIONS] COMMAND [ARGS]...\n")


def test_commands_needing_a_cluster_refuse_without_one(tmp_path, monkeypatch) -> None:
    """simulate needs --cluster; why-pending, diagnose and inventory read the current kube-context
    like kubectl (issue 17), so with no kubeconfig at all they say so and exit 2."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()
    result = runner.invoke(cli, ["simulate", "x.yaml"])
    assert result.exit_code == 2
    assert "Missing option '--cluster'" in result.output
    for args in (["inventory"], ["why-pending"], ["diagnose"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, args
        assert result.stderr.splitlines() == [
            "gpuplane: reading cluster (no usable kubeconfig)",
            "gpuplane: live: cannot load the Kubernetes configuration: no kubeconfig found (tried --kubeconfig, "
            "$KUBECONFIG, ~/.kube/config) and not running in a cluster",
            "gpuplane: nothing usable in cluster source 'live'",
        ], args


def test_shell_completion_knows_the_commands() -> None:
    """click's completion protocol: `eval "$(_GPUPLANE_COMPLETE=bash_source gpuplane)"`."""
    import os

    env = {
        **os.environ,
        "COMP_WORDS": "gpuplane li",
        "COMP_CWORD": "1",
        "_GPUPLANE_COMPLETE": "bash_complete",
    }
    code = "from gpuplane.cli.entry import main; import sys; sys.argv = ['gpuplane']; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip().splitlines() == ["plain,lint"]
