"""A rich Console configured the way every gpuplane report wants it.

Why one helper: colour and box-drawing on a terminal, plain text when piped or
redirected (scripts, CI logs, ``| less``), and a width wide enough for tables
when there is no terminal to ask (rich falls back to 80 columns otherwise,
which wraps every table). ``rich`` is imported here, lazily, never by
``gpuplane.cli.*`` at import time (``gpuplane --help`` must stay light).
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 160  # columns used when output is not a terminal and $COLUMNS is unset
COLOR_MODES = ("auto", "always", "never")
_color_flag: str | None = None  # `gpuplane --color ...`, set by the CLI


def set_color_mode(mode: str | None) -> None:
    """``--color auto|always|never`` (the CLI's global option)."""
    global _color_flag
    _color_flag = mode


def color_mode() -> str:
    """``always``, ``never`` or ``auto``: the ``--color`` flag first, then ``NO_COLOR``
    (no-color.org: any non-empty value), then ``FORCE_COLOR`` (force-color.org: any non-empty
    value), else ``auto`` (colour on a terminal only)."""
    if _color_flag in ("always", "never"):
        return _color_flag
    if os.environ.get("NO_COLOR"):
        return "never"
    if os.environ.get("FORCE_COLOR"):
        return "always"
    return "auto"


def make_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to ``file`` (default stdout, or stderr): styled on a TTY, plain otherwise,
    as :func:`color_mode` decides (``--color always`` / ``FORCE_COLOR`` colour a pipe too;
    ``--color never`` / ``NO_COLOR`` keep a terminal plain)."""
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    mode = color_mode()
    if is_tty:
        return Console(file=stream, highlight=False, no_color=mode == "never")
    width = PIPE_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    if mode == "always":
        return Console(
            file=stream,
            force_terminal=True,
            color_system="standard",
            highlight=False,
            width=width,
            emoji=False,
            soft_wrap=False,
        )
    return Console(
        file=stream,
        force_terminal=False,
        color_system=None,
        highlight=False,
        width=width,
        emoji=False,
        soft_wrap=False,
    )
