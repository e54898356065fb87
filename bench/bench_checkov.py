"""Benchmark: ``gpuplane lint`` beside Checkov on the same 20,000-object corpus, and Checkov on our fixtures.

The issue asks for two comparisons:

1. speed -- on the ``bench_lint.py`` corpus (>= 20,000 objects), ``gpuplane lint`` must stay
   within 2x of the time CSafeLoader needs just to parse the files; Checkov
   (``checkov -d DIR --framework kubernetes``) scans the same folder and the time ratio is reported;
2. coverage -- for every failing fixture ``tests/fixtures/lint/<rule-id>/fail*.yaml``: does Checkov
   report any failed check at all, and which of its checks fail there but not on the rule's passing
   fixtures (the checks that react to the mistake the fixture demonstrates)?

Checkov runs from its own virtualenv, ``bench/out/checkov-venv`` (git-ignored; created with
``python3 -m venv`` + ``pip install checkov`` when ``--setup`` is given and it is missing), so its many
dependencies never touch the project's environment. It is run with ``--skip-download``: without it
Checkov first calls the Prisma Cloud API for guideline links and, offline, spends time on a failing
network request that has nothing to do with scanning.

    .venv/bin/python bench/bench_checkov.py [--setup] [--objects 20000] [--files 200] [--runs 3]

Writes ``bench/checkov.md`` (figures, machine, date, versions, per-rule table) and prints a summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
VENV = OUT / "checkov-venv"
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
REPORT = HERE / "checkov.md"
FIGURES = OUT / "checkov-figures.json"  # last corpus timings, so --report-only can re-render without them

sys.path.insert(0, str(HERE))
from bench_lint import build_corpus, time_parse  # noqa: E402  (the corpus generator is shared, not copied)


@dataclass
class Timed:
    """One child process: wall time, peak RSS of that child, exit code, stdout text."""

    seconds: float
    rss_mib: int
    code: int
    stdout: str


def run(cmd: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Timed:
    """Run ``cmd`` with stdout/stderr in temp files (no pipe deadlock on big outputs); wait4 for RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        if code not in (0, 1):  # both tools exit 1 when they found something
            tail = err.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{tail}")
    return Timed(elapsed, usage.ru_maxrss // 1024, code, text)


def checkov_exe(setup: bool) -> Path:
    exe = VENV / "bin" / "checkov"
    if exe.exists():
        return exe
    if not setup:
        raise SystemExit(
            f"{exe} not found: run with --setup to create {VENV.relative_to(ROOT)} and pip install checkov"
        )
    print(f"creating {VENV.relative_to(ROOT)} and installing checkov (a few minutes) ...", flush=True)
    python3 = shutil.which("python3") or sys.executable
    subprocess.run([python3, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "checkov"], check=True)
    return exe


def checkov_version(exe: Path) -> str:
    return subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout.strip()


def checkov_cmd(exe: Path, target: Path) -> list[str]:
    return [
        str(exe),
        "-d",
        str(target),
        "--framework",
        "kubernetes",
        "-o",
        "json",
        "--quiet",
        "--skip-download",
    ]


def checkov_env() -> dict[str, str]:
    env = dict(os.environ)
    env["BC_SKIP_MAPPING"] = "TRUE"  # no policy-metadata download either
    env.pop("BC_API_KEY", None)  # a local scan, never a platform upload
    return env


def gpuplane_cmd(target: Path) -> list[str]:
    exe = Path(sys.executable).with_name("gpuplane")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplane"]
    return [*base, "lint", str(target), "-f", "json", "--fail-on", "never"]


def ensure_corpus(objects: int, files: int) -> Path:
    folder = OUT / f"checkov-corpus-{objects}x{files}"
    marker = folder / ".complete"
    if marker.exists():
        print(f"reusing {folder.relative_to(ROOT)}")
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.yaml"):
        stale.unlink()
    written = build_corpus(str(folder), objects, files)
    marker.write_text(f"{written}\n")
    print(f"built {folder.relative_to(ROOT)}: {written} objects in {files} files")
    return folder


def checkov_reports(stdout: str) -> list[dict]:
    """Checkov's JSON is one report object, or a list of them (one per framework)."""
    data = json.loads(stdout) if stdout.strip() else []
    return data if isinstance(data, list) else [data]


def checkov_summary(stdout: str) -> dict[str, int]:
    total = {"passed": 0, "failed": 0, "resource_count": 0, "parsing_errors": 0}
    for report in checkov_reports(stdout):
        for key in total:
            total[key] += int(report.get("summary", {}).get(key, 0))
    return total


# Checkov checks that address the same concern as a gpuplane rule (read from the check names Checkov
# reports; most gpuplane rules -- GPU quantities, MIG, gang scheduling, device-plugin config, Karpenter,
# quotas -- have no Checkov counterpart). Reported as: does it fire on fail*.yaml, and on pass*.yaml?
RELATED: dict[str, list[str]] = {
    "gpu-privileged-access": ["CKV_K8S_16"],  # "Container should not be privileged"
    "image-pull-always-large": ["CKV_K8S_15"],  # "Image Pull Policy should be Always": the opposite advice
}


@dataclass
class FileResult:
    """Checkov's verdicts on one fixture file."""

    failed: dict[str, str] = field(default_factory=dict)  # check id -> check name
    passed: set[str] = field(default_factory=set)


def checkov_by_file(stdout: str, base: Path) -> dict[str, FileResult]:
    """Failed/passed checks per file, keyed by path relative to ``base`` (Checkov reports '/rule/fail.yaml')."""
    files: dict[str, FileResult] = {}
    for report in checkov_reports(stdout):
        results = report.get("results", {})
        for check in results.get("failed_checks", []):
            key = str(Path(check["file_path"].lstrip("/")))
            files.setdefault(key, FileResult()).failed[check["check_id"]] = check["check_name"]
        for check in results.get("passed_checks", []):
            key = str(Path(check["file_path"].lstrip("/")))
            files.setdefault(key, FileResult()).passed.add(check["check_id"])
    return files


@dataclass
class RuleRow:
    rule: str
    fail_files: list[str]
    flagged: list[str]  # fail files where Checkov reports any failed check
    scanned: list[str]  # fail files where Checkov evaluated any check (knows the kinds)
    differential: dict[str, str]  # checks failing on fail*.yaml and on none of pass*.yaml
    related: dict[str, tuple[bool, bool]]  # RELATED check -> (fires on a fail file, fires on a pass file)


def coverage(exe: Path) -> tuple[list[RuleRow], float]:
    timed = run(checkov_cmd(exe, FIXTURES), env=checkov_env())
    per_file = checkov_by_file(timed.stdout, FIXTURES)
    rows = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        fails = sorted(folder.glob("fail*.yaml"))
        if not fails:
            continue
        passes = sorted(folder.glob("pass*.yaml"))
        names = [str(f.relative_to(FIXTURES)) for f in fails]
        empty = FileResult()
        fail_checks: dict[str, str] = {}
        for name in names:
            fail_checks.update(per_file.get(name, empty).failed)
        pass_failed = {
            cid for p in passes for cid in per_file.get(str(p.relative_to(FIXTURES)), empty).failed
        }
        rows.append(
            RuleRow(
                rule=folder.name,
                fail_files=names,
                flagged=[n for n in names if per_file.get(n, empty).failed],
                scanned=[n for n in names if per_file.get(n, empty).failed or per_file.get(n, empty).passed],
                differential={cid: fail_checks[cid] for cid in sorted(fail_checks) if cid not in pass_failed},
                related={
                    cid: (cid in fail_checks, cid in pass_failed) for cid in RELATED.get(folder.name, [])
                },
            )
        )
    return rows, timed.seconds


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu
            )
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as handle:
            kib = int(next(line.split()[1] for line in handle if line.startswith("MemTotal")))
            mem = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs{mem}, {platform.system()} {platform.release()}"


