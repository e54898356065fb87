"""Benchmark `gpuplane ask`: index build, per-question latency, and whole-CLI wall time.

Usage: ``.venv/bin/python bench/bench_ask.py [--runs N]``

Measures, on this machine:
- cold index build in-process (sections + lint rule docs, no disk cache);
- per-question latency of ``answer()`` once the index is built (median / p95 / max
  over the question set of tests/knowledge/test_kb_questions.py);
- the CLI end to end (`gpuplane ask -f json`, a fresh process each time): the first
  run builds and caches the index, the following ones read the cache.
The target (issue #4) is < 300 ms per question after the first.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "knowledge"))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def bench_in_process(runs: int) -> None:
    os.environ["GPUPLANE_CACHE_DIR"] = "off"
    t0 = time.perf_counter()
    from gpuplane.knowledge.search import index

    idx = index()
    build = time.perf_counter() - t0
    from test_kb_questions import QUESTIONS

    from gpuplane.knowledge.answer import answer

    questions = [q for q, _, _ in QUESTIONS]
    samples = []
    for _ in range(runs):
        for q in questions:
            t = time.perf_counter()
            answer(q)
            samples.append(time.perf_counter() - t)
    samples.sort()
    print(
        f"documents indexed      : {len(idx.documents)} ({sum(d.kind == 'rule' for d in idx.documents)} rule pages)"
    )
    print(f"cold build (in-process): {_ms(build)}  (imports + YAML front matter + tokenising)")
    print(
        f"answer() per question  : median {_ms(statistics.median(samples))}, "
        f"p95 {_ms(samples[int(0.95 * (len(samples) - 1))])}, max {_ms(samples[-1])} "
        f"over {len(samples)} answers"
    )


def bench_cli(runs: int) -> None:
    exe = ROOT / ".venv" / "bin" / "gpuplane"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplane"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "GPUPLANE_CACHE_DIR": cache}
        env.pop("GPUPLANE_LLM_BASE_URL", None)
        times = []
        for i in range(runs + 1):
            question = [
                "Which ResourceQuota key limits GPUs?",
                "default /dev/shm size",
                "time-slicing or MIG for notebooks?",
            ][i % 3]
            t = time.perf_counter()
            subprocess.run(
                [*cmd, "ask", question, "-f", "json"], env=env, check=True, stdout=subprocess.DEVNULL
            )
            times.append(time.perf_counter() - t)
    warm = sorted(times[1:])
    print(f"CLI first run          : {_ms(times[0])}  (builds and caches the index)")
    print(
        f"CLI later runs         : median {_ms(statistics.median(warm))}, max {_ms(warm[-1])} "
        f"over {len(warm)} runs (new process each, index from cache)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bench_in_process(args.runs)
    bench_cli(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
