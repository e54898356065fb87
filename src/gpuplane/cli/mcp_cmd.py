"""``gpuplane mcp``: serve gpuplane's engines as MCP tools over stdio.

The MCP SDK (the optional ``mcp`` extra) and the server module are imported inside the
command: ``gpuplane --help`` never pays for them (architecture.md "Lazy imports").
"""

from __future__ import annotations

import contextlib

import click

from gpuplane.cli.common import fail


@click.command()
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="Folder the tools may read and write (repeatable; default: the working directory). Paths "
    "outside every root, and /proc, /dev and /sys, are refused.",
)
def mcp(roots: tuple[str, ...]) -> None:
    """Serve gpuplane's engines (lint, why_pending, inventory, advise_*, generate, ask ...) as MCP tools over stdio.

    Standard input and output carry the MCP protocol (JSON-RPC); logs go to
    stderr. Tools only touch files under the roots (see docs/mcp.md, "Trust model"). Each tool returns the same JSON as the matching command with
    -f json. Add gpuplane to an assistant's MCP config with the command
    `gpuplane` and the argument `mcp` (see docs/mcp.md).

    \b
    Examples:
      gpuplane mcp
      claude mcp add gpuplane -- gpuplane mcp

    \b
    Exit codes: 0 the client closed the session, 2 the server could not start.
    """
    try:
        from gpuplane.mcp.server import serve_stdio  # deferred for start-up time
    except ImportError as exc:
        fail(
            f"mcp: the MCP SDK is not installed ({exc}); reinstall gpuplane: pip install . (the SDK is a dependency)"
        )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: end quietly, no traceback
        serve_stdio(roots)
