"""advise capacity: instance choice, node counts, monthly cost, cold-start spare, price overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.advise.capacity import (
    CapacityInputError,
    cold_start,
    load_prices,
    parse_gpu_demand,
    plan_capacity,
)

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
    assert m.choice is not None and m.choice.instance == "p5.4xlarge" and m.choice.nodes == 22


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


def test_every_price_has_date_and_source() -> None:
    table = load_prices()
    assert table.prices
    for price in table.prices.values():
        assert price.date and price.source and price.usd_per_hour > 0
