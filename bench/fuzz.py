"""Fuzz every input path of the CLI with mutated copies of the project's own fixtures.

Hypothesis picks a target (lint files, ``--cluster`` snapshots, ``generate`` blueprints,
``simulate`` inputs, scenarios and ``--autoscaler`` files, ``advise sharing --from``,
``.gpuplane.yaml``), one of its seed files from ``tests/fixtures`` / ``examples``, one node of
that YAML, and a replacement: a wrong type, a null, a huge or non-finite number, unicode, a
deleted key. The mutated file runs in-process through the click CLI (``CliRunner``); a case
fails when the exit code is not 0/1/2 (3 is an internal error) or an exception escapes (a
traceback). Each failure is printed with its target, argv and traceback.

    python bench/fuzz.py --cases 10000 [--seed 1]

prints the cases run, failures, runs over 10 s, the slowest case and peak memory (RSS from
``resource.getrusage``). ``tests/test_fuzz.py`` runs a small derandomized slice.
"""

from __future__ import annotations

import argparse
import copy
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SIM_CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
SIM_JOBS = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")
LINT_MANIFEST = str(ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml")
HUGE = "__GPUPLANE_FUZZ_HUGE__"  # replaced textually: PyYAML cannot dump a 5,000-digit int

SCENARIO_SEED = (
    "workloads:\n- {name: w1, arrival_s: 0, duration_s: 600, image_size_gib: 2}\n"
    "coldStart: {imagePullGiBPerS: 0.5}\n"
    "kueue: {waitForPodsReady: {timeoutSeconds: 600}}\n"
    "coscheduling: {permitWaitingTimeSeconds: 60}\n"
)
NODEGROUP_SEED = (
    "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterAutoscalerNodeGroup\nmetadata: {name: a100}\n"
    "spec: {instanceType: p4d.24xlarge, minSize: 0, maxSize: 2, priority: 1, labels: {pool: a100},\n"
    "  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n"
)
CONFIG_SEED = (
    "disable: [gpu-type-unpinned]\nseverity: {cpu-pod-on-gpu-nodes: error}\nignore: [vendor/**]\n"
    "fail-on: warning\n"
)


def _files(*patterns: str, limit: int = 40) -> list[str]:
    out: list[str] = []
    for pattern in patterns:
        out.extend(sorted(str(p) for p in ROOT.glob(pattern) if p.is_file()))
    return out[:limit] if limit else out


@dataclass(frozen=True, slots=True)
class Target:
    """One input path: the seed texts and the argv that feeds a file to it."""

    name: str
    seeds: list[str]  # file paths, or inline YAML text (starts with no "/")
    argv: Callable[[str, str], list[str]]  # (mutated file, scratch folder) -> argv


def targets() -> list[Target]:
    return [
        Target(
            "lint",
            _files("tests/fixtures/lint/*/*.yaml", "examples/manifests/*.yaml", limit=0),
            lambda f, d: ["lint", f],
        ),
        Target(
            "lint --cluster",
            _files(
                "examples/clusters/*.yaml", "examples/simulate/cluster.yaml", "tests/fixtures/cluster/*.yaml"
            ),
            lambda f, d: ["lint", LINT_MANIFEST, "--cluster", f],
        ),
        Target(
            "generate",
            _files("examples/blueprints/*.yaml"),
            lambda f, d: ["generate", f, "-o", str(Path(d) / "out")],
        ),
        Target(
            "simulate inputs",
            _files("tests/fixtures/simulate/*.yaml", "examples/simulate/deadlock-jobs.yaml"),
            lambda f, d: ["simulate", "--cluster", SIM_CLUSTER, f],
        ),
        Target(
            "simulate --cluster",
            _files("examples/simulate/cluster.yaml", "tests/fixtures/simulate/cluster-2x8.yaml"),
            lambda f, d: ["simulate", "--cluster", f, SIM_JOBS],
        ),
        Target(
            "simulate --scenario",
            [SCENARIO_SEED],
            lambda f, d: [
                "simulate",
                "--cluster",
                SIM_CLUSTER,
                SIM_JOBS,
                "--scheduler",
                "kueue",
                "--scenario",
                f,
            ],
        ),
        Target(
            "simulate --autoscaler",
            [NODEGROUP_SEED],
            lambda f, d: ["simulate", "--cluster", SIM_CLUSTER, SIM_JOBS, "--autoscaler", f],
        ),
        Target(
            "advise sharing --from",
            _files("tests/fixtures/advise/workloads.yaml"),
            lambda f, d: ["advise", "sharing", "--gpu", "A100-80GB", "--from", f],
        ),
        Target(".gpuplane.yaml", [CONFIG_SEED], lambda f, d: ["lint", LINT_MANIFEST, "--config", f]),
    ]


REPLACEMENTS: list[Any] = [
    None,
    5,
    -1,
    0,
    "x",
    "",
    True,
    [],
    {},
    [1],
    ["a", None],
    {"a": 1},
    {1: "int key", "s": 2},
    1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    2**63,
    int("9" * 401),
    HUGE,
    "5m",
    "ü漢字\u202e\U0001f680",
    "\x07bell",
    "a" * 300,
    [[[[[[[[[[]]]]]]]]]],
]


def _paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*here, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*here, i)))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


def _seed_docs(seed: str) -> list[Any]:
    text = seed if not seed.startswith("/") else Path(seed).read_text(encoding="utf-8")
    try:
        return [d for d in yaml.safe_load_all(text)]
    except yaml.YAMLError:
        return [None]


