"""Per-call limits of the MCP server (issue 11 item 7): a call that runs too long returns a clear
error and the session goes on; a result over the size cap is cut with a marker saying what."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import anyio
import pytest
from click.testing import CliRunner
from pydantic import Field

pytest.importorskip("mcp")
from mcp.client.client import Client

from gpuplane.cli.main import cli
from gpuplane.mcp import limits
from gpuplane.mcp.server import build_server
from gpuplane.mcp.tools import ToolOutput, ToolSpec

RELEASE = threading.Event()


def _slow(seconds: Annotated[float, Field(description="How long to wait at most.")] = 30) -> ToolOutput:
    RELEASE.wait(seconds)
    return ToolOutput({"waited": True}, "waited")


def _echo(value: Annotated[int, Field(description="Any number.")] = 1) -> ToolOutput:
    return ToolOutput({"value": value}, f"value is {value}")


def _many(count: Annotated[int, Field(description="How many items.")] = 5000) -> ToolOutput:
    items = [{"rule": "gpu-request-without-limit", "message": "m" * 100, "index": i} for i in range(count)]
    return ToolOutput({"summary": {"items": count}, "items": items}, f"{count} items")


TOOLS = (
    ToolSpec("slow", "Slow", "Waits.", _slow),
    ToolSpec("echo", "Echo", "Returns its input.", _echo),
    ToolSpec("many", "Many", "Returns many items.", _many),
)


def _call_all(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(TOOLS)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


@pytest.fixture(autouse=True)
def _release_slow_calls() -> Any:
    RELEASE.clear()
    yield
    RELEASE.set()  # let the abandoned worker threads end
    for _ in range(200):
        if limits.ABANDONED.running == 0:
            break
        threading.Event().wait(0.01)
    assert limits.ABANDONED.running == 0


def test_a_call_over_the_time_limit_is_an_error_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits.LIMITS, "call_timeout", 0.3)
    slow, echo = _call_all([("slow", {}), ("echo", {"value": 4})])
    assert slow.is_error
    assert slow.content[0].text == (
        "Error executing tool slow: slow did not finish within the server's 0.3 s time limit (gpuplane mcp "
        "--call-timeout); narrow the input (fewer paths, a smaller snapshot) and try again"
    )
    assert not echo.is_error and echo.structured_content == {"value": 4}
    assert limits.ABANDONED.running == 1  # its thread still waits, abandoned


def test_new_calls_are_refused_while_abandoned_calls_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.LIMITS, "call_timeout", 0.2)
    first, second, refused = _call_all([("slow", {}), ("slow", {}), ("echo", {})])
    assert first.is_error and second.is_error
    assert refused.is_error
    assert refused.content[0].text == (
        "Error executing tool echo: echo refused: 2 earlier calls passed the 0.2 s time limit and are "
        "still running; try again when they have finished"
    )
    RELEASE.set()
    for _ in range(200):
        if limits.ABANDONED.running == 0:
            break
        threading.Event().wait(0.01)
    (echo,) = _call_all([("echo", {"value": 2})])
    assert echo.structured_content == {"value": 2}


def test_a_call_within_the_limit_returns_its_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.LIMITS, "call_timeout", 5)
    RELEASE.set()
    (slow,) = _call_all([("slow", {})])
    assert not slow.is_error and slow.structured_content == {"waited": True}


def test_a_result_over_the_size_cap_is_cut_with_a_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.LIMITS, "max_result_bytes", 64 * 1024)
    (many,) = _call_all([("many", {})])
    assert not many.is_error
    data = many.structured_content
    assert data["summary"] == {"items": 5000}  # totals stay whole
    assert data["truncated"] == {"limit_bytes": 65536, "cut": [{"path": "items", "kept": 376, "total": 5000}]}
    assert data["items"] == [
        {"rule": "gpu-request-without-limit", "message": "m" * 100, "index": i} for i in range(376)
    ]
    assert limits.size_of(data) <= 65536
    assert many.content[0].text == (
        "5000 items; result cut to the server's 64 KiB limit (items: 376 of 5000 kept); use the filters "
        "or limit/cursor to read the rest (gpuplane mcp --max-result-kb raises the limit) "
        "(full result: structuredContent)"
    )


def test_a_result_within_the_cap_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.LIMITS, "max_result_bytes", 64 * 1024)
    (many,) = _call_all([("many", {"count": 10})])
    assert "truncated" not in many.structured_content
    assert len(many.structured_content["items"]) == 10


def test_cap_document_cuts_the_long_string_not_the_list_holding_it() -> None:
    doc = {"summary": "2 files", "files": [{"path": "a.yaml", "content": "x" * 500_000}, {"path": "b.yaml"}]}
    cut, cuts = limits.cap_document(doc, 64 * 1024)
    assert cuts == [{"path": "files[0].content", "kept": 61212, "total": 500000}]
    assert cut["files"][1] == {"path": "b.yaml"}
    assert cut["files"][0]["content"].endswith(" ... [cut by gpuplane mcp: 61212 of 500000 characters]")
    assert doc["files"][0]["content"] == "x" * 500_000  # the tool's own document is untouched


def test_cap_document_keeps_only_the_summary_when_nothing_else_can_be_cut() -> None:
    doc = {"summary": "s", "values": [1] * 100_000}
    cut, cuts = limits.cap_document(doc, 4 * 1024)
    assert limits.size_of(cut) <= 4 * 1024
    assert cuts == [{"path": "values", "kept": cuts[0]["kept"], "total": 100000}]
    assert cut["summary"] == "s" and len(cut["values"]) == cuts[0]["kept"]


def test_zero_turns_the_cap_off() -> None:
    doc = {"values": list(range(10_000))}
    assert limits.cap_document(doc, 0) == (doc, [])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--call-timeout", "-1"], "Invalid value for '--call-timeout': -1.0 is not in the range x>=0."),
        (["--max-result-kb", "x"], "Invalid value for '--max-result-kb': 'x' is not a valid integer range."),
    ],
)
def test_bad_limits_are_usage_errors(args: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["mcp", *args])
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == f"Error: {message}"
