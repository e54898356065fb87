"""advise capacity: instance choice, node counts, monthly cost, cold-start spare, price overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.advise.capacity import (
    MAX_DEMAND_GPUS,
    CapacityInputError,
    cold_start,
    load_prices,
    parse_gpu_demand,
    plan_capacity,
)
from gpuplane.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_cheapest_instance_and_cost() -> None:
    doc = plan_capacity({"H100-80GB": 16}, "aws").to_json()
    m = doc["models"][0]
    # p5.48xlarge: 2 x 55.04 $/h; p5.4xlarge: 16 x 6.88 $/h: same cost, fewer nodes wins.
    assert (m["instance_type"], m["nodes"], m["usd_per_hour"]) == ("p5.48xlarge", 2, 55.04)
    assert m["monthly_usd"] == 80358.4
    assert m["price_source"] == "[VANTAGE] data/p5_instances.js us-east-1 onDemand"
    assert doc["total_monthly_usd"] == 80358.4
    assert [a["instance_type"] for a in m["alternatives"]] == ["p5.4xlarge"]


def test_headroom_and_cold_start_spare() -> None:
    cs = cold_start(10)
    assert cs.worst_s == 30 + 240 + 900 + 600  # CA decision + VM + GPU stack ready + 10 GiB pull
    plan = plan_capacity({"H100-80GB": 16}, "aws", headroom_pct=10, growth_gpus_per_hour=8)
    m = plan.models[0]
    assert (m.headroom_gpus, m.cold_start_spare_gpus, m.gpus_total) == (2, 4, 22)  # 8/h x 1770 s = 3.9
    # Was 22 x p5.4xlarge (chosen by price alone); 3 x p5.48xlarge leaves 2 of 24 GPUs idle (< 25%).
    assert m.choice is not None and m.choice.instance == "p5.48xlarge" and m.choice.nodes == 3


def test_price_override_file() -> None:
    table = load_prices(FIXTURES / "advise" / "prices-override.yaml")
    m = plan_capacity({"H100-80GB": 16}, "aws", prices=table).models[0]
    assert m.choice is not None
    assert (m.choice.instance, m.choice.monthly_usd) == ("p5.48xlarge", 2 * 40.0 * 730)
    assert m.choice.price is not None and m.choice.price.source == "negotiated rate"


def test_model_without_instance_or_price() -> None:
    plan = plan_capacity({"A30": 2}, "aws")
    assert plan.models[0].choice is None
    assert plan.models[0].note == "no aws instance type with A30 in the catalog"
    assert plan.total_monthly_usd is None
    m = plan_capacity({"L4": 3}, "azure").models[0]
    assert m.note == "no azure instance type with L4 in the catalog"


def test_parse_gpu_demand() -> None:
    assert parse_gpu_demand(["h100=8,L4=2", "H100-80GB=8"]) == {"H100-80GB": 16, "L4": 2}
    with pytest.raises(CapacityInputError, match=r"^--demand 'Z9=1': unknown GPU model 'Z9'$"):
        parse_gpu_demand(["Z9=1"])
    with pytest.raises(CapacityInputError, match=r"^--demand 'L4': expected MODEL=GPUS"):
        parse_gpu_demand(["L4"])
    with pytest.raises(CapacityInputError, match=r"^--demand 'L4=x': expected MODEL=GPUS"):
        parse_gpu_demand(["L4=x"])


def test_gpu_demand_is_bounded_like_the_mig_demand() -> None:
    """The count is read by advise/demand.py as advise mig's is: the bound itself is accepted,
    one more GPU (or a count past Python's 4,300-digit int-string limit) is one input error."""
    assert parse_gpu_demand([f"L4={MAX_DEMAND_GPUS}"]) == {"L4": MAX_DEMAND_GPUS}
    message = rf"^--demand L4: more than {MAX_DEMAND_GPUS} GPUs of one model$"
    for values in ([f"L4={MAX_DEMAND_GPUS + 1}"], ["L4=" + "9" * 5000], [f"L4={MAX_DEMAND_GPUS}", "L4=1"]):
        with pytest.raises(CapacityInputError, match=message):
            parse_gpu_demand(values)


def test_an_overlong_gpu_demand_is_one_line_exit_2() -> None:
    res = CliRunner().invoke(cli, ["advise", "capacity", "--demand", "H100-80GB=" + "9" * 5000])
    assert res.exit_code == 2
    assert res.stderr == f"gpuplane: --demand H100-80GB: more than {MAX_DEMAND_GPUS} GPUs of one model\n"


def test_every_price_has_date_and_source() -> None:
    table = load_prices()
    assert table.prices
    for price in table.prices.values():
        assert price.date and price.source and price.usd_per_hour > 0


def test_cold_start_typical_sums_typical_figures() -> None:
    """Regression: the GPU stack phase has only an upper bound (15 min); using it as 'typical'
    made typical ~29 min vs worst 30. Its typical is now the labelled midpoint of 0-15 min."""
    cs = cold_start(10)
    assert cs.typical_s == 5 + 210 + 450 + 600
    assert cs.worst_s == 30 + 240 + 900 + 600
    assert cs.estimated == ["gpu_stack_ready"]
    gpu = next(c for c in cs.components if c["phase"] == "gpu_stack_ready")
    assert (gpu["typical_s"], gpu["worst_s"], gpu["estimate"]) == (
        450.0,
        900,
        "midpoint of the sourced 0-15 min range",
    )
    assert "typical_estimated" not in next(c for c in cs.components if c["phase"] == "vm_provisioning")


@pytest.mark.parametrize(
    ("gpus", "instance", "nodes"),
    [
        (8, "a2-highgpu-8g", 1),
        (1, "a2-highgpu-1g", 1),
        (3, "a2-highgpu-1g", 3),
        (4, "a2-highgpu-4g", 1),
        (12, "a2-highgpu-4g", 3),
        (16, "a2-megagpu-16g", 1),
        (17, "a2-highgpu-4g", 5),
    ],
)
def test_fewer_larger_nodes_for_multi_gpu_demand(gpus: int, instance: str, nodes: int) -> None:
    """Regression: GCP A100-40GB=8 gave 8 x a2-highgpu-1g. Shape decides, not (missing) price."""
    m = plan_capacity({"A100-40GB": gpus}, "gcp").models[0]
    assert m.choice is not None
    assert (m.choice.instance, m.choice.nodes) == (instance, nodes)


def test_unpriced_choice_makes_the_cost_partial() -> None:
    plan = plan_capacity({"A100-40GB": 4, "L4": 1}, "gcp")
    a100 = plan.models[0]
    assert a100.choice is not None and a100.choice.instance == "a2-highgpu-4g" and a100.choice.price is None
    assert (
        a100.note
        == "no price for a2-highgpu-4g: add one with --prices FILE (priced alternatives: a2-highgpu-1g, a2-highgpu-8g)"
    )
    doc = plan.to_json()
    assert doc["total_monthly_usd"] is None
    assert doc["priced_monthly_usd"] == round(0.7068 * 730, 2)
    assert doc["cost_partial"] is True
    assert doc["cost_gaps"] == ["A100-40GB: no price for gcp a2-highgpu-4g in the price table"]
    full = plan_capacity({"A100-40GB": 8}, "gcp").to_json()
    assert (full["cost_partial"], full["cost_gaps"], full["total_monthly_usd"]) == (
        False,
        [],
        round(29.387 * 730, 2),
    )


def test_capacity_text_labels_estimates_and_partial_cost() -> None:
    from rich.console import Console

    from gpuplane.report.advise_text import render_capacity

    console = Console(record=True, width=400)
    render_capacity(plan_capacity({"A100-40GB": 4, "L4": 1}, "gcp"), console)
    lines = console.export_text().splitlines()
    assert (
        "Total: $516 per month, partial (not priced: A100-40GB: no price for gcp a2-highgpu-4g in the price table); "
        "pass --prices FILE with your rate card" in lines
    )
    assert (
        "Cold start of a GPU node: ~21 min typical, up to 30 min (autoscaler + VM + GPU driver/device plugin + "
        "image pull); spare GPUs cover --growth over the worst case."
    ) in lines
    assert (
        "  typical gpu stack ready: ~7.5 min is an estimate, the midpoint of the sourced 0-15 min range (no "
        "typical figure is published)"
    ) in lines
