"""``--fix``: mechanical patches applied with ruamel round-trip, comments and order kept."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli

SOURCE = """\
# team-a training
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu   # quota
  namespace: team-a
spec:
  hard:
    requests.cpu: "64"
    limits.nvidia.com/gpu: 8   # wrong key
    pods: "100"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: prep
          image: nvcr.io/nvidia/pytorch:24.05-py3
        - name: train
          image: registry.example.com/train:1   # pinned
          resources:
            requests:
              nvidia.com/gpu: 2
"""

EXPECTED = """\
# team-a training
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu   # quota
  namespace: team-a
spec:
  hard:
    requests.cpu: "64"
    requests.nvidia.com/gpu: 8 # wrong key
    pods: "100"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: prep
          image: nvcr.io/nvidia/pytorch:24.05-py3
          env:
            - name: NVIDIA_VISIBLE_DEVICES
              value: void
        - name: train
          image: registry.example.com/train:1   # pinned
          resources:
            requests:
              nvidia.com/gpu: 2
            limits:
              nvidia.com/gpu: 2
"""

RULES = "quota-gpu-invalid-key,gpu-request-without-limit,gpu-unrequested-cuda-image"


def test_fix_rewrites_in_place_keeping_comments(tmp_path: Path) -> None:
    path = tmp_path / "k8s.yaml"
    path.write_text(SOURCE)
    res = CliRunner().invoke(cli, ["lint", "--fix", "--enable", RULES, str(path)])
    assert "fixed 3 finding(s) in 1 file(s)" in res.stderr
    assert path.read_text() == EXPECTED
    assert res.exit_code == 0  # everything that failed was fixed
    again = CliRunner().invoke(cli, ["lint", "--enable", RULES, str(path)])
    assert again.exit_code == 0 and again.stdout.startswith("No findings")


def test_fix_dry_run_prints_diff_and_keeps_file(tmp_path: Path) -> None:
    path = tmp_path / "k8s.yaml"
    path.write_text(SOURCE)
    res = CliRunner().invoke(cli, ["lint", "--fix", "--dry-run", "--enable", RULES, str(path)])
    assert path.read_text() == SOURCE
    assert (
        "-    limits.nvidia.com/gpu: 8   # wrong key\n+    requests.nvidia.com/gpu: 8 # wrong key\n"
        in res.stdout
    )
    assert "+            limits:\n+              nvidia.com/gpu: 2\n" in res.stdout
    assert "would fix 3 finding(s)" in res.stderr
