"""mig-parted configs and the exact "can one GPU host these GPU instances" check.

Parsing mirrors NVIDIA/mig-parted ``api/spec/v1/spec.go`` (``Spec`` / ``MigConfigSpec``
``UnmarshalJSON``) and ``pkg/types`` profile validation; messages are upstream's where it has
one. Unlike upstream, which stops at the first error, every problem is collected.

Placement follows the MIG user guide (getting-started ``nvidia-smi mig -lgipp``): a GPU
instance of a profile occupies ``size`` memory slices starting at one of the profile's
allowed placements; instances may not overlap. A set of instances fits one GPU iff such an
assignment exists, the per-profile instance maxima hold, the SM slices suffice, and at most
one instance carries media extensions (``+me``/``+me.all``: each needs the GPU's single OFA
engine, per the profile tables of the MIG user guide). Media-engine budgets beyond that are
not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from gpuplane.gpu.catalog import GpuModel, MigPlacementProfile
from gpuplane.gpu.problems import WARNING, ConfigProblem
from gpuplane.gpu.resources import parse_mig_profile

SPEC_VERSION = "v1"
_ENTRY_FIELDS = ("device-filter", "devices", "mig-enabled", "mig-devices")


@dataclass(frozen=True, slots=True)
class MigDeviceSpec:
    """One entry of a mig-parted config: which GPUs, MIG on/off, which GI profiles.

    ``devices`` is ``"all"`` or a tuple of GPU indexes; ``device_filter`` the PCI device ids
    (``0x20B010DE``) the entry is limited to, empty for every GPU.
    """

    devices: str | tuple[int, ...]
    mig_enabled: bool
    mig_devices: dict[str, int]
    device_filter: tuple[str, ...] = ()


def _mig_devices_problem(profile: Any, count: Any) -> str | None:
    if not isinstance(profile, str) or parse_mig_profile(profile) is None:
        return f"error validating values in 'mig-devices' field: invalid format for '{profile}': not a MIG profile name like 1g.5gb, 1g.10gb+me or 1c.3g.20gb"
    if isinstance(count, bool) or not isinstance(count, int):
        return f"error validating values in 'mig-devices' field: invalid count for '{profile}': {count!r} is not an integer"
    if count < 0:
        return f"error validating values in 'mig-devices' field: invalid count for '{profile}': {count}"
    return None


def _parse_entry(
    raw: Any, path: tuple[str | int, ...], problems: list[ConfigProblem]
) -> MigDeviceSpec | None:
    if not isinstance(raw, dict):
        problems.append(ConfigProblem("each entry must be a mapping with devices and mig-enabled", path))
        return None
    ok = True
    for required in ("devices", "mig-enabled"):
        if required not in raw:
            problems.append(ConfigProblem(f"missing required field: {required}", path))
            ok = False
    for key in raw:
        if key not in _ENTRY_FIELDS:
            problems.append(ConfigProblem(f"unexpected field: {key}", (*path, str(key))))
            ok = False
    device_filter: tuple[str, ...] = ()
    if "device-filter" in raw:
        df = raw["device-filter"]
        if isinstance(df, str):
            device_filter = (df,)
        elif isinstance(df, list) and all(isinstance(x, str) for x in df):
            device_filter = tuple(df)
        else:
            problems.append(
                ConfigProblem("device-filter must be a string or a list of strings", (*path, "device-filter"))
            )
            ok = False
    devices: str | tuple[int, ...] = "all"
    if "devices" in raw:
        dv = raw["devices"]
        if isinstance(dv, str):
            if dv != "all":
                problems.append(
                    ConfigProblem(f"invalid string input for 'devices': {dv}", (*path, "devices"))
                )
                ok = False
        elif isinstance(dv, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in dv):
            devices = tuple(dv)
        else:
            problems.append(
                ConfigProblem("devices must be 'all' or a list of GPU indexes", (*path, "devices"))
            )
            ok = False
    enabled = raw.get("mig-enabled", False)
    if not isinstance(enabled, bool):
        problems.append(ConfigProblem("mig-enabled must be true or false", (*path, "mig-enabled")))
        ok = False
        enabled = False
    mig_devices: dict[str, int] = {}
    has_devices = "mig-devices" in raw and raw["mig-devices"] is not None
    if has_devices:
        md = raw["mig-devices"]
        if not isinstance(md, dict):
            problems.append(
                ConfigProblem("mig-devices must be a mapping of profile to count", (*path, "mig-devices"))
            )
            ok = False
        else:
            for profile, count in md.items():
                msg = _mig_devices_problem(profile, count)
                if msg:
                    problems.append(ConfigProblem(msg, (*path, "mig-devices", str(profile))))
                    ok = False
                else:
                    mig_devices[profile] = count
    if enabled and not has_devices:
        problems.append(
            ConfigProblem("missing required field 'mig-devices' when 'mig-enabled' is true", path)
        )
        ok = False
    if not enabled and mig_devices:
        problems.append(ConfigProblem("MIG devices included when 'mig-enabled' is false", path))
        ok = False
    if not ok:
        return None
    return MigDeviceSpec(
        devices=devices, mig_enabled=enabled, mig_devices=mig_devices, device_filter=device_filter
    )


def parse_mig_parted_config(data: dict | str) -> tuple[dict[str, list[MigDeviceSpec]], list[ConfigProblem]]:
    """Parse a mig-parted config (dict, YAML text, or a ConfigMap holding ``config.yaml``).

    Returns ``mig-configs`` name -> entries (entries with problems are left out) and the
    problems, each with its path in the document.
    """
    problems: list[ConfigProblem] = []
    base: tuple[str | int, ...] = ()
    if isinstance(data, dict) and data.get("kind") == "ConfigMap":
        text = (data.get("data") or {}).get("config.yaml")
        base = ("data", "config.yaml")
        if text is None:
            return {}, [
                ConfigProblem("ConfigMap has no config.yaml key (the MIG manager reads that key)", ("data",))
            ]
        data = text
    if isinstance(data, str):
        try:
            data = yaml.load(data, Loader=yaml.CSafeLoader)
        except yaml.YAMLError as exc:
            return {}, [ConfigProblem(f"unmarshal error: {' '.join(str(exc).split())}", base)]
    if not isinstance(data, dict):
        return {}, [ConfigProblem("config must be a mapping with version and mig-configs", base)]
    if "version" not in data and data:
        problems.append(ConfigProblem("unable to parse with missing 'version' field", base))
        return {}, problems
    version = data.get("version")
    if version != SPEC_VERSION:
        problems.append(ConfigProblem(f"unknown version: {version}", (*base, "version")))
        return {}, problems
    for key in data:
        if key not in ("version", "mig-configs"):
            problems.append(ConfigProblem(f"unexpected field: {key}", (*base, str(key))))
    configs: dict[str, list[MigDeviceSpec]] = {}
    raw_configs = data.get("mig-configs")
    if "mig-configs" in data and not raw_configs:
        problems.append(
            ConfigProblem("at least one entry in 'mig-configs' is required", (*base, "mig-configs"))
        )
        return configs, problems
    if raw_configs is None:
        return configs, problems
    if not isinstance(raw_configs, dict):
        problems.append(
            ConfigProblem("mig-configs must be a mapping of config name to entries", (*base, "mig-configs"))
        )
        return configs, problems
    for name, entries in raw_configs.items():
        path = (*base, "mig-configs", str(name))
        if not isinstance(entries, list) or not entries:
            problems.append(ConfigProblem(f"at least one entry in '{name}' is required", path))
            continue
        parsed = [_parse_entry(e, (*path, i), problems) for i, e in enumerate(entries)]
        configs[str(name)] = [p for p in parsed if p is not None]
    return configs, problems


def _describe(profiles: dict[str, int]) -> str:
    return " + ".join(f"{n} x {p}" for p, n in profiles.items() if n)


def place_layout(model: GpuModel, profiles: dict[str, int]) -> list[tuple[MigPlacementProfile, int]] | None:
    """One valid placement (profile, start slice) for the layout, or ``None`` if none exists.

    Counts must already be valid for the model (see :func:`layout_fits`). Backtracking over
    at most 8 instances on a bitmask of memory slices: instant in practice.
    """
    instances: list[MigPlacementProfile] = []
    for name, count in profiles.items():
        p = model.profile(name)
        if p is None or count < 0:
            return None
        instances.extend([p] * count)
    # Widest first and fewest choices first: fails fast and mirrors "create larger GIs first".
    instances.sort(key=lambda p: (-p.size, len(p.placements), p.name))
    chosen: list[int] = [0] * len(instances)

    def place(i: int, used: int) -> bool:
        if i == len(instances):
            return True
        p = instances[i]
        # Identical profiles are interchangeable: keep their starts increasing.
        floor = chosen[i - 1] + 1 if i and instances[i - 1] is p else -1
        for start in p.placements:
            if start < floor:
                continue
            mask = ((1 << p.size) - 1) << start
            if used & mask:
                continue
            chosen[i] = start
            if place(i + 1, used | mask):
                return True
        return False

    if not place(0, 0):
        return None
    return list(zip(instances, chosen))


def layout_fits(model: GpuModel, profiles: dict[str, int]) -> tuple[bool, str]:
    """Can ONE GPU of ``model`` host exactly these GPU-instance profiles at the same time?

    Returns ``(True, "")`` or ``(False, reason)``; the reason names the first rule broken.
    """
    if not model.mig_capable:
        return False, f"{model.name} does not support MIG"
    total_compute = 0
    total_memory = 0
    media = 0
    for name, count in profiles.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            return False, f"invalid count for {name}: {count!r}"
        if count == 0:
            continue
        p = model.profile(name)
        if p is None:
            parsed = parse_mig_profile(name)
            if parsed is not None and parsed.ci_slices is not None:
                return False, (
                    f"{name} is a compute-instance profile; layout_fits checks GPU-instance profiles "
                    f"such as {parsed.gi_name}"
                )
            known = ", ".join(x.name for x in model.mig_profiles)
            return False, f"{model.name} has no MIG profile {name} (profiles: {known})"
        if count > p.max_instances:
            return False, f"{count} x {name} exceeds the maximum of {p.max_instances} on {model.name}"
        total_compute += p.compute_slices * count
        total_memory += p.size * count
        if "+me" in name:
            media += count
    layout = _describe(profiles)
    if not layout:
        return True, ""
    if media > 1:
        return False, f"{layout}: only one media-extension (+me) instance fits on one GPU"
    if total_compute > model.total_compute_slices:
        return (
            False,
            f"{layout} needs {total_compute} compute slices; {model.name} has {model.total_compute_slices}",
        )
    if total_memory > model.memory_slices:
        return False, f"{layout} needs {total_memory} memory slices; {model.name} has {model.memory_slices}"
    if place_layout(model, profiles) is None:
        return (
            False,
            f"{layout} has no non-overlapping placement on {model.name}'s {model.memory_slices} memory slices",
        )
    return True, ""


def check_mig_parted_layouts(configs: dict[str, list[MigDeviceSpec]]) -> list[ConfigProblem]:
    """Warnings for entries whose ``device-filter`` names a known GPU that cannot host them.

    Entries without a filter apply to whatever GPU the node has, so they cannot be checked
    without the node; use :func:`layout_fits` with the node's model for those.
    """
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    cat = catalog()
    problems: list[ConfigProblem] = []
    for name, entries in configs.items():
        for i, entry in enumerate(entries):
            if not entry.mig_enabled or not entry.mig_devices:
                continue
            for pci in entry.device_filter:
                model = cat.model_for_pci_id(pci)
                if model is None:
                    continue
                ok, reason = layout_fits(model, entry.mig_devices)
                if not ok:
                    problems.append(
                        ConfigProblem(
                            f"{pci} ({model.name}): {reason}",
                            ("mig-configs", name, i, "mig-devices"),
                            WARNING,
                        )
                    )
    return problems
