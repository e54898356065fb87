"""Regressions from the lint QA pass: each test names the finding it pins.

Exact outputs throughout: these are the strings a user sees.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.lint.config import LintConfig
from gpuplane.lint.context import join_labels, object_label
from gpuplane.lint.engine import run_lint
from gpuplane.report.lint_text import summary_line
from gpuplane.rule_catalog import all_rules
from gpuplane.sources.loader import load_text
from gpuplane.sources.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DEMO = str(EXAMPLES / "clusters" / "demo.yaml")


def _lint(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["lint", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _rules(text: str, *rule_ids: str, cluster: object = None) -> list[str]:
    loaded = load_text(text, "t.yaml")
    assert not loaded.errors, loaded.errors
    rules = [m for m in all_rules() if m.id in rule_ids]
    result = run_lint(loaded.objects, cluster=cluster, config=LintConfig(), rules=rules)
    assert not result.failures, result.failures
    return [f"{f.rule}: {f.message}" for f in result.findings]


# 1. gpu-unrequested-cuda-image must see an invalid GPU quantity as a GPU request -----------------


def test_fractional_gpu_example_is_not_a_cuda_image_without_gpu() -> None:
    code, out, _ = _lint(str(EXAMPLES / "manifests" / "fractional-gpu.yaml"), "-f", "json")
    assert code == 1
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["gpu-fractional-quantity"]


CUDA_POD = """apiVersion: v1
kind: Pod
metadata: {{name: nb, namespace: ml}}
spec:
  containers:
  - name: nb
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {{{limits}}}
"""


@pytest.mark.parametrize(
    ("limits", "reported"),
    [
        ("nvidia.com/gpu: 0.5", False),
        ('nvidia.com/gpu: "two"', False),
        ("nvidia.com/gpu: 1", False),
        ("nvidia.com/gpu: 0", True),  # an explicit zero asks for no GPU: the image still sees them all
        ('cpu: "1"', True),
    ],
)
def test_cuda_image_rule_counts_any_gpu_request(limits: str, reported: bool) -> None:
    found = _rules(CUDA_POD.format(limits=limits), "gpu-unrequested-cuda-image")
    assert bool(found) is reported, found


# 2. duplicate keys are refused like kubectl refuses them ------------------------------------------


DUPLICATE = """apiVersion: v1
kind: Pod
metadata:
  name: twice
  namespace: team-nlp
spec:
  containers:
  - name: main
    image: busybox:1.36
    resources:
      limits:
        nvidia.com/gpu: 1
      limits:
        cpu: "1"
---
apiVersion: v1
kind: Pod
metadata: {name: still-read, namespace: team-nlp}
spec:
  containers:
  - {name: main, image: busybox:1.36, resources: {requests: {nvidia.com/gpu: 1}}}
"""


def test_duplicate_key_is_a_load_error_and_the_rest_is_linted(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(DUPLICATE)
    code, out, err = _lint(str(path), "-f", "json")
    assert code == 2
    assert err == (
        f'{path}:13: duplicate key "limits" (first at line 11): '
        "kubectl and the API server reject the object\n"
    )
    doc = json.loads(out)
    assert doc["summary"]["objects"] == 1
    assert {f["object"]["name"] for f in doc["findings"]} == {"still-read"}


# 3. wording ----------------------------------------------------------------------------------------


def test_quota_invalid_key_message_has_no_stray_punctuation() -> None:
    code, out, _ = _lint(str(EXAMPLES / "manifests" / "quota-limits-key.yaml"), "-f", "json")
    assert code == 1
    messages = [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "quota-gpu-invalid-key"]
    assert messages == [
        "ResourceQuota team-vision/gpu-quota limits limits.nvidia.com/gpu: quota never charges "
        "extended resources under limits.: it enforces nothing"
    ]


NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
      - key: karpenter.k8s.aws/instance-gpu-count
        operator: Gt
        values: ["0"]
      taints:
      - key: nvidia.com/gpu
        effect: NoSchedule
  limits:
    nvidia.com/gpu: 16
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
"""


