"""Reproducers bench/fuzz.py found (issue 11), each now one line and exit 2: ``.gpuplane.yaml`` with
mixed int/str keys (sorting them raised TypeError) or bytes that are not UTF-8, a severity map
with an integer rule id. The simulate/advise reproducers live in tests/simulate/test_side_input_types.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = str(ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml")
KNOWN = "disable, enable, severity, ignore, fail-on, profile, cluster"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"disable: [a]\n1: x\nzz: y\n", f"unknown key '1' (known: {KNOWN})"),
        (b"1: x\nzz: y\n", f"not a gpuplane config: none of its 2 top-level keys is one of {KNOWN}"),
        (b"severity: {1: error, zz: 2}\n", "severity of zz must be one of error, warning, info (got 2)"),
        (b"disable: [\xff\xfe]\n", "not UTF-8 text: invalid start byte at byte 10"),
    ],
)
def test_config_file_reproducers(tmp_path: Path, content: bytes, message: str) -> None:
    config = tmp_path / ".gpuplane.yaml"
    config.write_bytes(content)
    res = CliRunner().invoke(cli, ["lint", MANIFEST, "--config", str(config)])
    assert res.exit_code == 2, res.output
    assert res.stderr == f"gpuplane: {config}: {message}\n"
