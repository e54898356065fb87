"""Start-up cost as work, not time: the quick commands import no heavy module they do not use.

``gpuplane lint FILE`` runs in pre-commit hooks and editors on one small file at a time, so what
it imports before linting is most of its cost (issue 14 item 4; the latency itself, as a ratio
to ``python -c pass``, is measured by bench/bench_startup.py, never here). Each case runs in a
fresh interpreter so modules imported by other tests do not count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Heavy for a one-file lint: numerics, validation frameworks, terminal UI, YAML round-trip,
# cluster clients, the MCP SDK, the knowledge base, the scheduler core and the diagnose rules.
HEAVY = (
    "numpy",
    "pydantic",
    "rich",
    "jsonschema",
    "kubernetes_validate",
    "ruamel",
    "lightkube",
    "mcp",
    "gpuplane.knowledge",
    "gpuplane.scheduler.scheduler",
    "gpuplane.scheduler.index",
    "gpuplane.diagnose.rules",
    "gpuplane.diagnose.facts",
)
# Nothing of the rules' code is needed to list or explain them (the cached rule index has it).
RULE_MODULES = ("gpuplane.lint.rules", "gpuplane.diagnose.rules")

PROBE = """
import json, sys
from click.testing import CliRunner
from gpuplane.cli.main import cli
result = CliRunner().invoke(cli, sys.argv[1:])
print(json.dumps({"exit": result.exit_code, "modules": sorted(sys.modules)}))
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

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ml}
data: {LOG_LEVEL: info}
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One cache folder for these probes: the first run of a command writes the rule index
    there (importing every rule), the measured runs read it, as every run after the first does."""
    return str(tmp_path_factory.mktemp("cache"))


def imported(cache_dir: str, *argv: str) -> tuple[int, set[str]]:
    env = {**os.environ, "GPUPLANE_CACHE_DIR": cache_dir}
    for _ in range(2):  # the first run writes the rule index; the second is measured
        out = subprocess.run(
            [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True, env=env
        )
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    return doc["exit"], set(doc["modules"])


def heavy_in(modules: set[str], also: tuple[str, ...] = (), allowed: tuple[str, ...] = ()) -> list[str]:
    names = [h for h in (*HEAVY, *also) if h not in allowed]
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in names))


# Neither schema library: unknown fields are found by walking the bundled schema's JSON.
SCHEMA_LIBRARIES = ("jsonschema_rs",)


def rule_modules_in(modules: set[str]) -> list[str]:
    """Rule modules imported (the packages themselves and their private helpers aside)."""
    return sorted(
        m
        for m in modules
        if any(m.startswith(p + ".") for p in RULE_MODULES)
        and not m.rsplit(".", 1)[1].startswith("_")
        and m.count(".") >= 4
    )


def test_one_configmap_lint_imports_only_the_rules_that_read_configmaps(
    tmp_path: Path, cache_dir: str
) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(CONFIGMAP)
    code, modules = imported(cache_dir, "lint", str(path))
    assert code == 0
    assert heavy_in(modules, (*SCHEMA_LIBRARIES, "msgspec", "gpuplane.sources.cluster")) == []
    # the modules whose rules ask for ConfigMaps, and the one that looks at every object
    assert rule_modules_in(modules) == [
        "gpuplane.lint.rules.gpu.unrendered_template",
        "gpuplane.lint.rules.operator.clusterpolicy",
        "gpuplane.lint.rules.sharing.device_plugin",
        "gpuplane.lint.rules.sharing.mig",
        "gpuplane.lint.rules.sharing.time_slicing",
        "gpuplane.lint.rules.tenancy.queues",
    ]


def test_one_gpu_pod_lint_imports_no_heavy_module(tmp_path: Path, cache_dir: str) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(POD)
    code, modules = imported(cache_dir, "lint", str(path))
    assert code in (0, 1)
    # pathlib (with urllib.parse and ipaddress) neither: config discovery and schemas use os.path
    assert heavy_in(modules, (*SCHEMA_LIBRARIES, "gpuplane.sources.cluster", "pathlib")) == []
    # nor the scheduler: the schema rule reads the modelled Kubernetes minors from k8s.versions
    assert sorted(m for m in modules if m.startswith("gpuplane.scheduler")) == []
    # no rule that only reads kinds absent from the file (Karpenter NodePools, ClusterPolicies...)
    assert "gpuplane.lint.rules.operator.dcgm" not in modules
    assert "gpuplane.lint.rules.autoscaling.node_disk" not in modules


def test_rules_listing_imports_no_rule_module(cache_dir: str) -> None:
    code, modules = imported(cache_dir, "rules")
    assert code == 0
    assert heavy_in(modules, (*SCHEMA_LIBRARIES, "msgspec", *RULE_MODULES), allowed=RULE_MODULES) == []
    assert rule_modules_in(modules) == []


def test_explain_imports_no_rule_module(cache_dir: str) -> None:
    """``explain`` links the rule's knowledge-base section, so it alone may import the knowledge base."""
    code, modules = imported(cache_dir, "explain", "gpu-request-limit-mismatch")
    assert code == 0
    assert heavy_in(modules, SCHEMA_LIBRARIES, allowed=("gpuplane.knowledge",)) == []
    # the section's title comes from the cached rule map: no YAML front matter is parsed
    assert sorted(m for m in modules if m == "yaml" or m.startswith("yaml.")) == []
    assert rule_modules_in(modules) == []
