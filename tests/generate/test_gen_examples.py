"""Golden outputs, schema validation and lint-cleanliness of the three example blueprints.

Regenerate goldens: ``GPUPLANE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/generate``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.generate.blueprint import load_blueprint
from gpuplane.generate.engine import generate
from gpuplane.generate.output import MANIFEST_NAME, write_bundle

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "blueprints"
GOLDEN = ROOT / "tests" / "fixtures" / "generate" / "golden"
NAMES = [
    "eks-training",
    "onprem-dgx-mig",
    "gke-inference",
    "gke-l4-a100",
    "onprem-dgx-coscheduling",
    "aks-kueue",
    "eks-cluster-autoscaler",
]


def _tree(root: Path) -> dict[str, str]:
    """Every generated file (the write manifest aside: tests/generate/test_output_safety.py)."""
    return {
        str(p.relative_to(root)): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST_NAME
    }


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str, tmp_path: Path) -> None:
    result = generate(load_blueprint(EXAMPLES / f"{name}.yaml"))
    assert result.schema_errors == []
    write_bundle(result.bundle, tmp_path)
    golden = GOLDEN / name
    if os.environ.get("GPUPLANE_UPDATE_GOLDEN"):
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(tmp_path, golden)
    assert _tree(tmp_path) == _tree(golden)


# The CRD corpus holds no NVIDIA Network Operator CRD: its NicClusterPolicy stays unchecked there.
UNCHECKED = {
    name: ["mellanox.com/v1alpha1/NicClusterPolicy"]
    for name in ("onprem-dgx-mig", "onprem-dgx-coscheduling", "aks-kueue")
}


@pytest.mark.parametrize("name", NAMES)
def test_validates_against_upstream_crds(name: str, shared_dir: Path) -> None:
    result = generate(load_blueprint(EXAMPLES / f"{name}.yaml"), shared_dir / "corpus" / "crds")
    assert result.schema_errors == []
    assert result.unchecked_kinds == UNCHECKED.get(name, [])


@pytest.mark.parametrize("name", NAMES)
def test_output_lints_clean(name: str, tmp_path: Path) -> None:
    write_bundle(generate(load_blueprint(EXAMPLES / f"{name}.yaml")).bundle, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "lint", str(tmp_path), "-f", "json", "--fail-on", "warning"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["summary"]["findings"] == 0


def test_deterministic(tmp_path: Path) -> None:
    bp = load_blueprint(EXAMPLES / "eks-training.yaml")
    write_bundle(generate(bp).bundle, tmp_path / "a")
    write_bundle(generate(bp).bundle, tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
