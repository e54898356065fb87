"""mig-parted config for MIG pools and the ``nvidia.com/mig.config`` label that applies it.

Format: NVIDIA/mig-parted ``api/spec/v1/spec.go`` (reference nvidia-gpu-stack.md §4.1); the
MIG manager reads key ``config.yaml`` of the ConfigMap named in ``migManager.config.name``
and applies the entry named by the node label (§3.3). The generated document is parsed back
with :func:`gpuplane.gpu.mig.parse_mig_parted_config` and each layout re-checked with
:func:`gpuplane.gpu.mig.layout_fits`.
"""

from __future__ import annotations

from typing import Any

import yaml

from gpuplane.generate.render.base import Bundle, meta
from gpuplane.generate.render.operator import MIG_PARTED_CM, OPERATOR_NS
from gpuplane.generate.render.sharing import RenderError
from gpuplane.gpu.mig import layout_fits, parse_mig_parted_config


def _entries(layouts: list[dict[str, int]], pci_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """One entry for a uniform layout (``devices: all``), else one per distinct layout."""
    groups: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for gpu, layout in enumerate(layouts):
        groups.setdefault(tuple(sorted(layout.items())), []).append(gpu)
    out = []
    for layout_key, gpus in groups.items():
        entry: dict[str, Any] = {
            "devices": "all" if len(groups) == 1 else gpus,
            "mig-enabled": True,
            "mig-devices": dict(layout_key),
        }
        if pci_ids:
            entry["device-filter"] = list(pci_ids)
        out.append(entry)
    return out


def render(bundle: Bundle) -> None:
    mig_plans = [p for p in bundle.plans if p.pool.sharing.mode == "mig"]
    if not mig_plans:
        return
    configs: dict[str, Any] = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    for plan in mig_plans:
        for gpu, layout in enumerate(plan.mig_layouts):
            ok, reason = layout_fits(plan.model, layout)
            if not ok:
                raise RenderError(f"MIG layout for {plan.name} GPU {gpu} does not fit: {reason}")
        configs[plan.mig_config or ""] = _entries(plan.mig_layouts, plan.model.pci_device_ids)
        uniform = all(layout == plan.mig_layouts[0] for layout in plan.mig_layouts)
        desc = ", ".join(f"{n} x {p}" for p, n in sorted(plan.mig_layouts[0].items()))
        bundle.decide(
            "gpu-sharing",
            f"gpu_pools[{plan.index}].sharing",
            f"MIG ({desc} per GPU)" if uniform else "MIG (per-GPU layouts from the MIG planner)",
            f"{plan.model.name} supports MIG: each slice has its own memory, cache and SMs, so tenants "
            "and small jobs get hardware isolation that time-slicing cannot give",
            "nvidia-gpu-stack.md §4",
        )
    doc = {"version": "v1", "mig-configs": configs}
    text = yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False)
    _parsed, problems = parse_mig_parted_config(text)
    errors = [str(p) for p in problems if p.severity == "error"]
    if errors:
        raise RenderError(f"mig-parted config does not parse: {'; '.join(errors)}")
    bundle.add(
        "20-gpu-sharing",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(MIG_PARTED_CM, OPERATOR_NS),
            "data": {"config.yaml": text},
        },
    )
    bundle.decide(
        "gpu-sharing",
        "migManager.config.default",
        "all-disabled",
        "MIG-capable nodes without a nvidia.com/mig.config label keep MIG off; only the pools that ask "
        "for MIG are carved (the MIG manager applies the label's entry, then reports "
        "nvidia.com/mig.config.state=success)",
        "nvidia-gpu-stack.md §3.3",
    )
