"""The usage page rendered by a real headless Chromium (Debian ``chromium``; .ci/run installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does it)")
    return found


def _browser(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("usage-html") / "usage.html"
    result = CliRunner().invoke(
        cli,
        ["usage", "--cluster", str(ROOT / "examples/clusters/demo.yaml"), "--metrics",
         str(ROOT / "examples/usage/demo-metrics.json"), "-f", "html", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return out


def test_chromium_builds_the_heatmap_and_findings(page: Path) -> None:
    done = _browser("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    rows = re.findall(r"<tr><th>(node-[^<]+)</th>(.*?)</tr>", dom)
    assert len(rows) == 10  # every node whose exporter reports a device
    # 24 h at a 5-minute step -> 24 hourly cells per node, each coloured
    assert {len(re.findall(r'<td style="background:#[0-9a-f]{6};width:', cells)) for _, cells in rows} == {24}
    assert len(re.findall(r'<div class="finding">', dom)) == 9


@pytest.mark.parametrize("width", [700, 1400])
def test_chromium_screenshot(page: Path, tmp_path: Path, width: int) -> None:
    shot = tmp_path / f"usage-{width}.png"
    done = _browser("--hide-scrollbars", f"--window-size={width},2000", f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == width
    assert len(data) > 30_000  # cards, a heatmap and tables, not a blank page
