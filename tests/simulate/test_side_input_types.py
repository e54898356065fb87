"""Side inputs of simulate and advise with a field of the wrong type are one line
``file:line: field.path: problem``, exit 2 (issue 11 item 2 reproducers: Karpenter NodePools,
--autoscaler node groups, Kueue ClusterQueues, advise sharing --from; all were exit-3 tracebacks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
JOBS = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")

POOL = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            POOL + "  template:\n    spec:\n      taints: 5\n",
            "7: spec.template.spec.taints: Input should be a valid list (got 5)",
        ),
        (
            POOL + '  template:\n    spec: "x"\n',
            "6: spec.template.spec: Input should be a valid dictionary or instance of TemplateSpec (got 'x')",
        ),
        (
            POOL + "  template:\n    metadata:\n      labels: [a]\n",
            "7: spec.template.metadata.labels: Input should be a valid dictionary (got list)",
        ),
        (POOL + "  limits: [1]\n", "5: spec.limits: Input should be a valid dictionary (got list)"),
        # Taint items as Karpenter's NodePool CRD types them (karpenter.sh_nodepools.yaml: key
        # minLength 1, effect enum NoSchedule/PreferNoSchedule/NoExecute, value a string)
        (
            POOL
            + "  template:\n    spec:\n      taints:\n      - {key: nvidia.com/gpu, effect: NoSchedul}\n",
            "8: spec.template.spec.taints.0.effect: Input should be 'NoSchedule', 'PreferNoSchedule' or "
            "'NoExecute' (got 'NoSchedul')",
        ),
        (
            POOL
            + "  template:\n    spec:\n      taints:\n      - {key: gpu, value: 5, effect: NoSchedule}\n",
            "8: spec.template.spec.taints.0.value: Input should be a valid string (got 5)",
        ),
        (
            POOL + "  template:\n    spec:\n      taints:\n      - {key: '', effect: NoSchedule}\n",
            "8: spec.template.spec.taints.0.key: String should have at least 1 character (got '')",
        ),
        (
            POOL + "  template:\n    spec:\n      startupTaints: [gpu]\n",
            "7: spec.template.spec.startupTaints.0: Input should be a valid dictionary or instance of Taint "
            "(got 'gpu')",
        ),
        (
            POOL + "  template:\n    spec:\n      requirements:\n      - {operator: In, values: [a]}\n",
            "8: spec.template.spec.requirements.0.key: Field required (got dict)",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
            "spec:\n  resourceGroups: [x]\n",
            "5: spec.resourceGroups.0: Input should be a valid dictionary or instance of ResourceGroup "
            "(got 'x')",
        ),
    ],
)
def test_mistyped_manifests_are_one_line_exit_2(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["simulate", "--cluster", CLUSTER, JOBS, str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr == f"gpuplane: {path}:{message}\n"


def test_autoscaler_node_group_spec_string(tmp_path: Path) -> None:
    path = tmp_path / "groups.yaml"
    path.write_text(
        "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterAutoscalerNodeGroup\nmetadata: {name: a100}\n"
        "spec: p4d.24xlarge\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(cli, ["simulate", "--cluster", CLUSTER, JOBS, "--autoscaler", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f"gpuplane: {path}:4: spec: Input should be a valid dictionary or instance of NodeGroupSpec "
        "(got 'p4d.24xlarge')\n"
    )


def test_valid_node_pool_still_runs() -> None:
    pool = str(ROOT / "tests" / "fixtures" / "simulate" / "karpenter-image-pull.yaml")
    res = CliRunner().invoke(cli, ["simulate", "--cluster", CLUSTER, pool])
    assert res.exit_code in (0, 1), res.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (".inf", "2: workloads.0.mem: Input should be a finite number (got inf)"),
        ("1" * 401, "2: workloads.0.mem: Input should be a valid number (got 11111111111111111111111111"),
    ],
)
def test_advise_from_mem_out_of_range(tmp_path: Path, value: str, message: str) -> None:
    path = tmp_path / "workloads.yaml"
    path.write_text(f"workloads:\n- {{name: a, mem: {value}, util: 10}}\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["advise", "sharing", "--gpu", "A100-80GB", "--from", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"gpuplane: {path}:{message}")
    assert res.stderr.count("\n") == 1


def test_autoscaler_taint_without_effect(tmp_path: Path) -> None:
    """core/v1 Taint requires ``effect`` (k8s.io/api core/v1 types.go); found by bench/fuzz.py."""
    path = tmp_path / "groups.yaml"
    path.write_text(
        "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterAutoscalerNodeGroup\nmetadata: {name: a100}\n"
        "spec:\n  instanceType: p4d.24xlarge\n  taints:\n  - {key: nvidia.com/gpu}\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(cli, ["simulate", "--cluster", CLUSTER, JOBS, "--autoscaler", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr == f"gpuplane: {path}:7: spec.taints.0.effect: Field required (got dict)\n"