def gpuplane_version() -> str:
    from gpuplane import __version__

    return __version__


def write_report(path: Path, ctx: dict, rows: list[RuleRow]) -> None:
    s = ctx
    flagged = sum(1 for r in rows if r.flagged)
    differential = sum(1 for r in rows if r.differential)
    lines = [
        "# gpuplane lint beside Checkov",
        "",
        "Generated by `bench/bench_checkov.py` (re-run it to refresh; figures vary with machine load).",
        "",
        "## Setup",
        "",
        f"- Date: {s['date']}",
        f"- Machine: {s['machine']}",
        f"- Python {platform.python_version()}; gpuplane {s['gpuplane']}; PyYAML {s['pyyaml']} (CSafeLoader); "
        f"Checkov {s['checkov']} (own venv `bench/out/checkov-venv`)",
        f"- Corpus: `bench_lint.build_corpus` — {s['objects']} objects in {s['files']} files "
        f"({s['corpus_mb']:.1f} MB of YAML): Deployments, Jobs, PyTorchJobs, StatefulSets, DaemonSets, Pods, "
        "Services, ConfigMaps, ResourceQuotas, PriorityClasses.",
        f"- Each figure is the median of {s['runs']} runs ({s['checkov_runs']} for Checkov), each tool in a fresh process (interpreter start "
        "included); peak RSS from `wait4`.",
        "- Commands: `gpuplane lint DIR -f json --fail-on never`; "
        "`checkov -d DIR --framework kubernetes -o json --quiet --skip-download` "
        "(`--skip-download`, `BC_SKIP_MAPPING=TRUE`: no Prisma Cloud calls; offline they only add a failing "
        "network request).",
        "",
        "## Speed on the corpus",
        "",
        "| measurement | median time | peak RSS | output |",
        "|---|---:|---:|---|",
        f"| CSafeLoader, parse only (in-process) | {s['parse']:.2f} s | – | – |",
        f"| `gpuplane lint` | {s['lint']:.2f} s | {s['lint_rss']} MiB | {s['findings']} findings |",
        f"| `checkov --framework kubernetes` | {s['checkov_time']:.2f} s | {s['checkov_rss']} MiB | "
        f"{s['ck']['failed']} failed / {s['ck']['passed']} passed checks on {s['ck']['resource_count']} "
        f"resources, {s['ck']['parsing_errors']} parsing errors |",
        "",
        f"- gpuplane lint / CSafeLoader parse: **{s['lint'] / s['parse']:.2f}x** (target <= 2.0x: "
        f"{'met' if s['lint'] / s['parse'] <= 2.0 else 'NOT met'}).",
        f"- Checkov / gpuplane lint: **{s['checkov_time'] / s['lint']:.1f}x** "
        f"(gpuplane is {s['checkov_time'] / s['lint']:.1f} times faster on the same folder).",
        "",
        "## Checkov on gpuplane's failing fixtures",
        "",
        f"One `checkov -d tests/fixtures/lint` run ({s['coverage_time']:.1f} s) and its failed checks grouped "
        "by file. *Flags anything*: Checkov reports at least one failed check in the `fail*.yaml` file(s). "
        "*Scanned*: Checkov evaluated any check there at all (it ignores kinds it has no checks for, e.g. "
        "CRDs such as PyTorchJob, NodePool, ClusterPolicy and most ConfigMaps). *Checks that react*: checks "
        "failing on the rule's `fail*.yaml` and on none of its `pass*.yaml` — the only Checkov checks that "
        "can be said to notice the mistake the fixture demonstrates; every other failure is generic "
        "hygiene (probes, CPU/memory limits, image digests, security context) that fails on the "
        "corrected manifest too.",
        "",
        f"Summary: {len(rows)} rules. Checkov flags something in the failing fixture of {flagged}; a check "
        f"reacts to the fixture's mistake for {differential}.",
        "",
        "*Related check*: a Checkov check aimed at the same concern (by its name), and whether it fires on "
        "the failing / passing fixtures. A related check that also fires on the passing fixture cannot tell "
        "the mistake from the accepted case (e.g. the privileged NVIDIA device-plugin DaemonSet).",
        "",
        "| gpuplane rule | fail files | scanned | flags anything | checks that react (fail on fail*, pass on pass*) "
        "| related check: fires on fail / on pass |",
        "|---|---:|---:|---:|---|---|",
    ]
    yes = {True: "yes", False: "no"}
    for r in rows:
        react = "; ".join(f"{cid} {name}" for cid, name in r.differential.items()) or "–"
        related = "; ".join(f"{cid}: {yes[f]} / {yes[p]}" for cid, (f, p) in r.related.items()) or "none"
        lines.append(
            f"| `{r.rule}` | {len(r.fail_files)} | {len(r.scanned)} | {len(r.flagged)} | {react} "
            f"| {related} |"
        )
    lines += [
        "",
        "Read the reacting checks by name: a check can react to an incidental difference between the "
        "fail and pass files (another image tag, a namespace, a CPU limit) rather than to the GPU mistake "
        "the rule is about.",
        "",
    ]
    path.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=20000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement (median reported)")
    parser.add_argument("--checkov-runs", type=int, default=None, help="runs of Checkov (default: --runs)")
    parser.add_argument("--setup", action="store_true", help="create bench/out/checkov-venv if missing")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help=f"reuse the corpus timings saved in {FIGURES.relative_to(ROOT)}; re-run only the fixtures",
    )
    parser.add_argument("--report", type=Path, default=REPORT, help="markdown file to write")
    args = parser.parse_args(argv)

    import yaml

    exe = checkov_exe(args.setup)
    if args.report_only:
        if not FIGURES.exists():
            raise SystemExit(f"{FIGURES.relative_to(ROOT)} not found: run once without --report-only")
        ctx = json.loads(FIGURES.read_text())
        rows, ctx["coverage_time"] = coverage(exe)
        write_report(args.report, ctx, rows)
        print(f"wrote {args.report}")
        return 0
    folder = ensure_corpus(args.objects, args.files)
    corpus_mb = sum(p.stat().st_size for p in folder.glob("*.yaml")) / 1e6

    parse = statistics.median(time_parse(str(folder)) for _ in range(args.runs))
    print(f"CSafeLoader parse: {parse:.2f} s", flush=True)
    lint_runs = [run(gpuplane_cmd(folder)) for _ in range(args.runs)]
    lint = statistics.median(t.seconds for t in lint_runs)
    findings = json.loads(lint_runs[0].stdout)["summary"]["findings"]
    print(f"gpuplane lint:     {lint:.2f} s ({findings} findings)", flush=True)
    ck_runs = [
        run(checkov_cmd(exe, folder), env=checkov_env()) for _ in range(args.checkov_runs or args.runs)
    ]
    ck_time = statistics.median(t.seconds for t in ck_runs)
    ck = checkov_summary(ck_runs[0].stdout)
    print(f"checkov:           {ck_time:.2f} s ({ck['failed']} failed checks)", flush=True)

    rows, coverage_time = coverage(exe)
    ctx = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "gpuplane": gpuplane_version(),
        "pyyaml": yaml.__version__,
        "checkov": checkov_version(exe),
        "objects": args.objects,
        "files": args.files,
        "corpus_mb": corpus_mb,
        "runs": args.runs,
        "checkov_runs": args.checkov_runs or args.runs,
        "parse": parse,
        "lint": lint,
        "lint_rss": max(t.rss_mib for t in lint_runs),
        "findings": findings,
        "checkov_time": ck_time,
        "checkov_rss": max(t.rss_mib for t in ck_runs),
        "ck": ck,
        "coverage_time": coverage_time,
    }
    FIGURES.write_text(json.dumps(ctx, indent=1))
    write_report(args.report, ctx, rows)
    print(f"ratio lint/parse:  {lint / parse:.2f}x (target <= 2.0x)")
    print(f"ratio checkov/lint: {ck_time / lint:.1f}x")
    print(
        f"fixtures: Checkov flags {sum(1 for r in rows if r.flagged)}/{len(rows)} rules' failing fixtures; "
        f"a check reacts to the mistake for {sum(1 for r in rows if r.differential)}"
    )
    print(f"wrote {args.report.relative_to(ROOT) if args.report.is_relative_to(ROOT) else args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
