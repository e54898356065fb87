"""The Prometheus client: read-only GETs, credentials from env or files, TLS options, errors.

A loopback HTTP(S) server answering like Prometheus records what the client sends; the TLS
certificate is made by the system's openssl (skipped where it is absent).
"""

from __future__ import annotations

import base64
import http.server
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuplane.usage.metrics import Grid, UsageInputError
from gpuplane.usage.prometheus import config_from, fetch_series

ANSWER = {
    "status": "success",
    "data": {
        "resultType": "matrix",
        "result": [
            {"metric": {"gpu": "0", "pod": "p", "namespace": "ns"}, "values": [[60, "0.5"], [120, "+Inf"]]}
        ],
    },
}


class Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[tuple[str, str, dict[str, str]]] = []
    status = 200
    body: dict[str, Any] = ANSWER

    def do_GET(self) -> None:
        type(self).requests.append(("GET", self.path, dict(self.headers)))
        payload = json.dumps(type(self).body).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("Handler", (Recorder,), {"requests": [], "status": 200, "body": ANSWER})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


GRID = Grid(60, 60, 2)


def test_only_query_range_gets(server: tuple[str, type[Recorder]]) -> None:
    url, handler = server
    series = fetch_series(config_from(url + "/prom/", env={}), GRID)
    methods = {m for m, _, _ in handler.requests}
    paths = {p.split("?")[0] for _, p, _ in handler.requests}
    assert methods == {"GET"} and paths == {"/prom/api/v1/query_range"}
    assert "Authorization" not in handler.requests[0][2]
    assert "step=60" in handler.requests[0][1] and "start=60.000" in handler.requests[0][1]
    assert series.series["engine"][0].values.tolist() == [0.5, float("inf")]
    assert "util" not in series.queries  # the profiling metric answered: no fallback query


def test_bearer_token_from_env_and_file(server: tuple[str, type[Recorder]], tmp_path: Path) -> None:
    url, handler = server
    fetch_series(config_from(url, env={"GPUPLANE_PROMETHEUS_TOKEN": "t0k"}), GRID)
    assert handler.requests[-1][2]["Authorization"] == "Bearer t0k"
    token = tmp_path / "token"
    token.write_text("from-file\n")
    fetch_series(config_from(url, token_file=str(token), env={"GPUPLANE_PROMETHEUS_TOKEN": "t0k"}), GRID)
    assert handler.requests[-1][2]["Authorization"] == "Bearer from-file"


def test_basic_auth(server: tuple[str, type[Recorder]], tmp_path: Path) -> None:
    url, handler = server
    password = tmp_path / "password"
    password.write_text("s3cret\n")
    fetch_series(config_from(url, username="ops", password_file=str(password), env={}), GRID)
    assert handler.requests[-1][2]["Authorization"] == "Basic " + base64.b64encode(b"ops:s3cret").decode()
    env = {"GPUPLANE_PROMETHEUS_USERNAME": "u", "GPUPLANE_PROMETHEUS_PASSWORD": "p"}
    fetch_series(config_from(url, env=env), GRID)
    assert handler.requests[-1][2]["Authorization"] == "Basic " + base64.b64encode(b"u:p").decode()
    with pytest.raises(UsageInputError, match="not both"):
        config_from(url, env={**env, "GPUPLANE_PROMETHEUS_TOKEN": "t"})


def test_http_errors_are_one_line(server: tuple[str, type[Recorder]]) -> None:
    url, handler = server
    handler.status = 401
    with pytest.raises(UsageInputError, match="HTTP 401 Unauthorized: check the token"):
        fetch_series(config_from(url, env={}), GRID)
    handler.status = 400
    handler.body = {"status": "error", "errorType": "bad_data", "error": "invalid parameter"}
    with pytest.raises(UsageInputError, match="Prometheus answered bad_data: invalid parameter"):
        fetch_series(config_from(url, env={}), GRID)
    with pytest.raises(UsageInputError, match="expected an http:// or https:// URL"):
        config_from("prometheus:9090", env={})


def test_connection_refused() -> None:
    with pytest.raises(UsageInputError, match=r"Prometheus http://127.0.0.1:9: .*refused"):
        fetch_series(config_from("http://127.0.0.1:9", env={}, timeout_s=5), GRID)


@pytest.fixture()
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed: cannot make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    handler = type("Handler", (Recorder,), {"requests": [], "status": 200, "body": ANSWER})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}", cert
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_tls_options(tls_server: tuple[str, Path]) -> None:
    url, cert = tls_server
    with pytest.raises(UsageInputError, match="TLS error: CERTIFICATE_VERIFY_FAILED"):
        fetch_series(config_from(url, env={}), GRID)
    assert fetch_series(config_from(url, ca_file=str(cert), env={}), GRID).series["engine"]
    assert fetch_series(config_from(url, insecure_skip_verify=True, env={}), GRID).series["engine"]
