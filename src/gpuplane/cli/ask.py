"""``gpuplane ask``: answers from the built-in knowledge base, offline."""

from __future__ import annotations

import click

from gpuplane.cli.common import format_option, not_available


@click.command()
@click.argument("question")
@format_option("text", "json")
def ask(question: str, fmt: str) -> None:
    """Answer QUESTION from the knowledge base, with sources.

    \b
    Example:
      gpuplane ask "time-slicing or MIG for notebooks?"
    """
    not_available("ask")
