"""``--fix``: mechanical patches as minimal text edits (every other byte kept), safe and unsafe
fixes (Ruff's model), the findings left after fixing read from the fixed file."""

from __future__ import annotations

import json
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
    requests.nvidia.com/gpu: 8   # wrong key
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


SAFE_ONLY = SOURCE.replace(
    "            requests:\n              nvidia.com/gpu: 2\n",
    "            requests:\n              nvidia.com/gpu: 2\n            limits:\n              nvidia.com/gpu: 2\n",
)


def test_fix_applies_only_safe_fixes_and_reports_the_rest_on_the_fixed_file(tmp_path: Path) -> None:
    path = tmp_path / "k8s.yaml"
    path.write_text(SOURCE)
    res = CliRunner().invoke(cli, ["lint", "--fix", "--enable", RULES, str(path)])
    assert "fixed 1 finding(s) in 1 file(s)" in res.stderr
    assert path.read_text() == SAFE_ONLY
    assert res.exit_code == 1  # the quota error is left: its fix (a rename) is unsafe
    lines = res.stdout.splitlines()
    assert f"  {path}:10  error    quota-gpu-invalid-key       ResourceQuota team-a/gpu limits" in lines[1]
    assert lines[2] == "      fix [unsafe fix]: rename the key to requests.nvidia.com/gpu"
    assert lines[-1] == "No fixes available (2 unsafe fixes can be enabled with the `--unsafe-fixes` option)."


def test_unsafe_fixes_rewrite_in_place_keeping_comments(tmp_path: Path) -> None:
    path = tmp_path / "k8s.yaml"
    path.write_text(SOURCE)
    res = CliRunner().invoke(cli, ["lint", "--fix", "--unsafe-fixes", "--enable", RULES, str(path)])
    assert "fixed 3 finding(s) in 1 file(s)" in res.stderr
    assert path.read_text() == EXPECTED
    assert res.exit_code == 0  # everything that failed was fixed
    again = CliRunner().invoke(cli, ["lint", "--enable", RULES, str(path)])
    assert again.exit_code == 0 and again.stdout.startswith("No findings")


def test_text_output_marks_each_fix() -> None:
    res = CliRunner().invoke(cli, ["lint", "--enable", RULES, "-"], input=SOURCE)
    fixes = [line.strip() for line in res.stdout.splitlines() if line.startswith("      fix")]
    assert fixes == [
        "fix [unsafe fix]: rename the key to requests.nvidia.com/gpu",
        "fix [unsafe fix]: add env NVIDIA_VISIBLE_DEVICES=void (or request the GPU it needs in resources.limits)",
        "fix [*]: set resources.limits[nvidia.com/gpu]: 2 (a limit alone is enough: the request defaults to it)",
    ]
    assert res.stdout.splitlines()[-1] == (
        "[*] 1 fixable with the `--fix` option (2 unsafe fixes can be enabled with the `--unsafe-fixes` option)."
    )
    unsafe = CliRunner().invoke(cli, ["lint", "--unsafe-fixes", "--enable", RULES, "-"], input=SOURCE)
    assert unsafe.stdout.count("fix [*]:") == 3
    assert unsafe.stdout.splitlines()[-1] == "[*] 3 fixable with the `--fix --unsafe-fixes` option."
    data = json.loads(
        CliRunner().invoke(cli, ["lint", "-f", "json", "--enable", RULES, "-"], input=SOURCE).stdout
    )
    assert [(f["rule"], f["fixable"], f["fix_safety"]) for f in data["findings"]] == [
        ("quota-gpu-invalid-key", True, "unsafe"),
        ("gpu-unrequested-cuda-image", True, "unsafe"),
        ("gpu-request-without-limit", True, "safe"),
    ]


def test_fix_dry_run_prints_diff_and_keeps_file(tmp_path: Path) -> None:
    path = tmp_path / "k8s.yaml"
    path.write_text(SOURCE)
    res = CliRunner().invoke(
        cli, ["lint", "--fix", "--unsafe-fixes", "--dry-run", "--enable", RULES, str(path)]
    )
    assert path.read_text() == SOURCE
    assert (
        "-    limits.nvidia.com/gpu: 8   # wrong key\n+    requests.nvidia.com/gpu: 8   # wrong key\n"
        in res.stdout
    )
    assert "+            limits:\n+              nvidia.com/gpu: 2\n" in res.stdout
    assert "would fix 3 finding(s)" in res.stderr


