"""``gpuplane rules`` and ``gpuplane explain``: the rule catalog and each rule's docs."""

from __future__ import annotations

import click

from gpuplane.cli.common import format_option, not_available


@click.command()
@format_option("text", "json")
def rules(fmt: str) -> None:
    """List every lint rule: id, severity, category, summary."""
    not_available("rules")


@click.command()
@click.argument("rule_id", metavar="ID")
def explain(rule_id: str) -> None:
    """Print the docs page (Markdown) of rule ID."""
    not_available("explain")
