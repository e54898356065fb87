"""Device-plugin sharing configs (time-slicing / MPS) and the node labels that select them.

Config format: k8s-device-plugin ``api/config/v1`` (reference nvidia-gpu-stack.md §1.1);
per-node selection with ``nvidia.com/device-plugin.config`` (§1.3). Every generated config
is parsed back with :func:`gpuplane.gpu.device_plugin.parse_device_plugin_config`.
"""

from __future__ import annotations

from typing import Any

import yaml

from gpuplane.generate.render.base import Bundle, meta
from gpuplane.generate.render.operator import DEVICE_PLUGIN_CM, OPERATOR_NS, mig_strategy
from gpuplane.gpu.device_plugin import parse_device_plugin_config


class RenderError(RuntimeError):
    """A generated document failed its own parser: a generator bug, reported, never written."""


def _config(strategy: str, sharing: dict[str, Any] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": strategy}}
    if sharing:
        doc["sharing"] = sharing
    return doc


def render(bundle: Bundle) -> None:
    strategy = mig_strategy(bundle)
    data: dict[str, str] = {}
    configs: dict[str, dict[str, Any]] = {"default": _config(strategy, None)}
    for plan in bundle.plans:
        s = plan.pool.sharing
        if s.mode not in ("time-slicing", "mps") or plan.device_plugin_config is None:
            continue
        key = "timeSlicing" if s.mode == "time-slicing" else "mps"
        section: dict[str, Any] = {
            "renameByDefault": False,
            "resources": [{"name": "nvidia.com/gpu", "replicas": s.replicas}],
        }
        if s.mode == "time-slicing":
            section["failRequestsGreaterThanOne"] = s.fail_requests_greater_than_one
        configs[plan.device_plugin_config] = _config(strategy, {key: section})
        if s.mode == "time-slicing":
            bundle.decide(
                "gpu-sharing",
                f"gpu_pools[{plan.index}].sharing",
                f"time-slicing x{s.replicas}",
                f"{plan.model.name} has no MIG, so time-slicing is the way to pack small inference "
                f"pods; each GPU is advertised {s.replicas} times. It gives no memory or fault isolation, "
                "so keep one tenant per pool",
                "nvidia-gpu-stack.md §1.1, §1.4",
            )
            if s.fail_requests_greater_than_one:
                bundle.decide(
                    "gpu-sharing",
                    f"gpu_pools[{plan.index}].sharing.fail_requests_greater_than_one",
                    "true",
                    "a request for 2 shared replicas buys no extra compute; NVIDIA recommends "
                    "rejecting it at admission",
                    "nvidia-gpu-stack.md §1.4",
                )
        else:
            bundle.decide(
                "gpu-sharing",
                f"gpu_pools[{plan.index}].sharing",
                f"MPS x{s.replicas}",
                "MPS splits memory and compute evenly between replicas (unlike time-slicing)",
                "nvidia-gpu-stack.md §5.1",
            )
    for name, doc in configs.items():
        text = yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False)
        cfg, problems = parse_device_plugin_config(text)
        errors = [str(p) for p in problems if p.severity == "error"]
        if cfg is None or errors:
            raise RenderError(f"device-plugin config {name} does not parse: {'; '.join(errors)}")
        data[name] = text
    bundle.add(
        "20-gpu-sharing",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(DEVICE_PLUGIN_CM, OPERATOR_NS),
            "data": dict(sorted(data.items())),
        },
    )
    for plan in bundle.plans:
        labels = plan.node_labels()
        if bundle.blueprint.autoscaling.provisioner == "karpenter":
            continue  # the NodePool template carries the labels
        pairs = " ".join(f"{k}={v}" for k, v in labels.items())
        bundle.note(
            "20-gpu-sharing",
            f"pool `{plan.name}`: nodes must carry `{pairs}` (node-pool configuration, "
            f"or `kubectl label nodes NODE... {pairs} --overwrite`)",
        )
