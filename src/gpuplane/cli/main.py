"""The ``gpuplane`` entry point.

Subcommands are registered by name and imported only when invoked, so
``gpuplane --help`` loads click and nothing else heavy (see
reference/python-stack.md: eager imports of rich/pydantic/ruamel triple start-up).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from gpuplane import __version__
from gpuplane.cli.common import debug_requested, run_guarded
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
        _RUN.command = cmd_name
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Show the short help without importing every command module.
        rows = [(name, entry[2]) for name, entry in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class _Run:
    """What the top-level error handler needs to know about this run."""

    command = ""  # the subcommand being run ("" before one is chosen)
    debug = False  # --debug (or GPUPLANE_DEBUG=1): print the traceback of an internal error


_RUN = _Run()


def _set_color(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        # deferred for start-up time
        from gpuplane.report.console import set_color_mode  # small module; rich stays lazy

        set_color_mode(value)
    return value


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    _RUN.debug = _RUN.debug or value
    return value


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gpuplane")
@click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_debug,
    help="On an internal error, print the traceback too.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default=None,
    expose_value=False,
    is_eager=True,
    callback=_set_color,
    help="Colour: auto (on a terminal), always, never. NO_COLOR and FORCE_COLOR are honoured.",
)
def cli() -> None:
    """gpuplane: a Kubernetes specialist for AI workloads.

    \b
    Examples:
      gpuplane lint k8s/                         # find GPU/AI mistakes in manifests
      gpuplane inventory --cluster snapshot.yaml # GPU capacity per model and pool
      gpuplane why-pending --cluster live        # why are my GPU pods Pending?
      gpuplane explain gpu-request-without-limit # what a rule means and how to fix it

    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 unusable input or arguments,
    3 internal error (a bug: please report it).
    """
    # The composition root: kindless NVIDIA config files become pseudo-objects for every command
    # (a registration with the model layer's hook; the module is small and imports no YAML).
    # deferred for start-up time
    import gpuplane.gpu.config_files  # noqa: F401


def program_name(argv0: str | None = None) -> str:
    """``kubectl gpuplane`` when run as the kubectl plugin (``kubectl-gpuplane``), else ``gpuplane``:
    usage lines then name the command the user typed."""
    base = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kubectl gpuplane" if base.startswith("kubectl-gpuplane") else "gpuplane"


def main() -> None:
    """Run the full click CLI (the console script enters through ``gpuplane.cli.entry``).

    click handles usage errors itself (exit 2); any other exception is a bug of gpuplane, not a
    finding: :func:`gpuplane.cli.common.run_guarded` prints one line on stderr and exits 3.
    """
    _RUN.debug = debug_requested()
    run_guarded(lambda: cli(prog_name=program_name()), step=lambda: _RUN.command, debug=lambda: _RUN.debug)
