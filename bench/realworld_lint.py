"""Lint the whole real-world corpus and count findings per rule and per severity.

    .venv/bin/python bench/realworld_lint.py [--corpus DIR] [--show RULE] [--first N] [--json]

The corpus is ``../shared/realworld/lint/corpus`` (public GPU/AI manifests nobody here wrote;
see ``../shared/realworld/README.md``). A rule that floods real manifests shows at once in the
table; ``--show RULE`` prints its first ``N`` findings (file:line and message) to read them as a
platform engineer would. Files are linted one by one (in one process) so that a file the loader
refuses does not hide the others; refused files are counted. Nothing is asserted: the table goes
in the issue note.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "realworld" / "lint" / "corpus"


def lint_corpus(corpus: Path, enable_all: bool = False) -> tuple[list[dict], int, int, list[dict]]:
    """(findings as -f json dicts, files linted, files refused, skipped objects)."""
    from gpuplane.lint.config import LintConfig
    from gpuplane.lint.engine import run_lint
    from gpuplane.sources import load_paths

    findings: list[dict] = []
    skipped: list[dict] = []
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))
    refused = 0
    config = LintConfig()
    for path in files:
        loaded = load_paths([str(path)])
        if loaded.errors:
            refused += 1
        if not loaded.objects:
            continue
        result = run_lint(loaded.objects, config=config)
        findings += [f.to_json() for f in result.findings]
        skipped += list(getattr(result, "skipped_dicts", lambda: [])())
    return findings, len(files), refused, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--show", action="append", default=[], help="print the first findings of this rule")
    parser.add_argument("--first", type=int, default=3)
    parser.add_argument("--enable-all", action="store_true", help="also run the opt-in rules")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2
    findings, files, refused, skipped = lint_corpus(args.corpus, args.enable_all)
    if args.json:
        json.dump(findings, sys.stdout, indent=1)
        return 0
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for f in findings:
        counts[f["rule"]][f["severity"]] += 1
    print(
        f"{files} files, {refused} refused by the loader, {len(findings)} findings, {len(skipped)} objects skipped"
    )
    print(f"| {'rule':<42} | error | warning | info |")
    print(f"|{'-' * 44}|-------|---------|------|")
    order = sorted(counts, key=lambda r: (-(counts[r]["error"] + counts[r]["warning"]), r))
    for rule_id in order:
        c = counts[rule_id]
        print(f"| {rule_id:<42} | {c['error']:>5} | {c['warning']:>7} | {c['info']:>4} |")
    total = collections.Counter()
    for c in counts.values():
        total.update(c)
    print(f"| {'total':<42} | {total['error']:>5} | {total['warning']:>7} | {total['info']:>4} |")
    if skipped:
        reasons = collections.Counter((s["kind"], s["reason"]) for s in skipped)
        print(
            "\nnot analysed: " + ", ".join(f"{n} {kind} ({why})" for (kind, why), n in reasons.most_common())
        )
    for rule_id in args.show:
        print(f"\n## {rule_id}")
        shown = [f for f in findings if f["rule"] == rule_id][: args.first]
        for f in shown:
            where = os.path.relpath(f["path"], args.corpus)
            print(f"- {where}:{f['line']} [{f['severity']}] {f['message']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
