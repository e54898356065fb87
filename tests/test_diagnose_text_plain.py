"""diagnose's text report writes a finding's simple lines without rich where rich prints no
style, and those are rich's very bytes (report/diagnose_text.py ``_write``).

Each case renders the same result both ways: as shipped, and with every line sent through rich
(``plain_lines.simple`` made to refuse every line), on a console that is not a terminal as
``make_console`` makes it; the demo cluster's report at several widths, then with findings whose
text rich must treat (tabs, wide and control characters, markup-like brackets, backslashes)
mixed among plain ones. On a terminal the report is rich's, with its styles: pinned too.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.report import diagnose_text, plain_lines
from piped_console import piped_console

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")


_RESULT: dict[str, Any] = {}


def _demo_result() -> Any:
    """The demo cluster's diagnosis, computed once (each case below renders it again)."""
    if "result" not in _RESULT:
        from gpuplane.app import diagnose as app
        from gpuplane.app.outcome import CLI
        from gpuplane.cli.common import cli_messages

        _RESULT["result"] = app.run(app.DiagnoseRequest(cluster=DEMO), cli_messages(), CLI).result
    return _RESULT["result"]


def _render(monkeypatch: pytest.MonkeyPatch, result: Any, width: int, *, plain: bool) -> str:
    console, buffer = piped_console(width)
    with monkeypatch.context() as patch:
        if not plain:
            patch.setattr(plain_lines, "simple", lambda text: False)
        diagnose_text.render(result, console)
    return buffer.getvalue()


@pytest.mark.parametrize("width", [40, 80, 120, 300])
def test_demo_report_plain_equals_rich(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    result = _demo_result()
    plain = _render(monkeypatch, result, width, plain=True)
    assert plain == _render(monkeypatch, result, width, plain=False)
    assert "Cluster findings" in plain


_WORDS = st.sampled_from(
    [
        "GPU",
        "nvidia.com/gpu",
        "[bold]",
        "[/x]",
        "é",
        "日本",
        "tab\there",
        "back\\slash",
        "\x1b[31m",
        "a\rb",
        "x" * 40,
        "",
    ]
)
_TEXT = st.lists(_WORDS, max_size=10).map(" ".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=6), width=st.integers(30, 200))
def test_odd_findings_plain_equals_rich(
    monkeypatch: pytest.MonkeyPatch, texts: list[tuple[str, str]], width: int
) -> None:
    result = _demo_result()
    findings = [*result.cluster_findings, *result.workload_findings]
    saved = [(f.message, f.fix) for f in findings]
    try:
        for finding, (message, fix) in zip(findings, texts, strict=False):
            finding.message, finding.fix = message, fix
        assert _render(monkeypatch, result, width, plain=True) == _render(
            monkeypatch, result, width, plain=False
        )
    finally:
        for finding, (message, fix) in zip(findings, saved, strict=True):
            finding.message, finding.fix = message, fix


@given(line=st.text(max_size=80), width=st.integers(8, 200))
def test_a_simple_line_is_what_rich_prints(line: str, width: int) -> None:
    """The gate itself: rich's ``print(Text(line), soft_wrap=True)`` of a simple line is the line."""
    from rich.text import Text

    console, buffer = piped_console(width)
    console.print(Text(line), soft_wrap=True)
    if plain_lines.simple(line):
        assert buffer.getvalue() == line.rstrip(" ") + "\n"


def test_terminal_report_is_styled(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal every line goes through rich: severities coloured, the first line pinned."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", highlight=False, width=100)
    result = _demo_result()
    diagnose_text.render(result, console)
    text = buffer.getvalue()
    assert "\x1b[1m" in text
    severities = {f.severity for f in [*result.cluster_findings, *result.workload_findings]}
    if "error" in severities:
        assert "\x1b[1;31merror" in text
    first = text.splitlines()[0]
    assert first.startswith("\x1b[1mgpuplane diagnose: ")


def _render_each_line(result: Any, console: Any) -> None:
    """The report as it was printed before: one rich print per line of every finding."""
    from rich.text import Text

    from gpuplane.report.console import wrap_hanging
    from gpuplane.report.inventory_text import render_inventory

    width = console.width
    for line in wrap_hanging(diagnose_text.header_line(result), width, 2):
        console.print(Text(line, style="bold"))
    console.print()
    for title, findings in (
        ("Cluster findings", result.cluster_findings),
        ("Workload findings", result.workload_findings),
    ):
        console.print(Text(f"{title} ({len(findings)})", style="bold underline"))
        if not findings:
            console.print("  none")
        for finding in findings:
            lines = diagnose_text.finding_lines(finding, width)
            head = Text(lines[0])
            head.stylize(diagnose_text._STYLE.get(finding.severity, ""), 2, 9)
            console.print(head, soft_wrap=True)
            for line in lines[1:]:
                console.print(Text(line), soft_wrap=True)
        console.print()
    render_inventory(result.inventory, console)
    console.print()
    for line in wrap_hanging(diagnose_text.summary_line(result), width, 2):
        console.print(Text(line, style="bold"))


def _terminal(width: int) -> tuple[Any, io.StringIO]:
    from rich.console import Console

    buffer = io.StringIO()
    return Console(
        file=buffer, force_terminal=True, color_system="standard", highlight=False, width=width
    ), buffer


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.tuples(_TEXT, _TEXT), max_size=6), width=st.integers(30, 200))
def test_terminal_report_as_printed_line_by_line(texts: list[tuple[str, str]], width: int) -> None:
    """On a terminal each section's lines go to rich in one print: the same bytes, styles and all."""
    result = _demo_result()
    findings = [*result.cluster_findings, *result.workload_findings]
    saved = [(f.message, f.fix) for f in findings]
    try:
        for finding, (message, fix) in zip(findings, texts, strict=False):
            finding.message, finding.fix = message, fix
        now, now_buffer = _terminal(width)
        diagnose_text.render(result, now)
        before, before_buffer = _terminal(width)
        _render_each_line(result, before)
        assert now_buffer.getvalue() == before_buffer.getvalue()
    finally:
        for finding, (message, fix) in zip(findings, saved, strict=True):
            finding.message, finding.fix = message, fix
