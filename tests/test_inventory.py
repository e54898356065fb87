"""``gpuplane inventory``: exact JSON on the demo cluster, flags on a small fixture, text smoke test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.diagnose.inventory import build_inventory
from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources import Manifest
from gpuplane.sources.cluster import load_cluster_state

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "clusters" / "demo.yaml"
SMALL = ROOT / "tests" / "fixtures" / "cluster" / "small.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def demo() -> dict:
    code, out, err = run("inventory", "--cluster", str(DEMO), "-f", "json")
    assert code == 0, err
    assert err == ""
    return json.loads(out)


def node(doc: dict, name: str) -> dict:
    return next(n for n in doc["nodes"] if n["name"] == name)


def test_demo_summary(demo: dict) -> None:
    assert demo["kubernetes_version"] == "1.31"
    assert demo["summary"] == {
        "nodes": 14,
        "gpu_nodes": 12,
        "gpus": 71,
        "allocatable": 95,
        "allocated": 49,
        "free": 46,
        # the 46 free units told apart: 5 A100 + 4 H100 GPUs, 25 + 6 MIG devices, 6 L4 replicas
        "free_gpus": 9,
        "free_mig_devices": 31,
        "free_shared_replicas": 6,
        "shared_nodes": 3,
        "problem_nodes": 3,
    }


def test_demo_model_totals(demo: dict) -> None:
    assert [
        (m["model"], m["nodes"], m["gpus"], m["allocatable"], m["allocated"], m["free"])
        for m in demo["models"]
    ] == [
        ("A100-40GB", 6, 48, 67, 31, 36),  # node-a100-mig-2's 8 boards advertise nothing
        ("H100-80GB", 2, 16, 16, 12, 4),  # the Succeeded data-prep pod's 4 GPUs are not counted
        ("L4", 3, 3, 12, 6, 6),  # 3 boards x 4 time-slicing replicas
        ("L40S", 1, 4, 0, 0, 0),  # device plugin down: nothing advertised
    ]
    assert demo["models"][0]["resources"] == {
        "nvidia.com/gpu": {"capacity": 32, "allocatable": 31, "allocated": 26, "free": 5},
        "nvidia.com/mig-1g.5gb": {"capacity": 28, "allocatable": 28, "allocated": 3, "free": 25},
        "nvidia.com/mig-3g.20gb": {"capacity": 8, "allocatable": 8, "allocated": 2, "free": 6},
    }


def test_demo_pool_totals(demo: dict) -> None:
    assert [
        (
            p["pool"],
            p["models"],
            p["nodes"],
            p["gpus"],
            p["allocatable"],
            p["allocated"],
            p["free"],
            p["problem_nodes"],
        )
        for p in demo["pools"]
    ] == [
        ("a100-40gb", ["A100-40GB"], 4, 32, 31, 26, 5, 1),
        ("a100-40gb-mig", ["A100-40GB"], 2, 16, 36, 5, 31, 1),
        ("h100-80gb", ["H100-80GB"], 2, 16, 16, 12, 4, 0),
        ("l4-shared", ["L4"], 3, 3, 12, 6, 6, 0),
        ("l40s", ["L40S"], 1, 4, 0, 0, 0, 1),
    ]


def test_demo_failed_mig_node(demo: dict) -> None:
    """A MIG change that failed: GPUs left MIG-enabled with no MIG device, so nothing is advertised."""
    assert node(demo, "node-a100-mig-2") == {
        "name": "node-a100-mig-2",
        "pool": "a100-40gb-mig",
        "instance_type": "p4d.24xlarge",
        "zone": "us-east-1a",
        "model": "A100-40GB",
        "product": "NVIDIA-A100-SXM4-40GB",
        "gpu_memory_gb": 40.0,
        "gpus": 8,
        "allocatable": 0,
        "allocated": 0,
        "free": 0,
        "resources": {},
        "mig": {"strategy": "mixed", "config": "all-3g.20gb", "config_state": "failed", "devices": {}},
        "sharing": None,
        "ready": True,
        "cordoned": False,
        "gpu_pods": 0,
        "flags": [
            {
                "flag": "not-advertising-gpus",
                "message": "labelled with 8 GPU(s) but advertises no GPU resource: the device plugin is not registered",
            },
            {
                "flag": "mig-config-failed",
                "message": "MIG manager failed to apply config 'all-3g.20gb' (nvidia.com/mig.config.state=failed)",
            },
        ],
    }


def test_demo_unhealthy_gpu_node(demo: dict) -> None:
    assert node(demo, "node-a100-3") == {
        "name": "node-a100-3",
        "pool": "a100-40gb",
        "instance_type": "p4d.24xlarge",
        "zone": "us-east-1a",
        "model": "A100-40GB",
        "product": "NVIDIA-A100-SXM4-40GB",
        "gpu_memory_gb": 40.0,
        "gpus": 8,
        "allocatable": 7,
        "allocated": 5,
        "free": 2,
        "resources": {"nvidia.com/gpu": {"capacity": 8, "allocatable": 7, "allocated": 5, "free": 2}},
        "mig": None,
        "sharing": None,
        "ready": True,
        "cordoned": False,
        "gpu_pods": 2,
        "flags": [
            {
                "flag": "unhealthy-gpus",
                "message": "1 of 8 nvidia.com/gpu unhealthy (allocatable 7 < capacity 8)",
            }
        ],
    }


def test_demo_mig_mixed_node(demo: dict) -> None:
    mig = node(demo, "node-a100-mig-1")
    assert mig["resources"] == {
        "nvidia.com/mig-1g.5gb": {"capacity": 28, "allocatable": 28, "allocated": 3, "free": 25},
        "nvidia.com/mig-3g.20gb": {"capacity": 8, "allocatable": 8, "allocated": 2, "free": 6},
    }
    assert mig["mig"] == {
        "strategy": "mixed",
        "config": "a100-3g20-1g5",
        "config_state": "success",
        "devices": {"1g.5gb": 28, "3g.20gb": 8},
    }
    assert (mig["gpus"], mig["allocatable"], mig["allocated"], mig["free"], mig["gpu_pods"]) == (
        8,
        36,
        5,
        31,
        5,
    )
    assert mig["sharing"] is None and mig["flags"] == []


def test_demo_time_sliced_node_counts_bound_pending_pod(demo: dict) -> None:
    l4 = node(demo, "node-l4-2")
    assert l4["sharing"] == {
        "strategy": "time-slicing",
        "replicas": 4,
        "resources": ["nvidia.com/gpu"],
        "renamed": False,
        "config": "l4-time-sliced-4",
    }
    assert (l4["gpus"], l4["allocatable"], l4["allocated"], l4["free"], l4["product"]) == (
        1,
        4,
        1,
        3,
        "NVIDIA-L4-SHARED",
    )


def test_demo_broken_device_plugin_node(demo: dict) -> None:
    l40s = node(demo, "node-l40s-1")
    assert (l40s["model"], l40s["gpus"], l40s["resources"]) == ("L40S", 4, {})
    assert l40s["flags"] == [
        {
            "flag": "not-advertising-gpus",
            "message": "labelled with 4 GPU(s) but advertises no GPU resource: the device plugin is not registered",
        }
    ]


def test_flags_on_small_fixture() -> None:
    state, errors = load_cluster_state(str(SMALL))
    assert errors == []
    doc = build_inventory(state).to_json()
    assert [n["name"] for n in doc["nodes"]] == ["node-a", "node-d", "node-b"]  # by pool, then name
    assert [f["flag"] for f in node(doc, "node-b")["flags"]] == [
        "not-ready",
        "cordoned",
        "unhealthy-gpus",
        "overcommitted",
    ]
    # Overcommitted node-b has 0 free: it does not hide node-a's free GPU in the totals.
    assert doc["summary"]["free"] == 1
    assert (node(doc, "node-b")["pool"], node(doc, "node-b")["gpus"]) == (
        "p4d.24xlarge",
        8,
    )  # from the catalog
    assert node(doc, "node-d")["pool"] == "l4-pool"


def _node(name: str, labels: dict, capacity: dict) -> Manifest:
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"capacity": capacity, "allocatable": capacity},
        }
    )


def test_mig_single_shared_renamed_and_failed_mig_config() -> None:
    objects = [
        _node(
            "single",
            {
                "nvidia.com/mig.strategy": "single",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
                "nvidia.com/gpu.count": "56",
                "node.kubernetes.io/instance-type": "p4d.24xlarge",
            },
            {"nvidia.com/gpu": "56"},
        ),
        _node(
            "renamed",
            {
                "nvidia.com/gpu.product": "Tesla-T4",
                "nvidia.com/gpu.replicas": "10",
                "nvidia.com/gpu.sharing-strategy": "mps",
                "nvidia.com/gpu.count": "1",
            },
            {"nvidia.com/gpu.shared": "10"},
        ),
        _node(
            "failed",
            {
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/mig.config": "all-1g.10gb",
                "nvidia.com/mig.config.state": "failed",
                "nvidia.com/gpu.count": "8",
            },
            {"nvidia.com/gpu": "8"},
        ),
        _node(
            "invalid",
            {
                "nvidia.com/mig.strategy": "single",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-INVALID",
                "nvidia.com/gpu.count": "0",
            },
            {},
        ),
    ]
    doc = build_inventory(ClusterState.from_objects(objects)).to_json()
    single = node(doc, "single")
    assert single["mig"] == {
        "strategy": "single",
        "config": None,
        "config_state": None,
        "devices": {"1g.5gb": 56},
    }
    assert (single["gpus"], single["model"]) == (8, "A100-40GB")  # GFD count is MIG devices under single
    renamed = node(doc, "renamed")
    assert renamed["sharing"] == {
        "strategy": "mps",
        "replicas": 10,
        "resources": ["nvidia.com/gpu.shared"],
        "renamed": True,
        "config": None,
    }
    assert (renamed["gpus"], renamed["allocatable"], renamed["model"]) == (1, 10, "T4")
    inventory = build_inventory(ClusterState.from_objects(objects))
    assert inventory.free_text() == "74 free: 8 whole GPUs, 56 MIG devices, +10 MPS replicas on 1 shared node"
    assert [f["flag"] for f in node(doc, "failed")["flags"]] == ["mig-config-failed"]
    assert [f["flag"] for f in node(doc, "invalid")["flags"]] == ["not-advertising-gpus", "mig-invalid"]


def test_demo_free_units_keep_time_sliced_replicas_apart() -> None:
    inventory = build_inventory(load_cluster_state(str(DEMO))[0])
    assert inventory.free_text() == (
        "46 free: 9 whole GPUs, 31 MIG devices, +6 time-sliced replicas on 3 shared nodes"
    )
    code, out, _ = run("inventory", "--cluster", str(DEMO))
    assert code == 0
    assert " ".join(out.split()).startswith(
        "GPU inventory of " + str(DEMO) + ": 12 GPU nodes of 14, 71 GPUs, Kubernetes 1.31 Schedulable GPU "
        "units: 49 allocated of 95 allocatable, 46 free: 9 whole GPUs, 31 MIG devices, +6 time-sliced "
        "replicas on 3 shared nodes. By model"
    )


def test_text_output_smoke() -> None:
    code, out, err = run("inventory", "--cluster", str(DEMO))
    assert code == 0, err
    for text in (
        "GPU inventory of",
        "12 GPU nodes of 14, 71 GPUs, Kubernetes 1.31",
        "By model",
        "By pool",
        "A100-40GB",
        "node-a100-mig-1",
        "MIG mixed [a100-3g20-1g5]: 28x 1g.5gb,",
        "8x 3g.20gb",
        "time-slicing x4 (gpu)",
        "gpu 5/7 (capacity 8)",
        "not-advertising-gpus",
        "MIG mixed [all-3g.20gb]",
        "not-advertising-gpus, mig-config-failed",
        "node-a100-3: 1 of 8 nvidia.com/gpu unhealthy (allocatable 7 < capacity 8)",
        "node-a100-mig-2: MIG manager failed to apply config 'all-3g.20gb' (nvidia.com/mig.config.state=failed)",
    ):
        assert text in out, text
    assert "\x1b[" not in out  # plain when not a terminal


def test_text_output_on_a_big_cluster_lists_only_problem_nodes(tmp_path: Path) -> None:
    items = []
    for i in range(45):
        labels = {"karpenter.sh/nodepool": "l4", "nvidia.com/gpu.product": "NVIDIA-L4"}
        capacity = {"nvidia.com/gpu": "1"} if i else {}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i:02d}", "labels": labels},
                "status": {"capacity": capacity, "allocatable": capacity},
            }
        )
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, out, _ = run("inventory", "--cluster", str(path))
    assert code == 0
    assert "Nodes with problems" in out and " n00 " in out and " n01 " not in out
    assert "44 healthy GPU nodes not listed" in out


def test_bad_input_reports_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: x}}\n---\n: [\n"
    )
    code, out, err = run("inventory", "--cluster", str(bad), "-f", "json")
    assert code == 2
    assert err.startswith(f"gpuplane: {bad}:")
    assert json.loads(out)["summary"]["nodes"] == 1  # what loaded is still reported
    code, out, err = run("inventory", "--cluster", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert err.splitlines() == [
        f"gpuplane: {tmp_path / 'missing.yaml'}: no such file or directory",
        f"gpuplane: nothing usable in cluster source '{tmp_path / 'missing.yaml'}'",
    ]
    assert out == ""


def test_cli_exits_0_on_demo_in_a_real_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "inventory", "--cluster", str(DEMO)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "GPU inventory" in proc.stdout


def test_mig_single_without_instance_type_counts_boards_from_the_profile() -> None:
    """Under MIG single, gpu.count and nvidia.com/gpu count MIG devices: 56 x 1g.5gb = 8 A100s
    (7 instances of 1g.5gb per GPU)."""
    fixture = Path(__file__).resolve().parent / "fixtures" / "cluster" / "mig-single-list.json"
    code, out, err = run("inventory", "--cluster", str(fixture), "-f", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    single = node(doc, "mig-single")
    assert (single["gpus"], single["model"], single["allocatable"]) == (8, "A100-40GB", 56)
    assert single["mig"] == {
        "strategy": "single",
        "config": "all-1g.5gb",
        "config_state": "success",
        "devices": {"1g.5gb": 56},
    }
    assert [(m["model"], m["gpus"]) for m in doc["models"]] == [
        ("A100-40GB", 8),
        ("H100-80GB", 2),
        ("MI300X", 8),
    ]
