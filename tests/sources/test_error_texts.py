"""Error texts never quote a file that is not a manifest (issue 11 item 7): a private key, an
``.env`` file, a credentials JSON named as any path argument, on the command line or through the
MCP server inside its root, gives an error naming the file and the problem, never its content.

Each planted file holds the marker in a value, a key and a YAML tag; the marker must not appear
anywhere in what the command prints or the tool returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = str(ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml")
SIM_CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
SIM_JOBS = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")
MARK = "Zq9Mark7"

PLANTED = {
    "id_ed25519": (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt{MARK}AAAAABG5vbmUAAAAEbm9uZQ\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
    ),
    ".env": f"DB_PASSWORD=hunter2{MARK}\nAPI_TOKEN_{MARK}=sk-live-{MARK}\n",
    "env.yaml": f"db_password: hunter2{MARK}\ntoken_{MARK}: !{MARK} sk-live\n",
    "tagged.yaml": f"password: !{MARK}tag x\n",
    "creds.json": f'{{"password": "hunter2{MARK}", "{MARK}": 1}}\n',
    ".netrc": f"machine registry.example.com login ci password hunter2{MARK}\n",
}

CLI_PATHS: list[tuple[str, Callable[[str, str], list[str]]]] = [
    ("lint", lambda f, d: ["lint", f]),
    ("lint --config", lambda f, d: ["lint", MANIFEST, "--config", f]),
    ("lint --cluster", lambda f, d: ["lint", MANIFEST, "--cluster", f]),
    ("generate", lambda f, d: ["generate", f, "-o", str(Path(d) / "out")]),
    ("simulate --cluster", lambda f, d: ["simulate", "--cluster", f, SIM_JOBS]),
    ("simulate inputs", lambda f, d: ["simulate", "--cluster", SIM_CLUSTER, f]),
    (
        "simulate --scenario",
        lambda f, d: [
            "simulate",
            "--cluster",
            SIM_CLUSTER,
            SIM_JOBS,
            "--scheduler",
            "kueue",
            "--scenario",
            f,
        ],
    ),
    (
        "simulate --autoscaler",
        lambda f, d: ["simulate", "--cluster", SIM_CLUSTER, SIM_JOBS, "--autoscaler", f],
    ),
    ("advise sharing --from", lambda f, d: ["advise", "sharing", "--gpu", "A100-80GB", "--from", f]),
    ("snapshot --from", lambda f, d: ["snapshot", "--from", f, "-o", str(Path(d) / "snap.yaml")]),
    ("usage --metrics", lambda f, d: ["usage", "--metrics", f]),
    ("why-pending", lambda f, d: ["why-pending", "--cluster", f]),
    ("inventory", lambda f, d: ["inventory", "--cluster", f]),
    ("diagnose", lambda f, d: ["diagnose", "--cluster", f]),
]


@pytest.mark.parametrize("name", sorted(PLANTED))
@pytest.mark.parametrize(("label", "argv"), CLI_PATHS, ids=[label for label, _ in CLI_PATHS])
def test_cli_errors_never_quote_a_planted_file(
    tmp_path: Path, name: str, label: str, argv: Callable[[str, str], list[str]]
) -> None:
    planted = tmp_path / name
    planted.write_text(PLANTED[name], encoding="utf-8")
    res = CliRunner().invoke(cli, argv(str(planted), str(tmp_path)))
    # 2 for a refused file; 0/1 where the input is optional-field YAML that happens to parse (a
    # scenario whose keys are all unknown runs with the defaults)
    assert res.exit_code in (0, 1, 2), (label, res.exit_code, res.output)
    assert MARK not in res.output
    assert MARK not in res.stderr
    if res.exit_code == 2:
        assert planted.name in res.stderr, (label, res.stderr)


@pytest.fixture
def mcp_root(tmp_path: Path) -> Iterator[Path]:
    pytest.importorskip("mcp")
    from gpuplane.mcp import sandbox

    for name, text in PLANTED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    sandbox.configure([str(tmp_path)])
    try:
        yield tmp_path
    finally:
        sandbox.reset()


def _mcp_calls() -> list[tuple[str, Callable[[Any, str], Any]]]:
    return [
        ("lint paths", lambda t, f: t.lint(paths=[f])),
        ("lint config", lambda t, f: t.lint(paths=[MANIFEST], config=f)),
        ("lint cluster", lambda t, f: t.lint(paths=[MANIFEST], cluster=f)),
        ("simulate cluster", lambda t, f: t.simulate(cluster=f, paths=[SIM_JOBS])),
        ("simulate scenario", lambda t, f: t.simulate(cluster=SIM_CLUSTER, paths=[SIM_JOBS], scenario=f)),
        ("simulate autoscaler", lambda t, f: t.simulate(cluster=SIM_CLUSTER, paths=[SIM_JOBS], autoscaler=f)),
        ("generate", lambda t, f: t.generate(blueprint_path=f)),
        ("usage", lambda t, f: t.usage(metrics_files=[f])),
        ("why_pending", lambda t, f: t.why_pending(cluster=f)),
        ("inventory", lambda t, f: t.inventory(cluster=f)),
        ("diagnose", lambda t, f: t.diagnose(cluster=f)),
    ]


@pytest.mark.parametrize("name", sorted(PLANTED))
@pytest.mark.parametrize(("label", "call"), _mcp_calls(), ids=[label for label, _ in _mcp_calls()])
def test_mcp_errors_never_quote_a_planted_file_inside_the_root(
    mcp_root: Path, name: str, label: str, call: Callable[[Any, str], Any]
) -> None:
    from gpuplane.mcp import tools
    from gpuplane.mcp.tools import ToolInputError

    try:
        out = call(tools, str(mcp_root / name))
        text = repr(out.data) + out.summary
    except ToolInputError as exc:
        text = str(exc)
    assert MARK not in text, (label, text)
