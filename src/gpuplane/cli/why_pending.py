"""``gpuplane why-pending``: explain Pending GPU pods exactly as kube-scheduler would."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, not_available


@click.command("why-pending")
@cluster_options(required=True)
@click.option("--pod", default=None, metavar="NS/NAME", help="Explain only this pod.")
@click.option("--kubernetes-version", default=None, metavar="1.MINOR",
              help="Word messages as this kube-scheduler version (default: from the cluster).")
@format_option("text", "json")
def why_pending(**kwargs: object) -> None:
    """Explain why GPU pods are Pending, in kube-scheduler's own words, with causes and fixes.

    \b
    Examples:
      gpuplane why-pending --cluster snapshot.yaml
      gpuplane why-pending --cluster live --pod team-a/train-worker-3 -f json
    """
    not_available("why-pending")
