"""``gpuplane diagnose`` on the demo cluster: JSON contract, text and HTML output, exit codes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["diagnose", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_contract_on_demo() -> None:
    code, out, _ = _run("--cluster", DEMO, "-f", "json")
    assert code == 0
    document = json.loads(out)
    assert set(document) == {"findings", "inventory", "summary"}
    assert document["inventory"]["summary"]["gpu_nodes"] == 12
    rules = Counter(f["rule"] for f in document["findings"] if "evidence" in f)
    # The demo shows every kind of cluster finding (the acceptance criterion).
    assert rules == Counter(
        {
            "pending-gpu-pod": 5,
            "gpu-fragmentation": 4,
            "gang-partially-running": 1,
            "gpu-node-not-advertising": 2,
            "gpu-operator-pods-failing": 1,
            "gpu-unhealthy-devices": 1,
            "mig-config-failed": 1,
        }
    )
    summary = document["summary"]
    assert summary["cluster_findings"] == 15
    assert summary["findings"] == len(document["findings"])
    assert summary["error"] + summary["warning"] + summary["info"] == summary["findings"]
    workload = {f["rule"] for f in document["findings"] if "evidence" not in f}
    assert {"quota-gpu-invalid-key", "gang-scheduling-missing", "mig-strategy-mismatch"} <= workload
    nodes = [f for f in document["findings"] if f["rule"] == "gpu-node-not-advertising"]
    assert [f["object"]["name"] for f in nodes] == ["node-a100-mig-2", "node-l40s-1"]
    mig_node, node = nodes
    assert node["object"] == {"apiVersion": "v1", "kind": "Node", "namespace": None, "name": "node-l40s-1"}
    # The node's status.allocatable line in the snapshot (was 0 before typed objects got positions).
    assert node["path"] == DEMO and node["line"] == 2311
    # A failed MIG change: the device plugin runs, yet has nothing to serve; the MIG manager is the broken link.
    assert (
        "broken link: mig-manager: the MIG manager failed to apply nvidia.com/mig.config='all-3g.20gb' "
        "(nvidia.com/mig.config.state=failed)"
    ) in mig_node["message"]
    mig = next(f for f in document["findings"] if f["rule"] == "mig-config-failed")
    assert mig["message"] == (
        "node node-a100-mig-2: the MIG manager failed to apply nvidia.com/mig.config='all-3g.20gb' "
        "(nvidia.com/mig.config.state=failed); entry 'all-3g.20gb' does not exist in the mig-parted config "
        "gpu-operator/custom-mig-config; its GPUs keep the previous layout or none"
    )
    assert (
        "broken link: device-plugin: pod gpu-operator/nvidia-device-plugin-daemonset-474gw is CrashLoopBackOff"
        in node["message"]
    )
    gang = next(f for f in document["findings"] if f["rule"] == "gang-partially-running")
    assert (
        gang["object"]["kind"] == "PodGroup" and gang["line"] > 0
    )  # the PodGroup's own line in the snapshot


def test_text_report_on_demo() -> None:
    code, out, _ = _run("--cluster", DEMO)
    assert code == 0
    assert out.startswith("gpuplane diagnose: ")
    assert "(Kubernetes 1.31, 14 nodes, 12 GPU nodes, 71 GPUs, 124 pods, 5 Pending)" in out.splitlines()[0]
    assert "Cluster findings (15)" in out
    assert "  error    gpu-node-not-advertising  Node node-l40s-1" in out
    assert (
        "             - Node node-l40s-1 metadata.labels[nvidia.com/gpu.present] = true (marks a GPU node)"
        in out
    )
    assert "GPU inventory" in out


def test_fail_on_and_html_output(tmp_path: Path) -> None:
    code, _, _ = _run("--cluster", DEMO, "-f", "json", "--fail-on", "error")
    assert code == 1
    target = tmp_path / "report.html"
    code, out, err = _run("--cluster", DEMO, "-f", "html", "-o", str(target))
    assert code == 0 and out == ""
    assert f"gpuplane: wrote {target}" in err
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    for chart in (
        "chart-by-model",
        "chart-by-pool",
        "chart-by-namespace",
        "chart-pending-reasons",
        "chart-fragmentation",
        "chart-severity",
    ):
        assert f'<figure id="{chart}">' in page
    # one inline script (the findings filter), allowed by its hash only; nothing fetched from anywhere
    assert page.count("<script") == 1
    assert "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" in page
    assert "http://" not in page and "https://" not in page


def test_bad_source_is_one_line_exit_2(tmp_path: Path) -> None:
    code, out, err = _run("--cluster", str(tmp_path / "missing.yaml"))
    assert code == 2 and out == ""
    assert "Traceback" not in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Node\nmetadata: [unclosed\n", encoding="utf-8")
    code, _, err = _run("--cluster", str(bad))
    assert code == 2 and "Traceback" not in err


def test_unwritable_output_is_one_line(tmp_path: Path) -> None:
    code, _, err = _run("--cluster", DEMO, "-f", "html", "-o", str(tmp_path / "no" / "such" / "dir.html"))
    assert code == 2
    assert err.strip().startswith("gpuplane: -o ")
