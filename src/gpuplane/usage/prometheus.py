"""Read DCGM series from a Prometheus server over its HTTP API, read-only.

Only ``GET /api/v1/query_range`` is sent (prometheus/prometheus ``web/api/v1/api.go``
``queryRange``; the JSON envelope ``{"status", "data": {"resultType": "matrix", "result": [{"metric":
{...}, "values": [[<unix seconds>, "<value>"], ...]}]}, "warnings"}`` and, on failure,
``{"status": "error", "errorType", "error"}``: docs "HTTP API", "Range queries"). Plain
``http.client`` from the standard library: one dependency fewer, and the TLS and auth options map
one to one onto :mod:`ssl` and two headers.

Credentials come from the environment or a file, never from the command line (where ``ps`` and
shell history would show them): ``GPUPLANE_PROMETHEUS_TOKEN`` or ``--prometheus-token-file`` (a
bearer token, as Prometheus's own ``authorization.credentials_file``), and
``GPUPLANE_PROMETHEUS_USERNAME`` / ``GPUPLANE_PROMETHEUS_PASSWORD`` or
``--prometheus-password-file`` for basic auth.
"""

from __future__ import annotations

import base64
import os
import ssl
import urllib.parse
import warnings
from dataclasses import dataclass
from http.client import HTTPConnection, HTTPException, HTTPSConnection

import msgspec
import numpy as np

from gpuplane.usage.metrics import KINDS, SCALE, Grid, SeriesSet, UsageInputError, promql

# A bound on one answer (bounded inputs): 1,000 GPUs x 7 days x 1-minute points is ~250 MiB of JSON.
MAX_RESPONSE_BYTES = 2 << 30
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class PrometheusConfig:
    url: str
    token: str | None = None
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure_skip_verify: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    selector: str = ""


