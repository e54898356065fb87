"""Honest installation (issue 17 item 4): gpuplane installs from its repository, `gpuplane mcp` works
after the plain install, and the MCP SDK costs the other commands nothing at start-up."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_no_doc_installs_from_an_index_gpuplane_is_not_on() -> None:
    bad = []
    for path in DOCS:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"pip install\s+['\"]?gpuplane\b", line):
                bad.append(f"{path.name}:{n}: {line.strip()}")
    assert bad == []


def test_mcp_sdk_is_a_normal_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("mcp") for d in project["dependencies"])
    assert project["optional-dependencies"]["mcp"] == []  # `pip install '.[mcp]'` still resolves


def test_lint_does_not_import_the_mcp_sdk() -> None:
    code = (
        "import sys; sys.argv=['gpuplane','lint','tests/fixtures/lint/gpu-fractional-quantity/pass.yaml'];"
        "from gpuplane.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
