"""`gpuplane mcp` end to end: the SDK's own stdio client against `python -m gpuplane mcp`.

One server process serves every call (module fixture); each test then asserts on the recorded
results, comparing structured content with the JSON the matching CLI command prints.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.generate.output import MANIFEST_NAME

mcp_client = pytest.importorskip("mcp.client.stdio")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = "examples/clusters/demo.yaml"
MANIFESTS = "examples/manifests"
BLUEPRINT = "examples/blueprints/eks-training.yaml"
SIM_CLUSTER = "examples/simulate/cluster.yaml"
SIM_JOBS = "examples/simulate/deadlock-jobs.yaml"
USAGE_METRICS = "examples/usage/demo-metrics.json"

TOOL_NAMES = {
    "lint",
    "list_rules",
    "explain_rule",
    "why_pending",
    "inventory",
    "diagnose",
    "advise_mig",
    "advise_sharing",
    "advise_capacity",
    "ask",
    "generate",
    "blueprint_schema",
    "simulate",
    "usage",
}

INLINE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:24.05-py3
      resources:
        requests:
          nvidia.com/gpu: 1
"""

WORKLOAD = {
    "name": "notebooks",
    "mem": 10,
    "util": 15,
    "isolation": "tenant",
    "latency": "interactive",
    "count": 20,
}
GEN_DIR = tempfile.mkdtemp(prefix="gpuplane-mcp-test-")

# key -> (tool, arguments); every call goes through the one server process, in this order.
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "lint_examples": ("lint", {"paths": [MANIFESTS]}),
    "lint_inline": ("lint", {"manifests": INLINE_POD}),
    "lint_bad_yaml": ("lint", {"manifests": "kind: Pod\nmetadata: [unclosed\n"}),
    "simulate_bad_scheduler": (
        "simulate",
        {"cluster": "tests/fixtures/simulate/nodes2x4.yaml", "scheduler": "slurm"},
    ),
    "lint_partly_bad": ("lint", {"manifests": INLINE_POD, "paths": ["tests/fixtures/simulate/bad.yaml"]}),
    "simulate_bad_yaml": (
        "simulate",
        {"cluster": "tests/fixtures/simulate/nodes2x4.yaml", "manifests": "kind: [\n"},
    ),
    "lint_nothing": ("lint", {}),
    "lint_unknown_rule": ("lint", {"paths": [MANIFESTS], "disable": ["no-such-rule"]}),
    "lint_stdin": ("lint", {"paths": ["-"]}),
    "list_rules": ("list_rules", {}),
    "list_rules_gpu": ("list_rules", {"category": "gpu"}),
    "explain": ("explain_rule", {"rule_id": "gpu-request-without-limit"}),
    "explain_typo": ("explain_rule", {"rule_id": "gpu-request-without-limt"}),
    "why_pending": ("why_pending", {"cluster": DEMO}),
    "why_pending_missing_pod": ("why_pending", {"cluster": DEMO, "pod": "nope/x"}),
    "why_pending_bad_pod": ("why_pending", {"cluster": DEMO, "pod": "no-slash"}),
    "why_pending_no_cluster": ("why_pending", {"cluster": "no/such/snapshot.yaml"}),
    "inventory": ("inventory", {"cluster": DEMO}),
    "diagnose": ("diagnose", {"cluster": DEMO}),
    "usage": ("usage", {"cluster": DEMO, "metrics_files": [USAGE_METRICS]}),
    "usage_no_source": ("usage", {"cluster": DEMO}),
    "simulate": ("simulate", {"cluster": SIM_CLUSTER, "paths": [SIM_JOBS]}),
    "simulate_volcano": ("simulate", {"cluster": SIM_CLUSTER, "paths": [SIM_JOBS], "scheduler": "volcano"}),
    "simulate_bad_version": (
        "simulate",
        {"cluster": SIM_CLUSTER, "paths": [SIM_JOBS], "kubernetes_version": "x"},
    ),
    "advise_mig": ("advise_mig", {"gpu": ["A100-80GB"], "demand": {"3g.40gb": 2, "1g.10gb": 4}}),
    "advise_mig_unknown_model": ("advise_mig", {"gpu": ["Z9000"], "demand": {"1g.10gb": 1}}),
    "advise_mig_bad_type": ("advise_mig", {"gpu": ["A100-80GB"], "demand": {"1g.10gb": 1}, "gpus": "many"}),
    "advise_sharing": ("advise_sharing", {"gpu": "A100-80GB", "workloads": [WORKLOAD]}),
    "advise_capacity": ("advise_capacity", {"demand": {"H100-80GB": 16}, "headroom": 10}),
    "ask": ("ask", {"question": "time-slicing or MIG for notebooks?"}),
    "generate": ("generate", {"blueprint_path": BLUEPRINT, "output_dir": GEN_DIR}),
    "generate_bad": ("generate", {"blueprint": "kubernetes_version: 1.31\nno_such_field: 1\n"}),
    "blueprint_schema": ("blueprint_schema", {}),
}


