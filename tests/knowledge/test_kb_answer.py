"""Answer composition, the `gpuplane ask` command (JSON per spec, text, errors) and the
optional LLM mode against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from click.testing import CliRunner

from gpuplane.cli.ask import ask
from gpuplane.knowledge import llm
from gpuplane.knowledge.answer import NO_ANSWER, answer, split_units


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write the index cache into the user's home directory."""
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")


def test_split_units_keeps_code_blocks_whole_and_drops_references() -> None:
    body = (
        "# Title\n\nIntro paragraph\nsecond line.\n\n## How\n\n- item one\n  continued\n- item two\n\n"
        "```yaml\na: 1\n\nb: 2\n```\n\n| t | x |\n|---|---|\n| 1 | 2 |\n\n## References\n\n- ref\n"
    )
    units = split_units(body)
    assert [u.text for u in units] == [
        "Intro paragraph\nsecond line.",
        "- item one\n  continued",
        "- item two",
        "```yaml\na: 1\n\nb: 2\n```",
        "| t | x |\n|---|---|\n| 1 | 2 |",
    ]
    assert [u.heading for u in units] == ["", "How", "How", "How", "How"]
    assert [u.code for u in units] == [False, False, False, True, False]


def test_answer_json_shape() -> None:
    result = answer("Which ResourceQuota key limits GPUs?")
    doc = result.to_json()
    assert set(doc) == {"answer", "sources", "known"}
    assert doc["known"] is True
    assert isinstance(doc["answer"], str) and doc["answer"]
    assert doc["sources"] and all(set(s) == {"section", "title", "score"} for s in doc["sources"])
    scores = [s["score"] for s in doc["sources"]]
    assert scores == sorted(scores, reverse=True) and all(isinstance(x, float) for x in scores)
    assert doc["sources"][0]["section"] == "gpu-resourcequota"
    assert 1 <= len(doc["sources"]) <= 3


def test_answer_draws_on_at_most_n_sections() -> None:
    assert len(answer("time-slicing MIG MPS DRA", max_sections=1).sources) == 1


def test_no_match_gives_an_honest_answer() -> None:
    result = answer("zzqx wibble frobnicate")
    assert result.sources == []
    assert result.answer == NO_ANSWER


def test_asking_for_an_example_includes_yaml() -> None:
    result = answer("example yaml for a memory-backed /dev/shm emptyDir")
    assert "```yaml" in result.answer
    assert "medium: Memory" in result.answer


# -- CLI ----------------------------------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(llm.ENV_BASE_URL, raising=False)


