"""A big cluster's command ends the process without freeing it (``gc_policy.exit_at_once``),
and loses nothing by it: the same stdout, stderr and exit code as the ordinary exit, atexit
handlers run, and a closed pipe (``| head -1``) still ends it quietly by SIGPIPE.

Each case runs the console script's entry point in a subprocess twice: once as shipped, with
the demo cluster made "big" (``FREEZE_ABOVE = 0``) so that the fast exit is taken, and once with
the fast exit turned off, the ordinary exit the output is compared with.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
MARK = "<fast exit>"

_PRELUDE = f"""
import atexit, os, sys
import gpuplane.sources.cluster as cluster
import gpuplane.sources.gc_policy as gc_policy
from gpuplane.cli.entry import main
cluster.FREEZE_ABOVE = 0
atexit.register(lambda: sys.stderr.write("<atexit ran>\\n"))
fast = sys.argv.pop(1) == "fast"
if fast:
    real_exit = os._exit
    def marked_exit(code):
        os.write(2, b"{MARK}")
        real_exit(code)
    os._exit = marked_exit
else:
    gc_policy.allow_fast_exit = lambda enabled=True: None
sys.argv[0] = "gpuplane"
main()
"""


def _run(mode: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PRELUDE, mode, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"},
    )


@pytest.mark.parametrize(
    "args",
    [
        ("why-pending", "-A", "--cluster", DEMO),
        ("why-pending", "-A", "--cluster", DEMO, "-f", "json"),
        ("diagnose", "--cluster", DEMO),
        ("diagnose", "--cluster", DEMO, "--fail-on", "info"),
        ("inventory", "--cluster", DEMO),
        ("simulate", "--cluster", DEMO, "--scenario", "drain:gpu-a100-0"),
    ],
)
def test_fast_exit_same_output_and_code(args: tuple[str, ...]) -> None:
    slow = _run("slow", *args)
    fast = _run("fast", *args)
    assert MARK not in slow.stderr
    assert fast.stdout == slow.stdout
    assert fast.returncode == slow.returncode
    assert "<atexit ran>" in slow.stderr
    assert fast.stderr.replace(MARK, "") == slow.stderr


def test_fast_exit_taken_by_why_pending_and_diagnose() -> None:
    for args in (
        ("why-pending", "-A", "--cluster", DEMO),
        ("diagnose", "--cluster", DEMO, "--fail-on", "info"),
    ):
        fast = _run("fast", *args)
        assert MARK in fast.stderr, args
        assert fast.stderr.index(MARK) > fast.stderr.index("<atexit ran>")  # handlers first


def _head_one(mode: str) -> tuple[int, str, bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _PRELUDE, mode, "why-pending", "-A", "--cluster", DEMO],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err, first


def test_closed_pipe_ends_as_before() -> None:
    slow_code, slow_err, slow_first = _head_one("slow")
    fast_code, fast_err, fast_first = _head_one("fast")
    assert fast_first == slow_first != b""
    assert fast_code == slow_code
    assert "Traceback" not in fast_err and "Traceback" not in slow_err
    assert fast_err.replace(MARK, "") == slow_err
