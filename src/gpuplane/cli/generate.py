"""``gpuplane generate``: render a platform blueprint into validated configuration."""

from __future__ import annotations

import click

from gpuplane.cli.common import not_available


@click.command()
@click.argument("blueprint", required=False, type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None, help="Output folder.")
@click.option("--schema", is_flag=True, help="Print the blueprint JSON Schema and exit.")
@click.option("--explain", "explain_decisions", is_flag=True, help="Print each design decision and why.")
def generate(**kwargs: object) -> None:
    """Render BLUEPRINT (YAML) into manifests and Helm values in a folder.

    \b
    Example:
      gpuplane generate examples/blueprints/eks-training.yaml -o out/
    """
    not_available("generate")
