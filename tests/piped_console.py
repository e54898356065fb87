"""The console ``report.console.make_console`` gives a pipe, at a chosen width, writing to a
buffer: the reference rich output the plain-text paths of the text reports are held to."""

from __future__ import annotations

import io
from typing import Any

from gpuplane.report.console import TrailingSpaceStripper


def piped_console(width: int) -> tuple[Any, io.StringIO]:
    """(a Console without styles whose file strips trailing spaces, the buffer it writes to)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=TrailingSpaceStripper(buffer),  # type: ignore[arg-type]
        force_terminal=False,
        color_system=None,
        highlight=False,
        width=width,
        emoji=False,
        soft_wrap=False,
    )
    return console, buffer
