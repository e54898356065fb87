"""Start-up cost as work, not time: the quick commands import no heavy module they do not use.

``gpuplane lint FILE`` runs in pre-commit hooks and editors on one small file at a time, so what
it imports before linting is most of its cost (issue 14 item 4; the latency itself, as a ratio
to ``python -c pass``, is measured by bench/bench_startup.py, never here). Each case runs in a
fresh interpreter so modules imported by other tests do not count.
"""

from __future__ import annotations

import json
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
)

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


def imported(*argv: str) -> tuple[int, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    return doc["exit"], set(doc["modules"])


def heavy_in(modules: set[str], also: tuple[str, ...] = (), allowed: tuple[str, ...] = ()) -> list[str]:
    names = [h for h in (*HEAVY, *also) if h not in allowed]
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in names))


@pytest.mark.parametrize(
    ("content", "also"),
    [
        (CONFIGMAP, ("jsonschema_rs",)),  # nothing to validate against a schema in a ConfigMap
        (POD, ()),  # a GPU Pod is checked for unknown fields: jsonschema-rs is needed, nothing else
    ],
    ids=["configmap", "gpu-pod"],
)
def test_one_file_lint_imports_no_heavy_module(tmp_path: Path, content: str, also: tuple[str, ...]) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(content)
    code, modules = imported("lint", str(path))
    assert code in (0, 1)
    assert heavy_in(modules, also) == []


def test_rules_listing_imports_no_heavy_module() -> None:
    code, modules = imported("rules")
    assert code == 0
    # the catalog lists the diagnose rules too, so their modules are what it needs
    assert heavy_in(modules, ("jsonschema_rs",), allowed=("gpuplane.diagnose.rules",)) == []


def test_explain_imports_no_heavy_module_but_the_knowledge_base() -> None:
    """``explain`` links the rule's knowledge-base section, so it alone may import the knowledge base."""
    code, modules = imported("explain", "gpu-request-limit-mismatch")
    assert code == 0
    allowed = ("gpuplane.diagnose.rules", "gpuplane.knowledge")
    assert heavy_in(modules, ("jsonschema_rs",), allowed=allowed) == []
