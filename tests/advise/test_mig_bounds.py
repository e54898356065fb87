"""``advise mig`` work is bounded (issue 11 item 4): a demand or fleet beyond the planner's stated
limit is one line and exit 2, never minutes of work (10^7 instances ran 31 s in 4.7 GB)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gpuplane.advise.mig_planner import MAX_DEMAND, MAX_GPUS, PlanInputError, parse_demand, parse_fleet
from gpuplane.cli.main import cli


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--gpu", "A100-80GB", "--demand", "1g.10gb=10000000"],
            "gpuplane: --demand asks for more than 100000 MIG instances; the planner plans at most 100000 "
            "at once (plan large fleets pool by pool)\n",
        ),
        (
            ["--gpu", "A100-80GB", "--demand", "1g.10gb=" + "1" + "0" * 30],
            "gpuplane: --demand asks for more than 100000 MIG instances; the planner plans at most 100000 "
            "at once (plan large fleets pool by pool)\n",
        ),
        (  # beyond Python's int-string limit (4,300 digits): never converted
            ["--gpu", "A100-80GB", "--demand", "1g.10gb=" + "9" * 5000],
            "gpuplane: --demand asks for more than 100000 MIG instances; the planner plans at most 100000 "
            "at once (plan large fleets pool by pool)\n",
        ),
        (
            ["--gpu", "A100-80GB", "--demand", "1g.10gb=60000,2g.20gb=60000"],
            "gpuplane: --demand asks for more than 100000 MIG instances; the planner plans at most 100000 "
            "at once (plan large fleets pool by pool)\n",
        ),
        (
            ["--gpu", "A100-80GB:1000000", "--demand", "1g.10gb=1"],
            "gpuplane: --gpu A100-80GB: more than 100000 GPUs; the planner plans at most 100000 per model\n",
        ),
    ],
)
def test_over_the_limit_is_one_line_exit_2(args: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["advise", "mig", *args])
    assert res.exit_code == 2
    assert res.stderr == message


def test_the_limits_themselves_are_accepted() -> None:
    assert parse_demand(f"1g.10gb={MAX_DEMAND}") == {"1g.10gb": MAX_DEMAND}
    assert parse_fleet([f"A100-80GB:{MAX_GPUS}"])[0].available == MAX_GPUS
    with pytest.raises(PlanInputError, match=r"^--gpus: more than 100000 GPUs"):
        parse_fleet(["A100-80GB"], MAX_GPUS + 1)
