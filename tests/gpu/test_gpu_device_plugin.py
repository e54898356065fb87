"""Device-plugin config parsing: every upstream example, and invalid configs with exact messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuplane.gpu.device_plugin import configs_from_configmap, parse_device_plugin_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gpu" / "device-plugin"
UPSTREAM = Path("corpus") / "upstream" / "nvidia"

# file -> (mig_strategy, sharing_mode, exposed names, replicas of nvidia.com/gpu, failRequestsGreaterThanOne)
UPSTREAM_CONFIGS = {
    "k8s-device-plugin/config-flags-example.yaml": ("none", None, {"nvidia.com/gpu"}, 1, False),
    "k8s-device-plugin/dp-example-config0.yaml": ("none", None, {"nvidia.com/gpu"}, 1, False),
    "k8s-device-plugin/dp-example-config1.yaml": ("mixed", None, {"nvidia.com/gpu"}, 1, False),
    "k8s-device-plugin/time-slicing-replicas10.yaml": ("none", "timeSlicing", {"nvidia.com/gpu"}, 10, False),
    "k8s-device-plugin/time-slicing-rename-by-default.yaml": (
        "none",
        "timeSlicing",
        {"nvidia.com/gpu.shared"},
        10,
        False,
    ),
    "k8s-device-plugin/mps-replicas10.yaml": ("none", "mps", {"nvidia.com/gpu"}, 10, True),
    "k8s-device-plugin/mps-rename-by-default.yaml": ("none", "mps", {"nvidia.com/gpu.shared"}, 10, True),
    "gpu-operator/time-slicing-plugin-config.yaml": ("none", "timeSlicing", {"nvidia.com/gpu"}, 10, False),
}


@pytest.mark.parametrize("rel", sorted(UPSTREAM_CONFIGS))
def test_upstream_examples_parse_cleanly(shared_dir: Path, rel: str) -> None:
    cfg, problems = parse_device_plugin_config((shared_dir / UPSTREAM / rel).read_text())
    assert problems == []
    assert cfg is not None
    mig, mode, exposed, replicas, fail_gt1 = UPSTREAM_CONFIGS[rel]
    assert cfg.mig_strategy == mig
    assert cfg.sharing_mode == mode
    assert cfg.exposed_resource_names() == exposed
    assert cfg.replicas_for("nvidia.com/gpu") == replicas
    assert cfg.fail_requests_greater_than_one is fail_gt1


def test_rename_by_default_sets_effective_rename(shared_dir: Path) -> None:
    cfg, _ = parse_device_plugin_config(
        (shared_dir / UPSTREAM / "k8s-device-plugin/time-slicing-rename-by-default.yaml").read_text()
    )
    assert cfg is not None and cfg.rename_by_default
    [res] = cfg.shared
    assert (res.name, res.rename, res.replicas, res.devices) == (
        "nvidia.com/gpu",
        "nvidia.com/gpu.shared",
        10,
        "all",
    )


def test_gpu_operator_docs_configmap(shared_dir: Path) -> None:
    """NVIDIA's gpu-sharing.rst example: its a100-40gb entry asks 1 replica, which the plugin rejects."""
    cm = yaml.safe_load(
        (shared_dir / UPSTREAM / "cloud-native-docs/time-slicing-config.configmap.yaml").read_text()
    )
    parsed = configs_from_configmap(cm)
    assert sorted(parsed) == ["a100-40gb", "tesla-t4"]
    t4_cfg, t4_problems = parsed["tesla-t4"]
    assert t4_problems == [] and t4_cfg is not None and t4_cfg.replicas_for("nvidia.com/gpu") == 4
    a100_cfg, a100_problems = parsed["a100-40gb"]
    assert [(p.message, p.path, p.severity) for p in a100_problems] == [
        ("number of replicas must be >= 2", ("sharing", "timeSlicing", "resources", 1, "replicas"), "error"),
    ]
    # migStrategy is not in the file (the operator passes MIG_STRATEGY), so MIG names are not flagged.
    assert a100_cfg is not None and not a100_cfg.mig_strategy_set
    assert a100_cfg.exposed_resource_names() == {
        "nvidia.com/gpu",
        "nvidia.com/mig-2g.10gb",
        "nvidia.com/mig-3g.20gb",
        "nvidia.com/mig-7g.40gb",
    }
    assert configs_from_configmap(cm["data"]).keys() == parsed.keys()


