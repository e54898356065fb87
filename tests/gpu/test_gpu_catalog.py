"""The hardware catalog: sources, lookups, MIG tables against the reference, instance types."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplane.gpu.catalog import Catalog, catalog, load_catalog


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return catalog()


def test_catalog_is_cached(cat: Catalog) -> None:
    assert catalog() is cat


def test_every_entry_has_a_source(cat: Catalog) -> None:
    for model in cat.models.values():
        assert model.source.strip(), model.name
        if model.mig_capable:
            assert model.geometry_source.strip(), model.name
    for it in cat.instance_types.values():
        assert it.source.strip(), it.name
    for comp in cat.cold_start.values():
        assert comp.source.strip(), comp.name


def test_brief_models_present(cat: Catalog) -> None:
    for name in (
        "A100-40GB",
        "A100-80GB",
        "A30",
        "H100-80GB",
        "H100-94GB",
        "H200-141GB",
        "B200",
        "L4",
        "L40S",
        "T4",
        "A10G",
        "V100-16GB",
        "V100-32GB",
        "H20",
        "GB200",
        "MI300X",
    ):
        assert name in cat.models


@pytest.mark.parametrize(
    ("query", "model"),
    [
        ("A100-40GB", "A100-40GB"),
        ("a100", "A100-40GB"),
        ("A100 80GB", "A100-80GB"),
        ("h100", "H100-80GB"),
        ("H100 NVL", "H100-94GB"),
        ("h200", "H200-141GB"),
        # GFD product label values (reference §2 and the brief)
        ("Tesla-T4", "T4"),
        ("NVIDIA-A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA-A100-PCIE-40GB", "A100-40GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100-80GB"),
        ("A100-SXM4-40GB-MIG-1g.5gb", "A100-40GB"),
        ("A100-SXM4-40GB-MIG-1g.5gb-SHARED", "A100-40GB"),
        ("NVIDIA-A100-SXM4-40GB-MIG-INVALID", "A100-40GB"),
        ("Tesla-T4-SHARED", "T4"),
        ("NVIDIA-A10G", "A10G"),
        ("NVIDIA-L4", "L4"),
        ("AMD_Instinct_MI300X_OAM", "MI300X"),
    ],
)
def test_model_lookup(cat: Catalog, query: str, model: str) -> None:
    found = cat.model(query)
    assert found is not None and found.name == model


def test_model_lookup_misses(cat: Catalog) -> None:
    assert cat.model("") is None
    assert cat.model("quantum-9000") is None


def test_every_gfd_product_maps_back(cat: Catalog) -> None:
    for model in cat.models.values():
        for product in model.gfd_products:
            assert cat.model(product) is model, product


def test_every_pci_id_maps_back(cat: Catalog) -> None:
    for model in cat.models.values():
        for pci in model.pci_device_ids:
            assert cat.model_for_pci_id(pci) is model
    assert cat.model_for_pci_id("0x20b010de").name == "A100-40GB"


def test_a100_40gb_mig_table(cat: Catalog) -> None:
    """[MIG-UG] A100 table + getting-started lgipp, exactly."""
    model = cat.model("A100-40GB")
    rows = {
        p.name: (p.profile_id, p.compute_slices, p.memory_slices, p.max_instances, p.placements, p.size)
        for p in model.mig_profiles
    }
    assert rows == {
        "1g.5gb": (19, 1, 1, 7, (0, 1, 2, 3, 4, 5, 6), 1),
        "1g.5gb+me": (20, 1, 1, 1, (0, 1, 2, 3, 4, 5, 6), 1),
        "1g.10gb": (15, 1, 2, 4, (0, 2, 4, 6), 2),
        "2g.10gb": (14, 2, 2, 3, (0, 2, 4), 2),
        "3g.20gb": (9, 3, 4, 2, (0, 4), 4),
        "4g.20gb": (5, 4, 4, 1, (0,), 4),
        "7g.40gb": (0, 7, 8, 1, (0,), 8),
    }
    assert model.memory_slices == 8 and model.total_compute_slices == 7
    assert cat.mig_profile("a100", "3g.20gb").memory_gb == 20.0


def test_same_name_different_shape(cat: Catalog) -> None:
    """1g.10gb is the 2-slice profile on A100-40GB but the 1-slice one on 80GB-class GPUs."""
    assert cat.mig_profile("A100-40GB", "1g.10gb").max_instances == 4
    assert cat.mig_profile("A100-80GB", "1g.10gb").max_instances == 7
    assert cat.mig_profile("H100-80GB", "1g.10gb").size == 1


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            "A100-80GB",
            {
                "1g.10gb": 7,
                "1g.10gb+me": 1,
                "1g.20gb": 4,
                "2g.20gb": 3,
                "3g.40gb": 2,
                "4g.40gb": 1,
                "7g.80gb": 1,
            },
        ),
        (
            "H100-80GB",
            {
                "1g.10gb": 7,
                "1g.10gb+me": 1,
                "1g.20gb": 4,
                "2g.20gb": 3,
                "3g.40gb": 2,
                "4g.40gb": 1,
                "7g.80gb": 1,
            },
        ),
        (
            "H100-94GB",
            {
                "1g.12gb": 7,
                "1g.12gb+me": 1,
                "1g.24gb": 4,
                "2g.24gb": 3,
                "3g.47gb": 2,
                "4g.47gb": 1,
                "7g.94gb": 1,
            },
        ),
        (
            "H200-141GB",
            {
                "1g.18gb": 7,
                "1g.18gb+me": 1,
                "1g.35gb": 4,
                "2g.35gb": 3,
                "3g.71gb": 2,
                "4g.71gb": 1,
                "7g.141gb": 1,
            },
        ),
        (
            "B200",
            {
                "1g.23gb": 7,
                "1g.23gb+me": 1,
                "1g.45gb": 4,
                "2g.45gb": 3,
                "3g.90gb": 2,
                "4g.90gb": 1,
                "7g.180gb": 1,
            },
        ),
        (
            "GB200",
            {
                "1g.23gb": 7,
                "1g.23gb+me": 1,
                "1g.47gb": 4,
                "2g.47gb": 3,
                "3g.93gb": 2,
                "4g.93gb": 1,
                "7g.186gb": 1,
            },
        ),
        ("A30", {"1g.6gb": 4, "1g.6gb+me": 1, "2g.12gb": 2, "2g.12gb+me": 1, "4g.24gb": 1}),
    ],
)
def test_mig_profile_counts_match_reference(cat: Catalog, model: str, expected: dict[str, int]) -> None:
    assert {p.name: p.max_instances for p in cat.model(model).mig_profiles} == expected


def test_h100_placements_and_sms(cat: Catalog) -> None:
    h100 = cat.model("H100-80GB")
    assert [
        (p.name, p.placements, p.size, p.multiprocessors) for p in h100.mig_profiles if "+" not in p.name
    ] == [
        ("1g.10gb", (0, 1, 2, 3, 4, 5, 6), 1, 16),
        ("1g.20gb", (0, 2, 4, 6), 2, 26),
        ("2g.20gb", (0, 2, 4), 2, 32),
        ("3g.40gb", (0, 4), 4, 60),
        ("4g.40gb", (0,), 4, 64),
        ("7g.80gb", (0,), 8, 132),
    ]
    assert cat.mig_profile("A30", "2g.12gb").placements == (0, 2)


# The MIG user guide (supported-mig-profiles.html, "H100 MIG Profiles") gives one table of fractions
# and instance counts for H100-SXM5 80GB and H100-PCIE 80GB: compute slices of 7, memory slices of 8.
H100_GUIDE_SHAPES = [
    # (profile, compute slices, memory slices, max instances)
    ("1g.10gb", 1, 1, 7),
    ("1g.10gb+me", 1, 1, 1),
    ("1g.20gb", 1, 2, 4),
    ("2g.20gb", 2, 2, 3),
    ("3g.40gb", 3, 4, 2),
    ("4g.40gb", 4, 4, 1),
    ("7g.80gb", 7, 8, 1),
]


@pytest.mark.parametrize(
    ("model", "board", "profiles"),
    [
        # `nvidia-smi mig -lgip` on an H100 80GB HBM3 (reference §4.2): (profile, GI id, GiB, SMs)
        (
            "H100-80GB",
            (132, "HBM3", "sxm5", ("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-SXM5-80GB")),
            [
                ("1g.10gb", 19, 9.75, 16),
                ("1g.10gb+me", 20, 9.75, 16),
                ("1g.20gb", 15, 19.62, 26),
                ("2g.20gb", 14, 19.62, 32),
                ("3g.40gb", 9, 39.5, 60),
                ("4g.40gb", 5, 39.5, 64),
                ("7g.80gb", 0, 79.25, 132),
            ],
        ),
        # `nvidia-smi mig -lgip` on an "NVIDIA H100 PCIe" (scaleway/docs-content
        # compute/gpu/how-to/use-nvidia-mig-technology.mdx): the 1g.20gb slice keeps 14 SMs.
        (
            "H100-PCIe-80GB",
            (114, "HBM2e", "pcie", ("NVIDIA-H100-PCIe",)),
            [
                ("1g.10gb", 19, 9.62, 14),
                ("1g.10gb+me", 20, 9.62, 14),
                ("1g.20gb", 15, 19.5, 14),
                ("2g.20gb", 14, 19.5, 30),
                ("3g.40gb", 9, 39.25, 46),
                ("4g.40gb", 5, 39.25, 62),
                ("7g.80gb", 0, 79.0, 114),
            ],
        ),
    ],
)
def test_h100_variants_match_the_mig_user_guide(
    cat: Catalog, model: str, board: tuple[int, str, str, tuple[str, ...]], profiles: list[tuple]
) -> None:
    h100 = cat.model(model)
    assert (h100.multiprocessors, h100.memory_type, h100.form_factor, h100.gfd_products) == board
    assert h100.memory_gb == 80 and (h100.memory_slices, h100.total_compute_slices) == (8, 7)
    assert [(p.name, p.compute_slices, p.memory_slices, p.max_instances) for p in h100.mig_profiles] == (
        H100_GUIDE_SHAPES
    )
    assert [
        (p.name, p.profile_id, p.memory_gib_reported, p.multiprocessors) for p in h100.mig_profiles
    ] == profiles
    # `nvidia-smi mig -lgipp` is the same on both boards.
    assert [(p.placements, p.size) for p in h100.mig_profiles] == [
        ((0, 1, 2, 3, 4, 5, 6), 1),
        ((0, 1, 2, 3, 4, 5, 6), 1),
        ((0, 2, 4, 6), 2),
        ((0, 2, 4), 2),
        ((0, 4), 4),
        ((0,), 4),
        ((0,), 8),
    ]


@pytest.mark.parametrize(
    ("query", "model"),
    [
        ("NVIDIA-H100-PCIe", "H100-PCIe-80GB"),
        ("NVIDIA-H100-PCIe-MIG-2g.20gb", "H100-PCIe-80GB"),
        ("h100-pcie", "H100-PCIe-80GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100-80GB"),
        ("h100-sxm", "H100-80GB"),
        ("h100", "H100-80GB"),
    ],
)
def test_h100_pcie_and_sxm_are_told_apart(cat: Catalog, query: str, model: str) -> None:
    assert cat.model(query).name == model


def test_h100_pci_ids_per_board(cat: Catalog) -> None:
    # pci.ids (go-nvlib default_pci.ids): 2330 H100 SXM5 80GB, 2331 H100 PCIe, 2322 H800 PCIe, 2324 H800.
    assert cat.model_for_pci_id("0x233010DE").name == "H100-80GB"
    assert cat.model_for_pci_id("0x233110DE").name == "H100-PCIe-80GB"
    assert cat.model_for_pci_id("0x232210DE").name == "H100-PCIe-80GB"
    assert cat.model_for_pci_id("0x232410DE").name == "H100-80GB"


def test_cloud_h100_instance_types_carry_the_sxm5_board(cat: Catalog) -> None:
    # AWS p5 (Karpenter instance-types reference: h100, 81920 MiB), GCP A3 High/Mega and Azure ND H100 v5
    # are HGX H100 SXM5 systems; Azure NC H100 v5 carries the H100 NVL (94GB).
    for name in ("p5.48xlarge", "p5.4xlarge", "a3-highgpu-8g", "a3-megagpu-8g", "Standard_ND96isr_H100_v5"):
        assert cat.instance(name).gpu_model == "H100-80GB", name
    assert cat.instance("Standard_NC40ads_H100_v5").gpu_model == "H100-94GB"
    assert not [it.name for it in cat.instance_types.values() if it.gpu_model == "H100-PCIe-80GB"]


def test_non_mig_models(cat: Catalog) -> None:
    for name in ("T4", "L4", "L40S", "A10G", "V100-16GB", "MI300X"):
        model = cat.model(name)
        assert not model.mig_capable and model.mig_profiles == ()


def test_instance_types_reference_known_models(cat: Catalog) -> None:
    assert len(cat.instance_types) >= 80
    for it in cat.instance_types.values():
        assert it.gpu_model in cat.models, it.name
        assert it.gpu_count >= 1
        assert it.provider in ("aws", "gcp", "azure")
    p4d = cat.instance("p4d.24xlarge")
    assert (p4d.provider, p4d.gpu_model, p4d.gpu_count, p4d.vcpus, p4d.memory_gib) == (
        "aws",
        "A100-40GB",
        8,
        96,
        1152.0,
    )
    assert cat.instance("a2-highgpu-8g").gpu_model == "A100-40GB"
    assert cat.instance("a3-ultragpu-8g").gpu_model == "H200-141GB"
    nd = cat.instance("Standard_ND96asr_v4")
    assert (nd.provider, nd.gpu_model, nd.gpu_count) == ("azure", "A100-40GB", 8)
    assert cat.instance("m5.large") is None


@pytest.mark.parametrize(
    ("labels", "model"),
    [
        ({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, "H100-80GB"),
        ({"nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb"}, "A100-40GB"),
        ({"node.kubernetes.io/instance-type": "p4de.24xlarge"}, "A100-80GB"),
        ({"beta.kubernetes.io/instance-type": "g5.xlarge"}, "A10G"),
        (
            {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "81920"},
            "A100-80GB",
        ),
        (
            {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "40960"},
            "A100-40GB",
        ),
        ({"karpenter.k8s.aws/instance-gpu-name": "l40s"}, "L40S"),
        ({"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}, "T4"),
        ({"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}, "H100-80GB"),
        ({"k8s.amazonaws.com/accelerator": "nvidia-tesla-v100"}, "V100-16GB"),
        ({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"}, "MI300X"),
        # GFD wins over a conflicting instance-type label
        ({"nvidia.com/gpu.product": "Tesla-T4", "node.kubernetes.io/instance-type": "p5.48xlarge"}, "T4"),
    ],
)
def test_model_for_node_labels(cat: Catalog, labels: dict[str, str], model: str) -> None:
    found = cat.model_for_node_labels(labels)
    assert found is not None and found.name == model


def test_model_for_node_labels_ambiguous_or_unknown(cat: Catalog) -> None:
    # a100 without memory is 40GB or 80GB: do not guess
    assert cat.model_for_node_labels({"karpenter.k8s.aws/instance-gpu-name": "a100"}) is None
    assert cat.model_for_node_labels({"kubernetes.io/hostname": "n1"}) is None
    assert cat.model_for_node_labels({"node.kubernetes.io/instance-type": "m5.large"}) is None


def test_cold_start_components(cat: Catalog) -> None:
    gpu = cat.cold_start["gpu_stack_ready"]
    assert (gpu.low, gpu.typical, gpu.high, gpu.unit) == (None, None, 900, "s")
    assert cat.cold_start["image_pull_per_gib"].typical == 60
    assert cat.cold_start["vm_provisioning"].high == 240
    for comp in cat.cold_start.values():
        values = [v for v in (comp.low, comp.typical, comp.high) if v is not None]
        assert values == sorted(values), comp.name


def test_karpenter_memory_matches_reference(cat: Catalog, shared_dir: Path) -> None:
    """Every (gpu-name, MiB) pair in reference §8.2 resolves to a model of that memory class."""
    text = (shared_dir / "reference" / "nvidia-gpu-stack.md").read_text()
    section = text.split("### 8.2", 1)[1].split("### 8.3", 1)[0]
    pairs = set(re.findall(r"\| \d+ × ([a-z0-9]+) \| (\d{5,6}) \|", section))
    assert ("a100", "40960") in pairs
    for gpu_name, mib in pairs:
        model = cat.model_for_node_labels(
            {"karpenter.k8s.aws/instance-gpu-name": gpu_name, "karpenter.k8s.aws/instance-gpu-memory": mib}
        )
        assert model is not None, (gpu_name, mib)
        assert abs(model.memory_gb * 1024 - int(mib)) / int(mib) < 0.15, (gpu_name, mib, model.name)


def test_load_catalog_from_other_dir(tmp_path: Path) -> None:
    for name in ("models.yaml", "instances.yaml", "cold_start.yaml"):
        src = Path(__file__).resolve().parents[2] / "src" / "gpuplane" / "gpu" / "data" / name
        (tmp_path / name).write_bytes(src.read_bytes())
    assert load_catalog(tmp_path).models.keys() == catalog().models.keys()
