"""``gpuplane lint``: find what in these manifests will break, stall, waste GPUs or leak isolation."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, not_available


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@cluster_options()
@format_option("text", "json", "sarif", "github")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="error",
              show_default=True, help="Exit 1 when a finding reaches this severity.")
@click.option("--disable", default="", metavar="ID,...", help="Rule ids to turn off.")
@click.option("--enable", default="", metavar="ID,...", help="Rule ids to turn on (only these when given).")
@click.option("--config", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: .gpuplane.yaml found upward from the current folder).")
@click.option("--fix", is_flag=True, help="Rewrite files in place for rules with a safe mechanical fix.")
@click.option("--dry-run", is_flag=True, help="With --fix: print the diff instead of writing.")
def lint(**kwargs: object) -> None:
    """Lint Kubernetes manifests for GPU and AI-workload mistakes.

    \b
    PATH is a file, a folder (walked for *.yaml, *.yml, *.json) or - for stdin.
    Examples:
      gpuplane lint k8s/
      helm template charts/train | gpuplane lint -
      gpuplane lint -f sarif k8s/ > gpuplane.sarif
    """
    not_available("lint")
