"""``gpuplane advise``: sharing mode, MIG layout and capacity decisions."""

from __future__ import annotations

import click

from gpuplane.cli.common import format_option, not_available


@click.group()
def advise() -> None:
    """Decision support: sharing mode, exact MIG layouts, capacity and cost."""


@advise.command()
@click.option("--gpu", "gpu_model", required=True, metavar="MODEL", help="GPU model, e.g. A100-80GB.")
@click.option("--demand", required=True, metavar="PROFILE=COUNT,...", help="Slices wanted, e.g. 3g.40gb=2,1g.10gb=4.")
@click.option("--gpus", type=int, default=None, help="GPUs available (default: as many as needed).")
@format_option("text", "json")
def mig(**kwargs: object) -> None:
    """Fewest GPUs of MODEL whose valid MIG layouts host a slice demand."""
    not_available("advise mig")


@advise.command()
@format_option("text", "json")
def sharing(**kwargs: object) -> None:
    """Recommend none / time-slicing / MPS / MIG / DRA for a workload mix."""
    not_available("advise sharing")


@advise.command()
@format_option("text", "json")
def capacity(**kwargs: object) -> None:
    """Nodes per GPU model and monthly cost for a demand."""
    not_available("advise capacity")
