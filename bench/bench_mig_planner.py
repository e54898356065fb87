#!/usr/bin/env python3
"""Benchmark ``advise mig`` on a ~1,000-GPU fleet (issue target: < 2 s).

Plans several demands of 3,000-4,500 instances (800-1,200 GPUs) across six profiles on A100-80GB, and one on a
mixed A100-80GB + H100-80GB fleet with counts, each in-process after a warm-up of the
catalog (the CLI pays ~0.1 s of interpreter start on top). Prints one line per case and
exits 1 if any case misses the target. Run from the repository root::

    .venv/bin/python bench/bench_mig_planner.py
"""

from __future__ import annotations

import random
import sys
import time

from gpuplane.advise.mig_planner import parse_demand, parse_fleet, plan_mig
from gpuplane.gpu.catalog import catalog

TARGET_S = 2.0
PROFILES = ("7g.80gb", "4g.40gb", "3g.40gb", "2g.20gb", "1g.20gb", "1g.10gb")


def random_demand(seed: int) -> str:
    """About 1,000 GPUs worth of slices, mixed over the six profiles."""
    rng = random.Random(seed)
    weights = [rng.randint(1, 10) for _ in PROFILES]
    total = sum(weights)
    counts = [max(1, round(5000 * w / total)) for w in weights]
    counts[0] = min(counts[0], 80)  # whole-GPU slices: keep the fleet near 1,000 GPUs
    counts[1] = min(counts[1], 150)
    return ",".join(f"{p}={n}" for p, n in zip(PROFILES, counts))


def main() -> int:
    catalog()
    cases = [(f"A100-80GB seed {s}", ["A100-80GB"], random_demand(s)) for s in range(5)]
    cases.append(("A100-80GB:600 + H100-80GB:600", ["A100-80GB:600", "H100-80GB:600"], random_demand(99)))
    worst = 0.0
    for label, fleet, demand in cases:
        start = time.perf_counter()
        plan = plan_mig(parse_fleet(fleet), parse_demand(demand))
        elapsed = time.perf_counter() - start
        worst = max(worst, elapsed)
        instances = sum(plan.demand.values())
        print(f"{label:32s} {instances:5d} instances -> {plan.gpus_needed:5d} GPUs  {elapsed * 1000:8.1f} ms")
    print(f"worst {worst * 1000:.1f} ms (target {TARGET_S * 1000:.0f} ms)")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
