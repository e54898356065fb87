"""Benchmark: ``gpuplane lint`` on 20,000 objects vs. parsing the same files with CSafeLoader.

Target (task brief / design.md "Fast by construction"): lint end to end within 2x
the time PyYAML's C loader needs just to parse the files.

    .venv/bin/python bench/bench_lint.py [--objects 20000] [--files 200] [--keep DIR]

Builds a varied corpus (Deployments, Jobs, PyTorchJobs, StatefulSets, DaemonSets,
Pods, Services, ConfigMaps, ResourceQuotas, PriorityClasses; some GPU, some with
mistakes), then times (1) ``yaml.load_all(CSafeLoader)`` over every file and
(2) ``gpuplane lint -f json`` in a fresh process (interpreter start included),
best of N runs each, and prints the ratio. CPU time (user + sys) is printed too: on a
shared machine wall time swings with other load, CPU time much less.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMAGES = [
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "vllm/vllm-openai:v0.6.3",
    "nginx:1.27",
    "busybox:1.36",
    "registry.example.com/app:2.1",
    "python:3.11-slim",
]


def _container(rng: random.Random, gpu: int, i: int) -> dict:
    c: dict = {"name": f"c{i}", "image": rng.choice(IMAGES), "ports": [{"containerPort": 8000 + i}]}
    if gpu:
        kind = rng.choice(["limits", "limits", "limits", "requests"])
        c["resources"] = {
            kind: {"nvidia.com/gpu": gpu, "cpu": str(rng.randint(1, 16)), "memory": f"{rng.randint(1, 64)}Gi"}
        }
    if rng.random() < 0.1:
        c["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    return c


def _pod_spec(rng: random.Random, gpu: int, restart: str | None = None) -> dict:
    spec: dict = {"containers": [_container(rng, gpu if i == 0 else 0, i) for i in range(rng.randint(1, 3))]}
    if restart:
        spec["restartPolicy"] = restart
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return spec


def make_object(rng: random.Random, n: int) -> dict:
    ns = f"team-{n % 17}"
    gpu = rng.choice([0, 0, 1, 2, 4, 8])
    kind = rng.choice(
        [
            "Deployment",
            "Job",
            "PyTorchJob",
            "StatefulSet",
            "DaemonSet",
            "Pod",
            "Service",
            "ConfigMap",
            "ResourceQuota",
            "PriorityClass",
        ]
    )
    meta = {"name": f"obj-{n}", "namespace": ns, "labels": {"app": f"app-{n % 50}"}}
    template = {"metadata": {"labels": {"app": f"app-{n % 50}"}}}
    if kind in ("Deployment", "StatefulSet", "DaemonSet"):
        spec: dict = {
            "selector": {"matchLabels": {"app": f"app-{n % 50}"}},
            "template": {**template, "spec": _pod_spec(rng, gpu)},
        }
        if kind != "DaemonSet":
            spec["replicas"] = rng.randint(1, 6)
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "Job":
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": {
                "parallelism": rng.randint(1, 4),
                "template": {**template, "spec": _pod_spec(rng, gpu, "Never")},
            },
        }
    if kind == "PyTorchJob":
        replicas = {
            "Master": {"replicas": 1, "template": {"spec": _pod_spec(rng, gpu)}},
            "Worker": {"replicas": rng.randint(1, 8), "template": {"spec": _pod_spec(rng, gpu)}},
        }
        return {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": meta,
            "spec": {"pytorchReplicaSpecs": replicas},
        }
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": _pod_spec(rng, gpu)}
    if kind == "Service":
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {"selector": {"app": f"app-{n % 50}"}, "ports": [{"port": 80}]},
        }
    if kind == "ConfigMap":
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {"key": f"value-{n}", "other": "line one\nline two\n"},
        }
    if kind == "ResourceQuota":
        key = rng.choice(["requests.nvidia.com/gpu", "limits.nvidia.com/gpu"])
        return {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta,
            "spec": {"hard": {key: rng.randint(1, 64), "pods": "100"}},
        }
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"pc-{n}"},
        "value": rng.randint(0, 100000),
    }


def build_corpus(folder: str, objects: int, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    per_file = max(1, objects // files)
    written = 0
    for f in range(files):
        docs = []
        for _ in range(per_file if f < files - 1 else objects - written):
            docs.append(make_object(rng, written))
            written += 1
        with open(os.path.join(folder, f"m{f:04d}.yaml"), "w") as handle:
            yaml.dump_all(docs, handle, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False)
    return written


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def time_parse(folder: str) -> tuple[float, float]:
    """Wall and CPU seconds to parse every file with CSafeLoader."""
    start, cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF)
    count = 0
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as handle:
            for doc in yaml.load_all(handle.read(), Loader=yaml.CSafeLoader):
                count += doc is not None
    return time.perf_counter() - start, _cpu(resource.RUSAGE_SELF) - cpu


def time_lint(folder: str) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``gpuplane lint -f json`` in a fresh process, and its finding count."""
    start, cpu = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "lint", "-f", "json", "--fail-on", "never", folder],
        capture_output=True,
        cwd=ROOT,
    )
    elapsed = time.perf_counter() - start
    cpu = _cpu(resource.RUSAGE_CHILDREN) - cpu
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr.decode()[:2000])
        raise SystemExit(f"gpuplane lint exited {proc.returncode}")
    import json

    return elapsed, cpu, json.loads(proc.stdout)["summary"]["findings"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", default=None, help="write the corpus here and keep it")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="gpuplane-bench-")
    os.makedirs(folder, exist_ok=True)
    n = build_corpus(folder, args.objects, args.files)
    parse_runs = [time_parse(folder) for _ in range(args.runs)]
    parse, parse_cpu = min(t for t, _ in parse_runs), min(c for _, c in parse_runs)
    lint_runs = [time_lint(folder) for _ in range(args.runs)]
    lint, lint_cpu = min(t for t, _, _ in lint_runs), min(c for _, c, _ in lint_runs)
    findings = lint_runs[0][2]
    print(f"objects: {n} in {args.files} files ({folder})")
    print(f"CSafeLoader parse:     {parse:.2f} s  (CPU {parse_cpu:.2f} s)")
    print(f"gpuplane lint (e2e):   {lint:.2f} s  (CPU {lint_cpu:.2f} s, {findings} findings)")
    print(f"ratio lint/parse:      {lint / parse:.2f}x  (target <= 2.0x; CPU {lint_cpu / parse_cpu:.2f}x)")
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
