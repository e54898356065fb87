#!/usr/bin/env python3
"""Start-up latency of the quick commands, as ratios to a bare ``python -c pass`` (issue 14, item 4).

A pre-commit hook or an editor runs ``gpuplane lint FILE`` on one small file at a time, so its
cost is the interpreter start plus what gpuplane imports and builds before and after linting
that one object. Target: ``lint`` of a one-object file, ``rules`` and ``explain RULE`` each
<= 10x ``python -c pass``. Each command runs ``--runs`` times in a fresh process (the median is
reported, hyperfine-style, after one warm-up run of each so the OS file cache, the bytecode cache
and gpuplane's cache folder (the rule index, schema skeletons) are warm, as for every run after
an installation's first); wall and CPU time (user + system of the child, from ``os.wait4``, which
a loaded machine disturbs less) are both printed, with the load average, because the machine may
be shared. The target is held to the CPU-time ratio.

Bytecode: with ``PYTHONDONTWRITEBYTECODE`` set (as in some sandboxes) every import compiles its
source again, which is not what an installed gpuplane pays; the runs use a private
``PYTHONPYCACHEPREFIX`` under ``bench/out/`` instead, so bytecode is cached without writing
``__pycache__`` folders into the tree.

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


OUT = Path(__file__).resolve().parent / "out"


def bench_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
    env["GPUPLANE_CACHE_DIR"] = str(OUT / "cache")
    return env


def one_run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def median_run(argv: list[str], runs: int) -> tuple[float, float]:
    env = bench_env()
    one_run(argv, env)  # warm-up: file cache, bytecode, gpuplane's cache folder
    samples = [one_run(argv, env) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


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
        gp = [str(Path(python).with_name("gpuplane"))]  # the console script users run (cli.entry)
        cases = [
            ("lint, one GPU Pod", [*gp, "lint", str(pod)]),
            ("lint, one ConfigMap", [*gp, "lint", str(configmap)]),
            ("rules", [*gp, "rules"]),
            ("explain gpu-request-limit-mismatch", [*gp, "explain", "gpu-request-limit-mismatch"]),
            ("--help", [*gp, "--help"]),
        ]
        load_before = os.getloadavg()[0]
        bare_wall, bare_cpu = median_run([python, "-c", "pass"], args.runs)
        print(
            f"{'python -c pass':36s} wall {bare_wall * 1000:6.1f} ms          cpu {bare_cpu * 1000:6.1f} ms"
        )
        worst = 0.0
        for label, argv in cases:
            wall, cpu = median_run(argv, args.runs)
            ratio = cpu / bare_cpu
            worst = max(worst, ratio) if label != "--help" else worst
            print(
                f"{label:36s} wall {wall * 1000:6.1f} ms = {wall / bare_wall:4.1f}x   "
                f"cpu {cpu * 1000:6.1f} ms = {ratio:4.1f}x"
            )
        load_after = os.getloadavg()[0]
    print(
        f"worst {worst:.1f}x python -c pass in CPU time (target <= {TARGET:g}x); "
        f"load average {load_before:.2f} -> {load_after:.2f}"
    )
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