async def _session() -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gpuplane", "mcp", "--root", str(ROOT), "--root", GEN_DIR],
        cwd=str(ROOT),
    )
    with open(os.devnull, "w") as errlog, anyio.fail_after(120):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            tools = await session.list_tools()
            results = {key: await session.call_tool(name, args) for key, (name, args) in CALLS.items()}
            after_errors = await session.call_tool("list_rules", {"category": "sharing"})
    return {"init": init, "tools": tools.tools, "results": results, "after_errors": after_errors}


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    return anyio.run(_session)


@contextmanager
def _in_root() -> Iterator[None]:
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(before)


def cli_output(*args: str) -> str:
    with _in_root():
        result = CliRunner().invoke(cli, list(args), prog_name="gpuplane")
    return result.stdout


def cli_error(*args: str) -> str:
    """The one-line message the CLI prints for unusable input (without its ``gpuplane: `` prefix)."""
    with _in_root():
        result = CliRunner().invoke(cli, list(args), prog_name="gpuplane")
    assert result.exit_code == 2
    return result.stderr.strip().removeprefix("gpuplane: ")


def cli_json(*args: str) -> Any:
    return json.loads(cli_output(*args))


def ok(served: dict[str, Any], key: str) -> dict[str, Any]:
    """The structured content of a successful call; its one text block is a short summary, not the
    same JSON again (issue 17: the document is sent once)."""
    result = served["results"][key]
    assert not result.is_error, result.content
    assert result.structured_content is not None
    (summary,) = result.content
    assert summary.type == "text" and summary.text.endswith(" (full result: structuredContent)")
    assert len(summary.text) < 600
    return result.structured_content


def error(served: dict[str, Any], key: str) -> str:
    result = served["results"][key]
    assert result.is_error
    assert result.structured_content is None
    return result.content[0].text


# -- protocol --------------------------------------------------------------------------------------


def test_initialize_names_the_server(served: dict[str, Any]) -> None:
    info = served["init"].server_info
    assert info.name == "gpuplane"
    assert info.version == __import__("gpuplane").__version__
    assert "read-only" in served["init"].instructions


def test_lists_exactly_the_gpuplane_tools_with_schemas(served: dict[str, Any]) -> None:
    tools = {t.name: t for t in served["tools"]}
    assert set(tools) == TOOL_NAMES
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
        ann = tool.annotations
        assert ann.idempotent_hint is True
        assert ann.read_only_hint is (tool.name != "generate")
        assert ann.destructive_hint is (tool.name == "generate")
        assert ann.open_world_hint is (
            tool.name in {"lint", "why_pending", "inventory", "diagnose", "simulate", "usage"}
        )
    assert tools["why_pending"].input_schema["required"] == ["cluster"]
    assert tools["explain_rule"].input_schema["required"] == ["rule_id"]
    category = tools["list_rules"].input_schema["properties"]["category"]["anyOf"][0]
    assert category["enum"][:3] == ["gpu", "placement", "sharing"]
    provider = tools["advise_capacity"].input_schema["properties"]["provider"]
    assert provider["enum"] == ["aws", "gcp", "azure"]
    assert "description" in tools["lint"].input_schema["properties"]["manifests"]


def test_server_survives_errors(served: dict[str, Any]) -> None:
    result = served["after_errors"]
    assert not result.is_error
    assert {r["category"] for r in result.structured_content["rules"]} == {"sharing"}


# -- lint, rules -----------------------------------------------------------------------------------


def test_lint_matches_cli_json(served: dict[str, Any]) -> None:
    data = ok(served, "lint_examples")
    expected = cli_json("lint", MANIFESTS, "-f", "json")
    assert data["findings"] == expected["findings"]
    assert data["summary"] == expected["summary"]
    assert data["errors"] == []
    assert "gpu-request-without-limit" in {f["rule"] for f in data["findings"]}


def test_lint_inline_text_points_at_input_lines(served: dict[str, Any]) -> None:
    data = ok(served, "lint_inline")
    finding = next(f for f in data["findings"] if f["rule"] == "gpu-request-without-limit")
    assert finding["path"] == "<input>"
    assert finding["line"] == 12
    assert finding["object"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "train"}
    assert served["results"]["lint_inline"].content[0].text == (
        "2 findings (1 error, 0 warnings, 1 info) in 1 object: gpu-request-without-limit, gpu-taint-not-tolerated"
        " (full result: structuredContent)"
    )


