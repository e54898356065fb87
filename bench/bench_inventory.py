#!/usr/bin/env python3
"""Benchmark ``gpuplane inventory`` on a 5,000-node / 150,000-pod JSON snapshot.

What it measures, each in a fresh process so caches and the GC state are real:

1. ``json.load`` of the snapshot with the cyclic GC on, the way a plain
   Python tool reads a ``kubectl get -o json`` dump (the baseline);
2. ``gpuplane inventory --cluster FILE -f json`` end to end (process start,
   read, index, compute, JSON out), its wall time and peak RSS;
3. the ratio of the two (target: <= 0.5, design.md "Fast by construction");
4. ``gpuplane --help`` against ``python -c pass`` (start-up cost of the CLI).

The snapshot is generated once with ``bench/gen_cluster.py`` and reused from
``bench/out/``. Run from the repository root::

    .venv/bin/python bench/bench_inventory.py            # full size
    .venv/bin/python bench/bench_inventory.py --nodes 500 --pods 15000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"

JSON_LOAD = (
    "import json, sys, time\n"
    "t = time.perf_counter()\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    json.load(f)\n"
    "print(time.perf_counter() - t)\n"
)


def run(cmd: list[str], *, stdout: int | None = subprocess.DEVNULL) -> tuple[float, int, str]:
    """Run ``cmd``; return (wall seconds, peak RSS in MiB of that child, stdout text)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE, cwd=ROOT
    )
    out_bytes = b""
    if stdout is None and proc.stdout is not None:
        out_bytes = proc.stdout.read()
    err = proc.stderr.read() if proc.stderr is not None else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"{' '.join(cmd)} failed with exit code {proc.returncode}:\n{err.decode(errors='replace')}"
        )
    rss_mib = usage.ru_maxrss // 1024  # ru_maxrss is KiB on Linux
    return elapsed, rss_mib, out_bytes.decode(errors="replace")


def ensure_snapshot(nodes: int, pods: int, pending: int, seed: int) -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"cluster-{nodes}x{pods}-p{pending}-s{seed}.json"
    if path.exists():
        print(f"reusing {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.0f} MB)")
        return path
    print(f"generating {path.relative_to(ROOT)} ...", flush=True)
    start = time.perf_counter()
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
    print(f"  {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - start:.1f} s")
    return path


def gpuplane_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("gpuplane")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplane"]


def median_time(cmd: list[str], runs: int) -> float:
    return statistics.median(run(cmd)[0] for _ in range(runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--pending", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="runs of each big measurement (median reported)")
    args = parser.parse_args(argv)

    snapshot = ensure_snapshot(args.nodes, args.pods, args.pending, args.seed)
    size_mb = snapshot.stat().st_size / 1e6

    loads = []
    load_rss = []
    for _ in range(args.runs):
        _, rss, out = run([sys.executable, "-c", JSON_LOAD, str(snapshot)], stdout=None)
        loads.append(float(out.strip()))
        load_rss.append(rss)
    json_load = statistics.median(loads)

    inventory_times = []
    inventory_rss = []
    cmd = [*gpuplane_cmd(), "inventory", "--cluster", str(snapshot), "-f", "json"]
    for _ in range(args.runs):
        elapsed, rss, _ = run(cmd)
        inventory_times.append(elapsed)
        inventory_rss.append(rss)
    inventory = statistics.median(inventory_times)

    help_time = median_time([*gpuplane_cmd(), "--help"], 7)
    bare_python = median_time([sys.executable, "-c", "pass"], 7)

    ratio = inventory / json_load
    print()
    print(f"snapshot: {args.nodes} nodes, {args.pods} pods ({args.pending} pending), {size_mb:.0f} MB JSON")
    print(f"json.load (GC on, load call only): {json_load:6.2f} s   peak RSS {max(load_rss)} MiB")
    print(f"gpuplane inventory -f json (end to end): {inventory:6.2f} s   peak RSS {max(inventory_rss)} MiB")
    print(
        f"ratio inventory / json.load: {ratio:.2f}  (target <= 0.5: {'met' if ratio <= 0.5 else 'NOT met'})"
    )
    print(
        f"gpuplane --help: {help_time * 1000:.0f} ms   python -c pass: {bare_python * 1000:.0f} ms   "
        f"(CLI overhead {max(help_time - bare_python, 0) * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
