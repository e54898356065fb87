"""The tool table and server wrapper, in process: error mapping, the snapshot cache, lazy imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from pydantic import Field

pytest.importorskip("mcp")
from mcp.client.client import Client

from gpuplane.mcp import tools
from gpuplane.mcp.server import build_server
from gpuplane.mcp.tools import TOOLS, ToolInputError, ToolOutput, ToolSpec

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "clusters" / "demo.yaml"


def _boom(value: Annotated[int, Field(description="Any number.")] = 1) -> ToolOutput:
    raise KeyError("node-7")


def _refuse(value: Annotated[int, Field(description="Any number.")] = 1) -> ToolOutput:
    raise ToolInputError(f"value {value} is not acceptable")


def _echo(value: Annotated[int, Field(description="Any number.", ge=0)] = 1) -> ToolOutput:
    return ToolOutput({"value": value}, f"value is {value}")


TEST_TOOLS = (
    ToolSpec("boom", "Boom", "Raises an unexpected exception.", _boom),
    ToolSpec("refuse", "Refuse", "Raises ToolInputError.", _refuse),
    ToolSpec("echo", "Echo", "Returns its input.", _echo),
)


def _call_all(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(TEST_TOOLS)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


def test_wrapper_maps_results_and_errors() -> None:
    echo, refuse, boom, invalid, again = _call_all(
        [
            ("echo", {"value": 3}),
            ("refuse", {"value": 5}),
            ("boom", {}),
            ("echo", {"value": -1}),
            ("echo", {}),
        ]
    )
    assert not echo.is_error
    assert echo.structured_content == {"value": 3}
    assert [c.text for c in echo.content] == ["value is 3 (full result: structuredContent)"]
    assert (
        refuse.is_error and refuse.content[0].text == "Error executing tool refuse: value 5 is not acceptable"
    )
    # an engine bug: one line naming the exception, the session goes on
    assert (
        boom.is_error
        and boom.content[0].text
        == "Error executing tool boom: gpuplane failed on this input (KeyError: 'node-7')"
    )
    assert invalid.is_error and "greater than or equal to 0" in invalid.content[0].text
    assert again.structured_content == {"value": 1}


def test_every_tool_has_described_parameters() -> None:
    names = [spec.name for spec in TOOLS]
    assert len(names) == len(set(names))

    async def schemas() -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in await build_server().list_tools()}

    for name, schema in anyio.run(schemas).items():
        for prop, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{prop} has no description"


def _load(path: str, *, fresh: bool = False) -> object:
    """A snapshot read as every cluster tool reads it: through the server's cache."""
    from gpuplane.app.inputs import load_cluster
    from gpuplane.app.outcome import MCP, Messages

    return load_cluster(path, None, None, Messages(), MCP, cache=tools.CLUSTERS, fresh=fresh)


