"""Root volumes of GPU nodes too small for GPU images."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.finding import AppendItem, Finding, SetValue
from gpuplane.lint.rules._common import as_dict
from gpuplane.lint.rules.autoscaling._shared import _gpu_pools
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

AWS_NODECLASS_GROUP = "karpenter.k8s.aws"
# Default data volume of the node classes (platform.md §3.2): AL2/AL2023 root /dev/xvda 20Gi,
# Bottlerocket data /dev/xvdb 20Gi. GPU images are 10-20 GB compressed (platform.md §2.7),
# roughly twice that unpacked, and image GC starts at 85% disk use: below MIN_GPU_DISK_GIB
# one or two such images fill the disk.
DEFAULT_DISK_GIB = 20
MIN_GPU_DISK_GIB = 50
SUGGESTED_DISK = "100Gi"


def _ami_family(nodeclass: Manifest) -> str | None:
    terms = nodeclass.get("spec", "amiSelectorTerms")
    for term in terms if isinstance(terms, list) else ():
        alias = term.get("alias") if isinstance(term, dict) else None
        if isinstance(alias, str) and "@" in alias:
            return alias.split("@", 1)[0].lower()
    family = nodeclass.get("spec", "amiFamily")
    return str(family).lower() if family else None


def _gib(value: Any) -> float | None:
    """GiB of a volume size: Karpenter's ``volumeSize`` is a ``resource.Quantity`` (k8s.quantity)."""
    q = kinds.quantity_value(value)
    return None if q is None else float(q) / 2**30


@rule(
    id="gpu-node-root-volume-small",
    severity="warning",
    category="autoscaling",
    summary="GPU node class keeps a small default image disk: multi-GB GPU images fail to pull.",
    fixable=True,
    fix_safety="unsafe",
)
def gpu_node_root_volume_small(ctx: LintContext) -> Iterator[Finding]:
    classes = {nc.name: nc for nc in ctx.by_kind("EC2NodeClass", AWS_NODECLASS_GROUP)}
    if not classes:
        return
    used: dict[str, str] = {}
    for pool, _idx in _gpu_pools(ctx):
        ref = pool.get("spec", "template", "spec", "nodeClassRef", default={})
        if isinstance(ref, dict) and ref.get("kind", "EC2NodeClass") == "EC2NodeClass" and ref.get("name"):
            used.setdefault(str(ref["name"]), pool.name)
    for name, pool_name in used.items():
        nc = classes.get(name)
        if nc is None or nc.get("spec", "instanceStorePolicy") == "RAID0":
            continue
        family = _ami_family(nc)
        if family in ("al2", "al2023"):
            device = "/dev/xvda"
        elif family == "bottlerocket":
            device = "/dev/xvdb"
        else:
            continue  # Custom / Windows: no Karpenter default to judge
        mappings = nc.get("spec", "blockDeviceMappings")
        found: tuple[int, dict[str, Any]] | None = None
        for i, m in enumerate(mappings if isinstance(mappings, list) else ()):
            if isinstance(m, dict) and m.get("deviceName") == device:
                found = (i, m)
                break
        new_mapping = {
            "deviceName": device,
            "ebs": {"volumeSize": SUGGESTED_DISK, "volumeType": "gp3", "encrypted": True},
        }
        if found is not None:
            i, m = found
            ebs = as_dict(m.get("ebs"))
            size = _gib(ebs.get("volumeSize")) if "volumeSize" in ebs else float(DEFAULT_DISK_GIB)
            if size is None or size >= MIN_GPU_DISK_GIB:
                continue
            path: FieldPath = (
                ("spec", "blockDeviceMappings", i, "ebs", "volumeSize")
                if "volumeSize" in ebs
                else ("spec", "blockDeviceMappings", i)
            )
            shown = f"{ebs.get('volumeSize')}" if "volumeSize" in ebs else f"{DEFAULT_DISK_GIB}Gi (default)"
            patch: tuple = (
                SetValue(("spec", "blockDeviceMappings", i, "ebs", "volumeSize"), SUGGESTED_DISK),
            )
        else:
            shown = f"{DEFAULT_DISK_GIB}Gi (Karpenter default)"
            if isinstance(mappings, list):
                path = ("spec", "blockDeviceMappings")
                patch = (AppendItem(("spec", "blockDeviceMappings"), new_mapping),)
            else:
                path = (
                    ("spec", "amiSelectorTerms")
                    if "amiSelectorTerms" in nc.data.get("spec", {})
                    else ("spec",)
                )
                ops = []
                if device == "/dev/xvdb":  # listing mappings replaces the defaults: keep the OS volume
                    ops.append(
                        AppendItem(
                            ("spec", "blockDeviceMappings"),
                            {
                                "deviceName": "/dev/xvda",
                                "ebs": {"volumeSize": "4Gi", "volumeType": "gp3", "encrypted": True},
                            },
                        )
                    )
                ops.append(AppendItem(("spec", "blockDeviceMappings"), new_mapping))
                patch = tuple(ops)
        yield ctx.report(
            nc,
            path,
            f"EC2NodeClass {name} (used by GPU NodePool {pool_name}, {family}) gives images only {shown} on "
            f'{device}: multi-GB CUDA/PyTorch/serving images fill it ("no space left on device", disk-pressure '
            "evictions).",
            f"Size {device} to {SUGGESTED_DISK} or more (gp3) in spec.blockDeviceMappings.",
            patch=patch,
        )
