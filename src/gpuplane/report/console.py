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
from typing import IO, TYPE_CHECKING, cast

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


class TrailingSpaceStripper:
    """A write-through text stream that drops the trailing whitespace of every line.

    Why: rich pads each table row to the console width (160 columns when piped), so a piped
    ``inventory`` carried 110-160 trailing spaces per line, noise for ``grep``, diffs and logs.
    Only whole lines are stripped; an unterminated tail waits for its newline (or ``flush``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._tail = ""

    def write(self, text: str) -> int:
        data = self._tail + text
        *lines, self._tail = data.split("\n")
        if lines:
            self._stream.write("".join(line.rstrip() + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._tail:
            self._stream.write(self._tail)
            self._tail = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"


def wrap_width(stream: IO[str] | None = None) -> int | None:
    """The width text findings wrap to, or None for "do not wrap".

    On a terminal: its width ($COLUMNS first, as rich does). Piped or redirected: only $COLUMNS
    when set; otherwise no wrapping at all, because piped output is read by grep, awk and CI
    logs, where one finding per line matters more than a margin."""
    out = stream if stream is not None else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if bool(getattr(out, "isatty", lambda: False)()):
        import shutil  # for start-up time: only text reports on a terminal need it

        return shutil.get_terminal_size().columns
    return None


def wrap_hanging(line: str, width: int | None, indent: int) -> list[str]:
    """``line`` wrapped at word boundaries to ``width`` with continuation lines indented by
    ``indent`` spaces; words are never broken (a token longer than the width overflows whole)."""
    if width is None or len(line) <= width:
        return [line]
    import textwrap  # for start-up time: only reports that wrap need it

    lead = len(line) - len(line.lstrip(" "))
    return textwrap.wrap(
        line[lead:],
        width=width,
        initial_indent=" " * lead,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def make_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to ``file`` (default stdout, or stderr): styled on a TTY, plain otherwise,
    as :func:`color_mode` decides (``--color always`` / ``FORCE_COLOR`` colour a pipe too;
    ``--color never`` / ``NO_COLOR`` keep a terminal plain)."""
    from rich.console import Console  # deferred for start-up time

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    mode = color_mode()
    if is_tty:
        return Console(file=stream, highlight=False, no_color=mode == "never")
    stream = cast("IO[str]", TrailingSpaceStripper(stream))
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
