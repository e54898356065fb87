# ruff: noqa: F811  (the fake API server fixtures are imported from test_sources_live)
"""kubectl conventions (issue 17 item 1), against the project's fake API server: no --cluster means
the current kube-context (named on stderr), -n/-A filter, `kubectl gpuplane` names itself so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_sources_live import FakeApiServer, api_server, kubeconfig  # noqa: F401  (fixtures)

from gpuplane.cli.main import cli, program_name

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo.yaml"


@pytest.fixture
def current_fake(kubeconfig: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """$KUBECONFIG whose current-context is the fake server's good context."""
    path = tmp_path / "current"
    path.write_text(
        Path(kubeconfig).read_text().replace("current-context: stale", "current-context: fake-ctx")
    )
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.setenv("HOME", str(tmp_path))
    return str(path)


def _run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="gpuplane")


def test_why_pending_defaults_to_the_current_context(api_server: FakeApiServer, current_fake: str) -> None:
    result = _run("why-pending", "-f", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == "gpuplane: reading cluster fake-ctx"
    assert any(p.startswith("/api/v1/pods") for p in api_server.paths())
    # the same answer as naming the context explicitly
    explicit = _run("why-pending", "--cluster", "live", "--context", "fake-ctx", "-f", "json")
    assert explicit.exit_code == 0
    assert explicit.stdout == result.stdout


def test_diagnose_inventory_default_to_the_current_context(
    api_server: FakeApiServer, current_fake: str
) -> None:
    for command in ("diagnose", "inventory"):
        result = _run(command, "-f", "json")
        assert result.exit_code == 0, (command, result.output)
        assert result.stderr.splitlines()[0] == "gpuplane: reading cluster fake-ctx", command


def test_context_flag_names_that_context(api_server: FakeApiServer, kubeconfig: str) -> None:
    result = _run("inventory", "--kubeconfig", kubeconfig, "--context", "fake-ctx", "-f", "json")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == "gpuplane: reading cluster fake-ctx"


def test_cluster_file_stays_offline_and_silent() -> None:
    result = _run("why-pending", "--cluster", str(DEMO), "-f", "json")
    assert result.exit_code == 0
    assert "reading cluster" not in result.stderr


def test_namespace_filters() -> None:
    every = _run("why-pending", "--cluster", str(DEMO), "-f", "json")
    one = _run("why-pending", "--cluster", str(DEMO), "-f", "json", "-n", "team-speech")
    explicit_all = _run("why-pending", "--cluster", str(DEMO), "-f", "json", "-A")
    assert explicit_all.stdout == every.stdout
    import json

    pods = [p["pod"] for p in json.loads(one.stdout)["pods"]]
    assert pods and all(p.startswith("team-speech/") for p in pods)
    assert len(json.loads(every.stdout)["pods"]) > len(pods)
    both = _run("why-pending", "--cluster", str(DEMO), "-n", "a", "-A")
    assert both.exit_code == 2
    assert both.stderr == "gpuplane: -n/--namespace and -A/--all-namespaces cannot be used together\n"
    diag = json.loads(_run("diagnose", "--cluster", str(DEMO), "-f", "json", "-n", "team-nlp").stdout)
    spaces = {f["object"].get("namespace") for f in diag["findings"]}
    assert spaces <= {"team-nlp", None, ""}, spaces


def test_program_name_as_a_plugin() -> None:
    assert program_name("/usr/local/bin/kubectl-gpuplane") == "kubectl gpuplane"
    assert program_name("/usr/bin/gpuplane") == "gpuplane"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv[0]='kubectl-gpuplane'; from gpuplane.cli.entry import main; main()",
         "why-pending", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.startswith("Usage: kubectl gpuplane why-pending [OPTIONS]\n")
    top = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv[0]='kubectl-gpuplane'; from gpuplane.cli.entry import main; main()",
         "--help"],
        capture_output=True, text=True, check=True, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert top.stdout.startswith("Usage: kubectl gpuplane [OPTIONS] COMMAND [ARGS]...\n")