# Flow maps, both quote styles, comments, 4-column indentation, a dash followed by three spaces,
# no final newline: a fix changes only the lines it fixes.
ODD = (
    "# serving\n"
    "apiVersion: apps/v1\n"
    "kind: Deployment\n"
    "metadata: {name: 'serve', namespace: \"ml\"}   # flow, quoted\n"
    "spec:\n"
    "    replicas: 1\n"
    "    selector: {matchLabels: {app: serve}}\n"
    "    template:\n"
    "        metadata:\n"
    "            labels: {app: serve}\n"
    "        spec:\n"
    "            containers:\n"
    '            -   name: "vllm"      # the server\n'
    "                image: 'vllm/vllm-openai:v0.8.5'\n"
    "                resources:\n"
    "                    requests: {nvidia.com/gpu: 1, cpu: '8'}   # request only\n"
    "            -   name: 'sidecar'\n"
    "                image: nvcr.io/nvidia/pytorch:24.05-py3\n"
    "                resources: {requests: {nvidia.com/gpu: 2}}"
)
ODD_FIXED = ODD.replace(
    "                    requests: {nvidia.com/gpu: 1, cpu: '8'}   # request only\n",
    "                    requests: {nvidia.com/gpu: 1, cpu: '8'}   # request only\n"
    "                    limits:\n"
    "                        nvidia.com/gpu: 1\n",
).replace(
    "resources: {requests: {nvidia.com/gpu: 2}}",
    "resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 2}}",
)


def test_only_the_fixed_lines_change_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "serve.yaml"
    path.write_bytes(ODD.replace("\n", "\r\n").encode())
    res = CliRunner().invoke(cli, ["lint", "--fix", "--enable", "gpu-request-without-limit", str(path)])
    assert "fixed 2 finding(s) in 1 file(s)" in res.stderr, res.stderr
    assert path.read_bytes() == ODD_FIXED.replace("\n", "\r\n").encode()  # CRLF kept, no final newline added


def test_findings_after_fix_carry_the_lines_of_the_fixed_file(tmp_path: Path) -> None:
    # the first container's fix adds two lines above the second container's finding (no fix)
    source = ODD.replace(
        "resources: {requests: {nvidia.com/gpu: 2}}",
        "resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 1}}",
    )
    path = tmp_path / "serve.yaml"
    path.write_text(source)
    rules = "gpu-request-without-limit,gpu-request-limit-mismatch"
    before = CliRunner().invoke(cli, ["lint", "--enable", rules, str(path)])
    assert f"{path}:19  error    gpu-request-limit-mismatch" in before.stdout
    res = CliRunner().invoke(cli, ["lint", "--fix", "--enable", rules, str(path)])
    assert "fixed 1 finding(s) in 1 file(s)" in res.stderr
    assert f"{path}:21  error    gpu-request-limit-mismatch" in res.stdout
    assert path.read_text().splitlines()[20].startswith("                resources: {requests:")


def test_a_fix_never_masks_a_misspelled_gpu_request(tmp_path: Path) -> None:
    # NVIDIA_VISIBLE_DEVICES=void would hide every GPU from a container that asks for one under a
    # wrong name: the CUDA-image finding (and its fix) give way to gpu-resource-name-typo
    path = tmp_path / "typo.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: train\n"
        "    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits: {nvidia.com/gpus: 1}\n"
    )
    res = CliRunner().invoke(cli, ["lint", "--enable-all", "--fix", "--unsafe-fixes", "--dry-run", str(path)])
    assert "NVIDIA_VISIBLE_DEVICES" not in res.stdout
    assert "-      limits: {nvidia.com/gpus: 1}\n+      limits: {nvidia.com/gpu: 1}\n" in res.stdout
    listed = CliRunner().invoke(cli, ["lint", "--enable-all", "-f", "json", str(path)])
    assert [f["rule"] for f in json.loads(listed.stdout)["findings"]] == ["gpu-resource-name-typo"]
