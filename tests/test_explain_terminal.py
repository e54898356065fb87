"""`gpuplane explain` on a terminal renders the rule page with rich (issue 17 item 2).

The command runs in a real pseudo-terminal (``pty``), so ``sys.stdout.isatty()`` is true as in a
user's shell; ``$COLUMNS`` sets the width rich renders to. The rendered page must carry no raw
Markdown syntax (heading hashes, bold asterisks, code fences) and no line wider than the
terminal, and keep the page's words. Piped, the page stays Markdown source (tests/test_text_width.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pty = pytest.importorskip("pty", reason="pseudo-terminals need a POSIX system")

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _explain_on_a_terminal(rule_id: str, columns: int) -> str:
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuplane", "explain", rule_id],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    assert process.wait(timeout=120) == 0
    return ANSI.sub("", b"".join(chunks).decode("utf-8")).replace("\r\n", "\n")


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("rule_id", ["gpu-request-without-limit", "gpu-fragmentation"])
def test_explain_renders_markdown_on_a_terminal(rule_id: str, columns: int) -> None:
    from gpuplane.rule_catalog import get_rule, render_page

    meta = get_rule(rule_id)
    assert meta is not None
    source = render_page(meta)
    # the page's own headings (a "# comment" inside a YAML code block is content, not a heading)
    headings, fenced = [], False
    for line in source.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            headings.append(line)
    assert len(headings) >= 4 and "`" in source  # the page has Markdown to render
    text = _explain_on_a_terminal(rule_id, columns)
    lines = text.splitlines()
    assert lines, "explain printed nothing"
    raw = [line for line in lines if line.strip() in headings]
    assert raw == [], f"raw Markdown headings: {raw}"
    assert "**" not in text and "`" not in text  # bold and inline code rendered, fences gone
    too_wide = [line for line in lines if len(line.rstrip()) > columns]
    assert too_wide == [], too_wide[:3]
    words = " ".join(text.split())
    assert rule_id in words
    for heading in ("What it catches", "Why it hurts", "How to fix", "Background"):
        assert heading in words
