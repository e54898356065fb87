"""The LLM client's safety: no redirect carries the key, URLs print without secrets, the key
comes only from the environment or a file."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from gpuplane.knowledge import llm


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]]
    location: str | None = None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append((self.path, self.headers.get("Authorization")))
        if self.location:
            self.send_response(302)
            self.send_header("Location", self.location)
            self.end_headers()
            return
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(location: str | None) -> tuple[HTTPServer, list[tuple[str, str | None]]]:
    seen: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Recorder,), {"seen": seen, "location": location})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


@pytest.fixture
def servers() -> Iterator[tuple[str, list[tuple[str, str | None]], list[tuple[str, str | None]]]]:
    other, other_seen = _serve(None)
    other_url = f"http://127.0.0.1:{other.server_port}/steal"
    endpoint, seen = _serve(other_url)
    yield f"http://127.0.0.1:{endpoint.server_port}/v1", seen, other_seen
    endpoint.shutdown()
    other.shutdown()


def test_a_redirect_is_not_followed_and_the_key_stays_home(servers: tuple) -> None:
    base, seen, other_seen = servers
    cfg = llm.LLMConfig(base_url=base, model="m", api_key="sk-secret")
    with pytest.raises(llm.LLMError) as exc:
        llm._post(cfg, {"model": "m", "messages": []})
    assert str(exc.value) == (
        f"{base}/chat/completions answered HTTP 302 (a redirect: not followed, the key is sent only to "
        "the configured URL)"
    )
    assert seen == [("/v1/chat/completions", "Bearer sk-secret")]
    assert other_seen == []  # the other host never saw the key (nor the question)


def test_credentials_in_the_base_url_are_refused_and_never_printed() -> None:
    cfg = llm.config_from_env({llm.ENV_BASE_URL: "https://bob:hunter2@llm.example/v1?token=abc"})
    assert cfg is not None
    with pytest.raises(llm.LLMError) as exc:
        llm._post(cfg, {})
    assert "hunter2" not in str(exc.value) and "abc" not in str(exc.value)
    assert str(exc.value) == (
        "GPUPLANE_LLM_BASE_URL must not carry credentials (user:password@); put the key in "
        "GPUPLANE_LLM_API_KEY or GPUPLANE_LLM_API_KEY_FILE"
    )


def test_display_url_drops_userinfo_query_and_fragment() -> None:
    assert llm.display_url("https://u:p@h.example:8443/v1/chat?key=s#x") == "https://h.example:8443/v1/chat"
    assert llm.display_url("http://[::1]:9/v1") == "http://[::1]:9/v1"


def test_unreachable_endpoint_message_has_no_query() -> None:
    cfg = llm.LLMConfig(base_url="http://127.0.0.1:9/v1?api_key=s3cret", model="m", api_key=None)
    with pytest.raises(llm.LLMError) as exc:
        llm._post(cfg, {})
    assert "s3cret" not in str(exc.value)
    assert str(exc.value).startswith("cannot reach http://127.0.0.1:9/v1: ")


def test_key_from_a_file(tmp_path: Path, servers: tuple) -> None:
    base, seen, _ = servers
    key = tmp_path / "key"
    key.write_text("sk-from-file\n", encoding="utf-8")
    cfg = llm.config_from_env({llm.ENV_BASE_URL: base, llm.ENV_API_KEY_FILE: str(key)})
    assert cfg is not None and cfg.api_key is None
    with pytest.raises(llm.LLMError):
        llm._post(cfg, {})  # the endpoint redirects; the key was sent to it only
    assert seen == [("/v1/chat/completions", "Bearer sk-from-file")]
    missing = llm.LLMConfig(base_url=base, model="m", api_key=None, api_key_file=str(tmp_path / "none"))
    with pytest.raises(llm.LLMError, match=r"^GPUPLANE_LLM_API_KEY_FILE: cannot read .*none: No such file"):
        llm._post(missing, {})
