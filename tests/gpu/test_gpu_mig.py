"""mig-parted parsing and layout_fits: upstream configs fit their GPUs; placements are exact."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from gpuplane.gpu.catalog import GpuModel, MigPlacementProfile, catalog
from gpuplane.gpu.mig import (
    MigDeviceSpec,
    check_mig_parted_layouts,
    layout_fits,
    parse_mig_parted_config,
    place_layout,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gpu" / "mig-parted"
UPSTREAM = Path("corpus") / "upstream" / "nvidia"
MIG_PARTED_FILES = [
    "gpu-operator/default-mig-parted-config.configmap.yaml",
    "mig-parted/config-default.yaml",
    "mig-parted/examples-config.yaml",
    "dra-driver-gpu/quickstart-mig-parted-config.yaml",
]
# Entries of NVIDIA's default config whose target GPU no source names (reference §4.3 notes
# all-7g.189gb; 3g.95gb / 4g.95gb belong to the same unnamed ~190 GB part).
UNASSIGNED = {"all-3g.95gb", "all-4g.95gb", "all-7g.189gb"}


def _candidates(entry: MigDeviceSpec) -> list[GpuModel]:
    cat = catalog()
    if entry.device_filter:
        return [m for m in (cat.model_for_pci_id(p) for p in entry.device_filter) if m is not None]
    return [m for m in cat.models.values() if m.mig_capable and all(m.profile(p) for p in entry.mig_devices)]


@pytest.mark.parametrize("rel", MIG_PARTED_FILES)
def test_upstream_mig_parted_configs_fit_their_gpus(shared_dir: Path, rel: str) -> None:
    configs, problems = parse_mig_parted_config(yaml.safe_load((shared_dir / UPSTREAM / rel).read_text()))
    assert problems == []
    assert check_mig_parted_layouts(configs) == []
    unassigned = set()
    checked = 0
    for name, entries in configs.items():
        for entry in entries:
            if not entry.mig_devices:
                continue
            models = _candidates(entry)
            if not models:
                unassigned.add(name)
                continue
            for model in models:
                assert layout_fits(model, entry.mig_devices) == (True, ""), (name, model.name)
                checked += 1
    assert unassigned <= UNASSIGNED
    assert checked >= (70 if "default" in rel else 1)


def test_default_config_counts_and_filters(shared_dir: Path) -> None:
    cm = yaml.safe_load(
        (shared_dir / UPSTREAM / "gpu-operator/default-mig-parted-config.configmap.yaml").read_text()
    )
    configs, problems = parse_mig_parted_config(cm)
    assert problems == []
    assert len(configs) == 81
    assert configs["all-disabled"] == [MigDeviceSpec(devices="all", mig_enabled=False, mig_devices={})]
    balanced = configs["all-balanced"]
    a30 = [e for e in balanced if e.device_filter == ("0x20B710DE",)]
    assert a30 == [MigDeviceSpec("all", True, {"1g.6gb": 2, "2g.12gb": 1}, ("0x20B710DE",))]
    # every device-filter id of the default config is a catalog GPU
    for entries in configs.values():
        for e in entries:
            for pci in e.device_filter:
                assert catalog().model_for_pci_id(pci) is not None, pci


def test_examples_custom_config(shared_dir: Path) -> None:
    configs, _ = parse_mig_parted_config(
        (shared_dir / UPSTREAM / "mig-parted/examples-config.yaml").read_text()
    )
    custom = configs["custom-config"]
    assert [e.devices for e in custom] == [(0, 1, 2, 3), (4,), (5,), (6,), (7,)]
    assert [e.mig_enabled for e in custom] == [False, True, True, True, True]


def test_invalid_entries_exact_messages() -> None:
    configs, problems = parse_mig_parted_config((FIXTURES / "invalid-entries.yaml").read_text())
    assert [(p.message, p.path) for p in problems] == [
        (
            "missing required field 'mig-devices' when 'mig-enabled' is true",
            ("mig-configs", "enabled-without-devices", 0),
        ),
        ("MIG devices included when 'mig-enabled' is false", ("mig-configs", "devices-when-disabled", 0)),
        ("missing required field: devices", ("mig-configs", "missing-devices", 0)),
        ("invalid string input for 'devices': some", ("mig-configs", "bad-device-string", 0, "devices")),
        (
            "error validating values in 'mig-devices' field: invalid format for '3g.20': not a MIG profile name like "
            "1g.5gb, 1g.10gb+me or 1c.3g.20gb",
            ("mig-configs", "bad-profile", 0, "mig-devices", "3g.20"),
        ),
        (
            "error validating values in 'mig-devices' field: invalid count for '1g.5gb': -1",
            ("mig-configs", "bad-profile", 0, "mig-devices", "1g.5gb"),
        ),
        ("unexpected field: gpu-model", ("mig-configs", "extra-field", 0, "gpu-model")),
        ("at least one entry in 'empty' is required", ("mig-configs", "empty")),
    ]
    assert all(p.severity == "error" for p in problems)
    assert all(entries == [] for entries in configs.values())


def test_missing_version() -> None:
    configs, problems = parse_mig_parted_config((FIXTURES / "missing-version.yaml").read_text())
    assert configs == {}
    assert [(p.message, p.path) for p in problems] == [("unable to parse with missing 'version' field", ())]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"version": "v2", "mig-configs": {}}, "unknown version: v2"),
        ({"version": "v1", "mig-configs": {}}, "at least one entry in 'mig-configs' is required"),
        (
            {"version": "v1", "mig-configs": {"a": [{"devices": "all", "mig-enabled": False}]}, "extra": 1},
            "unexpected field: extra",
        ),
        (
            {"kind": "ConfigMap", "data": {"other.yaml": ""}},
            "ConfigMap has no config.yaml key (the MIG manager reads that key)",
        ),
    ],
)
def test_document_level_problems(doc: dict, message: str) -> None:
    _, problems = parse_mig_parted_config(doc)
    assert [p.message for p in problems] == [message]


def test_layout_warnings_for_filtered_entries() -> None:
    configs, problems = parse_mig_parted_config((FIXTURES / "a100-overcommitted.yaml").read_text())
    assert problems == []
    assert [(p.message, p.path, p.severity) for p in check_mig_parted_layouts(configs)] == [
        (
            "0x20B010DE (A100-40GB): 2 x 3g.20gb + 1 x 2g.10gb needs 8 compute slices; A100-40GB has 7",
            ("mig-configs", "too-many-3g", 0, "mig-devices"),
            "warning",
        ),
    ]


A100 = "A100-40GB"


@pytest.mark.parametrize(
    ("model", "layout", "expected"),
    [
        (A100, {"1g.5gb": 7}, (True, "")),
        (A100, {"3g.20gb": 2}, (True, "")),
        (A100, {"4g.20gb": 1, "3g.20gb": 1}, (True, "")),
        (A100, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}, (True, "")),
        (A100, {"1g.10gb": 1, "1g.5gb": 6}, (True, "")),
        (A100, {"7g.40gb": 1}, (True, "")),
        (A100, {}, (True, "")),
        (A100, {"1g.5gb": 0}, (True, "")),
        (A100, {"1g.5gb": 8}, (False, "8 x 1g.5gb exceeds the maximum of 7 on A100-40GB")),
        (
            A100,
            {"7g.40gb": 1, "1g.5gb": 1},
            (False, "1 x 7g.40gb + 1 x 1g.5gb needs 8 compute slices; A100-40GB has 7"),
        ),
        (
            A100,
            {"3g.20gb": 2, "1g.5gb": 1},
            (False, "2 x 3g.20gb + 1 x 1g.5gb needs 9 memory slices; A100-40GB has 8"),
        ),
        (
            A100,
            {"1g.10gb": 4, "1g.5gb": 1},
            (False, "4 x 1g.10gb + 1 x 1g.5gb needs 9 memory slices; A100-40GB has 8"),
        ),
        (A100, {"1g.5gb+me": 1, "1g.5gb": 6}, (True, "")),
        (
            A100,
            {"3g.40gb": 1},
            (
                False,
                "A100-40GB has no MIG profile 3g.40gb (profiles: 1g.5gb, 1g.5gb+me, 1g.10gb, "
                "2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)",
            ),
        ),
        (
            A100,
            {"1c.3g.20gb": 1},
            (
                False,
                "1c.3g.20gb is a compute-instance profile; layout_fits checks GPU-instance "
                "profiles such as 3g.20gb",
            ),
        ),
        (A100, {"1g.5gb": -1}, (False, "invalid count for 1g.5gb: -1")),
        ("A30", {"2g.12gb": 1, "1g.6gb": 2}, (True, "")),
        (
            "A30",
            {"2g.12gb+me": 1, "1g.6gb+me": 1},
            (
                False,
                "1 x 2g.12gb+me + 1 x 1g.6gb+me: only one media-extension (+me) instance fits on one GPU",
            ),
        ),
        ("T4", {"1g.5gb": 1}, (False, "T4 does not support MIG")),
        ("H100-80GB", {"1g.10gb": 7}, (True, "")),
        ("RTX-PRO-6000", {"1g.24gb": 2, "2g.48gb": 1}, (True, "")),
    ],
)
def test_layout_fits(model: str, layout: dict[str, int], expected: tuple[bool, str]) -> None:
    assert layout_fits(catalog().model(model), layout) == expected


def test_place_layout_is_valid_and_non_overlapping() -> None:
    model = catalog().model(A100)
    placed = place_layout(model, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1})
    assert placed is not None
    used: set[int] = set()
    for profile, start in placed:
        assert start in profile.placements
        span = set(range(start, start + profile.size))
        assert not span & used
        used |= span
    assert [(p.name, s) for p, s in placed] == [("3g.20gb", 4), ("2g.10gb", 0), ("1g.5gb", 2), ("1g.5gb", 3)]


def test_placement_only_failure() -> None:
    """A layout whose slice totals fit but whose allowed starts collide."""
    two = MigPlacementProfile("2g.10gb", None, 2, 2, 10.0, 2, (0,), 2)
    model = GpuModel("TOY", 20.0, True, (two,), (), "toy", "test", memory_slices=4, total_compute_slices=4)
    assert layout_fits(model, {"2g.10gb": 2}) == (
        False,
        "2 x 2g.10gb has no non-overlapping placement on TOY's 4 memory slices",
    )


def _maximal_mixes(model_name: str) -> int:
    model = catalog().model(model_name)
    profiles = [p for p in model.mig_profiles if "+" not in p.name]
    fits = []
    for counts in itertools.product(*(range(p.max_instances + 1) for p in profiles)):
        layout = {p.name: c for p, c in zip(profiles, counts) if c}
        if layout and layout_fits(model, layout)[0]:
            fits.append(counts)
    return sum(1 for c in fits if not any(o != c and all(a >= b for a, b in zip(o, c)) for o in fits))


def test_28_maximal_mixes_on_seven_slice_gpus() -> None:
    """reference §4.2 derives 28 maximal profile mixes from the placement table."""
    assert _maximal_mixes("A100-40GB") == 28
    assert _maximal_mixes("H100-80GB") == 28
