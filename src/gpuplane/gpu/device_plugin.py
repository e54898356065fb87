"""NVIDIA k8s-device-plugin configuration (``version: v1``), validated the way upstream does.

Upstream sources (NVIDIA/k8s-device-plugin, cited per rule below):

- ``api/config/v1/config.go`` ``parseConfigFrom``: empty version means v1, any other value
  fails ``unknown version: <v>``; ``NewConfig``: MPS forces ``failRequestsGreaterThanOne``
  to true unless set ("Preserve the historical MPS behavior"); ``DisableResourceNamingInConfig``
  ignores the top-level ``resources`` section and per-resource ``rename`` / ``devices``.
- ``api/config/v1/replicas.go``: ``no resources specified``, ``no resource name specified``,
  ``no replicas specified``, ``number of replicas must be >= 2``, the ``devices`` messages;
  ``renameByDefault`` renames ``<name>`` to ``<name>.shared``.
- ``api/config/v1/resources.go`` ``NewResourceName``: ``nvidia.com/`` is prefixed when
  missing; ``fully-qualified resource name must be 63 characters or less: <n>``.
- ``api/config/v1/sharing.go`` ``SharingStrategy``: MPS wins when both are configured.
- ``cmd/nvidia-device-plugin/main.go`` ``validateFlags``: ``unknown MIG strategy: <v>``,
  ``invalid --device-id-strategy option: <v>``, ``invalid --device-discovery-strategy option <v>``,
  ``using --mig-strategy=mixed is not supported with MPS``.
- ``internal/plugin/mps.go``: ``sharing using MPS is not supported for MIG devices``.

The YAML decoder upstream (sigs.k8s.io/yaml into Go structs) ignores unknown keys, so
unknown keys are warnings here: the plugin runs but the setting does nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuplane.gpu.problems import ERROR, WARNING, ConfigProblem
from gpuplane.gpu.resources import NVIDIA_GPU, SHARED_SUFFIX, classify

VERSION = "v1"
MIG_STRATEGIES = ("none", "single", "mixed")
DEVICE_LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")
DEVICE_ID_STRATEGIES = ("uuid", "index")
DEVICE_DISCOVERY_STRATEGIES = ("auto", "nvml", "tegra")
MAX_RESOURCE_NAME_LENGTH = 63
TIME_SLICING = "timeSlicing"
MPS = "mps"

_TOP_KEYS = ("version", "flags", "resources", "sharing", "imex")
_FLAG_KEYS = (
    "migStrategy",
    "failOnInitError",
    "nvidiaDriverRoot",
    "nvidiaDevRoot",
    "gdsEnabled",
    "mofedEnabled",
    "gdrcopyEnabled",
    "useNodeFeatureAPI",
    "deviceDiscoveryStrategy",
    "mpsRoot",
    "plugin",
    "gfd",
    "nvidiaDevicePath",
    "health",
)
_PLUGIN_KEYS = (
    "passDeviceSpecs",
    "deviceListStrategy",
    "deviceIDStrategy",
    "cdiAnnotationPrefix",
    "nvidiaCTKPath",
    "nvidiaCDIHookPath",
    "containerDriverRoot",
    "sharedDevicesAllocationPolicy",
    "cdiFeatureFlags",
    "deviceListStrategies",
)
_SHARING_KEYS = ("renameByDefault", "failRequestsGreaterThanOne", "resources")
_RESOURCE_KEYS = ("name", "rename", "devices", "replicas")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass(slots=True)
class SharedResource:
    """One replicated resource.

    ``name`` is fully qualified (``nvidia.com/`` added as upstream does). ``rename`` is the
    name the replicas are EFFECTIVELY advertised under: ``<name>.shared`` with
    ``renameByDefault``, else ``None`` (a ``rename:`` in the file is ignored upstream).
    ``devices`` is ``"all"``, a count or a list, as written.
    """

    name: str
    rename: str | None
    replicas: int
    devices: str | int | list[Any] | None = "all"


@dataclass(slots=True)
class DevicePluginConfig:
    """The parts of a device-plugin config that decide what a node advertises.

    ``mig_strategy`` is ``none`` (the plugin default) unless the file sets it;
    ``mig_strategy_set`` tells whether it did. Flags and environment variables take
    precedence over the file (README "CONFIG_FILE"), and the GPU Operator passes
    ``MIG_STRATEGY`` from its ClusterPolicy, so an unset value is not known to be ``none``.
    """

    version: str = VERSION
    mig_strategy: str = "none"
    mig_strategy_set: bool = False
    sharing_mode: str | None = None
    shared: list[SharedResource] = field(default_factory=list)
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    device_list_strategy: tuple[str, ...] = ("envvar",)
    device_id_strategy: str = "uuid"
    flags: dict[str, Any] = field(default_factory=dict)

    def replicas_for(self, name: str) -> int:
        """Replicas per physical device for ``name`` (1 when it is not shared)."""
        for r in self.shared:
            if r.name == name:
                return r.replicas
        return 1

    def exposed_resource_names(self, base: str = NVIDIA_GPU) -> set[str]:
        """Resource names this config makes the plugin advertise (MIG ``mixed`` names excepted).

        Under ``mixed`` the per-profile ``nvidia.com/mig-*`` names depend on the GPUs present;
        only those named in the sharing section are included. Replicated resources keep their
        name unless renamed; every device of a shared resource is replicated (``devices`` is
        forced to ``all`` upstream), so a renamed resource's original name disappears.
        """
        names = {base}
        for r in self.shared:
            if r.rename:
                names.discard(r.name)
                names.add(r.rename)
            elif r.name != base:
                names.add(r.name)
        return names


def _problem(
    problems: list[ConfigProblem], message: str, path: tuple[str | int, ...], severity: str = ERROR
) -> None:
    problems.append(ConfigProblem(message, path, severity))


def _check_keys(
    obj: dict[str, Any], allowed: tuple[str, ...], path: tuple[str | int, ...], problems: list[ConfigProblem]
) -> None:
    for key in obj:
        if key not in allowed:
            _problem(
                problems, f"unknown field {key!r} is ignored by the device plugin", (*path, str(key)), WARNING
            )


def _resource_name(raw: Any, path: tuple[str | int, ...], problems: list[ConfigProblem]) -> str | None:
    if not isinstance(raw, str):
        _problem(problems, f"resource name must be a string, got {raw!r}", path)
        return None
    name = raw if raw.startswith("nvidia.com/") else "nvidia.com/" + raw
    if len(name) > MAX_RESOURCE_NAME_LENGTH:
        _problem(
            problems,
            f"fully-qualified resource name must be {MAX_RESOURCE_NAME_LENGTH} characters or less: {name}",
            path,
        )
        return None
    short = name.split("/", 1)[1]
    if len(short) > 253 or not _DNS1123_SUBDOMAIN.match(short):
        _problem(
            problems,
            f"incorrect format for resource name '{name}': must be a lowercase RFC 1123 subdomain",
            path,
        )
        return None
    return name


def _check_devices(raw: Any, path: tuple[str | int, ...], problems: list[ConfigProblem]) -> bool:
    """``devices`` as replicas.go ``ReplicatedDevices.UnmarshalJSON`` accepts it."""
    if isinstance(raw, str):
        if raw != "all":
            _problem(problems, f"devices set as '{raw}' but the only valid string input is 'all'", path)
            return False
        return True
    if isinstance(raw, int) and not isinstance(raw, bool):
        if raw <= 0:
            _problem(problems, f"devices set as '{raw}' but a count of devices must be > 0", path)
            return False
        return True
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
                continue
            if isinstance(item, str) and _is_device_ref(item):
                continue
            # Upstream formats the item decoded as a Go string: non-strings print as "".
            shown = item if isinstance(item, str) else ""
            _problem(problems, f"unsupported type for device in devices list: {shown}, string", path)
            return False
        return True
    _problem(problems, f"unrecognized type for devices spec: {raw!r}", path)
    return False


def _is_device_ref(ref: str) -> bool:
    """GPU index, MIG index ``<gpu>:<mig>``, ``GPU-<uuid>``, ``MIG-<uuid>`` or ``MIG-GPU-<uuid>/<gi>/<ci>``."""
    if ref.isdigit():
        return True
    parts = ref.split(":")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return True
    if ref.startswith("GPU-"):
        return bool(_UUID.match(ref[4:]))
    if ref.startswith("MIG-"):
        rest = ref[4:]
        if _UUID.match(rest):
            return True
        bits = rest.split("/")
        return (
            len(bits) == 3
            and bits[0].startswith("GPU-")
            and bool(_UUID.match(bits[0][4:]))
            and all(b.isdigit() for b in bits[1:])
        )
    return False


def _parse_sharing_section(
    raw: Any, mode: str, path: tuple[str | int, ...], problems: list[ConfigProblem]
) -> tuple[list[SharedResource], bool, bool | None]:
    """One of ``sharing.timeSlicing`` / ``sharing.mps`` -> resources, renameByDefault, failRequests."""
    if not isinstance(raw, dict):
        _problem(problems, f"{mode} must be a mapping", path)
        return [], False, None
    _check_keys(raw, _SHARING_KEYS, path, problems)
    rename_by_default = raw.get("renameByDefault", False)
    if not isinstance(rename_by_default, bool):
        _problem(problems, "renameByDefault must be true or false", (*path, "renameByDefault"))
        rename_by_default = False
    fail_gt1 = raw.get("failRequestsGreaterThanOne")
    if fail_gt1 is not None and not isinstance(fail_gt1, bool):
        _problem(
            problems,
            "failRequestsGreaterThanOne must be true or false",
            (*path, "failRequestsGreaterThanOne"),
        )
        fail_gt1 = None
    resources = raw.get("resources")
    if not resources:
        _problem(problems, "no resources specified", path)
        return [], rename_by_default, fail_gt1
    if not isinstance(resources, list):
        _problem(problems, "resources must be a list", (*path, "resources"))
        return [], rename_by_default, fail_gt1
    out: list[SharedResource] = []
    for i, item in enumerate(resources):
        rpath = (*path, "resources", i)
        if not isinstance(item, dict):
            _problem(problems, "each resource must be a mapping with name and replicas", rpath)
            continue
        _check_keys(item, _RESOURCE_KEYS, rpath, problems)
        if "name" not in item:
            _problem(problems, "no resource name specified", rpath)
            continue
        name = _resource_name(item["name"], (*rpath, "name"), problems)
        devices = item.get("devices", "all")
        devices_ok = _check_devices(devices, (*rpath, "devices"), problems)
        if "replicas" not in item:
            _problem(problems, "no replicas specified", rpath)
            continue
        replicas = item["replicas"]
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            _problem(problems, f"replicas must be an integer, got {replicas!r}", (*rpath, "replicas"))
            continue
        if replicas < 2:
            _problem(problems, "number of replicas must be >= 2", (*rpath, "replicas"))
            continue
        if name is None or not devices_ok:
            continue
        if "rename" in item:
            _problem(
                problems,
                "rename is ignored: the device plugin disables resource renaming in the config "
                "(DisableResourceNamingInConfig); use renameByDefault",
                (*rpath, "rename"),
                WARNING,
            )
        if devices != "all":
            _problem(
                problems,
                "devices is ignored: the device plugin replicates all devices of a resource "
                "(DisableResourceNamingInConfig)",
                (*rpath, "devices"),
                WARNING,
            )
        rename = name + SHARED_SUFFIX if rename_by_default else None
        out.append(SharedResource(name=name, rename=rename, replicas=replicas, devices=devices))
    return out, rename_by_default, fail_gt1


def _check_exposed(
    shared: list[SharedResource],
    mig_strategy: str | None,
    mode: str,
    path: tuple[str | int, ...],
    problems: list[ConfigProblem],
) -> None:
    """Warn about shared resources the plugin never advertises (they are silently skipped).

    ``mig_strategy`` is ``None`` when the file does not set it (the flag or environment decides).
    """
    for i, r in enumerate(shared):
        info = classify(r.name)
        rpath = (*path, "resources", i, "name")
        if info is not None and info.kind == "gpu":
            continue
        if info is not None and info.kind == "mig":
            if mode == MPS:
                _problem(problems, "sharing using MPS is not supported for MIG devices", rpath)
            elif mig_strategy is not None and mig_strategy != "mixed":
                _problem(
                    problems,
                    f"{r.name} is only advertised with migStrategy mixed (migStrategy is {mig_strategy}); this entry has no effect",
                    rpath,
                    WARNING,
                )
            continue
        _problem(
            problems,
            f"{r.name} is not a resource the NVIDIA device plugin advertises; this entry has no effect",
            rpath,
            WARNING,
        )


def _parse_flags(flags: Any, cfg: DevicePluginConfig, problems: list[ConfigProblem]) -> None:
    if flags is None:
        return
    if not isinstance(flags, dict):
        _problem(problems, "flags must be a mapping", ("flags",))
        return
    cfg.flags = flags
    _check_keys(flags, _FLAG_KEYS, ("flags",), problems)
    mig = flags.get("migStrategy")
    if mig is not None:
        if mig in MIG_STRATEGIES:
            cfg.mig_strategy = mig
            cfg.mig_strategy_set = True
        else:
            _problem(problems, f"unknown MIG strategy: {mig}", ("flags", "migStrategy"))
    discovery = flags.get("deviceDiscoveryStrategy")
    if discovery is not None and discovery not in DEVICE_DISCOVERY_STRATEGIES:
        _problem(
            problems,
            f"invalid --device-discovery-strategy option {discovery}",
            ("flags", "deviceDiscoveryStrategy"),
        )
    plugin = flags.get("plugin")
    if plugin is None:
        return
    if not isinstance(plugin, dict):
        _problem(problems, "flags.plugin must be a mapping", ("flags", "plugin"))
        return
    _check_keys(plugin, _PLUGIN_KEYS, ("flags", "plugin"), problems)
    dls = plugin.get("deviceListStrategy")
    if dls is not None:
        values = [dls] if isinstance(dls, str) else dls if isinstance(dls, list) else [dls]
        bad = [v for v in values if v not in DEVICE_LIST_STRATEGIES]
        if bad:
            _problem(
                problems,
                f"invalid --device-list-strategy option: {bad[0]} is not one of {', '.join(DEVICE_LIST_STRATEGIES)}",
                ("flags", "plugin", "deviceListStrategy"),
            )
        else:
            cfg.device_list_strategy = tuple(values)
    dis = plugin.get("deviceIDStrategy")
    if dis is not None:
        if dis in DEVICE_ID_STRATEGIES:
            cfg.device_id_strategy = dis
        else:
            _problem(
                problems,
                f"invalid --device-id-strategy option: {dis}",
                ("flags", "plugin", "deviceIDStrategy"),
            )


def parse_device_plugin_config(
    text_or_dict: str | dict,
) -> tuple[DevicePluginConfig | None, list[ConfigProblem]]:
    """Parse and validate one config document (YAML/JSON text or an already-loaded dict).

    Returns ``(None, problems)`` when the document cannot be read at all; otherwise the
    config as the plugin would run it (invalid parts left out) and every problem found.
    """
    problems: list[ConfigProblem] = []
    data: Any = text_or_dict
    if isinstance(text_or_dict, str):
        try:
            data = yaml.load(text_or_dict, Loader=yaml.CSafeLoader)
        except yaml.YAMLError as exc:
            return None, [ConfigProblem(f"unmarshal error: {' '.join(str(exc).split())}")]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [ConfigProblem("unmarshal error: the config must be a mapping")]
    cfg = DevicePluginConfig()
    version = data.get("version") or VERSION
    if version != VERSION:
        return None, [ConfigProblem(f"unknown version: {version}", ("version",))]
    _check_keys(data, _TOP_KEYS, (), problems)
    _parse_flags(data.get("flags"), cfg, problems)
    if data.get("resources"):
        _problem(
            problems,
            "Customizing the 'resources' field is not yet supported in the config. Ignoring...",
            ("resources",),
            WARNING,
        )
    sharing = data.get("sharing")
    if sharing is not None:
        _parse_sharing(sharing, cfg, problems)
    return cfg, problems


def _parse_sharing(sharing: Any, cfg: DevicePluginConfig, problems: list[ConfigProblem]) -> None:
    if not isinstance(sharing, dict):
        _problem(problems, "sharing must be a mapping", ("sharing",))
        return
    _check_keys(sharing, (TIME_SLICING, MPS), ("sharing",), problems)
    parsed: dict[str, tuple[list[SharedResource], bool, bool | None]] = {}
    for mode in (TIME_SLICING, MPS):
        if sharing.get(mode) is not None:
            parsed[mode] = _parse_sharing_section(sharing[mode], mode, ("sharing", mode), problems)
    if len(parsed) == 2:
        _problem(
            problems,
            "timeSlicing and mps are mutually exclusive; the device plugin uses mps and ignores timeSlicing",
            ("sharing",),
        )
    # sharing.go SharingStrategy: MPS if it replicates anything, else time-slicing.
    for mode in (MPS, TIME_SLICING):
        if mode in parsed and parsed[mode][0]:
            shared, rename_by_default, fail_gt1 = parsed[mode]
            cfg.sharing_mode = mode
            cfg.shared = shared
            cfg.rename_by_default = rename_by_default
            # config.go NewConfig: MPS keeps its historical reject-requests-above-one default.
            cfg.fail_requests_greater_than_one = fail_gt1 if fail_gt1 is not None else mode == MPS
            explicit = cfg.mig_strategy if cfg.mig_strategy_set else None
            _check_exposed(shared, explicit, mode, ("sharing", mode), problems)
            break
    if cfg.sharing_mode == MPS and cfg.mig_strategy_set:
        if cfg.mig_strategy == "mixed":
            _problem(
                problems, "using --mig-strategy=mixed is not supported with MPS", ("flags", "migStrategy")
            )
        elif cfg.mig_strategy == "single":
            _problem(
                problems,
                "sharing using MPS is not supported for MIG devices: with migStrategy single, nodes whose GPUs "
                "have MIG enabled fail to start the plugin",
                ("flags", "migStrategy"),
                WARNING,
            )


def configs_from_configmap(data: dict) -> dict[str, tuple[DevicePluginConfig | None, list[ConfigProblem]]]:
    """Parse every key of a device-plugin ConfigMap (each key is one named config).

    Accepts the whole ConfigMap object or just its ``data`` mapping. Problem paths are
    relative to the config document of that key.
    """
    entries = data.get("data") if data.get("kind") == "ConfigMap" else data
    out: dict[str, tuple[DevicePluginConfig | None, list[ConfigProblem]]] = {}
    for key, value in (entries or {}).items():
        if not isinstance(value, str):
            out[str(key)] = (None, [ConfigProblem("ConfigMap data values must be strings")])
            continue
        out[str(key)] = parse_device_plugin_config(value)
    return out