def test_cluster_cache_rereads_a_changed_snapshot(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.yaml"
    shutil.copyfile(DEMO, snapshot)
    first = _load(str(snapshot))
    again = _load(str(snapshot))
    assert again is first
    fresh = _load(str(snapshot), fresh=True)
    assert fresh is not first
    text = snapshot.read_text(encoding="utf-8")
    snapshot.write_text(text + "\n", encoding="utf-8")
    os.utime(snapshot, ns=(1, 1))
    changed = _load(str(snapshot))
    assert changed is not first
    assert len(changed.nodes) == len(first.nodes)  # type: ignore[attr-defined]


def test_cluster_cache_is_bounded() -> None:
    cache = tools.ClusterCache(size=2)
    for i in range(3):
        cache.put((f"s{i}",), (object(), []))  # type: ignore[arg-type]
    assert cache.get(("s0",)) is None
    assert cache.get(("s2",)) is not None


def test_input_errors_are_one_line() -> None:
    with pytest.raises(ToolInputError, match=r"^cluster: '-' \(standard input\) is not available over MCP"):
        tools.inventory(cluster="-")
    with pytest.raises(
        ToolInputError, match=r"^give exactly one of blueprint \(YAML text\) or blueprint_path$"
    ):
        tools.generate()
    with pytest.raises(ToolInputError, match=r"^the question is longer than 2000 characters$"):
        tools.ask(question="gpu " * 600)
    with pytest.raises(ToolInputError, match=r"^demand 1g.10gb: the count must be >= 0$"):
        tools.advise_mig(gpu=["A100-80GB"], demand={"1g.10gb": -1})


def test_advise_mig_reports_an_unknown_profile_as_infeasible() -> None:
    out = tools.advise_mig(gpu=["A100-40GB"], demand={"3g.40gb": 1})
    assert out.data["feasible"] is False
    assert out.summary == f"not feasible: {out.data['reason']}"


def test_cli_module_does_not_import_the_sdk() -> None:
    code = (
        "import sys, gpuplane.cli.mcp_cmd, gpuplane.cli.main\n"
        "print(sorted(m for m in ('mcp', 'pydantic', 'gpuplane.mcp.server') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lint_finds_the_config_beside_the_manifests(tmp_path: Path) -> None:
    manifest = ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml"
    shutil.copyfile(manifest, tmp_path / "train.yaml")
    before = {f["rule"] for f in tools.lint(paths=[str(tmp_path)]).data["findings"]}
    assert "gpu-request-without-limit" in before
    (tmp_path / ".gpuplane.yaml").write_text("disable: [gpu-request-without-limit]\n", encoding="utf-8")
    after = {f["rule"] for f in tools.lint(paths=[str(tmp_path / "train.yaml")]).data["findings"]}
    assert after == before - {"gpu-request-without-limit"}


def test_advise_capacity_summary_uses_the_priced_cost_and_flags_partial() -> None:
    # Regression: the summary used total_monthly_usd, which is None as soon as one model has no
    # priced choice, so a partly priced plan showed no cost at all.
    from gpuplane.mcp.tools import advise_capacity

    out = advise_capacity({"H100-80GB": 16, "L4": 8}, provider="aws")
    assert out.data["cost_partial"] is True and out.data["total_monthly_usd"] is None
    assert (
        out.summary
        == f"24 GPUs on aws, about ${out.data['priced_monthly_usd']:,.0f}/month (partial: 1 model not priced)"
    )
    full = advise_capacity({"H100-80GB": 16}, provider="aws")
    assert full.data["cost_partial"] is False
    assert full.summary == f"16 GPUs on aws, about ${full.data['priced_monthly_usd']:,.0f}/month"
    none = advise_capacity({"T4": 4}, provider="aws")
    assert none.data["priced_monthly_usd"] is None
    assert none.summary == "4 GPUs on aws, cost unknown (no priced choice)"


# -- filters and pages on the listing tools (issue 17 item 5) -------------------------------------


def test_diagnose_filters_by_severity_namespace_and_rule() -> None:
    out = tools.diagnose(str(DEMO), severity="error", namespace="team-nlp")
    assert out.data["page"] == {"total": 4, "returned": 4, "next_cursor": None}
    assert [(f["rule"], f["object"]["name"]) for f in out.data["findings"]] == [
        ("gang-partially-running", "llm-finetune-f71dc84e-649b-47e3-afed-7ffe5b1314d2"),
        ("pending-gpu-pod", "llm-finetune-worker-2"),
        ("pending-gpu-pod", "llm-finetune-worker-3"),
        ("pending-gpu-pod", "qwen-sft-gb55k"),
    ]
    assert out.summary.endswith("; showing 4 of 4 findings")
    only = tools.diagnose(str(DEMO), rule="pending-gpu-pod", namespace="team-nlp")
    assert [f["object"]["name"] for f in only.data["findings"]] == [
        "llm-finetune-worker-2",
        "llm-finetune-worker-3",
        "qwen-sft-gb55k",
    ]


def test_diagnose_pages_with_a_cursor_until_the_end() -> None:
    everything = tools.diagnose(str(DEMO), severity="warning").data["findings"]
    assert len(everything) == 26
    seen: list[dict[str, Any]] = []
    cursor = None
    pages = []
    while True:
        out = tools.diagnose(str(DEMO), severity="warning", limit=10, cursor=cursor)
        seen += out.data["findings"]
        pages.append(out.data["page"])
        cursor = out.data["page"]["next_cursor"]
        if cursor is None:
            break
    assert pages == [
        {"total": 26, "returned": 10, "next_cursor": "10"},
        {"total": 26, "returned": 10, "next_cursor": "20"},
        {"total": 26, "returned": 6, "next_cursor": None},
    ]
    assert seen == everything
    with pytest.raises(ToolInputError, match=r"^cursor 'abc' is not a cursor returned by an earlier call"):
        tools.diagnose(str(DEMO), cursor="abc")


def test_lint_why_pending_and_inventory_page() -> None:
    out = tools.lint(paths=[str(ROOT / "examples" / "manifests")], severity="error", limit=2)
    assert out.data["page"] == {"total": 3, "returned": 2, "next_cursor": "2"}
    assert [f["rule"] for f in out.data["findings"]] == [
        "gpu-fractional-quantity",
        "gpu-request-without-limit",
    ]
    assert out.summary.endswith("; showing 2 of 3 findings (more: cursor '2')")
    pending = tools.why_pending(str(DEMO), namespace="team-nlp", limit=1)
    assert [p["pod"] for p in pending.data["pods"]] == ["team-nlp/llm-finetune-worker-2"]
    assert pending.data["page"] == {"total": 3, "returned": 1, "next_cursor": "1"}
    nodes = tools.inventory(str(DEMO), limit=3, cursor="3")
    assert [n["name"] for n in nodes.data["nodes"]] == [
        n["name"] for n in tools.inventory(str(DEMO)).data["nodes"][3:6]
    ]
    assert nodes.data["page"] == {"total": 12, "returned": 3, "next_cursor": "6"}
    assert nodes.data["summary"]["gpu_nodes"] == 12  # totals cover the whole cluster, not the page


def test_missing_relative_path_names_the_working_directory() -> None:
    with pytest.raises(ToolInputError) as caught:
        tools.lint(paths=["no-such-dir/x.yaml"])
    assert str(caught.value) == (
        f"paths: 'no-such-dir/x.yaml' does not exist (relative paths start at the server's "
        f"working directory {os.getcwd()})"
    )


def test_inventory_summary_keeps_time_sliced_replicas_apart() -> None:
    summary = tools.inventory(cluster=str(DEMO)).summary
    assert summary.startswith(
        "12 GPU nodes of 14, 95 allocatable GPU units, 46 free: 9 whole GPUs, 31 MIG devices, "
        "+6 time-sliced replicas on 3 shared nodes (A100-40GB: 48 GPUs, 36 free, "
    )
