#!/usr/bin/env python3
"""Start-up latency of the quick commands, as ratios to a bare ``python -c pass`` (issue 14, item 4).

A pre-commit hook or an editor runs ``gpuplane lint FILE`` on one small file at a time, so its
cost is the interpreter start plus what gpuplane imports and builds before and after linting
that one object. Target: ``lint`` of a one-object file, ``rules`` and ``explain RULE`` each
<= 10x ``python -c pass``. Each command runs ``--runs`` times in a fresh process (the median is
reported, hyperfine-style, after one warm-up run of each so the OS file cache is warm); the load
average is printed beside the figures because the machine may be shared.

    .venv/bin/python bench/bench_startup.py [--runs 15]

``python -X importtime -m gpuplane lint FILE 2>&1 | sort -t'|' -k2 -n | tail`` shows what a slow
start imports.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 10.0

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.01-py3
    resources:
      limits:
        nvidia.com/gpu: 1
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ml
data:
  LOG_LEVEL: info
"""


def median_run(argv: list[str], runs: int) -> float:
    env = {**os.environ, "GPUPLANE_CACHE_DIR": os.environ.get("GPUPLANE_CACHE_DIR", "")}
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        pod = Path(tmp) / "pod.yaml"
        pod.write_text(POD)
        configmap = Path(tmp) / "configmap.yaml"
        configmap.write_text(CONFIGMAP)
        gp = [python, "-m", "gpuplane"]
        cases = [
            ("lint, one GPU Pod", [*gp, "lint", str(pod)]),
            ("lint, one ConfigMap", [*gp, "lint", str(configmap)]),
            ("rules", [*gp, "rules"]),
            ("explain gpu-request-limit-mismatch", [*gp, "explain", "gpu-request-limit-mismatch"]),
            ("--help", [*gp, "--help"]),
        ]
        load_before = os.getloadavg()[0]
        bare = median_run([python, "-c", "pass"], args.runs)
        print(f"python -c pass: {bare * 1000:6.1f} ms")
        worst = 0.0
        for label, argv in cases:
            t = median_run(argv, args.runs)
            ratio = t / bare
            worst = max(worst, ratio) if label != "--help" else worst
            print(f"{label:28s} {t * 1000:6.1f} ms = {ratio:5.1f}x python -c pass")
        load_after = os.getloadavg()[0]
    print(f"worst {worst:.1f}x (target <= {TARGET:g}x); load average {load_before:.2f} -> {load_after:.2f}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
