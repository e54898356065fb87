#!/usr/bin/env python3
"""Benchmark simulate's scheduling cycles: pod placements per second on a 5,000-node cluster.

Target (issue: simulate): at least 10,000 placements/s with full filter semantics (every
default-profile Filter plugin that applies to the pod, scores, lowest-index tie-break) on a
5,000-node synthetic cluster (``gen_cluster.py``), placing 20,000+ pods without removals.
The placements go through :class:`SimCluster` (dynamic node equivalence classes, fast path
checked against ``Scheduler.schedule_one`` in tests/simulate). Pods are 1-GPU / 8-GPU / CPU
mixes with tolerations for the tainted H100 pool, like a batch of training and inference work.

Usage::

    .venv/bin/python bench/bench_simulate.py                     # 5,000 nodes, 20,000 pods
    .venv/bin/python bench/bench_simulate.py --nodes 500 --pods 2000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"


def ensure_snapshot(nodes: int, pods: int, seed: int) -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"cluster-{nodes}x{pods}-p0-s{seed}.json"
    if not path.exists():
        print(f"generating {path.relative_to(ROOT)} ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(HERE / "gen_cluster.py"),
                "--nodes",
                str(nodes),
                "--pods",
                str(pods),
                "--seed",
                str(seed),
                "-o",
                str(path),
            ],
            check=True,
            cwd=ROOT,
        )
    return path


def make_pods(count: int) -> list:
    from gpuplane.k8s.objects import pod_from_dict

    shapes = [
        {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
        {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"},
        {"cpu": "500m", "memory": "1Gi"},
        {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
    ]
    templates = []
    for res in shapes:
        limits = {k: v for k, v in res.items() if "/" in k}
        templates.append(
            {
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {
                        "name": "main",
                        "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                        "resources": {"requests": res, "limits": limits},
                    }
                ],
            }
        )
    bases = [
        pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "bench"}, "spec": t})
        for t in templates
    ]
    import msgspec

    out = []
    for i in range(count):
        base = bases[i % len(bases)]
        out.append(
            msgspec.structs.replace(base, metadata=msgspec.structs.replace(base.metadata, name=f"p{i}"))
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--existing-pods", type=int, default=5000, help="pods already bound in the snapshot")
    parser.add_argument("--pods", type=int, default=20000, help="pods to place")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from gpuplane.scheduler.framework import ScheduleResult
    from gpuplane.scheduler.simulate.state import SimCluster
    from gpuplane.sources.cluster import load_cluster_state

    path = ensure_snapshot(args.nodes, args.existing_pods, args.seed)
    state, _ = load_cluster_state(str(path))
    t0 = time.perf_counter()
    sim = SimCluster(state)
    t1 = time.perf_counter()
    pods = make_pods(args.pods)
    placed = failed = 0
    t2 = time.perf_counter()
    for pod in pods:
        result = sim.schedule(pod)
        if isinstance(result, ScheduleResult):
            sim.bind(pod, result.node)
            placed += 1
        else:
            failed += 1
    t3 = time.perf_counter()
    cycles = placed + failed
    print(
        f"cluster: {len(state.nodes)} nodes, {len(state.pods)} pods; index + classes built in {t1 - t0:.2f} s; "
        f"{sim.placer.k if sim.placer else 0} node classes at the end"
    )
    print(
        f"{cycles} scheduling cycles ({placed} placed, {failed} unschedulable) in {t3 - t2:.2f} s: "
        f"{cycles / (t3 - t2):,.0f} cycles/s, {placed / (t3 - t2):,.0f} placements/s (target >= 10,000)"
    )


if __name__ == "__main__":
    main()
