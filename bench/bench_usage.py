#!/usr/bin/env python3
"""``gpuplane usage`` against a real Prometheus: 1,000 GPUs x 7 days at a 1-minute step.

Target (issue 18): gpuplane processes the series in under 10x the time Prometheus takes to
return them. Measured as a ratio, never as wall-clock:

1. write OpenMetrics for ``--gpus`` GPUs (8 per node, 1 pod per GPU, shapes: busy training, idle
   notebooks, bursty inference) with one sample per minute of ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``
   and ``DCGM_FI_DEV_FB_USED`` (the default counters' activity and memory), cached under
   ``bench/out/``;
2. backfill it with ``promtool tsdb create-blocks-from openmetrics`` and start ``prometheus`` on
   127.0.0.1;
3. run the queries ``gpuplane usage --prometheus`` sends and time, separately: Prometheus answering
   (HTTP GET until the last byte: its query evaluation + JSON encoding + transfer) and gpuplane
   processing (decode, grid, join, compute, findings, the JSON document).

```
.venv/bin/python bench/bench_usage.py                      # 1,000 GPUs x 7 days
.venv/bin/python bench/bench_usage.py --gpus 100 --days 1  # quick look
```
Needs Debian's ``prometheus`` package (prometheus + promtool).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuplane.usage import prometheus as prom  # noqa: E402
from gpuplane.usage.engine import run_usage  # noqa: E402
from gpuplane.usage.metrics import Grid  # noqa: E402

T0 = 1_772_000_000 - (1_772_000_000 % 86400)


BLOCK_S = 7200  # promtool writes 2-hour blocks and re-reads its whole input once per block


def write_openmetrics(folder: Path, gpus: int, days: int) -> list[Path]:
    """One OpenMetrics file per 2-hour block: promtool then reads each sample once, not once per
    block of the window (84 passes over 7 days)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    per_block = BLOCK_S // 60
    for block in range(days * 86400 // BLOCK_S):
        path = folder / f"block-{block:03d}.om"
        files.append(path)
        with path.open("w", encoding="utf-8") as out:
            for metric, kind in (("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "act"), ("DCGM_FI_DEV_FB_USED", "fb")):
                out.write(f"# TYPE {metric} gauge\n")
                for g in range(gpus):
                    node, index = divmod(g, 8)
                    shape = g % 4  # 0, 1 training; 2 notebook idle at night; 3 bursty inference
                    labels = (
                        f'{metric}{{Hostname="node-{node:04d}",gpu="{index}",modelName="NVIDIA H100 80GB HBM3",'
                        f'namespace="team-{g % 20}",pod="pod-{g:05d}"}}'
                    )
                    rows = []
                    for m in range(block * per_block, (block + 1) * per_block):
                        hour = (m // 60) % 24
                        if kind == "fb":
                            value = "71000" if shape < 2 else "12000"
                        elif shape < 2:
                            value = "0.91"
                        elif shape == 2:
                            value = "0.3" if 8 <= hour < 18 else "0"
                        else:
                            value = "0.45" if m % 10 < 2 else "0.02"
                        rows.append(f"{labels} {value} {T0 + m * 60 + 30}\n")
                    out.write("".join(rows))
            out.write("# EOF\n")
    return files


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=1000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        sys.exit("bench_usage: needs prometheus and promtool (apt-get install prometheus)")
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    data_dir = out / f"usage-{args.gpus}x{args.days}d"
    t = time.perf_counter()
    files = sorted(data_dir.glob("block-*.om")) if data_dir.exists() else []
    if len(files) != args.days * 86400 // BLOCK_S:
        files = write_openmetrics(data_dir, args.gpus, args.days)
        size = sum(f.stat().st_size for f in files) >> 20
        print(f"wrote {len(files)} files, {size} MiB, in {time.perf_counter() - t:.1f} s")
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        data = Path(tmp) / "data"
        t = time.perf_counter()
        for f in files:
            subprocess.run(
                [promtool, "tsdb", "create-blocks-from", "openmetrics", str(f), str(data)],
                check=True,
                capture_output=True,
            )
        print(f"promtool backfill: {time.perf_counter() - t:.1f} s")
        config = Path(tmp) / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1h\n")
        port = free_port()
        proc = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                "--storage.tsdb.retention.time=100y",
                f"--web.listen-address=127.0.0.1:{port}",
                "--query.max-samples=200000000",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
                        break
                except OSError:
                    time.sleep(0.5)
            grid = Grid.for_window(T0 + args.days * 86400, args.days * 86400, 60)
            config_ = prom.config_from(url, env={})
            bodies: dict[str, bytes] = {}
            original = prom.PrometheusClient.get

            def timed_get(self: prom.PrometheusClient, path: str, params: dict[str, str]) -> bytes:
                body = original(self, path, params)
                bodies[params["query"]] = body
                return body

            prom_times, ours_times = [], []
            for run in range(args.runs):
                # Prometheus: every query gpuplane sends, answered to the last byte.
                prom.PrometheusClient.get = timed_get  # type: ignore[method-assign]
                t = time.perf_counter()
                series = prom.fetch_series(config_, grid)
                fetch_total = time.perf_counter() - t
                prom.PrometheusClient.get = original  # type: ignore[method-assign]
                t = time.perf_counter()
                client = prom.PrometheusClient(config_)
                for query in bodies:
                    client.get(
                        "/api/v1/query_range",
                        {
                            "query": query,
                            "start": f"{grid.start:.3f}",
                            "end": f"{grid.end:.3f}",
                            "step": "60",
                        },
                    )
                prom_s = time.perf_counter() - t
                # gpuplane: decode the same answers onto the grid, then everything after.
                t = time.perf_counter()
                from gpuplane.usage.metrics import SCALE, SeriesSet

                rebuilt = SeriesSet(grid)
                for kind, query in series.queries.items():
                    result, _ = prom.decode_matrix(bodies[query], query)
                    for labels, samples in result:
                        rebuilt.add(kind, labels, prom.place(grid, samples, SCALE.get(kind, 1.0)))
                result_doc = run_usage(rebuilt).to_json()
                ours_s = time.perf_counter() - t
                prom_times.append(prom_s)
                ours_times.append(ours_s)
                points = sum(
                    int((~__import__("numpy").isnan(s.values)).sum())
                    for v in rebuilt.series.values()
                    for s in v
                )
                print(
                    f"run {run + 1}: prometheus {prom_s:.2f} s, gpuplane {ours_s:.2f} s "
                    f"(fetch+process {fetch_total:.2f} s), {points:,} points, "
                    f"{len(result_doc['workloads'])} workloads, {len(result_doc['findings'])} findings, "
                    f"{sum(len(b) for b in bodies.values()) >> 20} MiB of JSON"
                )
            p, o = sorted(prom_times)[len(prom_times) // 2], sorted(ours_times)[len(ours_times) // 2]
            print(f"median: prometheus {p:.2f} s, gpuplane {o:.2f} s, ratio {o / p:.2f}x (target < 10x)")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
