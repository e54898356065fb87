"""Which mig-parted configs the MIG manager of this cluster knows.

A node asks for a layout with ``nvidia.com/mig.config=<entry>``; the MIG manager
applies that entry from its mig-parted ConfigMap: the one named by the
ClusterPolicy's ``spec.migManager.config.name`` (key ``config.yaml``), else the
operator's ``default-mig-parted-config`` (reference/nvidia-gpu-stack.md §3.2,
§3.3). An entry that is not in that file is the most common reason for
``nvidia.com/mig.config.state=failed`` that a snapshot alone can prove.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.sources.manifest import Manifest

DEFAULT_CONFIGMAP = "default-mig-parted-config"
CONFIG_KEY = "config.yaml"


def mig_parted_configmap(state: ClusterState) -> Manifest | None:
    """The ConfigMap the MIG manager reads, when the snapshot holds it."""
    name = DEFAULT_CONFIGMAP
    for policy in state.by_kind("ClusterPolicy", "nvidia.com"):
        configured = policy.get("spec", "migManager", "config", "name")
        if isinstance(configured, str) and configured:
            name = configured
            break
    for cm in state.by_kind("ConfigMap", ""):
        if cm.name == name:
            return cm
    return None


def known_configs(cm: Manifest) -> set[str] | None:
    """Entry names under ``mig-configs`` of the ConfigMap's ``config.yaml`` (None when unreadable)."""
    text = cm.get("data", CONFIG_KEY)
    if not isinstance(text, str):
        return None
    try:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    configs = document.get("mig-configs") if isinstance(document, dict) else None
    return {str(key) for key in configs} if isinstance(configs, dict) else None
