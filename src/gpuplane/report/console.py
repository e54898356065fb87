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
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

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


def longest_word(cells: list[str]) -> int:
    """The widest whitespace-separated word of ``cells`` (rich markup left out)."""
    from rich.text import Text  # deferred for start-up time

    best = 0
    for cell in cells:
        for word in Text.from_markup(cell).plain.split():
            best = max(best, len(word))
    return best


def fit_table(table: Table, width: int, drop: Sequence[str] = ()) -> Table:
    """Make ``table`` fold its cells at word boundaries only, within ``width``.

    rich folds a cell wider than its column anywhere, even inside a word (``not-adverti`` /
    ``sing-gpus``), and cuts ``no_wrap``/``ellipsis`` cells with ``…``. Here every column gets a
    minimum width of its longest word (and of its header), folds rather than cuts, and keeps its
    ``no_wrap`` (row identifiers stay on one line, whole). When those minimums do not fit, the
    columns named in ``drop`` (by header, lowest value first) are removed until they do; if they
    still do not fit, words of the other columns may be folded, the identifiers still whole."""
    for column in table.columns:
        cells = [str(cell) for cell in column._cells]
        if column.no_wrap:
            widest = max((len(line) for c in _plain(cells) for line in c.splitlines()), default=0)
            column.min_width = max(column.min_width or 0, widest)
        else:
            column.overflow = "fold"
            column.min_width = max(column.min_width or 0, longest_word([*cells, str(column.header)]))

    def needed() -> int:
        return table._extra_width + sum(
            (column.min_width or 0) + table._get_padding_width(index)
            for index, column in enumerate(table.columns)
        )

    for header in drop:
        if needed() <= width:
            break
        table.columns[:] = [column for column in table.columns if str(column.header) != header]
        for index, column in enumerate(table.columns):
            column._index = index
    if needed() > width:
        for column in table.columns:
            if not column.no_wrap:
                column.min_width = None
        return table
    # rich shrinks columns without regard to their minimums and then widens them back, which
    # can end wider than the console (and cropped): cap the foldable columns here instead, one
    # column at a time from the widest one still above its minimum (as rich collapses)
    caps = [
        max(
            (
                len(line)
                for c in _plain([*map(str, column._cells), str(column.header)])
                for line in c.splitlines()
            ),
            default=0,
        )
        for column in table.columns
    ]
    total = table._extra_width + sum(cap + table._get_padding_width(i) for i, cap in enumerate(caps))
    while total > width:
        wider = [
            (caps[i], i)
            for i, column in enumerate(table.columns)
            if not column.no_wrap and caps[i] > (column.min_width or 0)
        ]
        if not wider:
            break
        _, index = max(wider)
        caps[index] -= 1
        total -= 1
    for column, cap in zip(table.columns, caps, strict=True):
        if not column.no_wrap:
            column.max_width = cap
    return table


def _plain(cells: list[str]) -> list[str]:
    from rich.text import Text  # deferred for start-up time

    return [Text.from_markup(cell).plain for cell in cells]


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
