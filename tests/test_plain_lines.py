"""The plain text path of the why-pending report prints rich's very bytes (report/plain_lines.py).

Piped, the report writes lines without rich where rich would print them unstyled anyway; each
case here renders the same input both ways (rich's console, not a terminal, as ``make_console``
makes it) and compares the output byte for byte: the node table's layout at any width, lines
with markup-like text, and the whole report of the demo cluster at several widths. The terminal
path is rich's own; its pinned text is checked with a forced terminal.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.report import why_pending_text
from gpuplane.report.plain_lines import HEADERS, PlainOut, simple, table_lines
from piped_console import piped_console

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")

_WORDS = st.sampled_from(
    [
        "Insufficient",
        "nvidia.com/gpu",
        "cpu;",
        "node(s)",
        "didn't",
        "match",
        "[bold]",
        "[/x]",
        "a",
        "ip-10-0-0-12.ec2.internal,",
        "...",
        "x" * 30,
        "{nvidia.com/gpu:",
        "present}",
        "é",
        "tab\there",
        "back\\slash",
        "",
    ]
)
_CELL = st.lists(_WORDS, max_size=12).map(" ".join)
# node and pod names are read as markup, as they always were (they cannot hold "[")
_NAMES = st.lists(_WORDS.filter(lambda word: "[" not in word), max_size=8).map(" ".join)
_ROW = st.tuples(
    st.integers(0, 200000).map(str),
    st.sampled_from(["NodeResourcesFit", "TaintToleration", "X"]),
    _CELL,
    _NAMES,
)


def _both(width: int, calls: list[tuple[str, object, object]]) -> tuple[str, str]:
    """The same calls through rich and through :class:`PlainOut`: their outputs."""
    rich_console, rich_buffer = piped_console(width)
    plain_console, plain_buffer = piped_console(width)
    rich_out = why_pending_text._RichOut(rich_console)
    plain_out = PlainOut(plain_console, why_pending_text.node_table)
    for name, first, second in calls:
        for out in (rich_out, plain_out):
            getattr(out, name)(*((first,) if name == "table" else (first, second)))
    for out, console in ((rich_out, rich_console), (plain_out, plain_console)):
        out.flush()
        console.file.flush()
    return rich_buffer.getvalue(), plain_buffer.getvalue()


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(_ROW, min_size=1, max_size=5), width=st.integers(8, 200))
def test_table_as_rich_lays_it_out(rows: list[tuple[str, str, str, str]], width: int) -> None:
    rich_text, plain_text = _both(width, [("table", rows, None)])
    assert plain_text == rich_text


@settings(max_examples=300, deadline=None)
@given(
    text=_CELL,
    name=_NAMES,
    width=st.integers(8, 200),
    style=st.sampled_from(["", "[yellow]", "[bold]x:[/bold] "]),
)
def test_lines_as_rich_prints_them(text: str, name: str, width: int, style: str) -> None:
    from rich.markup import escape

    markup = f"{style}{escape(text)}" if style != "[yellow]" else f"[yellow]{escape(text)}[/yellow]"
    plain = ("x: " if style.startswith("[bold]") else "") + text
    title = f"[bold cyan]{name}[/bold cyan]  [dim](scheduler)[/dim]"
    rich_text, plain_text = _both(
        width,
        [
            ("soft", markup, plain),
            ("line", title, f"{name}  (scheduler)"),
            ("line", "", ""),
            ("line", name + "\n", name + "\n"),
        ],
    )
    assert plain_text == rich_text


def test_simple_is_conservative() -> None:
    assert simple("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")
    assert not simple("tab\there") and not simple("é") and not simple("a\\b") and not simple("a\nb")


def test_a_table_rich_would_cut_goes_to_rich() -> None:
    assert table_lines([HEADERS, ("1", "NodeResourcesFit", "y" * 50, "z")], 30) is None


def _report(monkeypatch: pytest.MonkeyPatch, width: int, plain: bool) -> str:
    from click.testing import CliRunner

    from gpuplane.cli.main import cli

    if not plain:
        monkeypatch.setattr(why_pending_text, "_out_for", why_pending_text._RichOut)
    result = CliRunner().invoke(
        cli, ["why-pending", "--cluster", DEMO], env={"COLUMNS": str(width), "NO_COLOR": None}
    )
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("width", [40, 80, 120, 160, 300])
def test_demo_report_plain_equals_rich(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    plain = _report(monkeypatch, width, plain=True)
    monkeypatch.undo()
    assert plain == _report(monkeypatch, width, plain=False)


def test_demo_report_pinned_text_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal the report is rich's, with its styles: the first lines pinned."""
    from gpuplane.report import console as console_module

    buffer = io.StringIO()
    buffer.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(console_module.sys, "stdout", buffer)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    from gpuplane.app import why_pending as app
    from gpuplane.app.outcome import CLI
    from gpuplane.cli.common import cli_messages

    outcome = app.run(app.WhyPendingRequest(cluster=DEMO), cli_messages(), CLI)
    why_pending_text.render_text(outcome.explanations, outcome.scheduler)
    text = buffer.getvalue()
    assert "\x1b[1m" in text  # styled
    plain_lines = [line.rstrip() for line in _strip_ansi(text).splitlines()]
    assert plain_lines[0].endswith("wording)")
    assert plain_lines[1] == ""
    assert any(line.startswith("nodes  ") or line.startswith("nodes    ") for line in plain_lines)


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
