"""Resource-name semantics: classify, is_gpu_resource, MIG profile parsing, suspicious names."""

from __future__ import annotations

import pytest

from gpuplane.gpu.resources import (
    KNOWN_GPU_RESOURCES,
    GpuResource,
    MigProfileName,
    classify,
    is_gpu_resource,
    parse_mig_profile,
    suspicious_gpu_name,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nvidia.com/gpu", GpuResource("nvidia.com/gpu", "nvidia", "gpu")),
        ("nvidia.com/gpu.shared", GpuResource("nvidia.com/gpu.shared", "nvidia", "shared")),
        ("nvidia.com/mig-3g.40gb", GpuResource("nvidia.com/mig-3g.40gb", "nvidia", "mig", "3g.40gb")),
        (
            "nvidia.com/mig-1g.10gb.me",
            GpuResource("nvidia.com/mig-1g.10gb.me", "nvidia", "mig", "1g.10gb+me"),
        ),
        (
            "nvidia.com/mig-1g.24gb.me.all",
            GpuResource("nvidia.com/mig-1g.24gb.me.all", "nvidia", "mig", "1g.24gb+me.all"),
        ),
        (
            "nvidia.com/mig-1g.24gb-me",
            GpuResource("nvidia.com/mig-1g.24gb-me", "nvidia", "mig", "1g.24gb-me"),
        ),
        (
            "nvidia.com/mig-2g.48gb.gfx",
            GpuResource("nvidia.com/mig-2g.48gb.gfx", "nvidia", "mig", "2g.48gb+gfx"),
        ),
        (
            "nvidia.com/mig-1g.5gb.shared",
            GpuResource("nvidia.com/mig-1g.5gb.shared", "nvidia", "shared", "1g.5gb"),
        ),
        # compute-instance subdivisions are never registered by the plugin (C != G)
        ("nvidia.com/mig-1c.3g.20gb", GpuResource("nvidia.com/mig-1c.3g.20gb", "nvidia", "unknown")),
        ("nvidia.com/gpus", GpuResource("nvidia.com/gpus", "nvidia", "unknown")),
        ("nvidia.com/gpumem", GpuResource("nvidia.com/gpumem", "hami", "gpumem")),
        ("nvidia.com/gpumem-percentage", GpuResource("nvidia.com/gpumem-percentage", "hami", "gpumem")),
        ("nvidia.com/gpucores", GpuResource("nvidia.com/gpucores", "hami", "gpucores")),
        ("amd.com/gpu", GpuResource("amd.com/gpu", "amd", "gpu")),
        ("gpu.intel.com/i915", GpuResource("gpu.intel.com/i915", "intel", "gpu")),
        ("gpu.intel.com/xe", GpuResource("gpu.intel.com/xe", "intel", "gpu")),
        ("gpu.intel.com/xe_monitoring", GpuResource("gpu.intel.com/xe_monitoring", "intel", "monitoring")),
        ("aws.amazon.com/neuron", GpuResource("aws.amazon.com/neuron", "", "other-accelerator")),
        ("cpu", None),
        ("memory", None),
        ("hugepages-2Mi", None),
        ("example.com/foo", None),
    ],
)
def test_classify(name: str, expected: GpuResource | None) -> None:
    assert classify(name) == expected


def test_is_gpu_resource_counts_devices_only() -> None:
    assert is_gpu_resource("nvidia.com/gpu")
    assert is_gpu_resource("nvidia.com/mig-1g.5gb")
    assert is_gpu_resource("nvidia.com/gpu.shared")
    assert is_gpu_resource("amd.com/gpu")
    assert is_gpu_resource("gpu.intel.com/i915")
    assert not is_gpu_resource("nvidia.com/gpumem")
    assert not is_gpu_resource("nvidia.com/gpucores")
    assert not is_gpu_resource("nvidia.com/gpus")
    assert not is_gpu_resource("cpu")


def test_known_resources_classify_as_known() -> None:
    for name in KNOWN_GPU_RESOURCES:
        info = classify(name)
        assert info is not None and info.kind != "unknown", name
        assert suspicious_gpu_name(name) is None


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("3g.40gb", MigProfileName(3, 40)),
        ("1g.10gb+me", MigProfileName(1, 10, ("+me",))),
        ("1g.24gb+me.all", MigProfileName(1, 24, ("+me.all",))),
        ("1g.24gb-me", MigProfileName(1, 24, ("-me",))),
        ("4g.96gb+gfx", MigProfileName(4, 96, ("+gfx",))),
        ("1c.3g.20gb", MigProfileName(3, 20, (), 1)),
        ("7g.141gb", MigProfileName(7, 141)),
        ("3g.20", None),
        ("4c.3g.20gb", None),
        ("1g.5gb+xx", None),
        ("1g.5gb+me+me", None),
        ("", None),
    ],
)
def test_parse_mig_profile(profile: str, expected: MigProfileName | None) -> None:
    assert parse_mig_profile(profile) == expected


def test_profile_name_round_trip() -> None:
    p = parse_mig_profile("1g.24gb+me.all")
    assert p is not None
    assert p.name == "1g.24gb+me.all"
    assert p.media_extensions == ("me.all",)
    assert p.resource_name == "nvidia.com/mig-1g.24gb.me.all"
    ci = parse_mig_profile("1c.3g.20gb")
    assert ci is not None and ci.name == "1c.3g.20gb" and ci.gi_name == "3g.20gb"


@pytest.mark.parametrize(
    ("name", "intended"),
    [
        ("nvidia.com/gpus", "nvidia.com/gpu"),
        ("nvidia/gpu", "nvidia.com/gpu"),
        ("gpu", "nvidia.com/gpu"),
        ("NVIDIA.com/gpu", "nvidia.com/gpu"),
        ("nvidia.com/GPU", "nvidia.com/gpu"),
        ("amd.com/gpus", "amd.com/gpu"),
        ("alpha.kubernetes.io/nvidia-gpu", "nvidia.com/gpu"),
        ("nvidia.com/gpu.share", "nvidia.com/gpu.shared"),
        ("intel.com/gpu", "gpu.intel.com/i915"),
        ("nvidia.com/mig-1g.10gb+me", "nvidia.com/mig-1g.10gb.me"),
        ("nvidia.com/mig-3g.40GB", "nvidia.com/mig-3g.40gb"),
        ("nvidia.com/1g.5gb", "nvidia.com/mig-1g.5gb"),
        ("nvidia.com/mig-1c.3g.20gb", "nvidia.com/mig-3g.20gb"),
        ("nvidia.com/gpu", None),
        ("nvidia.com/mig-2g.20gb", None),
        ("nvidia.com/gpu.shared", None),
        ("cpu", None),
        ("example.com/foo", None),
        ("nvidia.com/GA102GL_A10", None),
    ],
)
def test_suspicious_gpu_name(name: str, intended: str | None) -> None:
    assert suspicious_gpu_name(name) == intended
