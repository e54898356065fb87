"""Kindless NVIDIA config files (device plugin, mig-parted), recognised for the loader.

Importing this module registers :func:`nvidia_config_kind` with :mod:`gpuplane.k8s.kindless`,
so the loader reads such files as ``gpuplane.io/v1`` pseudo-objects (docs/lint.md "Config
files") that the sharing rules lint. The CLI's root command imports it before any command runs.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s import kindless

DEVICE_PLUGIN_CONFIG_KIND = "DevicePluginConfig"
MIG_PARTED_CONFIG_KIND = "MigPartedConfig"
# Top-level keys of the device plugin's config file (NVIDIA/k8s-device-plugin api/config/v1/config.go).
_DEVICE_PLUGIN_KEYS = ("sharing", "flags", "resources")


def nvidia_config_kind(data: dict[str, Any]) -> str | None:
    """The pseudo-kind of a kindless NVIDIA config document, or None.

    A device-plugin config file (``--config-file``, ``CONFIG_FILE``) and a mig-parted
    config file (``nvidia-mig-parted apply -f``) are plain YAML with ``version`` and no
    ``kind``. Recognised by ``version`` plus ``mig-configs`` (mig-parted) or plus
    ``sharing``/``flags``/``resources`` (device plugin); any other kindless document stays
    an error. The version's value is not checked here: a wrong one is a finding.
    """
    if "version" not in data:
        return None
    if "mig-configs" in data:
        return MIG_PARTED_CONFIG_KIND
    if any(key in data for key in _DEVICE_PLUGIN_KEYS):
        return DEVICE_PLUGIN_CONFIG_KIND
    return None


kindless.register(nvidia_config_kind)
