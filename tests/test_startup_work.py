"""What the console's one-file ``gpuplane lint`` does besides linting, counted (never timed).

The console script's path of a pre-commit hook (``gpuplane lint FILE``, ``cli.entry`` without
click) in a fresh interpreter: which rule modules it loads, which classes it builds as
dataclasses (each compiles its methods at import: ``gpuplane.records``), whether PyYAML's costly
pattern was compiled (``gpuplane.pyyaml``) and whether the run was frozen before the exit's
collection (``gc_policy.until_exit``). bench/bench_startup.py measures the time these save.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.pyyaml import NON_PRINTABLE_SET

PROBE = """
import gc, json, sys
sys.argv = ["gpuplane", *sys.argv[1:]]
from gpuplane.cli.entry import main
try:
    main()
except SystemExit as exc:
    code = exc.code
reader = sys.modules.get("yaml.reader")
print(json.dumps({
    "exit": code,
    "modules": sorted(sys.modules),
    "dataclasses": sorted(
        f"{name}.{attr}"
        for name, module in list(sys.modules.items())
        if name.startswith("gpuplane")
        for attr, value in list(vars(module).items())
        if isinstance(value, type) and value.__module__ == name and "__dataclass_fields__" in vars(value)
    ),
    "non_printable": reader.Reader.NON_PRINTABLE.pattern if reader else None,
    "frozen": gc.get_freeze_count(),
}))
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.01-py3
    resources: {limits: {nvidia.com/gpu: 1}}
"""
CONFIGMAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ml}\ndata: {LOG_LEVEL: info}\n"
)

# Kept dataclasses: diagnose's ClusterFinding extends Finding, and diagnose replace()s a LintConfig.
KEPT_DATACLASSES = ["gpuplane.lint.config.LintConfig", "gpuplane.lint.finding.Finding"]
# Rule modules (not their private helpers) a one-object file may load: those whose kinds it
# has and, for a pod, those that read pod sets (gpuplane.lint.reads).
MAX_RULE_MODULES_FOR_A_POD = 33


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


def probe(cache_dir: str, path: Path) -> dict:
    env = {**os.environ, "GPUPLANE_CACHE_DIR": cache_dir}
    for _ in range(2):  # the first run writes the rule index; the second is counted
        out = subprocess.run(
            [sys.executable, "-c", PROBE, "lint", str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def rule_modules(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m.startswith("gpuplane.lint.rules.")
        and m.count(".") >= 4
        and not m.rsplit(".", 1)[1].startswith("_")
    ]


@pytest.mark.parametrize("text", [POD, CONFIGMAP], ids=["gpu pod", "configmap"])
def test_a_one_file_lint_builds_no_dataclass_compiles_no_yaml_reader_pattern_and_freezes(
    tmp_path: Path, cache_dir: str, text: str
) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(text)
    doc = probe(cache_dir, path)
    assert doc["exit"] == 0
    assert doc["dataclasses"] == KEPT_DATACLASSES
    assert doc["non_printable"] == NON_PRINTABLE_SET
    assert doc["frozen"] > 0


def test_a_gpu_pod_loads_at_most_the_rule_modules_that_read_pod_sets(tmp_path: Path, cache_dir: str) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD)
    loaded = rule_modules(probe(cache_dir, path)["modules"])
    assert 0 < len(loaded) <= MAX_RULE_MODULES_FOR_A_POD, loaded
    # none that reads only kinds the file lacks
    assert "gpuplane.lint.rules.operator.dcgm" not in loaded
    assert "gpuplane.lint.rules.autoscaling.node_disk" not in loaded
