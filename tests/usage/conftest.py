"""A real Prometheus server on loopback, backfilled with the scenario's series by promtool.

Debian's ``prometheus`` package ships both binaries (``.ci/run`` installs it when missing); the
tests that need them skip with the reason when they are absent.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "usage"


@pytest.fixture(scope="session")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scenario.write(tmp_path_factory.mktemp("usage") / "scenario.om")


@pytest.fixture(scope="session")
def usage_cluster() -> Path:
    return FIXTURES / "cluster.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory, scenario_file: Path) -> Iterator[str]:
    prometheus = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    if not prometheus or not promtool:
        pytest.skip("prometheus/promtool not installed (Debian package 'prometheus'; .ci/run installs it)")
    root = tmp_path_factory.mktemp("prometheus")
    data = root / "data"
    backfill = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(scenario_file), str(data)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert backfill.returncode == 0, backfill.stderr
    config = root / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n", encoding="utf-8")
    port = _free_port()
    log = (root / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            prometheus,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            # The recorded series are from the past: keep them whatever today's date is.
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("prometheus did not start: " + (root / "prometheus.log").read_text()[-2000:])
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
