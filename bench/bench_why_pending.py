#!/usr/bin/env python3
"""Benchmark ``why-pending`` for every Pending pod of a 5,000-node / 150,000-pod snapshot.

Target (issue: scheduler model): explaining all 2,000 Pending pods (load + index + filter +
preemption + causes) finishes in at most 1.5x the time stdlib ``json.load`` takes just to
parse the same file. Each measurement runs in a fresh process (median of ``--runs``):

- ``json.load`` of the snapshot (the baseline);
- the engine in-process: ``load_cluster_state`` + ``Scheduler`` + ``explain`` for every Pending pod
  (what ``why-pending -f json`` computes), timed inside the child;
- ``gpuplane why-pending --cluster FILE`` end to end (text report, grouped node tables).

Usage::

    .venv/bin/python bench/bench_why_pending.py                       # full size
    .venv/bin/python bench/bench_why_pending.py --nodes 500 --pods 15000 --pending 200 --runs 1
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"

JSON_LOAD = """
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    json.load(f)
print(time.perf_counter() - t)
"""

ENGINE = """
import resource, sys, time
t = time.perf_counter()
from gpuplane.sources.cluster import load_cluster_state
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.explain import pending
state, errors = load_cluster_state(sys.argv[1])
loaded = time.perf_counter()
sched = Scheduler(state)
out = pending(sched)
done = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
work = getattr(getattr(sched.index, "pods", None), "visited", -1)
print(done - t, loaded - t, done - loaded, len(out), peak, work)
"""


def ensure_snapshot(nodes: int, pods: int, pending: int, seed: int) -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"cluster-{nodes}x{pods}-p{pending}-s{seed}.json"
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
                "--pending",
                str(pending),
                "--seed",
                str(seed),
                "-o",
                str(path),
            ],
            check=True,
            cwd=ROOT,
        )
    return path


def child(code: str, *args: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if run.returncode != 0:
        raise SystemExit(run.stderr)
    return run.stdout.split()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--pending", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true", help="skip the end-to-end CLI run")
    args = parser.parse_args(argv)

    snapshot = ensure_snapshot(args.nodes, args.pods, args.pending, args.seed)
    print(f"snapshot {snapshot.name}: {snapshot.stat().st_size / 1e6:.0f} MB")
    baseline = statistics.median(float(child(JSON_LOAD, str(snapshot))[0]) for _ in range(args.runs))
    engine_runs = [child(ENGINE, str(snapshot)) for _ in range(args.runs)]
    total = statistics.median(float(r[0]) for r in engine_runs)
    load = statistics.median(float(r[1]) for r in engine_runs)
    explain = statistics.median(float(r[2]) for r in engine_runs)
    print(f"json.load                        {baseline:7.2f} s")
    print(
        f"why-pending engine (all pending) {total:7.2f} s  = load {load:.2f} s + explain {explain:.2f} s "
        f"for {engine_runs[0][3]} pods"
    )
    peak = statistics.median(float(r[4]) for r in engine_runs)
    print(f"engine peak RSS                  {peak:7.0f} MiB")
    print(f"ratio                            {total / baseline:7.2f}  (target <= 1.5)")
    if not args.no_cli:
        exe = Path(sys.executable).with_name("gpuplane")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplane"]
        start = time.perf_counter()
        subprocess.run(
            [*cmd, "why-pending", "--cluster", str(snapshot)],
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
            check=False,
        )
        print(f"gpuplane why-pending (text, e2e) {time.perf_counter() - start:7.2f} s")
    return 0 if total <= 1.5 * baseline else 1


if __name__ == "__main__":
    sys.exit(main())
