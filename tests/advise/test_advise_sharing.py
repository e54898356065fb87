"""advise sharing: per-workload decisions, configs that the upstream-shaped parsers accept."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.advise.sharing import (
    SharingInputError,
    Workload,
    advise_sharing,
    load_workloads,
    parse_workload,
    smallest_mig_profile,
)
from gpuplane.gpu.catalog import catalog
from gpuplane.gpu.device_plugin import configs_from_configmap
from gpuplane.gpu.mig import parse_mig_parted_config

A100_80 = catalog().model("A100-80GB")
L4 = catalog().model("L4")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def one(w: Workload, model=A100_80, **kw):
    return advise_sharing([w], model, **kw)


def test_tenants_get_mig_slices_sized_by_memory_and_compute() -> None:
    adv = one(Workload("nb", mem_gb=10, util_pct=15, isolation="tenant", latency="interactive", count=20))
    assert adv.recommendation == "mig"
    assert adv.workloads[0].profile == "2g.20gb"  # 1g.10gb has 1/7 = 14% of the SMs < 15%
    assert adv.gpus_by_mode == {"mig": 7}  # 20 x 2g.20gb, 3 per GPU
    _configs, problems = parse_mig_parted_config(adv.config["mig_parted"])
    assert problems == []
    assert adv.config["device_plugin_mig_strategy"] == "mixed"


def test_smallest_profile() -> None:
    assert smallest_mig_profile(A100_80, 9, 10).name == "1g.10gb"
    assert smallest_mig_profile(A100_80, 15, 10).name == "1g.20gb"
    assert smallest_mig_profile(A100_80, 50, 10) is None  # only 7g.80gb, the whole GPU
    assert smallest_mig_profile(L4, 1, 1) is None


def test_tenants_without_mig_get_whole_gpus() -> None:
    adv = one(Workload("nb", 10, 15, isolation="tenant", count=4), model=L4)
    assert adv.recommendation == "none"
    assert adv.workloads[0].gpus == 4
    assert adv.workloads[0].reasons == [
        "isolation between tenants and L4 does not support MIG: time-slicing and MPS give no fault isolation, "
        "so each tenant gets whole GPUs"
    ]


def test_low_util_batch_gets_time_slicing_config() -> None:
    adv = one(Workload("embed", 4, 20, count=12), model=L4)
    assert adv.recommendation == "time-slicing"
    a = adv.workloads[0]
    assert (a.replicas, a.gpus) == (5, 3)  # min(24 GB / 4, 100 / 20) = 5 replicas
    parsed = configs_from_configmap(adv.config["device_plugin_configmap"])
    cfg, problems = parsed["time-slicing"]
    assert problems == []
    assert cfg.sharing_mode == "timeSlicing" and cfg.replicas_for("nvidia.com/gpu") == 5
    assert cfg.fail_requests_greater_than_one is True


def test_team_isolation_without_mig_gets_mps() -> None:
    adv = one(Workload("svc", 6, 30, isolation="team", count=6), model=L4)
    assert adv.recommendation == "mps"
    cfg, problems = configs_from_configmap(adv.config["device_plugin_configmap"])["mps"]
    assert problems == []
    assert cfg.sharing_mode == "mps" and cfg.replicas_for("nvidia.com/gpu") == 3


def test_big_or_busy_workloads_keep_whole_gpus() -> None:
    adv = advise_sharing([Workload("llm", 140, 90, count=2), Workload("train", 30, 95, count=3)], A100_80)
    assert [(a.mode, a.gpus) for a in adv.workloads] == [("none", 4), ("none", 3)]
    assert adv.recommendation == "none"


def test_dra_for_mixed_modes_on_new_clusters() -> None:
    ws = load_workloads(str(FIXTURES / "advise" / "workloads.yaml"))
    adv = advise_sharing(ws, A100_80, k8s_version="1.34", dra_driver=True)
    assert adv.recommendation == "dra"
    templates = adv.config["resource_claim_templates"]
    assert templates[0]["apiVersion"] == "resource.k8s.io/v1"
    assert templates[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "mig.nvidia.com",
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '2g.20gb'"}}],
    }
    sharing = templates[1]["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]
    assert sharing == {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}


def test_old_cluster_excludes_dra() -> None:
    ws = load_workloads(str(FIXTURES / "advise" / "workloads.yaml"))
    adv = advise_sharing(ws, A100_80, k8s_version="1.31", dra_driver=True)
    assert adv.recommendation != "dra" and "dra" not in adv.alternatives
    assert "DRA not considered: Kubernetes 1.31 is older than v1.34, where DRA became GA" in adv.reasons
    assert adv.recommendation not in adv.alternatives


def test_parse_workload_and_errors() -> None:
    w = parse_workload("name=nb,mem=10,util=15,isolation=tenant,latency=interactive,count=20")
    assert w == Workload("nb", 10.0, 15.0, "tenant", "interactive", 20)
    with pytest.raises(SharingInputError, match=r"^workload 'x': util= is required"):
        parse_workload("name=x,mem=4")
    with pytest.raises(
        SharingInputError, match=r"^workload 'x': isolation must be one of none, team, tenant$"
    ):
        parse_workload("name=x,mem=4,util=5,isolation=strict")
    with pytest.raises(SharingInputError, match=r"^workload 'x': unknown key\(s\) gpu"):
        parse_workload("name=x,mem=4,util=5,gpu=2")


# -- per-node MIG config (regression: GPU indices 0-6 across the pool) ------------------------


def test_s1_mig_config_is_per_node_and_covers_every_gpu() -> None:
    """mig-parted applies per node: 7 GPUs of 2g.20gb on 8-GPU nodes is one node, all 8 GPUs
    configured (devices: all), one label; before, devices 0-6 left GPU 7 unconfigured."""
    adv = one(Workload("nb", mem_gb=10, util_pct=15, isolation="tenant", latency="interactive", count=20))
    assert adv.config["mig_parted"] == {
        "version": "v1",
        "mig-configs": {
            "gpuplane-plan": [{"devices": "all", "mig-enabled": True, "mig-devices": {"2g.20gb": 3}}]
        },
    }
    assert adv.config["mig_node_labels"] == [
        {"config": "gpuplane-plan", "nodes": 1, "label": "nvidia.com/mig.config=gpuplane-plan"}
    ]
    assert adv.gpus_by_mode == {"mig": 7}
    assert (
        "MIG layout: 7 A100-80GB GPUs needed, on 1 node of 8 GPUs; mig-parted applies per node (label each node "
        "nvidia.com/mig.config=<config>), so every GPU of a labelled node is configured (4 x 2g.20gb spare)"
    ) in adv.reasons
    assert parse_mig_parted_config(adv.config["mig_parted"])[1] == []


def test_per_node_configs_differ_when_layouts_differ() -> None:
    from gpuplane.advise.mig_planner import FleetEntry, per_node_mig_parted, plan_mig

    # 4 x 3g.40gb + 1 x 1g.10gb on 2-GPU nodes: GPU layouts {3g:2}, {3g:2}, {1g:1}
    plan = plan_mig([FleetEntry(A100_80)], {"3g.40gb": 4, "1g.10gb": 1})
    parted, configs = per_node_mig_parted(plan, 2)
    assert [(c.name, c.nodes) for c in configs] == [("gpuplane-plan-1", 1), ("gpuplane-plan-2", 1)]
    entries = parted["mig-configs"]
    assert entries["gpuplane-plan-1"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}
    ]
    node2 = entries["gpuplane-plan-2"]
    assert sorted(i for e in node2 for i in (e["devices"] if e["devices"] != "all" else [0, 1])) == [0, 1]
    assert parse_mig_parted_config(parted)[1] == []


def test_s1_shows_smaller_slices_the_utilisation_threshold_excluded() -> None:
    adv = one(Workload("nb", mem_gb=10, util_pct=15, isolation="tenant", latency="interactive", count=20))
    nb = adv.workloads[0]
    assert nb.mig_alternatives == [
        {"profile": "1g.10gb", "per_gpu": 7, "gpus": 3, "sm_pct": 14.3},
        {"profile": "1g.20gb", "per_gpu": 4, "gpus": 5, "sm_pct": 14.3},
    ]
    assert nb.reasons[-1] == (
        "alternative if 14.3% of the SMs is enough for a typical 15%: 1g.10gb x7/GPU (3 GPUs) or "
        "1g.20gb x4/GPU (5 GPUs), instead of 2g.20gb x3/GPU"
    )
    # A workload the threshold did not constrain gets no alternative.
    assert (
        one(Workload("s", mem_gb=9, util_pct=10, isolation="tenant", count=7)).workloads[0].mig_alternatives
        == []
    )


def test_gpus_per_node_is_validated() -> None:
    with pytest.raises(SharingInputError, match=r"^--gpus-per-node 0: must be a whole number >= 1$"):
        one(Workload("nb", mem_gb=10, util_pct=15, isolation="tenant"), gpus_per_node=0)
