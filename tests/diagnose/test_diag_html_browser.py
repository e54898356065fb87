"""The HTML report rendered by a real headless Chromium (Debian ``chromium``; CI installs it).

The test loads the page from disk with networking disabled and checks that the
browser built the chart SVGs and the finding rows, then takes a screenshot.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuplane.diagnose.engine import run_diagnose
from gpuplane.report.html import render_html
from gpuplane.sources.cluster import load_cluster_state

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "examples" / "clusters" / "demo.yaml"
CHARTS = (
    "chart-by-model",
    "chart-by-pool",
    "chart-by-namespace",
    "chart-pending-reasons",
    "chart-fragmentation",
    "chart-severity",
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does it)")
    return found


def _browser(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    state, errors = load_cluster_state(str(DEMO))
    assert errors == []
    result = run_diagnose(state, report_data=True)
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(result), encoding="utf-8")
    return path, len(result.findings)


def test_chromium_renders_charts_and_findings(report: tuple[Path, int]) -> None:
    binary = _chromium()
    path, findings = report
    done = _browser(binary, "--dump-dom", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for chart in CHARTS:
        match = re.search(rf'<figure id="{chart}">(.*?)</figure>', dom, re.S)
        assert match is not None, chart
        assert "<svg" in match.group(1), chart
    # allocated segments: A100-40GB, H100-80GB, L4 models + a100-40gb, a100-40gb-mig, h100-80gb, l4-shared pools
    assert len(re.findall(r'<rect class="seg seg-allocated"', dom)) == 7
    # dark: GPUs not advertised: the L40S node (by model and by pool) and the failed MIG node (A100 model
    # and a100-40gb-mig pool)
    assert len(re.findall(r'<rect class="seg seg-dark"', dom)) == 4
    assert len(re.findall(r'<tr class="finding ', dom)) == findings
    assert 'data-rule="gpu-node-not-advertising"' in dom
    assert 'data-rule="pending-gpu-pod"' in dom
    assert len(re.findall(r'<tr class="node" ', dom)) == 12


def test_chromium_screenshot(report: tuple[Path, int], tmp_path: Path) -> None:
    binary = _chromium()
    path, _ = report
    shot = tmp_path / "report.png"
    done = _browser(binary, "--window-size=1400,2400", f"--screenshot={shot}", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 50_000  # a page of charts and tables, not a blank canvas