def test_consolidation_lists_each_training_job_once(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(NODEPOOL)
    manifests = EXAMPLES / "manifests"
    code, out, _ = _lint(
        str(pool),
        str(manifests / "pytorchjob-no-gang.yaml"),
        str(manifests / "good" / "pytorchjob-gang.yaml"),
        "-f",
        "json",
        "--enable",
        "karpenter-consolidation-disrupts-training",
    )
    assert code == 0  # a warning, below the default --fail-on error
    messages = [f["message"] for f in json.loads(out)["findings"]]
    assert messages == [
        "GPU NodePool gpu consolidates underutilized nodes (WhenEmptyOrUnderutilized) with no budget blocking it, "
        "and training pods of PyTorchJob team-nlp/llama-pretrain lack karpenter.sh/do-not-disrupt: Karpenter can "
        "evict a rank mid-run and the whole job loses its progress since the last checkpoint."
    ]


MIG_POD = """apiVersion: v1
kind: Pod
metadata:
  name: mig-user
  namespace: team-nlp
spec:
  containers:
  - name: main
    image: busybox:1.36
    resources:
      limits:
        nvidia.com/mig-5g.50gb: 1
"""


def test_unadvertised_mig_profile_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "mig.yaml"
    path.write_text(MIG_POD)
    code, out, _ = _lint(
        str(path),
        "--cluster",
        DEMO,
        "-f",
        "json",
        "--enable",
        "gpu-unknown-resource-name,mig-profile-unknown",
    )
    assert code == 1
    findings = json.loads(out)["findings"]
    assert [(f["rule"], f["line"], f["message"]) for f in findings] == [
        (
            "mig-profile-unknown",
            12,
            'Pod team-nlp/mig-user, container "main" asks for nvidia.com/mig-5g.50gb: no GPU model offers the MIG '
            "profile 5g.50gb, so no node ever advertises it and the pod stays Pending "
            "(Insufficient nvidia.com/mig-5g.50gb).",
        )
    ]


def test_other_unadvertised_extended_resources_are_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "fpga.yaml"
    path.write_text(MIG_POD.replace("nvidia.com/mig-5g.50gb", "example.com/fpga"))
    code, out, _ = _lint(str(path), "--cluster", DEMO, "-f", "json", "--enable", "gpu-unknown-resource-name")
    assert code == 1
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["gpu-unknown-resource-name"]


def test_one_object_label_everywhere() -> None:
    assert (
        object_label(
            Manifest({"kind": "Deployment", "metadata": {"name": "llama-70b", "namespace": "inference"}})
        )
        == "Deployment inference/llama-70b"
    )
    assert object_label(Manifest({"kind": "NodePool", "metadata": {"name": "gpu"}})) == "NodePool gpu"
    assert join_labels(["a", "b", "a", "c", "d", "b", "e"]) == "a, b, c and 2 more"
    assert join_labels(["x", "x"]) == "x"


def test_example_findings_name_namespaced_objects_with_their_namespace() -> None:
    """QA: "Deployment llama-70b" beside "Deployment inference/llama-70b" in one run."""
    code, out, _ = _lint(str(EXAMPLES / "manifests"), "--cluster", DEMO, "-f", "json")
    assert code == 1
    for finding in json.loads(out)["findings"]:
        ref = finding["object"]
        if ref["namespace"]:
            bare = f"{ref['kind']} {ref['name']}"
            assert not re.search(rf"\b{re.escape(bare)}\b", finding["message"]), finding["message"]
            assert f"{ref['kind']} {ref['namespace']}/{ref['name']}" in finding["message"], finding["message"]


@pytest.mark.parametrize(
    ("counts", "line"),
    [
        (
            {"findings": 1, "error": 0, "warning": 1, "info": 0, "objects": 1},
            "1 finding (0 errors, 1 warning, 0 info) in 1 object",
        ),
        (
            {"findings": 3, "error": 1, "warning": 2, "info": 0, "objects": 14},
            "3 findings (1 error, 2 warnings, 0 info) in 14 objects",
        ),
        ({"findings": 0, "error": 0, "warning": 0, "info": 0, "objects": 0}, "No findings in 0 objects."),
    ],
)
def test_summary_is_plural_aware(counts: dict[str, int], line: str) -> None:
    assert summary_line(counts) == line


def test_cpu_amounts_read_like_a_person_writes_them() -> None:
    from gpuplane.k8s.requests import format_amount

    assert format_amount("cpu", 64000) == "64 cpu"
    assert format_amount("cpu", 500) == "500m cpu"
    assert format_amount("memory", 2 * 1024**3) == "2Gi memory"
    assert format_amount("nvidia.com/gpu", 8) == "8 nvidia.com/gpu"


# 4. empty inputs -----------------------------------------------------------------------------------


def test_empty_folder_notes_it_and_exits_0(tmp_path: Path) -> None:
    code, out, err = _lint(str(tmp_path))
    assert (code, out, err) == (
        0,
        "No findings in 0 objects.\n",
        f"gpuplane: no manifests found in {tmp_path}\n",
    )


@pytest.mark.parametrize("text", ["", "\n\n", "# rendered nothing\n---\n"])
def test_empty_stdin_notes_it_and_exits_0(text: str) -> None:
    code, out, err = _lint("-", stdin=text)
    assert (code, out, err) == (
        0,
        "No findings in 0 objects.\n",
        "gpuplane: no manifests found in standard input\n",
    )


def test_an_empty_file_named_on_the_command_line_stays_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    code, _, err = _lint(str(path))
    assert (code, err) == (2, f"{path}: empty file: no Kubernetes objects\n")


# 5. sidecars in the per-pod GPU total --------------------------------------------------------------


def test_effective_gpu_requests_counts_sidecars() -> None:
    from gpuplane.k8s.workloads import expand_all
    from gpuplane.lint import kinds

    text = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  initContainers:
  - {name: sidecar, image: x, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}
  - {name: setup, image: x, resources: {limits: {nvidia.com/gpu: 2}}}
  containers:
  - {name: main, image: x, resources: {limits: {nvidia.com/gpu: 2}}}
"""
    (ps,) = expand_all(load_text(text, "p.yaml").objects)
    # sidecar 1 + main 2 = 3 while running; setup needs 2 + the sidecar's 1 = 3 while it runs
    assert kinds.effective_gpu_requests(ps) == {"nvidia.com/gpu": 3}


# 6. help texts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["lint"], ["rules"], ["explain"], ["why-pending"]], ids=" ".join)
def test_help_texts_teach_with_runnable_examples(command: list[str]) -> None:
    """The layout tests/test_examples.py checks for the other commands: a description, a blank line,
    an Examples: block kept line by line (bundled files only), Exit codes: in its own paragraph."""
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    text = result.stdout
    description = text.split("\n\n", 2)[1]
    assert description.startswith("  ") and "Examples:" not in description
    assert "\n\n  Examples:\n    gpuplane " in text
    block = text.split("\n\n  Examples:\n", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith("    ") for line in block.splitlines())
    assert "\n\n  Exit codes: " in text
    for path in re.findall(r"examples/[\w./-]+\.yaml", block):
        assert (ROOT / path).is_file(), path
