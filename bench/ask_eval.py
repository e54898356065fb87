"""Score `gpuplane ask` on the real-world question set (bench/ask/questions.yaml).

Usage: ``.venv/bin/python bench/ask_eval.py [--half tuning|evaluation|both] [-v]``

Prints, per half, how many answers are complete / partial / none, per topic, and how many
out-of-scope probes got "no knowledge". ``-v`` lists what each non-complete answer lacked
(use it on the tuning half only: reading the evaluation half's misses is tuning on it).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=["tuning", "evaluation", "both"], default="both")
    parser.add_argument(
        "--fresh", action="store_true", help="score bench/ask/fresh.yaml instead (written after tuning)"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    os.environ["GPUPLANE_CACHE_DIR"] = "off"

    from gpuplane.knowledge.answer import answer
    from gpuplane.knowledge.evaluation import HALVES, evaluate, format_report, load

    def ask(question: str) -> tuple[str, bool]:
        result = answer(question)
        return result.answer, result.known

    halves = HALVES if args.half == "both" else (args.half,)
    if args.fresh:
        report = evaluate(load(ROOT / "bench" / "ask" / "fresh.yaml"), ask, ("fresh",))
    else:
        report = evaluate(load(), ask, halves)
    print(format_report(report))
    if args.verbose:
        for qid, missing in sorted(report.misses.items()):
            print(f"  miss {qid}: {missing}")
        for pid in report.probe_failures:
            print(f"  probe answered as if known: {pid}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
