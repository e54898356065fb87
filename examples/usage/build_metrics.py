#!/usr/bin/env python3
"""Build ``examples/usage/demo-metrics.json``: 24 h of DCGM exporter series for the demo cluster.

The file is what a Prometheus server answers to the range queries of docs/usage.md (one answer
per signal, keyed by metric name, 5-minute step), for every GPU of ``examples/clusters/demo.yaml``
with the labels the DCGM exporter writes (``gpu``, ``UUID``, ``pci_bus_id``, ``device``,
``modelName``, ``Hostname``, ``GPU_I_PROFILE`` / ``GPU_I_ID`` on MIG devices, ``pod`` /
``namespace`` / ``container`` while a pod holds the GPU) plus the scrape target labels
(``instance``, ``job``). Pods only hold their GPUs from their start (the snapshot's
``creationTimestamp``); before that the GPUs are free (no pod labels).

The shapes (UTC; the teams work 08:00-18:00):

- ``team-vision/notebook-alice`` (1 A100): used in the afternoon and the morning, idle 15 h
  overnight, 14 GiB of memory held all along;
- ``team-speech/notebook-bob`` (1g.5gb): never used after starting; ``notebook-dave`` idle
  overnight; ``notebook-carol`` busy in working hours;
- ``team-nlp/reranker`` (2 x 3g.20gb): 3.4 GiB of memory and ~20 % of its slice at peak;
- ``team-research/mixtral-sft`` (4 H100): trained until 01:30, then hung (0 % to the end);
- ``team-vision/resnet-ddp`` (PyTorchJob, 8 A100): ~30 % activity while its nodes wait in
  iowait (~25 % of CPU time): data-starved;
- ``team-nlp/bert-eval`` (1 A100): short evaluation bursts at ~25 %, 6 GiB;
- ``team-nlp/llm-finetune`` (16 A100), ``inference/llama-70b-vllm`` (8 H100, vLLM holds 90 % of
  memory), ``inference/embedding-api`` (time-shared L4): busy, nothing to change.

Run: ``python examples/clusters/build_demo.py`` first if the cluster changed, then
``python examples/usage/build_metrics.py [OUT]``.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
CLUSTER = HERE.parent / "clusters" / "demo.yaml"
END = datetime(2026, 3, 10, 9, 40, tzinfo=UTC).timestamp()
STEP = 300
POINTS = 24 * 3600 // STEP
TIMES = END - STEP * np.arange(POINTS - 1, -1, -1)
HOURS = ((TIMES % 86400) / 3600).astype(float)  # UTC hour of day
WORK = (HOURS >= 8) & (HOURS < 18)
MEMORY_MIB = {
    "NVIDIA A100-SXM4-40GB": 40960,
    "NVIDIA H100 80GB HBM3": 81559,
    "NVIDIA L4": 23034,
    "NVIDIA L40S": 46068,
}
MIG_MEMORY_MIB = {"1g.5gb": 4864, "3g.20gb": 19968}


def rng(seed: str) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha1(seed.encode()).hexdigest()[:8], 16))


def uuid(seed: str, prefix: str = "GPU") -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{prefix}-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def at(hour: float, minute: int = 0, day: int = 0) -> float:
    """A UTC time on 2026-03-09 (day 0) or 2026-03-10 (day 1)."""
    base = datetime(2026, 3, 9, tzinfo=UTC).timestamp()
    return base + day * 86400 + hour * 3600 + minute * 60


def shape(name: str, r: np.random.Generator) -> tuple[np.ndarray, float]:
    """(engine activity per point, memory used in MiB at peak) for one workload's GPU."""
    noise = r.normal(0, 0.03, POINTS)
    if name == "notebook-alice":
        busy = ((at(14, 20) <= TIMES) & (at(17, 30) > TIMES)) | (at(8, 30, day=1) <= TIMES)
        act = np.where(busy, np.clip(0.32 + r.normal(0, 0.08, POINTS), 0.1, 0.5), 0.0)
        return act, 14336
    if name == "notebook-bob":
        return np.zeros(POINTS), 820
    if name == "notebook-dave":
        busy = ((at(14, 20) <= TIMES) & (at(16, 45) > TIMES)) | (at(9, 0, day=1) <= TIMES)
        return np.where(busy, np.clip(0.55 + noise * 3, 0.2, 0.9), 0.0), 3900
    if name == "notebook-carol":
        return np.where(WORK, np.clip(0.6 + noise * 3, 0.2, 0.95), 0.03), 4100
    if name == "reranker":
        return np.clip(0.12 + 0.06 * np.sin(TIMES / 5000) + noise, 0.06, 0.22), 3480
    if name == "mixtral-sft":
        return np.where(at(1, 30, day=1) > TIMES, np.clip(0.88 + noise, 0.7, 0.99), 0.0), 71000
    if name == "resnet-ddp":
        return np.clip(0.3 + r.normal(0, 0.1, POINTS), 0.05, 0.6), 30100
    if name == "bert-eval":
        burst = (TIMES // 3600) % 3 == 0
        return np.where(burst, np.clip(0.22 + noise, 0.1, 0.3), 0.0), 6144
    if name == "llm-finetune":
        return np.clip(0.92 + noise, 0.8, 1.0), 37800
    if name == "llama-70b-vllm":
        return np.clip(np.where(WORK, 0.62, 0.28) + r.normal(0, 0.08, POINTS), 0.1, 0.9), 73400
    if name == "embedding-api":
        return np.clip(np.where(WORK, 0.5, 0.2) + noise, 0.05, 0.8), 5200
    raise KeyError(name)


def workload_name(pod: dict[str, Any]) -> str:
    owner = (pod["metadata"].get("ownerReferences") or [{}])[0].get("name", pod["metadata"]["name"])
    for known in (
        "notebook-alice",
        "notebook-bob",
        "notebook-carol",
        "notebook-dave",
        "reranker",
        "mixtral-sft",
        "resnet-ddp",
        "bert-eval",
        "llm-finetune",
        "llama-70b-vllm",
        "embedding-api",
    ):
        if owner.startswith(known):
            return known
    raise KeyError(owner)


def main(out: Path) -> None:
    items = yaml.load(CLUSTER.read_text(), Loader=yaml.CSafeLoader)["items"]
    nodes = {o["metadata"]["name"]: o for o in items if o["kind"] == "Node"}
    pods = [
        o
        for o in items
        if o["kind"] == "Pod" and o["spec"].get("nodeName") and o["status"]["phase"] == "Running"
    ]
    exporter_ip = {}
    for o in items:
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("nvidia-dcgm-exporter-"):
            exporter_ip[o["spec"]["nodeName"]] = o["status"].get("podIP", "10.0.0.1")
    series: dict[str, list[dict[str, Any]]] = {
        k: []
        for k in ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "iowait")
    }
    start_of = {
        p["metadata"]["name"]: datetime.fromisoformat(
            p["metadata"]["creationTimestamp"].replace("Z", "+00:00")
        ).timestamp()
        for p in pods
    }

    def emit(
        node: str,
        gpu: int,
        model: str,
        pod: dict[str, Any] | None,
        mig: tuple[str, int] | None,
        act: np.ndarray,
        used: np.ndarray,
        total: float,
    ) -> None:
        labels = {
            "gpu": str(gpu),
            "UUID": uuid(f"{node}/{gpu}"),
            "pci_bus_id": f"00000000:{16 + gpu * 16:02X}:00.0",
            "device": f"nvidia{gpu}",
            "modelName": model,
            "Hostname": node,
            "DCGM_FI_DRIVER_VERSION": "550.127.05",
            "instance": f"{exporter_ip.get(node, '10.0.0.1')}:9400",
            "job": "nvidia-dcgm-exporter",
        }
        if mig:
            labels["GPU_I_PROFILE"], labels["GPU_I_ID"] = mig[0], str(mig[1])
        if pod is not None:
            labels.update(
                {
                    "pod": pod["metadata"]["name"],
                    "namespace": pod["metadata"]["namespace"],
                    "container": pod["spec"]["containers"][0]["name"],
                }
            )
        held = start_of[pod["metadata"]["name"]] <= TIMES if pod is not None else np.ones(POINTS, bool)
        for metric, values in (
            ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", act),
            ("DCGM_FI_DEV_FB_USED", used),
            ("DCGM_FI_DEV_FB_FREE", total - used),
        ):
            points = [
                [float(t), f"{v:.4g}" if metric.startswith("DCGM_FI_PROF") else f"{round(v)}"]
                for t, v, h in zip(TIMES, values, held)
                if h
            ]
            series[metric].append({"metric": {"__name__": metric, **labels}, "values": points})
        if pod is not None and not held.all():
            # Before the pod started its GPU was free: the same device without pod labels.
            free = {k: v for k, v in labels.items() if k not in ("pod", "namespace", "container")}
            for metric, value in (
                ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0"),
                ("DCGM_FI_DEV_FB_USED", "0"),
                ("DCGM_FI_DEV_FB_FREE", str(round(total))),
            ):
                points = [[float(t), value] for t, h in zip(TIMES, held) if not h]
                series[metric].append({"metric": {"__name__": metric, **free}, "values": points})

    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        by_node.setdefault(pod["spec"]["nodeName"], []).append(pod)
    for name, node in sorted(nodes.items()):
        labels = node["metadata"]["labels"]
        if labels.get("nvidia.com/gpu.present") != "true":
            continue
        model = "NVIDIA " + labels["nvidia.com/gpu.product"].removeprefix("NVIDIA-").replace("-SHARED", "")
        model = model.replace("H100-80GB-HBM3", "H100 80GB HBM3")
        alloc = node["status"]["allocatable"]
        gpu_pods = [
            p
            for p in by_node.get(name, [])
            if any(
                k.startswith("nvidia.com/")
                for c in p["spec"]["containers"]
                for k in c["resources"].get("limits", {})
            )
        ]
        if labels.get("nvidia.com/mig.strategy") == "mixed":
            if int(alloc.get("nvidia.com/mig-1g.5gb", "0")) == 0:
                continue  # the failed MIG node: no MIG device, nothing to export per instance
            # GPUs 0-3: 2 x 3g.20gb each (GI 1, 2); GPUs 4-7: 7 x 1g.5gb each (GI 7..13).
            slots = [(g, "3g.20gb", gi) for g in range(4) for gi in (1, 2)]
            slots += [(g, "1g.5gb", gi) for g in range(4, 8) for gi in range(7, 14)]
            holders = {
                "3g.20gb": [p for p in gpu_pods if "reranker" in p["metadata"]["name"]],
                "1g.5gb": [p for p in gpu_pods if "notebook" in p["metadata"]["name"]],
            }
            for gpu, profile, gi in slots:
                pod = holders[profile].pop(0) if holders[profile] else None
                total = MIG_MEMORY_MIB[profile]
                if pod is None:
                    emit(name, gpu, model, None, (profile, gi), np.zeros(POINTS), np.zeros(POINTS), total)
                    continue
                act, peak = shape(workload_name(pod), rng(pod["metadata"]["name"]))
                used = peak * (0.85 + 0.15 * rng(pod["metadata"]["name"] + "m").random(POINTS))
                used[-1] = peak
                emit(name, gpu, model, pod, (profile, gi), act, used, total)
            continue
        total = MEMORY_MIB[model]
        gpus = int(labels.get("nvidia.com/gpu.count", "1"))
        replicas = int(labels.get("nvidia.com/gpu.replicas", "1"))
        if replicas > 1:
            # Time-shared L4: the exporter (KubernetesVirtualGPUs) repeats the GPU under each pod.
            holders = gpu_pods or [None]
            act, peak = shape("embedding-api", rng(name))
            for pod in holders:
                used = np.full(POINTS, peak * len(gpu_pods)) if gpu_pods else np.zeros(POINTS)
                emit(name, 0, model, pod, None, act if pod else np.zeros(POINTS), used, total)
            continue
        if "nvidia.com/gpu" not in alloc:
            continue  # the L40S node whose device plugin crashes: its exporter still runs, but no pod holds a GPU
        next_gpu = 0
        for pod in sorted(gpu_pods, key=lambda p: p["metadata"]["name"]):
            count = int(pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
            for _ in range(count):
                act, peak = shape(workload_name(pod), rng(f"{pod['metadata']['name']}/{next_gpu}"))
                used = np.minimum(peak * (0.9 + 0.1 * rng(f"{name}/{next_gpu}m").random(POINTS)), total)
                emit(name, next_gpu, model, pod, None, act, used, total)
                next_gpu += 1
        for gpu in range(next_gpu, gpus):
            emit(name, gpu, model, None, None, np.zeros(POINTS), np.zeros(POINTS), total)
    for name in sorted(nodes):
        r = rng(name + "io")
        base = 0.25 if name in ("node-a100-3", "node-a100-4") else 0.02
        values = np.clip(base + r.normal(0, 0.02, POINTS), 0, 1)
        series["iowait"].append(
            {"metric": {"instance": name}, "values": [[float(t), f"{v:.4g}"] for t, v in zip(TIMES, values)]}
        )
    doc = {
        metric: {"status": "success", "data": {"resultType": "matrix", "result": result}}
        for metric, result in series.items()
    }
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(
        f"wrote {out}: {sum(len(v) for v in series.values())} series x up to {POINTS} points "
        f"({math.ceil(out.stat().st_size / 1024)} KiB)"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "demo-metrics.json")
