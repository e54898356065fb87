"""Contradicting blueprints are refused with a message naming the field."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuplane.generate.blueprint import BlueprintError, parse_blueprint
from gpuplane.generate.checks import check_blueprint
from gpuplane.generate.engine import render_blueprint

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "blueprints"


def _load(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())


def _refused(data: dict) -> list[str]:
    with pytest.raises(BlueprintError) as exc:
        render_blueprint(parse_blueprint(data))
    return exc.value.problems


def test_mig_profile_not_offered() -> None:
    data = _load("onprem-dgx-mig")
    data["gpu_pools"][1]["sharing"]["mig_layout"] = {"3g.20gb": 2}
    # The pool's MIG slices then exist nowhere, so quotas on them are reported too.
    assert _refused(data)[:1] == [
        "gpu_pools[1].sharing.mig_layout.3g.20gb: H100-80GB does not offer MIG profile 3g.20gb "
        "(offered: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"
    ]


def test_quota_larger_than_pool() -> None:
    data = _load("gke-inference")
    data["tenants"][0]["gpu_quota"] = {"L4": 40}
    assert _refused(data) == [
        "tenants[0].gpu_quota.L4: quota 40 is larger than the pools' 24 at their largest size"
    ]


def test_queue_names_missing_flavor() -> None:
    data = _load("eks-training")
    data["tenants"][0]["flavors"] = ["a100-train"]
    problems = _refused(data)
    assert problems == [
        "tenants[0].flavors[0]: queue names flavor 'a100-train', but no gpu_pool of that name exists "
        "(flavors: h100-train, l40s-serve)"
    ]


def test_rwo_shared_dataset() -> None:
    data = _load("gke-inference")
    data["storage"]["shared_datasets"][0]["access_mode"] = "ReadWriteOnce"
    assert _refused(data) == [
        "storage.shared_datasets[0].access_mode: a shared dataset is mounted by pods on many nodes; ReadWriteOnce "
        "allows one node (use ReadWriteMany or ReadOnlyMany)",
        "storage.model_cache.volume: models is ReadWriteOnce; model_cache are written, it must be ReadWriteMany",
    ]


def test_layout_that_does_not_fit() -> None:
    data = _load("onprem-dgx-mig")
    data["gpu_pools"][1]["sharing"]["mig_layout"] = {"4g.40gb": 1, "3g.40gb": 1, "1g.10gb": 1}
    assert _refused(data)[:1] == [
        "gpu_pools[1].sharing.mig_layout: 1 x 4g.40gb + 1 x 3g.40gb + 1 x 1g.10gb needs 8 compute "
        "slices; H100-80GB has 7"
    ]


def test_mig_on_model_without_mig() -> None:
    data = _load("gke-inference")
    data["gpu_pools"][0]["sharing"] = {"mode": "mig", "mig_layout": {"1g.5gb": 7}}
    assert "gpu_pools[0].sharing.mode: L4 does not support MIG" in _refused(data)


def test_schema_error_names_field() -> None:
    data = copy.deepcopy(_load("gke-inference"))
    data["gpu_pools"][1]["sharing"]["replicas"] = "four"
    data["tenants"][0]["typo"] = 1
    with pytest.raises(BlueprintError) as exc:
        parse_blueprint(data)
    assert exc.value.problems == [
        "gpu_pools[1].sharing.replicas: Input should be a valid integer, unable to parse string as an integer",
        "tenants[0].typo: unknown field",
    ]


def test_cli_refuses_without_traceback(tmp_path: Path) -> None:
    data = _load("gke-inference")
    data["storage"]["shared_datasets"][0]["access_mode"] = "ReadWriteOnce"
    bp = tmp_path / "bad.yaml"
    bp.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "generate", str(bp), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "storage.shared_datasets[0].access_mode" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_schema_and_explain() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "generate", "--schema"], capture_output=True, text=True
    )
    schema = json.loads(proc.stdout)
    assert schema["title"] == "gpuplane platform blueprint"
    assert {"provider", "gpu_pools", "tenants", "storage", "workloads"} <= set(schema["properties"])
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "generate", str(EXAMPLES / "onprem-dgx-mig.yaml"), "--explain"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[gpu-sharing] gpu_pools[1].sharing: MIG (1 x 1g.10gb" not in proc.stdout
    assert (
        "[gpu-sharing] gpu_pools[1].sharing: MIG (2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb per GPU)"
        in proc.stdout
    )
    assert "WaitForFirstConsumer" in proc.stdout


def test_mig_demand_is_solved_by_the_planner() -> None:
    """A slice demand instead of a layout: the exact planner carves the pool (2 DGX x 8 H100).

    The demand is per node, and is what the example's layout (3g + 2g + 2 x 1g per GPU)
    offers on a node's 8 GPUs: every GPU's 8 memory slices are used (4 + 2 + 1 + 1), so
    exactly 8 GPUs are needed.
    """
    data = _load("onprem-dgx-mig")
    sharing = data["gpu_pools"][1]["sharing"]
    sharing.pop("mig_layout")
    sharing["mig_demand"] = {"3g.40gb": 8, "2g.20gb": 8, "1g.10gb": 16}
    problems, layouts = check_blueprint(parse_blueprint(data))
    assert problems == []
    pool = layouts["dgx-mig"]
    assert len(pool) == 8
    totals: dict[str, int] = {}
    for gpu in pool:
        for profile, count in gpu.items():
            totals[profile] = totals.get(profile, 0) + count
    assert totals == {"3g.40gb": 8, "2g.20gb": 8, "1g.10gb": 16}


def test_mig_demand_too_big_for_the_pool() -> None:
    data = _load("onprem-dgx-mig")
    sharing = data["gpu_pools"][1]["sharing"]
    sharing.pop("mig_layout")
    sharing["mig_demand"] = {"7g.80gb": 100}
    problems = _refused(data)
    assert any(p.startswith("gpu_pools[1].sharing.mig_demand") and "cannot host" in p for p in problems), (
        problems
    )
