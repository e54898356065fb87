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


def make_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to ``file`` (default stdout, or stderr): styled on a TTY, plain otherwise.

    ``NO_COLOR`` (no-color.org) turns colour off on a terminal too; ``FORCE_COLOR`` is
    honoured by rich itself.
    """
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    if is_tty:
        return Console(file=stream, highlight=False, no_color=bool(os.environ.get("NO_COLOR")))
    width = PIPE_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    return Console(
        file=stream,
        force_terminal=False,
        color_system=None,
        highlight=False,
        width=width,
        emoji=False,
        soft_wrap=False,
    )
