"""``gpuplane inventory``: GPU capacity by node pool and model."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, not_available


@click.command()
@cluster_options(required=True)
@format_option("text", "json")
def inventory(**kwargs: object) -> None:
    """GPU capacity per node, pool and model: allocatable, allocated, free, MIG/time-slicing layout.

    \b
    Example:
      gpuplane inventory --cluster examples/clusters/demo.yaml
    """
    not_available("inventory")