def test_lint_bad_yaml_is_a_tool_error(served: dict[str, Any]) -> None:
    # Nothing usable was read: a tool error with the load error, not "No findings in 0 objects"
    # (the earlier assertion expected an empty successful result, which hid the problem).
    assert error(served, "lint_bad_yaml") == (
        "Error executing tool lint: nothing usable in the manifests: <input>:3: invalid YAML: "
        "did not find expected ',' or ']'"
    )


def test_lint_bad_yaml_next_to_good_objects_keeps_results(served: dict[str, Any]) -> None:
    data = ok(served, "lint_partly_bad")
    assert data["summary"]["objects"] == 1
    assert data["errors"] == [
        "tests/fixtures/simulate/bad.yaml:2: invalid YAML: did not find expected node content"
    ]


def test_simulate_bad_yaml_is_a_tool_error(served: dict[str, Any]) -> None:
    assert error(served, "simulate_bad_yaml") == (
        "Error executing tool simulate: nothing usable in the manifests: <input>:2: invalid YAML: "
        "did not find expected node content"
    )


def test_lint_argument_errors(served: dict[str, Any]) -> None:
    assert error(served, "lint_nothing") == (
        "Error executing tool lint: give manifests (YAML/JSON text) or paths (files or folders), or both"
    )
    assert error(served, "lint_unknown_rule") == (
        "Error executing tool lint: disable: unknown rule id 'no-such-rule' (see the list_rules tool)"
    )
    assert "'-' (standard input) is not available over MCP" in error(served, "lint_stdin")


def test_list_rules_matches_cli(served: dict[str, Any]) -> None:
    assert ok(served, "list_rules")["rules"] == cli_json("rules", "-f", "json")
    gpu = ok(served, "list_rules_gpu")["rules"]
    assert gpu and {r["category"] for r in gpu} == {"gpu"}


def test_explain_rule_page_matches_cli(served: dict[str, Any]) -> None:
    data = ok(served, "explain")
    assert data["page"] == cli_output("explain", "gpu-request-without-limit")
    assert data["id"] == "gpu-request-without-limit"
    assert data["severity"] == "error"
    typo = error(served, "explain_typo")
    assert typo.startswith(
        "Error executing tool explain_rule: unknown rule id 'gpu-request-without-limt'; "
        "did you mean gpu-request-without-limit or "
    )
    # the same words as `gpuplane explain`, pointing at the list_rules tool instead of `gpuplane rules`
    assert typo.removeprefix("Error executing tool explain_rule: ") == cli_error(
        "explain", "gpu-request-without-limt"
    )


# -- cluster engines -------------------------------------------------------------------------------


def test_why_pending_messages_equal_cli(served: dict[str, Any]) -> None:
    data = ok(served, "why_pending")
    expected = cli_json("why-pending", "--cluster", DEMO, "-f", "json")
    assert data["pods"]
    assert [(p["pod"], p["message"]) for p in data["pods"]] == [
        (p["pod"], p["message"]) for p in expected["pods"]
    ]
    data = dict(data)
    assert data.pop("errors") == []
    assert data.pop("page") == {"total": 5, "returned": 5, "next_cursor": None}
    assert data == expected


def test_simulate_equals_cli_on_the_deadlock_example(served: dict[str, Any]) -> None:
    for key, extra in (("simulate", ()), ("simulate_volcano", ("--scheduler", "volcano"))):
        data = dict(ok(served, key))
        expected = cli_json("simulate", "--cluster", SIM_CLUSTER, SIM_JOBS, *extra, "-f", "json")
        assert data.pop("errors") == []
        assert data.pop("input_notes") == []
        assert data == expected
    assert ok(served, "simulate")["deadlock"]["gpus_held_idle"] == 16
    assert ok(served, "simulate_volcano")["deadlock"] is None
    assert error(served, "simulate_bad_version") == (
        "Error executing tool simulate: --kubernetes-version 'x' is not a Kubernetes version like 1.31"
    )


def test_why_pending_errors(served: dict[str, Any]) -> None:
    assert error(served, "why_pending_missing_pod") == (
        f"Error executing tool why_pending: pod nope/x not found in {DEMO}"
    )
    assert cli_error("why-pending", "--cluster", DEMO, "--pod", "nope/x") == f"pod nope/x not found in {DEMO}"
    assert error(served, "why_pending_bad_pod") == (
        "Error executing tool why_pending: pod 'no-slash': expected NAMESPACE/NAME"
    )
    assert error(served, "why_pending_no_cluster") == (
        "Error executing tool why_pending: cluster: 'no/such/snapshot.yaml' does not exist "
        f"(relative paths start at the server's working directory {ROOT}; roots: {ROOT}, {os.path.realpath(GEN_DIR)})"
    )


