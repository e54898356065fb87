"""``gpuplane snapshot``: write a live cluster's state (no Secrets, env redacted)."""

from __future__ import annotations

import click

from gpuplane.cli.common import not_available


@click.command()
@click.option("--context", "kube_context", default=None, help="Kube-context to read.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Kubeconfig file.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Snapshot file to write.")
def snapshot(**kwargs: object) -> None:
    """Write the cluster state the other commands read with --cluster FILE."""
    not_available("snapshot")
