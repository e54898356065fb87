"""A deterministic slice of the fuzz harness (bench/fuzz.py, issue 11 item 9): 54 mutated copies
of the project's fixtures through every input path; none may end in exit 3 or a traceback."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _harness():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpuplane_bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TARGETS = [
    "lint",
    "lint --cluster",
    "generate",
    "simulate inputs",
    "simulate --cluster",
    "simulate --scenario",
    "simulate --autoscaler",
    "advise sharing --from",
    ".gpuplane.yaml",
]


def test_every_target_has_seeds() -> None:
    assert [t.name for t in _harness().targets() if t.seeds] == TARGETS


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_slice_has_no_tracebacks(target: str) -> None:
    fuzz = _harness()
    tally = fuzz.run(6, None, derandomize=True, only=target)
    assert tally.cases == 6
    assert tally.failures == []


def test_a_case_leaves_no_click_streams_behind() -> None:
    """click's stream cache holds each CliRunner stream strongly (its value is the key itself);
    the harness clears it after every case, or a 10,000-case run keeps every output buffer."""
    from weakref import WeakKeyDictionary

    from click import _compat

    fuzz = _harness()
    fuzz.run(3, None, derandomize=True, only="lint")
    caches = [
        cell.cell_contents
        for func in (_compat._default_text_stdout, _compat._default_text_stderr)
        for cell in func.__closure__ or ()
        if isinstance(cell.cell_contents, WeakKeyDictionary)
    ]
    assert len(caches) == 2
    assert [len(cache) for cache in caches] == [0, 0]
