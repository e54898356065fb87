#!/usr/bin/env python3
"""``gpuplane lint --cluster DUMP`` of many distinct GPU workloads, against ``json.load`` of the dump.

Issue 14 item 1: lint's cluster-context rules (gpu-taint-not-tolerated, mig-strategy-mismatch,
gpu-selector-matches-no-node, gpu-type-unpinned, efa-not-requested, gpu-rollout-surge-deadlock)
ask their node questions per node shape (``gpuplane.lint.cluster_nodes``), so their cost is the
distinct questions times the shapes, not the pod sets times the nodes. This bench writes
``--workloads`` GPU workloads that each ask a different question (own tolerations, product
selector, zone affinity, GPU or MIG ask; Deployments and multi-node PyTorchJobs) and lints them
against a ``gen_cluster.py`` dump (``bench_scale.py``'s, generated once under ``bench/out/``), each
measurement a fresh ``nice``d process:

- ``json.load`` of the dump (the baseline);
- ``lint`` of one ConfigMap with ``--cluster`` (reading the dump, no node question);
- ``lint`` of the workloads with ``--cluster -f json --enable-all``.

- the rules alone: in one more process, ``run_lint`` of the workloads against the loaded cluster,
  timed around the call (CPU time), so reading the dump can neither hide nor blur them.

CPU times, as ratios to ``json.load``'s. Usage::

    .venv/bin/python bench/bench_lint_cluster.py --nodes 1000 --workloads 2000
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The dump, the child measurement and the baseline are bench_scale's, so both benches measure alike.
from bench_scale import JSON_LOAD, OUT, ensure_dump, gpuplane_script, median_of  # noqa: E402
from bench_why_pending import child  # noqa: E402

PRODUCTS = ("NVIDIA-A100-SXM4-40GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4", "NVIDIA-L4", "NVIDIA-B200")
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
# The rules alone: load both inputs, then time run_lint (what `lint --enable-all` runs) by CPU time.
RULES_ONLY = (
    "import sys, time\n"
    "from gpuplane.lint.config import LintConfig\n"
    "from gpuplane.lint.engine import run_lint\n"
    "from gpuplane.sources.cluster import load_cluster_state\n"
    "from gpuplane.sources.loader import load_paths\n"
    "state, errors = load_cluster_state(sys.argv[1])\n"
    "objects = load_paths([sys.argv[2]]).objects\n"
    "start = time.process_time()\n"
    "result = run_lint(objects, cluster=state, config=LintConfig(profile='all'))\n"
    "print(time.process_time() - start, len(result.findings))\n"
)
ASKS = ({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 8}, {"nvidia.com/mig-1g.18gb": 1}, {"nvidia.com/gpu": 2})


def workload(i: int) -> dict[str, Any]:
    """GPU workload ``i``: its own toleration (a per-team taint key) makes its taint question distinct."""
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "registry.example/train:1", "resources": {"limits": dict(ASKS[i % 4])}}
        ],
        "tolerations": [{"key": f"team-{i}", "operator": "Exists", "effect": "NoSchedule"}],
    }
    if i % 3:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": PRODUCTS[i % len(PRODUCTS)]}
    if i % 2:
        zones = [ZONES[i % 3], ZONES[(i + 1) % 3]][: 1 + i % 2]
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones}
                            ]
                        }
                    ]
                }
            }
        }
    template = {"metadata": {"labels": {"app": f"w{i}"}}, "spec": spec}
    meta = {"name": f"w{i}", "namespace": f"team-{i % 50}"}
    if i % 5 == 0:
        return {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": meta,
            "spec": {
                "pytorchReplicaSpecs": {
                    "Master": {"replicas": 1, "template": template},
                    "Worker": {"replicas": 3, "template": template},
                }
            },
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": f"w{i}"}},
            "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": template,
        },
    }


def write_inputs(count: int) -> tuple[Path, Path]:
    OUT.mkdir(exist_ok=True)
    workloads = OUT / f"lint-workloads-{count}.yaml"
    workloads.write_text(yaml.safe_dump_all([workload(i) for i in range(count)], sort_keys=False))
    configmap = OUT / "lint-one-configmap.yaml"
    configmap.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}\n"
    )
    return workloads, configmap


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    dump = ensure_dump(args.nodes, args.seed)
    workloads, configmap = write_inputs(args.workloads)
    lint = [gpuplane_script(), "lint", "--cluster", str(dump), "-f", "json", "--fail-on", "never"]
    _, baseline, _ = median_of([sys.executable, "-c", JSON_LOAD, str(dump)], args.runs)
    _, reading, _ = median_of([*lint, str(configmap)], args.runs)
    _, total, peak = median_of([*lint, "--enable-all", str(workloads)], args.runs)
    rules, findings = child(RULES_ONLY, str(dump), str(workloads))
    load = os.getloadavg()[0]
    print(
        f"{args.nodes} nodes, {args.workloads} workloads: json.load {baseline:.2f} s CPU; "
        f"lint {total / baseline:.2f}x (a one-ConfigMap lint reading the dump {reading / baseline:.2f}x); "
        f"the rules alone {float(rules):.2f} s CPU = {float(rules) / baseline:.3f}x ({findings} findings); "
        f"peak {peak:.0f} MiB; load {load:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
