"""``gpuplane diagnose``: what is wrong with this cluster's GPU stack and capacity right now."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, not_available


@click.command()
@cluster_options(required=True)
@format_option("text", "json", "html")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
def diagnose(**kwargs: object) -> None:
    """Run the cluster rules and workload rules against a whole cluster.

    \b
    Examples:
      gpuplane diagnose --cluster examples/clusters/demo.yaml
      gpuplane diagnose --cluster live -f html -o report.html
    """
    not_available("diagnose")
