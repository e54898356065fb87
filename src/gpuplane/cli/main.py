"""The ``gpuplane`` entry point.

Subcommands are registered by name and imported only when invoked, so
``gpuplane --help`` loads click and nothing else heavy (see
reference/python-stack.md: eager imports of rich/pydantic/ruamel triple start-up).
"""

from __future__ import annotations

import importlib

import click

from gpuplane import __version__
from gpuplane.cli.registry import COMMANDS


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, attr, _ = entry
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Show the short help without importing every command module.
        rows = [(name, entry[2]) for name, entry in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gpuplane")
def cli() -> None:
    """gpuplane: a Kubernetes specialist for AI workloads.

    \b
    Examples:
      gpuplane lint k8s/                         # find GPU/AI mistakes in manifests
      gpuplane inventory --cluster snapshot.yaml # GPU capacity per model and pool
      gpuplane why-pending --cluster live        # why are my GPU pods Pending?
      gpuplane explain gpu-request-without-limit # what a rule means and how to fix it

    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 unusable input or arguments.
    """


def main() -> None:
    """Run the full click CLI (the console script enters through ``gpuplane.cli.entry``)."""
    cli(prog_name="gpuplane")