E = "error"
W = "warning"
INVALID = {
    "unknown-version.yaml": (False, [("unknown version: v2", ("version",), E)]),
    "replicas-one.yaml": (
        True,
        [("number of replicas must be >= 2", ("sharing", "timeSlicing", "resources", 0, "replicas"), E)],
    ),
    "no-resources.yaml": (True, [("no resources specified", ("sharing", "timeSlicing"), E)]),
    "missing-name-and-replicas.yaml": (
        True,
        [
            ("no resource name specified", ("sharing", "timeSlicing", "resources", 0), E),
            ("no replicas specified", ("sharing", "timeSlicing", "resources", 1), E),
        ],
    ),
    "bad-flags.yaml": (
        True,
        [
            ("unknown MIG strategy: mixd", ("flags", "migStrategy"), E),
            ("invalid --device-discovery-strategy option cuda", ("flags", "deviceDiscoveryStrategy"), E),
            ("invalid --device-id-strategy option: serial", ("flags", "plugin", "deviceIDStrategy"), E),
        ],
    ),
    "both-sharing-modes.yaml": (
        True,
        [
            (
                "timeSlicing and mps are mutually exclusive; the device plugin uses mps and ignores timeSlicing",
                ("sharing",),
                E,
            ),
        ],
    ),
    "mps-on-mig.yaml": (
        True,
        [
            (
                "sharing using MPS is not supported for MIG devices",
                ("sharing", "mps", "resources", 0, "name"),
                E,
            ),
            ("using --mig-strategy=mixed is not supported with MPS", ("flags", "migStrategy"), E),
        ],
    ),
    "bad-devices.yaml": (
        True,
        [
            (
                "devices set as 'some' but the only valid string input is 'all'",
                ("sharing", "timeSlicing", "resources", 0, "devices"),
                E,
            ),
            (
                "devices set as '0' but a count of devices must be > 0",
                ("sharing", "timeSlicing", "resources", 1, "devices"),
                E,
            ),
        ],
    ),
    "ignored-settings.yaml": (
        True,
        [
            ("unknown field 'pluginn' is ignored by the device plugin", ("flags", "pluginn"), W),
            (
                "Customizing the 'resources' field is not yet supported in the config. Ignoring...",
                ("resources",),
                W,
            ),
            (
                "rename is ignored: the device plugin disables resource renaming in the config "
                "(DisableResourceNamingInConfig); use renameByDefault",
                ("sharing", "timeSlicing", "resources", 0, "rename"),
                W,
            ),
            (
                "nvidia.com/mig-1g.5gb is only advertised with migStrategy mixed (migStrategy is none); this entry has no effect",
                ("sharing", "timeSlicing", "resources", 1, "name"),
                W,
            ),
            (
                "nvidia.com/gpus is not a resource the NVIDIA device plugin advertises; this entry has no effect",
                ("sharing", "timeSlicing", "resources", 2, "name"),
                W,
            ),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_configs_exact_messages(name: str) -> None:
    cfg, problems = parse_device_plugin_config((FIXTURES / name).read_text())
    parsed, expected = INVALID[name]
    assert (cfg is not None) is parsed
    assert [(p.message, p.path, p.severity) for p in problems] == expected


def test_fixture_set_is_complete() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.yaml")) == sorted(INVALID)


def test_ignored_settings_still_yield_the_effective_config() -> None:
    cfg, _ = parse_device_plugin_config((FIXTURES / "ignored-settings.yaml").read_text())
    assert cfg is not None
    # "gpu" is prefixed to nvidia.com/gpu; its rename: is ignored upstream.
    assert [(r.name, r.rename, r.replicas) for r in cfg.shared] == [
        ("nvidia.com/gpu", None, 3),
        ("nvidia.com/mig-1g.5gb", None, 2),
        ("nvidia.com/gpus", None, 2),
    ]


def test_mps_defaults_fail_requests_and_explicit_false_wins() -> None:
    cfg, problems = parse_device_plugin_config(
        {
            "version": "v1",
            "sharing": {
                "mps": {
                    "failRequestsGreaterThanOne": False,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        }
    )
    assert problems == [] and cfg is not None
    assert cfg.sharing_mode == "mps" and cfg.fail_requests_greater_than_one is False


def test_mps_with_single_strategy_warns() -> None:
    cfg, problems = parse_device_plugin_config(
        "version: v1\nflags: {migStrategy: single}\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n"
    )
    assert cfg is not None
    assert [(p.path, p.severity) for p in problems] == [(("flags", "migStrategy"), "warning")]
    assert problems[0].message.startswith("sharing using MPS is not supported for MIG devices")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: v1\nsharing: [\n", "unmarshal error: "),
        ("- a\n- b\n", "unmarshal error: the config must be a mapping"),
    ],
)
def test_unreadable_documents(text: str, message: str) -> None:
    cfg, problems = parse_device_plugin_config(text)
    assert cfg is None
    assert len(problems) == 1 and problems[0].message.startswith(message)
    assert "\n" not in problems[0].message


def test_empty_document_is_the_default_config() -> None:
    cfg, problems = parse_device_plugin_config("")
    assert problems == [] and cfg is not None
    assert (cfg.version, cfg.mig_strategy, cfg.sharing_mode) == ("v1", "none", None)
    assert cfg.exposed_resource_names() == {"nvidia.com/gpu"}


def test_resource_name_limits() -> None:
    long_name = "nvidia.com/" + "a" * 60
    _, problems = parse_device_plugin_config(
        {
            "sharing": {
                "timeSlicing": {
                    "resources": [{"name": long_name, "replicas": 2}, {"name": "GPU_X", "replicas": 2}]
                }
            }
        }
    )
    assert [p.message for p in problems] == [
        f"fully-qualified resource name must be 63 characters or less: {long_name}",
        "incorrect format for resource name 'nvidia.com/GPU_X': must be a lowercase RFC 1123 subdomain",
    ]


def test_device_list_accepts_indexes_and_uuids() -> None:
    _, problems = parse_device_plugin_config(
        {
            "sharing": {
                "timeSlicing": {
                    "resources": [
                        {
                            "name": "nvidia.com/gpu",
                            "replicas": 2,
                            "devices": [
                                0,
                                "1",
                                "0:1",
                                "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763",
                                "MIG-GPU-b1028956-cfa2-0990-bf4a-5da9abb51763/3/0",
                            ],
                        }
                    ]
                }
            }
        }
    )
    assert [(p.message, p.severity) for p in problems] == [
        (
            "devices is ignored: the device plugin replicates all devices of a resource (DisableResourceNamingInConfig)",
            "warning",
        ),
    ]
    _, problems = parse_device_plugin_config(
        {
            "sharing": {
                "timeSlicing": {
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 2, "devices": ["GPU-x"]}]
                }
            }
        }
    )
    assert [p.message for p in problems] == ["unsupported type for device in devices list: GPU-x, string"]
    _, problems = parse_device_plugin_config(
        {
            "sharing": {
                "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2, "devices": [1.5]}]}
            }
        }
    )
    assert [p.message for p in problems] == ["unsupported type for device in devices list: , string"]