_SEEDS: dict[str, list[Any]] = {}


@st.composite
def cases(draw: st.DrawFn, all_targets: list[Target]) -> tuple[Target, str]:
    """A target and the text of one mutated seed (one to three mutations)."""
    target = draw(st.sampled_from(all_targets))
    seed = draw(st.sampled_from(target.seeds))
    docs = copy.deepcopy(_SEEDS.setdefault(seed, _seed_docs(seed)))
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(docs) - 1))
        paths = _paths(docs[index])
        path = draw(st.sampled_from(paths))
        delete = bool(path) and draw(st.booleans()) and draw(st.booleans())
        value = draw(st.sampled_from(REPLACEMENTS) | st.text(max_size=20) | st.integers())
        docs[index] = _set(docs[index], path, copy.deepcopy(value), delete)
    text = yaml.safe_dump_all(docs, allow_unicode=True, sort_keys=False)
    text = text.replace(f"'{HUGE}'", "9" * 5000).replace(HUGE, "9" * 5000)
    return target, text


@dataclass(slots=True)
class Tally:
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")
    by_target: dict[str, int] = field(default_factory=dict)
    live: bool = False  # print failures and progress to stderr as they come (bench run)


def _forget_click_stream_cache() -> None:
    """Let the streams of the last ``CliRunner.invoke`` go.

    click caches the text stream it wraps around ``sys.stdout``/``sys.stderr`` in a
    ``WeakKeyDictionary`` (``click._compat._make_cached_stream_func``); when the stream is already
    a usable text stream the cached value is the stream itself, so the weak key is held strongly
    by its own value and never leaves. A CLI process has one stderr; the harness swaps in a new
    one per case and kept every case's output buffers (~90 per 100 cases). Harness-only: the
    product never replaces ``sys.stderr``.
    """
    from weakref import WeakKeyDictionary

    from click import _compat  # for start-up time of the harness itself

    for func in (_compat._default_text_stdin, _compat._default_text_stdout, _compat._default_text_stderr):
        for cell in func.__closure__ or ():
            if isinstance(cell.cell_contents, WeakKeyDictionary):
                cell.cell_contents.clear()


def run_case(target: Target, text: str, tally: Tally) -> None:
    """Run one mutated input through the CLI; record a failure or a run over 10 s."""
    from click.testing import CliRunner  # for start-up time of the harness itself

    from gpuplane.cli.main import cli

    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "input.yaml")
        Path(path).write_text(text, encoding="utf-8", errors="surrogatepass")
        argv = target.argv(path, scratch)
        start = time.perf_counter()
        res = CliRunner().invoke(cli, argv)
        took = time.perf_counter() - start
    _forget_click_stream_cache()
    tally.cases += 1
    tally.by_target[target.name] = tally.by_target.get(target.name, 0) + 1
    label = f"{target.name}: gpuplane {' '.join(argv[:-1] if target.name == 'generate' else argv)}"
    if took > tally.slowest[0]:
        tally.slowest = (took, label)
    if took > 10:
        tally.slow.append(f"{took:.1f}s {label}\n{text[:2000]}")
    escaped = res.exception is not None and not isinstance(res.exception, SystemExit)
    if escaped or res.exit_code not in (0, 1, 2) or "Traceback" in res.output:
        tb = "".join(traceback.format_exception(*res.exc_info)) if res.exc_info and escaped else res.output
        tally.failures.append(
            f"{label} (exit {res.exit_code})\n--- input ---\n{text[:2000]}\n--- error ---\n{tb}"
        )
        if tally.live:
            print("=" * 100 + "\n" + tally.failures[-1], file=sys.stderr, flush=True)
    if tally.live and tally.cases % 250 == 0:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"progress: {tally.cases} cases, {len(tally.failures)} failures, {len(tally.slow)} over 10 s, "
            f"slowest {tally.slowest[0]:.2f} s, peak RSS {peak:.0f} MiB",
            file=sys.stderr,
            flush=True,
        )


def run(
    n: int, seed: int | None, derandomize: bool = False, live: bool = False, only: str | None = None
) -> Tally:
    """Run ``n`` cases (of the target named ``only``, else of every target)."""
    tally = Tally(live=live)
    all_targets = [t for t in targets() if only is None or t.name == only]

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    @given(cases(all_targets))
    def one(case: tuple[Target, str]) -> None:
        run_case(*case, tally)

    if seed is not None and not derandomize:
        from hypothesis import seed as hypothesis_seed

        one = hypothesis_seed(seed)(one)
    one()
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    tally = run(args.cases, args.seed, live=True)
    for failure in tally.failures:
        print("=" * 100)
        print(failure)
    for slow in tally.slow:
        print("-" * 100)
        print("over 10 s:", slow)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("=" * 100)
    print(f"cases: {tally.cases} in {time.perf_counter() - start:.0f} s")
    print("per target: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.by_target.items())))
    print(f"tracebacks/exit 3: {len(tally.failures)}")
    print(f"runs over 10 s: {len(tally.slow)}; slowest {tally.slowest[0]:.2f} s ({tally.slowest[1]})")
    print(f"peak RSS: {peak_mib:.0f} MiB")
    return 1 if tally.failures or tally.slow else 0


if __name__ == "__main__":
    sys.exit(main())