def test_cli_json(offline: None) -> None:
    result = CliRunner().invoke(ask, ["Which ResourceQuota key limits GPUs?", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"answer", "sources", "known"}
    assert "requests.nvidia.com/gpu" in doc["answer"]
    first = dict(doc["sources"][0])
    assert first.pop("score") > 0
    assert first == {
        "section": "gpu-resourcequota",
        "title": "ResourceQuota for GPUs - only requests.nvidia.com/gpu is enforced",
    }


def test_cli_text_lists_sources(offline: None) -> None:
    result = CliRunner().invoke(ask, ["default /dev/shm size"])
    assert result.exit_code == 0
    assert "64 MiB" in result.stdout
    assert "Sources (retrieval score):\n  - dev-shm-sizing: " in result.stdout
    assert " (score " in result.stdout


@pytest.mark.parametrize("question", ["", "   "])
def test_cli_empty_question_is_a_usage_error(offline: None, question: str) -> None:
    result = CliRunner().invoke(ask, [question])
    assert result.exit_code == 2
    assert result.stderr == "gpuplane: ask: the question is empty.\n"


def test_cli_overlong_question(offline: None) -> None:
    result = CliRunner().invoke(ask, ["gpu " * 600])
    assert result.exit_code == 2
    assert "longer than 2000 characters" in result.stderr


def test_cli_no_match_exits_zero(offline: None) -> None:
    result = CliRunner().invoke(ask, ["zzqx wibble", "-f", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"answer": NO_ANSWER, "sources": [], "known": False}


# -- LLM mode -----------------------------------------------------------------------------------


class FakeLLM:
    """A tiny OpenAI-compatible /chat/completions server: scripted replies, recorded requests."""

    def __init__(self, replies: list[tuple[int, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.requests.append({"path": self.path, **json.loads(body)})
                outer.headers.append(dict(self.headers))
                status, payload = outer.replies.pop(0) if outer.replies else (500, {"error": "no reply"})
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _message(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]}


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def configure(url: str) -> None:
        monkeypatch.setenv(llm.ENV_BASE_URL, url)
        monkeypatch.setenv(llm.ENV_MODEL, "fake-model")
        monkeypatch.setenv(llm.ENV_API_KEY, "sk-test")

    yield configure


def test_llm_mode_grounded_with_tool_call(llm_env: Any) -> None:
    tool_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "search_knowledge", "arguments": json.dumps({"query": "MIG strategy mixed"})},
    }
    replies = [
        (200, _message(tool_calls=[tool_call])),
        (200, _message("Use `requests.nvidia.com/gpu` [gpu-resourcequota].")),
    ]
    with FakeLLM(replies) as fake:
        llm_env(fake.url)
        result = CliRunner().invoke(ask, ["Which ResourceQuota key limits GPUs?", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["answer"] == "Use `requests.nvidia.com/gpu` [gpu-resourcequota]."
    assert doc["sources"][0]["section"] == "gpu-resourcequota"
    first, second = fake.requests
    assert first["path"] == "/v1/chat/completions"
    assert first["model"] == "fake-model"
    assert fake.headers[0]["Authorization"] == "Bearer sk-test"
    system = first["messages"][0]
    assert system["role"] == "system" and "[gpu-resourcequota]" in system["content"]
    assert first["messages"][1] == {"role": "user", "content": "Which ResourceQuota key limits GPUs?"}
    assert {t["function"]["name"] for t in first["tools"]} == {
        "search_knowledge",
        "explain_rule",
        "lint_manifests",
    }
    tool_reply = second["messages"][-1]
    assert tool_reply["role"] == "tool" and tool_reply["tool_call_id"] == "call_1"
    assert "[mig-strategies]" in tool_reply["content"]


@pytest.mark.parametrize(
    "reply", [(500, {"error": "boom"}), (200, b"not json"), (200, {"choices": []}), (200, _message(""))]
)
def test_llm_failure_falls_back_to_offline(llm_env: Any, reply: tuple[int, Any]) -> None:
    with FakeLLM([reply]) as fake:
        llm_env(fake.url)
        result = CliRunner().invoke(ask, ["Which ResourceQuota key limits GPUs?", "-f", "json"])
    assert result.exit_code == 0
    assert "LLM mode failed" in result.stderr and "answering offline" in result.stderr
    assert json.loads(result.stdout) == answer("Which ResourceQuota key limits GPUs?").to_json()


def test_llm_unreachable_falls_back(llm_env: Any) -> None:
    with FakeLLM([]) as fake:
        url = fake.url
    llm_env(url)  # the server is closed now
    result = CliRunner().invoke(ask, ["default /dev/shm size", "-f", "json"])
    assert result.exit_code == 0
    assert "cannot reach" in result.stderr
    assert json.loads(result.stdout)["sources"][0]["section"] == "dev-shm-sizing"


def test_offline_flag_never_calls_the_llm(llm_env: Any) -> None:
    with FakeLLM([(200, _message("from the model"))]) as fake:
        llm_env(fake.url)
        result = CliRunner().invoke(ask, ["default /dev/shm size", "--offline", "-f", "json"])
    assert result.exit_code == 0
    assert fake.requests == []
    assert json.loads(result.stdout)["answer"] != "from the model"


def test_config_from_env() -> None:
    assert llm.config_from_env({}) is None
    cfg = llm.config_from_env({llm.ENV_BASE_URL: "http://h:1/v1/"})
    assert cfg is not None
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("http://h:1/v1", llm.DEFAULT_MODEL, None)


def test_bad_scheme_is_an_llm_error() -> None:
    cfg = llm.LLMConfig(base_url="file:///etc", model="m", api_key=None)
    with pytest.raises(llm.LLMError, match="must be an http"):
        llm.ask_llm("q", [], cfg)


def test_tools_report_errors_as_text() -> None:
    assert llm.run_tool("nope", "{}") == "error: unknown tool 'nope'"
    assert llm.run_tool("search_knowledge", "{not json").startswith("error: JSONDecodeError")
    assert llm.run_tool("search_knowledge", "[]") == "error: arguments must be a JSON object"
    assert llm.run_tool("search_knowledge", {}) == "error: 'query' is required"


def test_explain_rule_tool() -> None:
    pytest.importorskip("gpuplane.rule_catalog")
    page = llm.run_tool("explain_rule", {"rule_id": "quota-gpu-invalid-key"})
    assert page.startswith("# quota-gpu-invalid-key")
    assert llm.run_tool("explain_rule", {"rule_id": "nope"}) == "error: no rule with id 'nope'"


def test_lint_tool_returns_findings_json() -> None:
    pytest.importorskip("gpuplane.lint.engine")
    manifest = (
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: a}\n"
        "spec:\n  hard:\n    limits.nvidia.com/gpu: '4'\n"
    )
    doc = json.loads(llm.run_tool("lint_manifests", {"yaml": manifest}))
    assert "quota-gpu-invalid-key" in {f["rule"] for f in doc["findings"]}
    assert doc["load_errors"] == []
