"""The repository's habits stay wired: the README's test command is the one CI runs, mypy is
configured, and the package ships its ``py.typed`` marker (PEP 561)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^pip install -e '\.\[test\]' && .+$", text, re.MULTILINE)
    assert match, "README has no test command"
    return match.group(0)


def test_ci_runs_the_readme_test_command() -> None:
    command = _readme_test_command()
    assert command.replace("pip install", "pip install --quiet") in (ROOT / ".ci/run").read_text()
    for step in ("ruff check src tests", "ruff format --check src tests", "mypy src", "pytest"):
        assert step in command


def test_mypy_is_configured_and_its_stubs_are_test_extras() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["mypy"]["python_version"] == "3.11"
    extras = " ".join(config["project"]["optional-dependencies"]["test"])
    assert "mypy" in extras and "types-PyYAML" in extras


def test_package_is_typed() -> None:
    assert (ROOT / "src/gpuplane/py.typed").is_file()


def test_pre_commit_runs_the_ci_checks() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {hook["id"]: hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}
    assert hooks == {
        "ruff": "ruff check --force-exclude",
        "ruff-format": "ruff format --force-exclude",
        "mypy": "mypy src",
    }
