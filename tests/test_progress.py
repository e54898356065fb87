"""Progress of long work on stderr (issue 14 item 5): shown on a terminal, silent when piped or
with ``-q``, and only for work that runs longer than the delay. No wall clock is asserted:
delays of 0 and of an hour stand for "long" and "quick" work."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane import progress
from gpuplane.cli.common import progress_display
from gpuplane.cli.main import cli
from gpuplane.report.progress import RichReporter

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _demo_json(tmp_path: Path) -> str:
    """The demo cluster as a kubectl-style JSON List (the loader's progress is on that path)."""
    import yaml

    with open(DEMO, encoding="utf-8") as handle:
        docs = [d for d in yaml.safe_load_all(handle) if d]
    items = []
    for doc in docs:
        items.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    path = tmp_path / "demo.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return str(path)


def test_without_a_reporter_work_reports_nothing() -> None:
    with progress.task("explaining 3 Pending pods", 3) as advance:
        advance(1)
        advance(2)


def test_long_work_on_a_terminal_shows_rich_progress(tmp_path: Path) -> None:
    from gpuplane.app import why_pending as why_pending_app
    from gpuplane.app.outcome import CLI, Messages

    source = _demo_json(tmp_path)
    screen = io.StringIO()
    reporter = RichReporter(screen, force_terminal=True, delay=0.0)
    request = why_pending_app.WhyPendingRequest(cluster=source, context=None, kubeconfig=None, label=source)
    with progress.reporting(reporter):
        outcome = why_pending_app.run(request, Messages(), CLI)
    shown = screen.getvalue()
    pending = len([e for e in outcome.explanations if e.pod is not None])
    assert f"explaining {pending:,} Pending pods" in shown
    assert "loading" in shown and "objects from" in shown
    assert "\x1b[" in shown  # drawn as a terminal display (rich), not plain lines


def test_quick_work_shows_nothing_even_on_a_terminal() -> None:
    screen = io.StringIO()
    reporter = RichReporter(screen, force_terminal=True, delay=3600.0)
    with progress.reporting(reporter), progress.task("running 12 cluster rules", 12) as advance:
        for _ in range(12):
            advance(1)
    assert screen.getvalue() == ""


def test_progress_display_needs_a_terminal_and_no_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # piped
    with progress_display(quiet=False):
        assert progress._REPORTER.get() is None
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with progress_display(quiet=True):
        assert progress._REPORTER.get() is None
    with progress_display(quiet=False):
        assert isinstance(progress._REPORTER.get(), RichReporter)
    assert progress._REPORTER.get() is None


@pytest.mark.parametrize(
    "argv",
    [
        ["why-pending", "--cluster", DEMO],
        ["diagnose", "--cluster", DEMO, "-f", "json"],
        ["inventory", "--cluster", DEMO, "-q"],
        ["lint", str(ROOT / "examples")],
    ],
    ids=["why-pending", "diagnose", "inventory-q", "lint"],
)
def test_piped_commands_print_no_progress(argv: list[str]) -> None:
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code in (0, 1), result.output
    for word in ("explaining", "running", "loading"):
        assert word not in result.stderr
