"""Lines of a text report written without rich where rich would print exactly them.

Why: a console that is not a terminal prints no styles (``make_console``: no colour system), so
a line of markup shows as its plain text; parsing that markup, measuring and cropping it cost
rich ~0.1 ms a line, seconds for a why-pending report of thousands of Pending pods. Here the
plain text is written as it is when rich's rendering is known to be the same bytes, and handed
to rich otherwise:

- a line is *simple* when it is printable ASCII without a backslash: one cell per character,
  no control codes for rich to strip, no tabs to expand, and no escape sequence whose
  round trip through :func:`rich.markup.escape` could differ;
- ``console.print(markup)`` (no soft wrap) folds a line wider than the console: only a simple
  line that fits is written plain;
- a table (``box=None``, ``padding=(0, 2)``, no edge, header shown) whose columns fit at their
  natural widths is laid out as rich does: each column as wide as its widest cell, four spaces
  between columns, the first one right-justified; a wider table goes to rich, which folds it.

The console's file (``TrailingSpaceStripper`` when piped) takes both, in order: rich writes
each print out before it returns. ``tests/test_plain_lines.py`` holds every case to rich's
output on generated text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

GAP = 4  # padding (0, 2): two spaces right of a column, two left of the next, none at the edges
HEADERS = ("nodes", "plugin", "reasons", "e.g.")


def simple(text: str) -> bool:
    """True when rich shows ``text`` (escaped where it is data) as these very characters."""
    return text.isascii() and text.isprintable() and "\\" not in text


def write_lines(console: Console, lines: list[str]) -> None:
    """Write ``lines`` through the console's file, as rich writes, and empty the list: what
    ``console.print`` of each prints where no style is printed and each line is :func:`simple`."""
    if lines:
        console.file.write("\n".join(lines) + "\n")
        lines.clear()


class PlainOut:
    """The why-pending report's lines for a console without styles (see the module docstring).

    Lines are gathered and written per :meth:`flush` (one pod), through rich's file."""

    def __init__(
        self, console: Console, rich_table: Callable[[list[tuple[str, str, str, str]]], object]
    ) -> None:
        """``rich_table``: the rich renderable of a table this class does not lay out itself."""
        self.console = console
        self.rich_table = rich_table
        self.width = console.width
        self._lines: list[str] = []

    def line(self, markup: str, plain: str) -> None:
        """``console.print(markup)``: ``plain`` when it is simple, free of markup (the title is not
        escaped) and fits the console; a final newline of the text prints a blank line."""
        body = plain.removesuffix("\n")
        if simple(body) and "[" not in body and len(body) <= self.width:
            self._lines.append(body)
            if body != plain:
                self._lines.append("")
        else:
            self._rich(markup)

    def soft(self, markup: str, plain: str) -> None:
        """``console.print(markup, soft_wrap=True)``: never folded, so any simple line."""
        if simple(plain):
            self._lines.append(plain)
        else:
            self._rich(markup, soft_wrap=True)

    def table(self, rows: list[tuple[str, str, str, str]]) -> None:
        """The node table, laid out here when every cell is simple (:func:`table_lines`)."""
        # the plugin and sample cells are markup (not escaped): a "[" there goes to rich
        plain = all(
            simple(nodes)
            and simple(plugin)
            and simple(reasons)
            and simple(sample)
            and "[" not in plugin + sample
            for nodes, plugin, reasons, sample in rows
        )
        lines = table_lines([HEADERS, *rows], self.width) if plain else None
        if lines is None:
            self._rich(self.rich_table(rows))
            return
        self._lines.extend(lines)

    def flush(self) -> None:
        """Write the gathered lines (rich's file strips trailing blanks of each line, as for rich's)."""
        write_lines(self.console, self._lines)

    def _rich(self, renderable: object, *, soft_wrap: bool = False) -> None:
        self.flush()
        self.console.print(renderable, soft_wrap=soft_wrap)


def table_lines(cells: list[tuple[str, ...]], max_width: int) -> list[str] | None:
    """The lines rich prints for the node table (header first) within ``max_width``, rstripped,
    or None where rich would do what is not reproduced here (ellipses, tiny columns).

    Column widths as rich's ``Table._calculate_column_widths`` (its own ``_collapse_widths`` and
    ``ratio_reduce``: the widest foldable columns shrink first, then all evenly), the cells
    word-wrapped with rich's own ``divide_line`` and justified as ``Text.wrap`` does (the
    first column to the right, the plugin column never wrapped)."""
    from rich._ratio import ratio_reduce  # deferred for start-up time
    from rich._wrap import divide_line
    from rich.table import Table

    count = len(cells[0])
    pads = [(0 if i == 0 else 2, 0 if i == count - 1 else 2) for i in range(count)]
    natural = [min(max(len(row[i]) for row in cells) + sum(pads[i]), max_width) or 1 for i in range(count)]
    widths = natural
    if sum(widths) > max_width:
        wrapable = [i != 1 for i in range(count)]  # plugin is no_wrap
        widths = Table._collapse_widths(widths, wrapable, max_width)
        if sum(widths) > max_width:
            widths = ratio_reduce(sum(widths) - max_width, [1] * count, widths, widths)
        widths = [min(n, w) for n, w in zip(natural, widths, strict=True)]
    inner = [w - sum(pad) for w, pad in zip(widths, pads, strict=True)]
    if min(inner) < 1:
        return None
    columns: list[list[list[str]]] = []
    for i in range(count):
        column: list[list[str]] = []
        for row in cells:
            text = row[i]
            if any(len(word) > inner[i] for word in text.split()) or (i == 1 and len(text) > inner[i]):
                return None  # rich would cut it with an ellipsis
            if i == 1:
                parts = [text]
            else:
                offsets = divide_line(text, inner[i], fold=False)
                parts = [text[a:b] for a, b in zip([0, *offsets], [*offsets, len(text)], strict=True)]
            left, right = pads[i]
            if i == 0:
                column.append([" " * left + part.rstrip().rjust(inner[i]) + " " * right for part in parts])
            else:
                column.append([" " * left + part[: inner[i]].ljust(inner[i]) + " " * right for part in parts])
        columns.append(column)
    lines: list[str] = []
    for r in range(len(cells)):
        height = max(len(columns[i][r]) for i in range(count))
        for k in range(height):
            lines.append(
                "".join(
                    columns[i][r][k] if k < len(columns[i][r]) else " " * widths[i] for i in range(count)
                ).rstrip()
            )
    return lines
