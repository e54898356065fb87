"""The recorded DCGM series the usage tests load into Prometheus and read offline.

12 hours of 30-second samples (at :15 and :45 of each minute, so no sample sits on a 1-minute
step boundary and Prometheus's closed range ``[t - 1m, t]`` and the offline ``(t - 1m, t]`` see the
same samples), for the pods of ``tests/fixtures/usage/cluster.yaml``:

- ``team-a/nb-ana-0`` (Notebook, 1 GPU): 0.30 for 2 h, idle (0.0) for exactly 8 h, 0.30 for 2 h;
  12,000 MiB used;
- ``serving/chat-...`` (Deployment, 2 GPUs): bursty, every 10 minutes 2 at 0.40 and 8 at 0.02;
  20,000 MiB;
- ``team-b/train-llm-0`` (PyTorchJob, 4 GPUs): steady 0.90, 38,000 MiB;
- ``serving/embed-...`` (Deployment, one 3g.20gb MIG instance): 0.15, 3,000 MiB;
- GPU 7 of node-a: free (no pod labels), 0.0;
- ``node_cpu_seconds_total{mode="iowait"}`` of node-a: a counter growing 0.02 s per second.

Every figure the tests assert follows from these by hand (see test_usage_answers.py).
"""

from __future__ import annotations

from pathlib import Path

T0 = 1_773_000_000 - (1_773_000_000 % 3600)  # 2026-03-08T20:00:00Z, on an hour boundary
MINUTES = 12 * 60
END = T0 + MINUTES * 60
A100 = "NVIDIA A100-SXM4-40GB"


def _notebook(minute: int) -> float:
    return 0.0 if 120 <= minute < 600 else 0.30


def _chat(minute: int) -> float:
    return 0.40 if minute % 10 < 2 else 0.02


# (labels, activity per minute, framebuffer used MiB, framebuffer total MiB)
def devices() -> list[tuple[dict[str, str], object, float, float]]:
    base = {"modelName": A100, "Hostname": "node-a", "DCGM_FI_DRIVER_VERSION": "550.127.05"}
    out: list[tuple[dict[str, str], object, float, float]] = []

    def gpu(i: int, **extra: str) -> dict[str, str]:
        return {"gpu": str(i), "UUID": f"GPU-a-{i}", "device": f"nvidia{i}", **base, **extra}

    nb = {"pod": "nb-ana-0", "namespace": "team-a", "container": "notebook"}
    out.append((gpu(0, **nb), _notebook, 12000, 40960))
    chat = {"pod": "chat-6d8f7c9b5-x2x9k", "namespace": "serving", "container": "server"}
    out += [(gpu(i, **chat), _chat, 20000, 40960) for i in (1, 2)]
    train = {"pod": "train-llm-0", "namespace": "team-b", "container": "pytorch"}
    out += [(gpu(i, **train), lambda m: 0.90, 38000, 40960) for i in (3, 4, 5, 6)]
    out.append((gpu(7), lambda m: 0.0, 0, 40960))
    mig = {
        "gpu": "0",
        "UUID": "GPU-mig-0",
        "device": "nvidia0",
        "modelName": A100,
        "Hostname": "node-mig",
        "GPU_I_PROFILE": "3g.20gb",
        "GPU_I_ID": "1",
        "pod": "embed-7f9c8d6b4-q8w2e",
        "namespace": "serving",
        "container": "server",
    }
    out.append((mig, lambda m: 0.15, 3000, 19968))
    return out


def _labels(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))


def openmetrics() -> str:
    """The scenario as OpenMetrics with timestamps (what promtool backfills)."""
    lines: list[str] = []
    families = (
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", 0),
        ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", 1),
        ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", 2),
    )
    for name, help_text, which in families:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} gauge")
        for labels, activity, used, total in devices():
            text = _labels(labels)
            for minute in range(MINUTES):
                for offset in (15, 45):
                    t = T0 + minute * 60 + offset
                    if which == 0:
                        value = f"{activity(minute):g}"  # type: ignore[operator]
                    elif which == 1:
                        value = f"{used:g}"
                    else:
                        value = f"{total - used:g}"
                    lines.append(f"{name}{{{text}}} {value} {t}")
    lines.append("# HELP node_cpu_seconds Seconds the CPUs spent in each mode.")
    lines.append("# TYPE node_cpu_seconds counter")
    for minute in range(MINUTES):
        for offset in (15, 45):
            t = T0 + minute * 60 + offset
            value = 100 + 0.02 * (t - T0)
            lines.append(f'node_cpu_seconds_total{{cpu="0",instance="node-a",mode="iowait"}} {value:.2f} {t}')
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def write(path: Path) -> Path:
    path.write_text(openmetrics(), encoding="utf-8")
    return path