def test_inventory_totals_equal_cli(served: dict[str, Any]) -> None:
    data = ok(served, "inventory")
    expected = cli_json("inventory", "--cluster", DEMO, "-f", "json")
    assert data["models"] == expected["models"]
    assert data["summary"] == expected["summary"]
    assert data["nodes"] == expected["nodes"]


def test_diagnose_equals_cli(served: dict[str, Any]) -> None:
    data = dict(ok(served, "diagnose"))
    expected = cli_json("diagnose", "--cluster", DEMO, "-f", "json")
    assert data.pop("errors") == []
    assert data.pop("page") == {"total": 41, "returned": 41, "next_cursor": None}
    assert data == expected
    assert "gang-partially-running" in {f["rule"] for f in data["findings"]}


def test_usage_equals_cli(served: dict[str, Any]) -> None:
    data = dict(ok(served, "usage"))
    expected = cli_json("usage", "--cluster", DEMO, "--metrics", USAGE_METRICS, "-f", "json")
    assert data.pop("errors") == []
    assert data.pop("page") == {"total": 9, "returned": 9, "next_cursor": None}
    assert data == expected
    assert (
        served["results"]["usage"]
        .content[0]
        .text.startswith(
            "11 workloads, 788.8 GPU-hours allocated, 721.9 active; 9 findings (gpu-data-starved, "
        )
    )
    assert error(served, "usage_no_source") == (
        "Error executing tool usage: give one metrics source: prometheus URL or metrics FILE"
    )


# -- advise, ask -----------------------------------------------------------------------------------


def test_advise_mig_equals_cli(served: dict[str, Any]) -> None:
    data = ok(served, "advise_mig")
    assert data == cli_json(
        "advise", "mig", "--gpu", "A100-80GB", "--demand", "3g.40gb=2,1g.10gb=4", "-f", "json"
    )
    assert data["feasible"] is True
    assert (
        served["results"]["advise_mig"].content[0].text
        == f"feasible: {data['gpus_needed']} GPUs host the demand (full result: structuredContent)"
    )
    assert error(served, "advise_mig_unknown_model").startswith(
        "Error executing tool advise_mig: unknown GPU model 'Z9000' (MIG-capable models: "
    )
    assert "gpus" in error(served, "advise_mig_bad_type")


def test_advise_sharing_equals_cli(served: dict[str, Any]) -> None:
    workload = ",".join(f"{k}={v}" for k, v in WORKLOAD.items())
    expected = cli_json("advise", "sharing", "--gpu", "A100-80GB", "--workload", workload, "-f", "json")
    assert ok(served, "advise_sharing") == expected


def test_advise_capacity_equals_cli(served: dict[str, Any]) -> None:
    expected = cli_json("advise", "capacity", "--demand", "H100-80GB=16", "--headroom", "10", "-f", "json")
    assert ok(served, "advise_capacity") == expected


def test_ask_equals_cli_offline(served: dict[str, Any]) -> None:
    expected = cli_json("ask", "time-slicing or MIG for notebooks?", "--offline", "-f", "json")
    data = ok(served, "ask")
    assert data == expected
    assert data["sources"]


# -- generate ----------------------------------------------------------------------------------------


def test_generate_writes_the_same_files_as_cli(served: dict[str, Any], tmp_path: Path) -> None:
    data = ok(served, "generate")
    assert data["output_dir"] == GEN_DIR
    cli_output("generate", BLUEPRINT, "-o", str(tmp_path))
    cli_files = sorted(  # the write manifest is the folder's bookkeeping, not an output file
        str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and p.name != MANIFEST_NAME
    )
    assert [f["path"] for f in data["files"]] == cli_files
    for entry in data["files"]:
        written = Path(GEN_DIR, entry["path"]).read_text(encoding="utf-8")
        assert written == (tmp_path / entry["path"]).read_text(encoding="utf-8")
        assert entry["bytes"] == len(written.encode("utf-8"))
    assert "README.md" in cli_files
    assert data["decisions"] and data["objects"]
    assert {r["release"] for r in data["helm_releases"]} >= {"gpu-operator"}


def test_generate_refuses_a_bad_blueprint(served: dict[str, Any]) -> None:
    message = error(served, "generate_bad")
    assert message.startswith("Error executing tool generate: <input>: blueprint refused (")
    assert "no_such_field: unknown field" in message
    assert "nothing written" in message


def test_blueprint_schema_equals_cli(served: dict[str, Any]) -> None:
    assert ok(served, "blueprint_schema")["schema"] == cli_json("generate", "--schema")


def test_argument_validation_errors_are_one_line(served: dict[str, Any]) -> None:
    """The SDK's pydantic validation text becomes ``field: problem`` (no URLs, one line)."""
    message = error(served, "simulate_bad_scheduler")
    assert message.startswith("invalid arguments for simulate: scheduler: Input should be ")
    assert "\n" not in message and "pydantic.dev" not in message
