"""advise mig: exact layouts on hand-computed cases, brute-force equivalence, mig-parted validity."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.advise.mig_configs import valid_configs
from gpuplane.advise.mig_planner import PlanInputError, parse_demand, parse_fleet, plan_mig
from gpuplane.gpu.catalog import catalog
from gpuplane.gpu.mig import layout_fits, parse_mig_parted_config


def plan(model: str, demand: str, gpus: int | None = None, **kw):
    return plan_mig(parse_fleet([model], gpus), parse_demand(demand), **kw)


def assert_valid(p) -> None:
    """Every GPU's mix fits per layout_fits, the layout hosts the demand exactly, mig-parted parses."""
    models = {e.model.name: e.model for e in p.fleet}
    placed: dict[str, int] = {}
    for g in p.layout:
        ok, reason = layout_fits(models[g.model], g.profiles)
        assert ok, reason
        for name, n in g.profiles.items():
            placed[name] = placed.get(name, 0) + n
    for name, n in p.demand.items():
        assert placed.get(name, 0) + p.unplaced.get(name, 0) == n
    configs, problems = parse_mig_parted_config(p.mig_parted())
    assert problems == []
    entries = configs["gpuplane-plan"]
    assert sum(len(e.devices) for e in entries if e.mig_enabled) == len(p.layout)


# Hand-computed (reference/nvidia-gpu-stack.md §4.2 placements):
# - 3g.20gb sits at slices 0 or 4 (4 slices); two of them fill a GPU, so the 4 x 1g.5gb need a 2nd GPU.
# - 1g.10gb occupies 2 slices at 0/2/4/6: 4 per GPU.
# - 2g.10gb x3 (pairs 0,1,2) + 1g.10gb at slice 6 = 7 SM slices; the second 1g.10gb needs a second GPU.
# - one media-extension instance per GPU; 4g.20gb only at slice 0 (max 1).
@pytest.mark.parametrize(
    ("model", "demand", "gpus"),
    [
        ("A100-40GB", "3g.20gb=2,1g.5gb=4", 2),
        ("A100-40GB", "7g.40gb=1,1g.5gb=7", 2),
        ("A100-40GB", "1g.10gb=5", 2),
        ("A100-40GB", "1g.5gb=7", 1),
        ("A100-40GB", "1g.5gb=8", 2),
        ("A100-40GB", "4g.20gb=1,3g.20gb=1", 1),
        ("A100-40GB", "4g.20gb=2", 2),
        ("A100-40GB", "1g.5gb+me=2", 2),
        ("A100-40GB", "2g.10gb=3,1g.10gb=1", 1),
        ("A100-40GB", "2g.10gb=3,1g.10gb=2", 2),
        ("A30", "2g.12gb=1,1g.6gb=2", 1),
        ("A30", "2g.12gb+me=1,1g.6gb+me=1", 2),
        ("H100-80GB", "3g.40gb=1,2g.20gb=1,1g.10gb=2", 1),
        ("H200-141GB", "3g.71gb=3", 2),
        ("B200", "1g.23gb=14,7g.180gb=1", 3),
    ],
)
def test_hand_computed_minimum(model: str, demand: str, gpus: int) -> None:
    p = plan(model, demand)
    assert p.feasible is True
    assert p.gpus_needed == gpus == len(p.layout)
    assert p.unplaced == {}
    assert_valid(p)


def test_exact_layout_and_json_shape() -> None:
    doc = plan("A100-40GB", "3g.20gb=2,1g.5gb=4").to_json()
    assert doc["feasible"] is True
    assert doc["gpus_needed"] == 2
    assert [(g["gpu"], g["profiles"]) for g in doc["layout"]] == [(0, {"1g.5gb": 4}), (1, {"3g.20gb": 2})]
    assert doc["layout"][1]["placements"] == [
        {"profile": "3g.20gb", "start": 0, "size": 4},
        {"profile": "3g.20gb", "start": 4, "size": 4},
    ]
    assert doc["mig_parted"] == {
        "version": "v1",
        "mig-configs": {
            "gpuplane-plan": [
                {"devices": [0], "mig-enabled": True, "mig-devices": {"1g.5gb": 4}},
                {"devices": [1], "mig-enabled": True, "mig-devices": {"3g.20gb": 2}},
            ]
        },
    }
    assert doc["unplaced"] == {}
    assert "reason" not in doc


