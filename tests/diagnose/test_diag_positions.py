"""Findings on typed Pods/Nodes point at their real line in the snapshot (QA: ``line: 0``).

Lines are 1-based: a snapshot file gives each object and field its line; stdin and
live clusters have none, which JSON says with ``null`` and text by leaving it out.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.diagnose.positions import Position, index_positions

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")

MULTI_DOC = """\
# two documents; the node is the second
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
# the GPU node
apiVersion: v1
kind: Node
metadata:
  labels:
    nvidia.com/gpu.present: "true"
  name: "gpu-x"   # quoted name
status:
  allocatable:
    cpu: "8"
    pods: "110"
  capacity:
    cpu: "8"
    pods: "110"
"""

NODE_LIST_JSON = """\
{
  "apiVersion": "v1",
  "kind": "NodeList",
  "items": [
    {
      "metadata": {"name": "cpu-1"},
      "status": {"allocatable": {"cpu": "8", "pods": "110"}}
    },
    {
      "metadata": {
        "name": "gpu-x",
        "labels": {"nvidia.com/gpu.present": "true"}
      },
      "status": {"allocatable": {"cpu": "8", "pods": "110"}}
    }
  ]
}
"""


def _findings(*args: str, stdin: str | None = None) -> list[dict]:
    result = CliRunner().invoke(cli, ["diagnose", *args, "-f", "json"], input=stdin)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["findings"]


def _where(findings: list[dict], rule: str) -> tuple[str, int | None, str]:
    found = next(f for f in findings if f["rule"] == rule)
    return found["path"], found["line"], found["field"]


def test_demo_has_no_zero_lines() -> None:
    findings = _findings("--cluster", DEMO)
    assert all(f["line"] is None or f["line"] > 0 for f in findings)
    assert [f for f in findings if not f["line"]] == []  # every object of the demo file has its line
    assert _where(findings, "gpu-operator-pods-failing") == (DEMO, 12547, "status")
    assert _where(findings, "mig-strategy-mismatch") == (
        DEMO,
        15892,
        "spec.containers[0].resources.limits[nvidia.com/gpu]",
    )
    assert _where(findings, "mig-config-failed") == (
        DEMO,
        1573,
        "metadata.labels[nvidia.com/mig.config.state]",
    )
    worker = [f["line"] for f in findings if f["rule"] == "pending-gpu-pod"]
    assert worker == [13647, 13732, 15741, 15814, 15884]


def test_multi_document_yaml_field_line(tmp_path: Path) -> None:
    snapshot = tmp_path / "multi.yaml"
    snapshot.write_text(MULTI_DOC, encoding="utf-8")
    findings = _findings("--cluster", str(snapshot))
    # status.allocatable of the second document, under its comment line.
    assert _where(findings, "gpu-node-not-advertising") == (str(snapshot), 15, "status.allocatable")
    assert index_positions(str(snapshot))[("Node", "", "gpu-x")].line == 8


def test_json_list_items_without_kind(tmp_path: Path) -> None:
    snapshot = tmp_path / "nodes.json"
    snapshot.write_text(NODE_LIST_JSON, encoding="utf-8")
    findings = _findings("--cluster", str(snapshot))
    assert _where(findings, "gpu-node-not-advertising") == (str(snapshot), 9, "status.allocatable")
    assert index_positions(str(snapshot)) == {
        ("Node", "", "cpu-1"): Position(str(snapshot), 5),
        ("Node", "", "gpu-x"): Position(str(snapshot), 9),
    }


def test_folder_source_points_at_the_file(tmp_path: Path) -> None:
    (tmp_path / "a-namespaces.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n", encoding="utf-8"
    )
    (tmp_path / "b-nodes.yaml").write_text(MULTI_DOC, encoding="utf-8")
    findings = _findings("--cluster", str(tmp_path))
    assert _where(findings, "gpu-node-not-advertising") == (
        str(tmp_path / "b-nodes.yaml"),
        15,
        "status.allocatable",
    )


def test_stdin_has_no_line_null_in_json_and_none_in_text() -> None:
    findings = _findings("--cluster", "-", stdin=MULTI_DOC)
    assert _where(findings, "gpu-node-not-advertising") == ("-", None, "status.allocatable")
    result = CliRunner().invoke(cli, ["diagnose", "--cluster", "-"], input=MULTI_DOC)
    assert "  error    gpu-node-not-advertising  Node gpu-x\n" in result.stdout
    assert ":0" not in result.stdout


def test_text_report_shows_file_and_line() -> None:
    result = CliRunner().invoke(cli, ["diagnose", "--cluster", DEMO])
    assert f"  error    gpu-node-not-advertising  Node node-l40s-1  ({DEMO}:2311)\n" in result.stdout
    assert (
        f"  info     gpu-workload-without-priority  Pod team-vision/notebook-alice-0  ({DEMO}:14024)\n"
        in result.stdout
    )
    assert ":0)" not in result.stdout
