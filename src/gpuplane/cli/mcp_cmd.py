"""``gpuplane mcp``: serve gpuplane's engines as MCP tools over stdio."""

from __future__ import annotations

import click

from gpuplane.cli.common import not_available


@click.command()
def mcp() -> None:
    """Serve lint, why_pending, diagnose, inventory, ... as MCP tools over stdio."""
    not_available("mcp")