def test_identical_gpus_grouped_in_mig_parted() -> None:
    p = plan("A100-80GB", "3g.40gb=6")
    assert p.mig_parted()["mig-configs"]["gpuplane-plan"] == [
        {"devices": [0, 1, 2], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}
    ]


def test_unknown_profile_is_infeasible_with_reason() -> None:
    doc = plan("A100-40GB", "3g.40gb=2").to_json()
    assert doc["feasible"] is False
    assert doc["gpus_needed"] is None
    assert doc["unplaced"] == {"3g.40gb": 2}
    assert doc["reason"] == (
        "A100-40GB has no MIG profile 3g.40gb "
        "(profiles: 1g.5gb, 1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)"
    )


def test_not_mig_capable_model() -> None:
    doc = plan("L4", "1g.5gb=1").to_json()
    assert doc["feasible"] is False
    assert doc["reason"] == "L4 does not support MIG"


def test_resource_names_gfd_product_and_me_profiles() -> None:
    p = plan("NVIDIA-A100-SXM4-80GB", "nvidia.com/mig-1g.10gb.me=1,nvidia.com/mig-3g.40gb=1,mig-1g.10gb=3")
    assert p.demand == {"1g.10gb+me": 1, "3g.40gb": 1, "1g.10gb": 3}
    assert p.fleet[0].model.name == "A100-80GB"
    assert p.gpus_needed == 1
    assert_valid(p)


def test_gpus_limit_gives_partial_layout() -> None:
    doc = plan("A100-40GB", "3g.20gb=2,1g.5gb=4", gpus=1).to_json()
    assert doc["feasible"] is False
    assert doc["gpus_needed"] == 2
    assert doc["layout"] == [
        {
            "gpu": 0,
            "model": "A100-40GB",
            "profiles": {"3g.20gb": 1, "1g.5gb": 4},
            "placements": [
                {"profile": "1g.5gb", "start": 0, "size": 1},
                {"profile": "1g.5gb", "start": 1, "size": 1},
                {"profile": "1g.5gb", "start": 2, "size": 1},
                {"profile": "1g.5gb", "start": 3, "size": 1},
                {"profile": "3g.20gb", "start": 4, "size": 4},
            ],
        }
    ]
    assert doc["unplaced"] == {"3g.20gb": 1}
    assert (
        doc["reason"]
        == "the demand needs 2 GPUs; the fleet has 1 x A100-40GB; best partial layout leaves 1 instance unplaced"
    )


def test_gpus_limit_that_fits_is_feasible() -> None:
    p = plan("A100-40GB", "3g.20gb=2,1g.5gb=4", gpus=2)
    assert p.feasible and p.gpus_needed == 2


def test_mixed_fleet_resolves_profiles_per_model() -> None:
    fleet = parse_fleet(["A100-80GB:1", "H100-80GB:4", "A30"])
    p = plan_mig(fleet, parse_demand("3g.40gb=3,1g.10gb=4,2g.12gb=2"))
    assert p.feasible and p.gpus_needed == 3
    by_model = {e["model"]: e["used"] for e in p.to_json()["fleet"]}
    assert by_model == {"A100-80GB": 1, "H100-80GB": 1, "A30": 1}
    assert_valid(p)
    entries = p.mig_parted()["mig-configs"]["gpuplane-plan"]
    assert entries[0]["device-filter"] == ["0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"]


def test_mixed_fleet_unknown_everywhere() -> None:
    p = plan_mig(parse_fleet(["A100-80GB", "A30"]), parse_demand("3g.20gb=1"))
    assert p.feasible is False
    assert p.reason.startswith(
        "no GPU model of the fleet has MIG profile 3g.20gb: A100-80GB has no MIG profile 3g.20gb"
    )


