"""Issue 17 item 3: one place (gpu.labels) knows GPU Feature Discovery appends -SHARED to
nvidia.com/gpu.product on time-sliced nodes (k8s-device-plugin internal/lm/resource.go), so
gpu-type-unpinned suggests the value gpu-selector-matches-no-node accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.app import lint as lint_app
from gpuplane.app.outcome import CLI, Messages
from gpuplane.gpu.labels import product_model, product_selector_values

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")  # its three L4 nodes are time-sliced
POD = """apiVersion: v1
kind: Pod
metadata: {name: infer, namespace: default}
spec:
%s  containers:
  - name: c
    image: vllm/vllm-openai:v0.6.0
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def _lint(text: str) -> list[dict[str, Any]]:
    request = lint_app.LintRequest(
        paths=(),
        inline=text,
        cluster=DEMO,
        enable=frozenset({"gpu-type-unpinned", "gpu-selector-matches-no-node"}),
    )
    outcome = lint_app.run(request, Messages(), CLI)
    return [f.to_json() for f in outcome.result.findings]


def test_product_helpers() -> None:
    assert product_model("NVIDIA-L4-SHARED") == "NVIDIA-L4"
    assert product_model("NVIDIA-L4") == "NVIDIA-L4"
    assert product_selector_values({"NVIDIA-L4-SHARED", "NVIDIA-L40S"}, "NVIDIA-L4") == ["NVIDIA-L4-SHARED"]


def test_suggested_selector_matches_the_time_sliced_nodes() -> None:
    (unpinned,) = _lint(POD % "")
    assert unpinned["rule"] == "gpu-type-unpinned"
    assert unpinned["fix"] == (
        "add nodeSelector: {nvidia.com/gpu.product: <one of NVIDIA-A100-SXM4-40GB, NVIDIA-H100-80GB-HBM3, "
        "NVIDIA-L4-SHARED, NVIDIA-L40S>} (or a preferred affinity)"
    )
    assert _lint(POD % "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4-SHARED}\n") == []
    (wrong,) = _lint(POD % "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n")
    assert wrong["rule"] == "gpu-selector-matches-no-node"
    assert wrong["fix"] == "use nvidia.com/gpu.product: NVIDIA-L4-SHARED, the label the shared nodes carry"
