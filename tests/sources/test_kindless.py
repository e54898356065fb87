"""Kindless documents: the model's hook, the NVIDIA recogniser gpu/ registers, the CLI's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.gpu.config_files import DEVICE_PLUGIN_CONFIG_KIND, MIG_PARTED_CONFIG_KIND, nvidia_config_kind
from gpuplane.k8s import kindless
from gpuplane.sources.loader import load_text

DEVICE_PLUGIN = "version: v1\nflags:\n  migStrategy: none\n"
MIG_PARTED = "version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"


def test_the_nvidia_recogniser_is_registered() -> None:
    assert nvidia_config_kind in kindless.registered()


@pytest.mark.parametrize(
    ("text", "kind"), [(DEVICE_PLUGIN, DEVICE_PLUGIN_CONFIG_KIND), (MIG_PARTED, MIG_PARTED_CONFIG_KIND)]
)
def test_a_recognised_document_becomes_a_pseudo_object(text: str, kind: str) -> None:
    result = load_text(text, "configs/dp.yaml")
    assert result.errors == []
    [obj] = result.objects
    assert obj.ref() == {"apiVersion": "gpuplane.io/v1", "kind": kind, "namespace": None, "name": "dp.yaml"}
    assert obj.field_line(("data", "version")) == 1


def test_without_a_recogniser_a_kindless_document_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kindless, "_RECOGNISERS", [])
    result = load_text(DEVICE_PLUGIN, "dp.yaml")
    assert [str(e) for e in result.errors] == ["dp.yaml:1: object has no kind"]


def test_another_kindless_document_stays_an_error() -> None:
    result = load_text("version: v1\nfoo: bar\n", "x.yaml")
    assert [str(e) for e in result.errors] == ["x.yaml:1: object has no kind"]


def test_the_cli_registers_the_recogniser_itself(tmp_path: Path) -> None:
    """A fresh process (no test conftest): the root command wires gpu/'s recogniser in."""
    path = tmp_path / "dp.yaml"
    path.write_text("version: v2\nflags:\n  migStrategy: none\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "gpuplane", "lint", str(path), "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "object has no kind" not in done.stderr
    assert '"kind": "DevicePluginConfig"' in done.stdout


def test_the_root_command_registers_before_any_command_runs() -> None:
    """In a fresh process the hook is empty until the root command runs (``inventory --help``
    imports no lint rule, so only the root can have registered it)."""
    code = (
        "from gpuplane.k8s import kindless\n"
        "from gpuplane.cli.main import cli\n"
        "before = len(kindless.registered())\n"
        "try:\n"
        "    cli(['inventory', '--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(before, [f.__name__ for f in kindless.registered()])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 ['nvidia_config_kind']"
