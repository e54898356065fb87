"""``gpuplane mcp``: serve gpuplane's engines as MCP tools over stdio.

The MCP SDK (the optional ``mcp`` extra) and the server module are imported inside the
command: ``gpuplane --help`` never pays for them (architecture.md "Lazy imports").
"""

from __future__ import annotations

import contextlib

import click

from gpuplane.cli.common import fail
from gpuplane.mcp.limits import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_KB


@click.command()
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="Folder the tools may read and write (repeatable; default: the working directory). Paths "
    "outside every root, and /proc, /dev and /sys, are refused.",
)
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_CALL_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="A tool call still running after this long returns an error and the session goes on (0: no limit).",
)
@click.option(
    "--max-result-kb",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_RESULT_KB,
    show_default=True,
    metavar="KB",
    help="A result larger than this (its JSON) is cut, with 'truncated' saying what was cut (0: no cap).",
)
def mcp(roots: tuple[str, ...], call_timeout: float, max_result_kb: int) -> None:
    """Serve gpuplane's engines (lint, why_pending, inventory, advise_*, generate, ask ...) as MCP tools over stdio.

    Standard input and output carry the MCP protocol (JSON-RPC); logs go to
    stderr. Tools only touch files under the roots (see docs/mcp.md, "Trust model"). Each tool returns the same JSON as the matching command with
    -f json. Each call has a time limit and its result a size cap (--call-timeout, --max-result-kb). Add gpuplane to an assistant's MCP config with the command
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
        serve_stdio(roots, call_timeout=call_timeout, max_result_kb=max_result_kb)
