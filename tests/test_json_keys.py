"""One JSON key style across commands (issue 17 item 3): every key gpuplane names is snake_case.

spec/cli.md is the contract and spells its own keys in snake_case (``gpus_needed``,
``mig_parted``, ``time_s``, ``gpu_utilization``, ``makespan_s``); object references keep the
Kubernetes spelling it gives them (``{"apiVersion", "kind", "namespace", "name"}``). This test walks
the ``-f json`` document of every command that has one, and the structured result of every MCP
tool, on the demo cluster and the examples, and fails on any other key.

Three kinds of mappings are not gpuplane's own field names and are not judged:

- maps keyed by data (node names, resource names, MIG profiles, sharing modes): their parent key
  is in ``DATA_KEYED``; their values are still walked;
- foreign documents carried whole, in their own format (Kubernetes objects ready to apply, a
  mig-parted config, a JSON Schema): their parent key is in ``FOREIGN``, or the mapping is a
  Kubernetes object (``apiVersion`` + ``kind`` + ``metadata``);
- object references: ``apiVersion`` is accepted beside ``kind`` (spec/cli.md's reference shape).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
SIM_CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
DEADLOCK = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")
SIM_FIXTURES = ROOT / "tests" / "fixtures" / "simulate"
METRICS = str(ROOT / "examples" / "usage" / "demo-metrics.json")
MANIFESTS = str(ROOT / "examples" / "manifests")

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")

# Parent keys whose mapping is keyed by data, not by field names.
DATA_KEYED = frozenset(
    {
        "nodes",  # why-pending pods[].nodes: node name -> reasons
        "resources",  # inventory: resource name (nvidia.com/mig-1g.5gb) -> use
        "devices",  # inventory mig.devices: MIG profile -> devices
        "profiles",  # advise mig layout[].profiles: MIG profile -> count
        "demand",  # advise mig / usage mig_plan: MIG profile -> count
        "unplaced",  # advise mig: MIG profile -> count left over
        "gpus_by_mode",  # advise sharing: sharing mode (time-slicing) -> GPUs
        "value",  # diagnose evidence[].value: the observed object field, as the cluster has it
    }
)
# Parent keys holding a document in another tool's format, carried whole.
FOREIGN = frozenset(
    {
        "mig_parted",  # a mig-parted config (mig-configs, mig-enabled, mig-devices)
        "schema",  # blueprint_schema: a JSON Schema (additionalProperties, $defs)
        "kubeflow_notebook_controller_env",  # usage: environment variables (CULL_IDLE_TIME) to set
        "jupyterhub_values",  # usage: Helm values of the JupyterHub chart
    }
)


def bad_keys(document: Any, path: str = "$") -> list[str]:
    """Every key of ``document`` that breaks the style, as ``path.key``."""
    found: list[str] = []
    if isinstance(document, list):
        for item in document:
            found += bad_keys(item, path + "[]")
        return found
    if not isinstance(document, dict):
        return found
    if {"apiVersion", "kind", "metadata"} <= document.keys():
        return found  # a Kubernetes object to apply: its own format
    for key, value in document.items():
        where = f"{path}.{key}"
        if key in FOREIGN:
            continue
        if not (SNAKE.fullmatch(key) or (key == "apiVersion" and "kind" in document)):
            found.append(where)
        if key in DATA_KEYED and isinstance(value, dict):
            for name, item in value.items():
                found += bad_keys(item, f"{where}[{name}]")
        else:
            found += bad_keys(value, where)
    return found


def test_the_walker_catches_every_other_style() -> None:
    document = {
        "summary": {"gpuNodes": 1, "gpu_nodes": 1, "problem-nodes": 0, "Free": 2},
        "nodes": [{"name": "a", "resources": {"nvidia.com/gpu": {"allocatableNow": 1}}}],
        "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "a", "name": "b"},
        "ref": {"apiVersion": "v1"},  # apiVersion without kind is not a reference
        "config": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"x-y": "1"}},
        "mig_parted": {"mig-configs": {}},
    }
    assert bad_keys(document) == [
        "$.summary.gpuNodes",
        "$.summary.problem-nodes",
        "$.summary.Free",
        "$.nodes[].resources[nvidia.com/gpu].allocatableNow",
        "$.ref.apiVersion",
    ]


CLI_RUNS = {
    "lint": ["lint", MANIFESTS],
    "rules": ["rules"],
    "why-pending": ["why-pending", "--cluster", DEMO],
    "diagnose": ["diagnose", "--cluster", DEMO],
    "inventory": ["inventory", "--cluster", DEMO],
    "simulate": ["simulate", "--cluster", SIM_CLUSTER, DEADLOCK],
    "simulate volcano": ["simulate", "--cluster", SIM_CLUSTER, DEADLOCK, "--scheduler", "volcano"],
    "simulate karpenter": [
        "simulate",
        "--cluster",
        str(SIM_FIXTURES / "cpu-1.yaml"),
        str(SIM_FIXTURES / "karpenter-image-pull.yaml"),
    ],
    "advise mig": ["advise", "mig", "--gpu", "A100-40GB", "--demand", "3g.20gb=2,1g.5gb=4"],
    "advise mig infeasible": ["advise", "mig", "--gpu", "A100-40GB", "--demand", "9g.99gb=1"],
    "advise sharing": [
        "advise",
        "sharing",
        "--gpu",
        "H100-80GB",
        "--workload",
        "name=svc,mem=20,util=30,count=4",
        "--workload",
        "name=notebooks,mem=10,util=15,isolation=tenant,latency=interactive,count=20",
        "--kubernetes-version",
        "1.34",
        "--dra-driver",
    ],
    "advise capacity": ["advise", "capacity", "--demand", "H100-80GB=64,L4=8", "--growth", "8"],
    "ask": ["ask", "how do I enable MIG on A100"],
    "usage": ["usage", "--cluster", DEMO, "--metrics", METRICS],
    "policy list": ["policy", "list"],
}


@pytest.mark.parametrize("args", CLI_RUNS.values(), ids=CLI_RUNS.keys())
def test_every_command_json_is_snake_case(args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "-f", "json"])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    assert document  # something was walked
    assert bad_keys(document) == []


def test_every_command_with_json_is_walked() -> None:
    """A command that gains ``-f json`` must be added to CLI_RUNS."""
    import click

    ctx = click.Context(cli)
    with_json: set[str] = set()

    def walk(command: click.Command, path: list[str]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])
            return
        for param in command.params:
            if isinstance(param, click.Option) and "--format" in param.opts:
                choices = getattr(param.type, "choices", ())
                if "json" in choices:
                    with_json.add(" ".join(path))

    walk(cli, [])
    walked = {" ".join(args[: 2 if args[0] in ("advise", "policy") else 1]) for args in CLI_RUNS.values()}
    assert with_json <= walked, sorted(with_json - walked)


def _mcp_calls() -> dict[str, dict[str, Any]]:
    from gpuplane.mcp import tools

    return {
        "lint": {"paths": [MANIFESTS]},
        "list_rules": {},
        "explain_rule": {"rule_id": "gpu-request-without-limit"},
        "why_pending": {"cluster": DEMO},
        "simulate": {"cluster": SIM_CLUSTER, "paths": [DEADLOCK]},
        "inventory": {"cluster": DEMO},
        "diagnose": {"cluster": DEMO},
        "usage": {"metrics_files": [METRICS], "cluster": DEMO},
        "advise_mig": {"gpu": ["A100-40GB"], "demand": {"3g.20gb": 2, "1g.5gb": 4}},
        "advise_sharing": {
            "gpu": "H100-80GB",
            "workloads": [tools.SharingWorkload(name="svc", mem=20, util=30, count=4)],
            "kubernetes_version": "1.34",
            "dra_driver": True,
        },
        "advise_capacity": {"demand": {"H100-80GB": 16}},
        "generate": {"blueprint_path": str(ROOT / "examples" / "blueprints" / "gke-inference.yaml")},
        "blueprint_schema": {},
        "ask": {"question": "how do I enable MIG on A100"},
    }


def test_every_mcp_tool_result_is_snake_case() -> None:
    pytest.importorskip("mcp")
    from gpuplane.mcp.tools import TOOLS

    calls = _mcp_calls()
    assert {spec.name for spec in TOOLS} <= calls.keys(), "a new MCP tool must be walked here"
    bad = {spec.name: bad_keys(spec.fn(**calls[spec.name]).data) for spec in TOOLS}
    assert bad == {spec.name: [] for spec in TOOLS}
