"""Live mode against a local fake API server serving recorded list responses; snapshots round trip.

The real client stack runs (lightkube kubeconfig loading, its authenticated
httpx client, our paginated list calls): only the API server is replaced by
``http.server`` on 127.0.0.1 serving the JSON files of
``tests/fixtures/sources/api`` (routes.json maps request -> file). Lists of
built-in groups without a recorded file answer an empty list; anything else
answers 404 with a Status, as a cluster without that CRD does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.sources.catalog import RESOURCES
from gpuplane.sources.cluster import read_cluster
from gpuplane.sources.redact import REDACTED

API = Path(__file__).resolve().parent.parent / "fixtures" / "sources" / "api"
TOKEN = "test-token-0123"
BUILTIN_PREFIXES = (
    "/api/v1/",
    "/apis/apps/v1/",
    "/apis/batch/v1/",
    "/apis/scheduling.k8s.io/v1/",
    "/apis/storage.k8s.io/v1/",
    "/apis/node.k8s.io/v1/",
)
SECRET_VALUES = (
    "hf_SECRETVALUE123",
    "sk-live-SECRETVALUE456",
    "sk-proj-SECRETVALUE789",
    "SECRETVALUE000",
    "SECRETVALUE111",
    "U0VDUkVUVkFMVUUyMjI=",
    "SECRETVALUE333",
)


class FakeApiServer:
    """A read-only API server double that records every request."""

    def __init__(self) -> None:
        self.routes: dict[str, str] = json.loads((API / "routes.json").read_text())
        self.requests: list[tuple[str, str, dict[str, list[str]], str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def _reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                server.requests.append(("GET", url.path, query, self.headers.get("Authorization", "")))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._reply(
                        401,
                        b'{"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}',
                    )
                    return
                key = url.path + (f"?continue={query['continue'][0]}" if "continue" in query else "")
                if key in server.routes:
                    self._reply(200, (API / server.routes[key]).read_bytes())
                elif url.path.startswith(BUILTIN_PREFIXES) and "continue" not in query:
                    self._reply(
                        200,
                        b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"4412"},"items":[]}',
                    )
                else:
                    message = f"the server could not find the requested resource (get {url.path.rsplit('/', 1)[-1]})"
                    self._reply(
                        404,
                        json.dumps(
                            {
                                "kind": "Status",
                                "apiVersion": "v1",
                                "status": "Failure",
                                "message": message,
                                "reason": "NotFound",
                                "code": 404,
                            }
                        ).encode(),
                    )

            def _refuse(self) -> None:
                server.requests.append((self.command, self.path, {}, ""))
                self._reply(405, b"{}")

            do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [path for _, path, _, _ in self.requests]


@pytest.fixture
def api_server() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def kubeconfig(tmp_path: Path, api_server: FakeApiServer, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: fake\n  cluster:\n    server: {api_server.url}\n"
        f"users:\n- name: tester\n  user:\n    token: {TOKEN}\n- name: stale\n  user:\n    token: expired\n"
        "contexts:\n- name: fake-ctx\n  context: {cluster: fake, user: tester}\n"
        "- name: stale\n  context: {cluster: fake, user: stale}\n"
        "current-context: stale\n"
    )
    for var in (
        "KUBECONFIG",
        "KUBERNETES_SERVICE_HOST",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return str(path)


def test_live_read_round_trip(api_server: FakeApiServer, kubeconfig: str) -> None:
    cluster = read_cluster("live", context="fake-ctx", kubeconfig=kubeconfig)
    assert cluster.errors == []
    assert cluster.source == "live:fake-ctx"
    assert cluster.server_version == "1.31"
    assert [n.name for n in cluster.nodes] == ["gpu-node-1", "cpu-node-1"]
    assert cluster.nodes[0].status.allocatable["nvidia.com/gpu"] == "8"
    # both pages of the paginated pod list
    assert [p.key for p in cluster.pods] == [
        "team-a/train-0",
        "team-a/train-1",
        "gpu-operator/nvidia-device-plugin-daemonset-x7k2p",
    ]
    assert cluster.pods[0].spec.containers[0].resources.limits == {"nvidia.com/gpu": "8"}
    kinds = sorted((m.api_version, m.kind, m.namespace or "", m.name) for m in cluster.objects)
    assert kinds == [
        ("apps/v1", "DaemonSet", "gpu-operator", "nvidia-device-plugin-daemonset"),
        ("apps/v1", "Deployment", "team-a", "llm-server"),
        ("nvidia.com/v1", "ClusterPolicy", "", "cluster-policy"),
        ("scheduling.k8s.io/v1", "PriorityClass", "", "training"),
        ("v1", "ConfigMap", "gpu-operator", "custom-mig-parted-config"),
        ("v1", "ConfigMap", "gpu-operator", "device-plugin-config"),
        ("v1", "ConfigMap", "gpu-operator", "operator-settings"),
        ("v1", "ConfigMap", "kube-system", "cloud-credentials"),
        ("v1", "Namespace", "", "default"),
        ("v1", "Namespace", "", "gpu-operator"),
        ("v1", "Namespace", "", "kube-system"),
        ("v1", "Namespace", "", "team-a"),
    ]


def test_live_requests_are_read_only_paginated_and_never_secrets(
    api_server: FakeApiServer, kubeconfig: str
) -> None:
    read_cluster("live", context="fake-ctx", kubeconfig=kubeconfig)
    assert {method for method, *_ in api_server.requests} == {"GET"}
    assert all(auth == f"Bearer {TOKEN}" for *_, auth in api_server.requests)
    assert not any("secret" in path for path in api_server.paths())
    pod_calls = [(path, query) for _, path, query, _ in api_server.requests if path == "/api/v1/pods"]
    assert pod_calls == [
        ("/api/v1/pods", {"limit": ["500"]}),
        (
            "/api/v1/pods",
            {
                "limit": ["500"],
                "continue": ["eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJzdGFydCI6InRlYW0tYS90cmFpbi0xIn0"],
            },
        ),
    ]
    paths = api_server.paths()
    # Kueue is in discovery but its lists answer 404 (CRD gone): asked once, skipped silently.
    assert "/apis/kueue.x-k8s.io/v1beta1/clusterqueues" in paths
    # Groups absent from discovery are never asked.
    assert not any(
        p.startswith(("/apis/ray.io", "/apis/karpenter.sh", "/apis/resource.k8s.io")) for p in paths
    )
    # ConfigMaps only in the GPU-stack namespaces that exist.
    assert sorted(p for p in paths if p.endswith("/configmaps")) == [
        "/api/v1/namespaces/gpu-operator/configmaps",
        "/api/v1/namespaces/kube-system/configmaps",
    ]
    assert set(paths) <= {"/version", "/apis"} | {p for p in paths if _catalogued(p)}


def _catalogued(path: str) -> bool:
    plural = path.rsplit("/", 1)[-1]
    return any(r.plural == plural for r in RESOURCES)


def test_live_errors_are_one_line_each(api_server: FakeApiServer, kubeconfig: str) -> None:
    cluster = read_cluster("live", kubeconfig=kubeconfig)  # current-context: stale token
    assert cluster.pods == []
    assert [str(e) for e in cluster.errors] == [
        "live:stale: the API server rejected the credentials: HTTP 401 Unauthorized: Unauthorized"
    ]
    missing = read_cluster("live", context="nope", kubeconfig=kubeconfig)
    assert [str(e) for e in missing.errors] == [
        "live: cannot load the Kubernetes configuration: Context 'nope' not found"
    ]


def test_unreachable_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"clusters:\n- name: c\n  cluster: {{server: 'http://127.0.0.1:{port}'}}\n"
        "contexts:\n- name: gone\n  context: {cluster: c}\ncurrent-context: gone\n"
    )
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    cluster = read_cluster("live", kubeconfig=str(path))
    assert len(cluster.errors) == 1
    assert str(cluster.errors[0]).startswith("live:gone: cannot reach the API server: ")


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_snapshot_command_round_trip(
    api_server: FakeApiServer, kubeconfig: str, tmp_path: Path, suffix: str
) -> None:
    out = tmp_path / f"cluster{suffix}"
    result = CliRunner().invoke(
        cli, ["snapshot", "--context", "fake-ctx", "--kubeconfig", kubeconfig, "-o", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    for secret in SECRET_VALUES:
        assert secret not in text
    assert "last-applied-configuration" not in text
    assert "managedFields" not in text

    snap = read_cluster(str(out))
    live = read_cluster("live", context="fake-ctx", kubeconfig=kubeconfig)
    assert snap.errors == []
    assert snap.server_version == "1.31"
    assert snap.source == str(out)
    assert [n.name for n in snap.nodes] == [n.name for n in live.nodes]
    assert snap.nodes == live.nodes
    # pods are identical except for the redacted env values
    assert [p.key for p in snap.pods] == [p.key for p in live.pods]
    assert snap.pods[1] == live.pods[1]
    env = {e.name: e.value for e in snap.pods[0].spec.containers[0].env}
    assert env == {"HF_TOKEN": REDACTED, "DB_PASSWORD": None, "NVIDIA_VISIBLE_DEVICES": "all"}
    assert {e.name: e.value for e in snap.pods[2].spec.containers[0].env} == {
        "MIG_STRATEGY": "single",
        "API_KEY": REDACTED,
    }
    assert sorted((m.kind, m.name) for m in snap.objects) == sorted((m.kind, m.name) for m in live.objects)

    configmaps = {m.name: m.data for m in snap.objects if m.kind == "ConfigMap"}
    assert "replicas: 4" in configmaps["device-plugin-config"]["data"]["any"]
    assert "mig-configs" in configmaps["custom-mig-parted-config"]["data"]["config.yaml"]
    assert configmaps["operator-settings"]["data"] == {"smtp-password": REDACTED}
    assert configmaps["operator-settings"]["binaryData"] == {"cert.p12": REDACTED}
    assert configmaps["cloud-credentials"]["data"] == {"token": REDACTED}
    policy = next(m for m in snap.objects if m.kind == "ClusterPolicy")
    assert policy.get("spec", "devicePlugin", "env") == [
        {"name": "PASS_DEVICE_SPECS", "value": "true"},
        {"name": "REGISTRY_TOKEN", "value": REDACTED},
    ]
    deployment = next(m for m in snap.objects if m.kind == "Deployment")
    # annotations are an allow-list (sources/redact.py KEPT_ANNOTATIONS): the revision is not read
    assert deployment.annotations == {}


def test_snapshot_command_reports_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["snapshot", "--kubeconfig", str(tmp_path / "missing"), "-o", str(tmp_path / "out.json")]
    )
    assert result.exit_code == 2
    assert result.output == (
        "gpuplane: reading cluster (no usable kubeconfig)\n"  # issue 17: a live read names its context first
        f"gpuplane: live: cannot load the Kubernetes configuration: Configuration file {tmp_path / 'missing'} not found\n"
        f"gpuplane: nothing to write to {tmp_path / 'out.json'}\n"
    )
    assert not (tmp_path / "out.json").exists()


def test_snapshot_from_dumps_redacts(tmp_path: Path) -> None:
    fixtures = API.parent
    out = tmp_path / "merged.yaml"
    result = CliRunner().invoke(
        cli,
        [
            "snapshot",
            "--from",
            str(fixtures / "kubectl-get-pods-nodes.yaml"),
            "--from",
            str(fixtures / "kubectl-get-pods.json"),
            "-o",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "s3cr3t-value" not in out.read_text()
    cluster = read_cluster(str(out))
    assert cluster.errors == []
    assert [p.key for p in cluster.pods] == [
        "team-a/train-0",
        "team-a/train-1",
        "serving/infer-0",
        "serving/infer-1",
    ]
    assert [n.name for n in cluster.nodes] == ["gpu-node-1"]


def test_snapshot_from_dumps_leaves_secrets_out(tmp_path: Path) -> None:
    """`kubectl get all,secrets -o yaml` fed to --from: the Secret never reaches the snapshot."""
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: Secret\n  metadata: {name: s1, namespace: ml}\n"
        "  data: {k: U0VDUkVUU0VDUkVU}\n  stringData: {p: PLAINSECRET}\n"
        "- apiVersion: v1\n  kind: Namespace\n  metadata: {name: ml}\n"
    )
    for suffix in ("yaml", "json"):
        out = tmp_path / f"snap.{suffix}"
        result = CliRunner().invoke(cli, ["snapshot", "--from", str(dump), "-o", str(out), "-q"])
        assert result.exit_code == 0, result.output
        assert result.output == (
            "gpuplane: left out 1 object(s) of kinds the engines do not read"
            " (Secrets, kubeconfigs, ...): snapshots keep an allow-list\n"
        )
        text = out.read_text()
        assert "PLAINSECRET" not in text and "U0VDUkVUU0VDUkVU" not in text and "Secret" not in text
        assert [o.kind for o in read_cluster(str(out)).objects] == ["Namespace"]
