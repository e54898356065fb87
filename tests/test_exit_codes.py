"""Exit codes 0/1/2/3: an unexpected exception is an internal error (3, one line), never 1.

A crash that exited 1 would read as "findings found" in CI. The traceback is printed only with
``--debug`` (or ``GPUPLANE_DEBUG=1``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuplane.cli import main as cli_main
from gpuplane.cli.common import internal_error_line

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")


def _broken_inventory(state: object) -> object:
    raise KeyError("node-7")


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    import gpuplane.diagnose.inventory

    monkeypatch.setattr(gpuplane.diagnose.inventory, "build_inventory", _broken_inventory)
    monkeypatch.setattr(sys, "argv", ["gpuplane", *args])
    monkeypatch.delenv("GPUPLANE_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exc:
        cli_main.main()
    return int(exc.value.code or 0), capsys.readouterr().err


def test_internal_error_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(monkeypatch, capsys, "inventory", "--cluster", DEMO)
    assert code == 3
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gpuplane: internal error in inventory (gpuplane/app/inventory.py:")
    assert lines[0].endswith("KeyError: 'node-7'; please report it (rerun with --debug for the traceback)")
    assert "Traceback" not in err


def test_debug_prints_the_traceback_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(monkeypatch, capsys, "--debug", "inventory", "--cluster", DEMO)
    assert code == 3
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1].startswith("gpuplane: internal error in inventory")


def test_where_names_the_innermost_gpuplane_frame() -> None:
    def fail() -> None:
        raise ValueError("bad\nvalue")

    try:
        fail()
    except ValueError as exc:
        line = internal_error_line(exc, "simulate")
    # this test module is not under a gpuplane/ folder: no frame to name
    assert line == (
        "gpuplane: internal error in simulate: ValueError: bad value; please report it "
        "(rerun with --debug for the traceback)"
    )


def test_usage_errors_stay_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["gpuplane", "inventory", "--no-such-flag"])
    with pytest.raises(SystemExit) as exc:
        cli_main.main()
    assert exc.value.code == 2