def test_mixed_fleet_over_capacity() -> None:
    p = plan_mig(parse_fleet(["A100-80GB:1", "H100-80GB:1"]), parse_demand("7g.80gb=3"))
    assert p.feasible is False
    assert p.gpus_needed == 3
    assert p.unplaced == {"7g.80gb": 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["Z100"], "1g.5gb=1"), "unknown GPU model 'Z100'"),
        ((["A100-40GB"], "1g.5gb"), "--demand '1g.5gb': expected PROFILE=COUNT, e.g. 3g.40gb=2"),
        ((["A100-40GB"], "1g.5gb=x"), "--demand '1g.5gb=x': COUNT must be a whole number >= 1"),
        (
            (["A100-40GB"], "big=1"),
            "'big' is not a MIG profile name (e.g. 3g.40gb, 1g.10gb+me, nvidia.com/mig-3g.40gb)",
        ),
        # 0 and -1 get the message of any other bad count (was "--demand is empty" for 0 only).
        ((["A100-40GB"], "1g.5gb=0"), "--demand '1g.5gb=0': COUNT must be a whole number >= 1"),
        ((["A100-40GB"], "1g.5gb=-1"), "--demand '1g.5gb=-1': COUNT must be a whole number >= 1"),
        ((["A100-40GB"], ","), "--demand is empty: give PROFILE=COUNT with COUNT >= 1"),
        (
            (["A100-40GB:x"], "1g.5gb=1"),
            "--gpu 'A100-40GB:x': the count after ':' must be a whole number >= 1",
        ),
        (
            (["A100-40GB:0"], "1g.5gb=1"),
            "--gpu 'A100-40GB:0': the count after ':' must be a whole number >= 1",
        ),
    ],
)
def test_bad_input_messages(args: tuple, message: str) -> None:
    models, demand = args
    with pytest.raises(PlanInputError) as err:
        plan_mig(parse_fleet(models), parse_demand(demand))
    assert str(err.value).startswith(message)


# -- exactness: brute force over assignments of instances to GPUs --------------------------------


def brute_force_min(model, demand: dict[str, int]) -> int:
    items = [name for name, n in demand.items() for _ in range(n)]
    limit = len(items)

    def fits(bins: list[dict[str, int]]) -> bool:
        return all(layout_fits(model, b)[0] for b in bins)

    best = limit

    def assign(i: int, bins: list[dict[str, int]]) -> None:
        nonlocal best
        if len(bins) >= best:
            return
        if i == len(items):
            best = len(bins)
            return
        name = items[i]
        for b in bins:  # existing GPUs, then one new GPU (no symmetric duplicates)
            b[name] = b.get(name, 0) + 1
            if layout_fits(model, b)[0]:
                assign(i + 1, bins)
            b[name] -= 1
            if not b[name]:
                del b[name]
        bins.append({name: 1})
        if fits([bins[-1]]):
            assign(i + 1, bins)
        bins.pop()

    assign(0, [])
    return best


SMALL_MODELS = ("A100-40GB", "A30", "H100-80GB", "RTX-PRO-6000")


@st.composite
def small_problem(draw):
    model = catalog().model(draw(st.sampled_from(SMALL_MODELS)))
    names = [p.name for p in model.mig_profiles]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True))
    counts = draw(st.lists(st.integers(1, 3), min_size=len(chosen), max_size=len(chosen)))
    demand = dict(zip(chosen, counts))
    while sum(demand.values()) > 8:
        demand[chosen[0]] -= 1
        if not demand[chosen[0]]:
            del demand[chosen[0]]
            chosen.pop(0)
    return model, demand


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_problem(), st.sampled_from([None, 0]))
def test_planner_matches_brute_force(problem, dp_limit) -> None:
    """dp_limit=0 forces the LP bound / branch-and-bound path; None uses the default mix."""
    model, demand = problem
    p = plan_mig(parse_fleet([model.name]), demand, dp_limit=dp_limit)
    assert p.feasible
    assert p.gpus_needed == brute_force_min(model, demand)
    assert_valid(p)


def test_valid_configs_agree_with_layout_fits() -> None:
    model = catalog().model("A100-40GB")
    configs = valid_configs(model)
    assert len(configs) == len(set(configs))
    names = [p.name for p in model.mig_profiles]
    for cfg in configs:
        assert layout_fits(model, {n: c for n, c in zip(names, cfg) if c})[0]
    # NVIDIA's balanced layout (2 x 1g + 2g + 3g) is one of them.
    assert (2, 0, 0, 1, 1, 0, 0) in configs


def test_thousand_gpu_fleet_plans() -> None:
    demand = parse_demand("3g.40gb=700,2g.20gb=900,1g.10gb=1500,1g.20gb=400,4g.40gb=150,7g.80gb=60")
    p = plan_mig(parse_fleet(["A100-80GB"]), demand)
    assert p.feasible and 900 <= p.gpus_needed <= 1100
    assert_valid(p)
