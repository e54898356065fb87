"""Shared test helpers: paths to the project's fixtures and to ../shared (optional)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    """../shared beside the clone; tests that need it skip with a reason where it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this clone (upstream corpus unavailable)")
    return SHARED


# What the CLI's root command does before any command: kindless NVIDIA config files are
# recognised (tests call the loader and engines directly, without the root command).
import gpuplane.gpu.config_files  # noqa: E402, F401

# What `gpuplane ask` and MCP `ask` do before asking: the knowledge index reads the rule catalog's
# pages (knowledge sits below the catalog and never imports it; tests call answer() directly).
from gpuplane.rule_catalog import install_in_knowledge  # noqa: E402

install_in_knowledge()
