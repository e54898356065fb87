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


def test_simulate_pvc_with_mistyped_access_modes(tmp_path: Path) -> None:
    """bench/fuzz.py: ``accessModes: true`` made VolumeRestrictions raise TypeError (exit 3); a
    mode list of the wrong type now holds no mode, and the claim stays unbound like the rest."""
    import yaml

    docs = list(yaml.safe_load_all((ROOT / "tests/fixtures/simulate/pvc-immediate.yaml").read_text()))
    for doc in docs:
        if doc and doc.get("kind") == "PersistentVolumeClaim":
            doc["spec"]["accessModes"] = True
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    res = CliRunner().invoke(
        cli, ["simulate", "--cluster", str(ROOT / "examples/simulate/cluster.yaml"), str(path)]
    )
    assert res.exit_code == 0, res.output
    assert (
        "  default/reader: 0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."
        in res.stdout
    )


def test_generate_blueprint_with_a_401_digit_size(tmp_path: Path) -> None:
    """bench/fuzz.py: ``root_volume_gi`` of 401 digits overflowed the float sizing (exit 3)."""
    path = tmp_path / "bp.yaml"
    path.write_text(
        f"name: x\nprovider: eks\ngpu_pools:\n- name: a\n  root_volume_gi: {'9' * 401}\n", encoding="utf-8"
    )
    res = CliRunner().invoke(cli, ["generate", str(path), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f"{path}: gpu_pools[0].root_volume_gi: number too large (at most 1,000,000,000,000,000)\n"
        f"gpuplane: {path}: blueprint refused (1 problem); nothing written\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("count", ["9223372036854775808", "1741834094"])
def test_advise_sharing_count_is_capped(tmp_path: Path, count: str) -> None:
    """bench/fuzz.py: a workload ``count`` of 2**63 (or 1.7e9) grew advise sharing's MIG plan until
    the kernel killed the process (13 GB); it is capped like advise mig's demand."""
    path = tmp_path / "workloads.yaml"
    path.write_text(
        f"workloads:\n- {{name: notebooks, mem: 10, util: 15, count: {count}}}\n", encoding="utf-8"
    )
    res = CliRunner().invoke(cli, ["advise", "sharing", "--gpu", "A100-80GB", "--from", str(path)])
    assert res.exit_code == 2, res.output
    assert (
        res.stderr == "gpuplane: workload 'notebooks': count must be at most 100,000 (the planner's limit)\n"
    )