def _read_secret(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError as exc:
        raise UsageInputError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from exc


def config_from(
    url: str,
    *,
    token_file: str | None = None,
    username: str | None = None,
    password_file: str | None = None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    insecure_skip_verify: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    selector: str = "",
    env: dict[str, str] | None = None,
) -> PrometheusConfig:
    """Options + environment -> config; files named by options win over the environment."""
    env = dict(os.environ) if env is None else env
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageInputError(f"--prometheus {url!r}: expected an http:// or https:// URL")
    token = _read_secret(token_file, "token file") if token_file else env.get("GPUPLANE_PROMETHEUS_TOKEN")
    user = username or env.get("GPUPLANE_PROMETHEUS_USERNAME")
    password = (
        _read_secret(password_file, "password file")
        if password_file
        else env.get("GPUPLANE_PROMETHEUS_PASSWORD")
    )
    if token and user:
        raise UsageInputError("give either a bearer token or basic-auth credentials for Prometheus, not both")
    if (cert_file is None) != (key_file is None):
        raise UsageInputError("--prometheus-cert and --prometheus-key go together")
    return PrometheusConfig(
        url.rstrip("/"),
        token or None,
        user or None,
        password,
        ca_file,
        cert_file,
        key_file,
        insecure_skip_verify,
        timeout_s,
        selector.strip().strip("{}"),
    )


class _Result(msgspec.Struct):
    metric: dict[str, str]
    values: msgspec.Raw = msgspec.Raw(b"[]")


class _Data(msgspec.Struct):
    resultType: str  # the API's field names
    result: list[_Result]


class _Envelope(msgspec.Struct):
    status: str
    data: _Data | None = None
    errorType: str = ""
    error: str = ""
    warnings: list[str] = []


_PUNCTUATION = b'[]" \t\r\n'


def _points(raw: msgspec.Raw, where: str) -> np.ndarray:
    """``[[1773000060, "0.3"], ...]`` -> array (n, 2), parsed by numpy in C.

    Values are JSON strings ("0.3", "NaN", "+Inf"); dropping the brackets and quotes leaves
    ``t,v,t,v,...``, which ``np.fromstring`` reads with strtod. A million points cost a few
    megabytes, not the ~100 bytes per point of Python tuples."""
    text = bytes(raw).translate(None, _PUNCTUATION)
    if not text:
        return np.zeros((0, 2))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # older numpy warns instead of raising
            flat = np.fromstring(text, sep=",")
    except ValueError:
        raise UsageInputError(f"{where}: malformed values in the answer") from None
    if flat.size % 2 or flat.size != text.count(b",") + 1:
        raise UsageInputError(f"{where}: malformed values in the answer")
    return flat.reshape(-1, 2)


def decode_matrix(body: bytes, where: str) -> tuple[list[tuple[dict[str, str], np.ndarray]], list[str]]:
    """An API answer -> ``[(labels, array of shape (n, 2): time, value)]`` and its warnings."""
    try:
        env = msgspec.json.decode(body, type=_Envelope)
    except msgspec.ValidationError as exc:
        raise UsageInputError(f"{where}: not a Prometheus API answer ({exc})") from None
    except msgspec.DecodeError as exc:
        raise UsageInputError(f"{where}: not JSON ({exc})") from None
    if env.status != "success":
        raise UsageInputError(f"{where}: Prometheus answered {env.errorType or 'error'}: {env.error}")
    if env.data is None:
        raise UsageInputError(f"{where}: the answer has no data")
    if env.data.resultType != "matrix":
        raise UsageInputError(
            f"{where}: expected a range-query answer (resultType matrix), got {env.data.resultType!r}"
        )
    return [(r.metric, _points(r.values, where)) for r in env.data.result], list(env.warnings)


def place(grid: Grid, samples: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Points at grid times -> one value per grid point (NaN elsewhere)."""
    values = np.full(grid.n, np.nan)
    if len(samples):
        idx = grid.index(samples[:, 0])
        ok = (idx >= 0) & (idx < grid.n)
        values[idx[ok]] = samples[ok, 1] * scale
    return values


class PrometheusClient:
    """One connection per query, GET only."""

    def __init__(self, config: PrometheusConfig) -> None:
        self.config = config
        parts = urllib.parse.urlsplit(config.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")

    def _context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.config.ca_file)
        if self.config.insecure_skip_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.config.cert_file:
            ctx.load_cert_chain(self.config.cert_file, self.config.key_file)
        return ctx

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "gpuplane-usage"}
        if self.config.token:
            headers["Authorization"] = f"Bearer {self.config.token}"
        elif self.config.username:
            raw = f"{self.config.username}:{self.config.password or ''}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        return headers

    def get(self, path: str, params: dict[str, str]) -> bytes:
        """GET ``path`` with ``params``; the body of a 200 or of an API error (4xx/5xx JSON)."""
        query = urllib.parse.urlencode(params)
        conn: HTTPConnection
        try:
            if self._https:
                conn = HTTPSConnection(
                    self._host, self._port, timeout=self.config.timeout_s, context=self._context()
                )
            else:
                conn = HTTPConnection(self._host, self._port, timeout=self.config.timeout_s)
            try:
                conn.request("GET", f"{self._prefix}{path}?{query}", headers=self._headers())
                resp = conn.getresponse()
                body = resp.read(MAX_RESPONSE_BYTES + 1)
            finally:
                conn.close()
        except ssl.SSLError as exc:
            raise UsageInputError(f"Prometheus {self.config.url}: TLS error: {exc.reason or exc}") from None
        except (OSError, HTTPException) as exc:
            raise UsageInputError(f"Prometheus {self.config.url}: {exc}") from None
        if len(body) > MAX_RESPONSE_BYTES:
            raise UsageInputError(
                f"Prometheus {self.config.url}: answer larger than {MAX_RESPONSE_BYTES >> 20} MiB; "
                "narrow --since or add --selector"
            )
        if resp.status in (401, 403):
            raise UsageInputError(
                f"Prometheus {self.config.url}: HTTP {resp.status} {resp.reason}: check the token "
                "(GPUPLANE_PROMETHEUS_TOKEN / --prometheus-token-file) or basic-auth credentials"
            )
        if resp.status != 200 and not body.lstrip().startswith(b"{"):
            raise UsageInputError(f"Prometheus {self.config.url}: HTTP {resp.status} {resp.reason}")
        return body

    def query_range(
        self, query: str, grid: Grid
    ) -> tuple[list[tuple[dict[str, str], np.ndarray]], list[str]]:
        body = self.get(
            "/api/v1/query_range",
            {"query": query, "start": f"{grid.start:.3f}", "end": f"{grid.end:.3f}", "step": str(grid.step)},
        )
        return decode_matrix(body, f"Prometheus {self.config.url} query {query!r}")


def fetch_series(config: PrometheusConfig, grid: Grid, *, iowait: bool = True) -> SeriesSet:
    """Every signal gpuplane reads, one range query each, on ``grid``.

    Engine activity falls back to ``DCGM_FI_DEV_GPU_UTIL`` only when the profiling metric has no
    series (GPUs or deployments without DCP metrics)."""
    client = PrometheusClient(config)
    out = SeriesSet(grid, source=config.url)
    for kind in KINDS:
        if kind == "util" and out.series.get("engine"):
            continue
        if kind == "iowait" and not iowait:
            continue
        query = promql(kind, grid.step, config.selector if kind != "iowait" else "")
        result, warnings = client.query_range(query, grid)
        out.queries[kind] = query
        out.notes.extend(f"Prometheus warning ({kind}): {w}" for w in warnings)
        scale = SCALE.get(kind, 1.0)
        for labels, samples in result:
            out.add(kind, labels, place(grid, samples, scale))
    return out
