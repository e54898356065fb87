#!/usr/bin/env python3
"""Micro-benchmarks of the cost checks that used to be timed tests (issue 14, item 6).

Tests never assert wall-clock time (a loaded CI machine would turn them red for nothing); they
check the work done instead. The timings live here, each as a ratio to parsing the same input
where there is an input to parse:

- ``expand_all`` of 20,000 controller objects, against ``json.loads`` of the same objects;
- ``pod_requests`` of 20,000 three-container pods, against ``json.loads`` of the same pods;
- ``load_paths`` of a ~100 MB JSON ``List``, against ``json.load`` of the same file;
- refusing a 100 MiB YAML file from its size (absolute: it must not depend on the size).

Run from the repository root::

    .venv/bin/python bench/bench_micro.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """Median wall time of ``runs`` calls of ``fn``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def controller_objects(count: int) -> list[dict]:
    objects: list[dict] = []
    for i in range(count):
        kind = ("Deployment", "Job", "PyTorchJob", "ConfigMap")[i % 4]
        if kind == "Deployment":
            spec: dict = {"replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
            objects.append(
                {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": f"d{i}"}, "spec": spec}
            )
        elif kind == "Job":
            spec = {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
            objects.append(
                {"apiVersion": "batch/v1", "kind": kind, "metadata": {"name": f"j{i}"}, "spec": spec}
            )
        elif kind == "PyTorchJob":
            tpl = {"spec": {"containers": [{"name": "pytorch"}]}}
            replicas = {"Master": {"template": tpl}, "Worker": {"replicas": 3, "template": tpl}}
            objects.append(
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": kind,
                    "metadata": {"name": f"p{i}"},
                    "spec": {"pytorchReplicaSpecs": replicas},
                }
            )
        else:
            objects.append({"apiVersion": "v1", "kind": kind, "metadata": {"name": f"c{i}"}})
    return objects


def three_container_pods(count: int) -> list[dict]:
    def ctr(name: str, req: dict, lim: dict | None = None) -> dict:
        return {"name": name, "resources": {"requests": req, "limits": lim or {}}}

    spec = {
        "containers": [
            ctr("main", {"cpu": "500m", "memory": "8Gi", "nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}),
            ctr("sidecar", {"cpu": "100m", "memory": "128Mi"}),
        ],
        "initContainers": [ctr("init", {"cpu": "1", "memory": "1Gi"})],
    }
    return [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "ns"}, "spec": spec}
        for i in range(count)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from gpuplane.k8s.objects import pod_from_dict
    from gpuplane.k8s.requests import pod_requests
    from gpuplane.k8s.workloads import expand_all
    from gpuplane.sources import Manifest, load_paths

    raw = json.dumps(controller_objects(20_000))
    parse = best_of(args.runs, lambda: json.loads(raw))
    expand = best_of(args.runs, lambda: expand_all([Manifest(d) for d in json.loads(raw)]))
    print(
        f"expand_all, 20,000 objects (parse included): {expand * 1000:7.1f} ms = {expand / parse:5.2f}x json.loads"
    )

    raw = json.dumps(three_container_pods(20_000))
    parse = best_of(args.runs, lambda: json.loads(raw))
    pods = [pod_from_dict(d) for d in json.loads(raw)]
    requests = best_of(args.runs, lambda: [pod_requests(p) for p in pods])
    print(
        f"pod_requests, 20,000 pods:                   {requests * 1000:7.1f} ms = {requests / parse:5.2f}x json.loads"
    )

    with tempfile.TemporaryDirectory() as tmp:
        item = (
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","namespace":"ns"},'
            b'"data":{"k":"' + b"x" * 900 + b'"}}'
        )
        count = 100 * 1024 * 1024 // (len(item) + 2)
        path = Path(tmp) / "big.json"
        with path.open("wb") as handle:
            handle.write(b'{"apiVersion":"v1","kind":"List","items":[\n')
            handle.write(b",\n".join(item % i for i in range(count)))
            handle.write(b'\n],"metadata":{}}\n')

        def json_load() -> None:
            with path.open("rb") as handle:
                json.load(handle)

        parse = best_of(args.runs, json_load)
        load = best_of(args.runs, lambda: load_paths([str(path)]))
        print(
            f"load_paths, 100 MB JSON List:                {load * 1000:7.1f} ms = {load / parse:5.2f}x json.load"
        )

        huge = Path(tmp) / "huge.yaml"
        with huge.open("wb") as handle:
            handle.write(b"kind: ConfigMap\ndata:\n")
            handle.truncate(100 * 1024 * 1024)
        refuse = best_of(args.runs, lambda: load_paths([str(huge)]))
        print(f"refusing a 100 MiB YAML file:                {refuse * 1000:7.1f} ms (target < 500 ms)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
