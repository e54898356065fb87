"""``gpuplane simulate``: where would these workloads land, when, and what waits."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, not_available


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@cluster_options(required=True)
@click.option("--scheduler", type=click.Choice(["default", "volcano", "coscheduling", "kueue"]),
              default="default", show_default=True, help="Which scheduler places the pods.")
@click.option("--autoscaler", default=None, metavar="SPEC", help="Autoscaler spec (node groups / NodePools).")
@format_option("text", "json")
def simulate(**kwargs: object) -> None:
    """Simulate submitting workloads to a cluster.

    \b
    Example:
      gpuplane simulate --cluster examples/clusters/demo.yaml examples/manifests/
    """
    not_available("simulate")
