"""Suppression annotations users can trust (issue 12 item 6): ``gpuplane.io/ignore`` and the
per-rule ``ignore-rule.gpuplane.io/<rule-id>: "<reason>"`` (kube-linter's ``ignore-check.kube-linter.io``
convention); unknown ids are reported, suppressed findings are counted and listed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
  annotations:
{annotations}
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:24.01-py3
      resources:
        limits:
          nvidia.com/gpu: 0.5
"""


def lint(tmp_path: Path, annotations: str, *args: str):
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(annotations=annotations))
    res = CliRunner().invoke(cli, ["lint", "--enable", "gpu-fractional-quantity", *args, str(path)])
    return res, str(path)


def test_per_rule_annotation_suppresses_with_its_reason(tmp_path: Path) -> None:
    res, path = lint(
        tmp_path, '    ignore-rule.gpuplane.io/gpu-fractional-quantity: "webhook rounds it"', "-f", "json"
    )
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["findings"] == []
    assert doc["summary"] == {
        "objects": 1,
        "findings": 0,
        "error": 0,
        "warning": 0,
        "info": 0,
        "suppressed": 1,
    }
    assert doc["suppressed"] == [
        {
            "rule": "gpu-fractional-quantity",
            "severity": "error",
            "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "trainer"},
            "path": path,
            "line": 14,  # nvidia.com/gpu: 0.5
            "reason": "webhook rounds it",
        }
    ]
    assert res.stderr == ""


def test_list_annotation_suppresses_without_reason_and_text_counts_it(tmp_path: Path) -> None:
    res, _ = lint(tmp_path, '    gpuplane.io/ignore: "gpu-fractional-quantity"')
    assert res.exit_code == 0
    assert res.stdout == "No findings in 1 object; 1 suppressed.\n"
    res, _ = lint(tmp_path, '    gpuplane.io/ignore: "all"', "-f", "json")
    assert [s["reason"] for s in json.loads(res.stdout)["suppressed"]] == [""]


def test_unsuppressed_run_has_no_suppressed_key(tmp_path: Path) -> None:
    res, _ = lint(tmp_path, "    team: ml", "-f", "json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert "suppressed" not in doc and "suppressed" not in doc["summary"]
    assert [f["rule"] for f in doc["findings"]] == ["gpu-fractional-quantity"]


def test_unknown_ids_are_reported_with_the_closest_known_id(tmp_path: Path) -> None:
    res, path = lint(
        tmp_path,
        '    gpuplane.io/ignore: "gpu-fractional-quantty,all-the-things"\n'
        '    ignore-rule.gpuplane.io/shm-to-small: "not used"',
    )
    assert res.exit_code == 1  # the misspelt ids silence nothing
    assert res.stdout.splitlines()[-1] == "1 finding (1 error, 0 warnings, 0 info) in 1 object"
    assert res.stderr.splitlines() == [
        f"gpuplane: warning: {path}:7: Pod ml/trainer: gpuplane.io/ignore: unknown rule id "
        "'all-the-things' (see `gpuplane rules`)",
        f"gpuplane: warning: {path}:7: Pod ml/trainer: gpuplane.io/ignore: unknown rule id "
        "'gpu-fractional-quantty'; did you mean gpu-fractional-quantity?",
        f"gpuplane: warning: {path}:8: Pod ml/trainer: ignore-rule.gpuplane.io/shm-to-small: unknown rule id "
        "'shm-to-small'; did you mean shm-too-small?",
    ]


def test_all_is_only_a_word_of_the_list_form(tmp_path: Path) -> None:
    res, path = lint(tmp_path, '    ignore-rule.gpuplane.io/all: "everything"')
    assert res.exit_code == 1  # not a wildcard: nothing is silenced
    assert res.stderr == (
        f"gpuplane: warning: {path}:7: Pod ml/trainer: ignore-rule.gpuplane.io/all: unknown rule id 'all' "
        "(see `gpuplane rules`)\n"
    )


def test_github_summary_counts_suppressed_findings(tmp_path: Path) -> None:
    res, _ = lint(
        tmp_path, '    ignore-rule.gpuplane.io/gpu-fractional-quantity: "webhook rounds it"', "-f", "github"
    )
    assert res.exit_code == 0
    assert res.stdout == ""  # no annotation for a suppressed finding
    assert res.stderr == "No findings in 1 object; 1 suppressed.\n"
    res, _ = lint(tmp_path, "    team: ml", "-f", "github")
    assert res.stdout.startswith("::error file=")
    assert res.stderr == "1 finding (1 error, 0 warnings, 0 info) in 1 object\n"
