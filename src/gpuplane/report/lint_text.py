"""Human output of ``gpuplane lint``: grouped by file, line-ordered, fix under each finding.

Layout (plain when piped, coloured on a TTY through rich, imported lazily)::

    k8s/train.yaml
      12:5  error    gpu-request-without-limit  Deployment team-a/train: container "trainer" ...
                     fix: set limits[nvidia.com/gpu]: 1 (the request defaults to the limit)

    3 findings (1 error, 2 warnings, 0 info) in 14 objects
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from gpuplane.lint.finding import Finding

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def plural(n: int, word: str) -> str:
    """``1 warning``, ``2 warnings``, ``3 info`` (the summary wording shared by lint and diagnose)."""
    if word == "info":
        return f"{n} info"
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary_line(summary: dict[str, int]) -> str:
    n = summary["findings"]
    if not n:
        return f"No findings in {plural(summary['objects'], 'object')}."
    return (
        f"{plural(n, 'finding')} ({plural(summary['error'], 'error')}, "
        f"{plural(summary['warning'], 'warning')}, {summary['info']} info) "
        f"in {plural(summary['objects'], 'object')}"
    )


def _groups(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.object.path or "<input>", []).append(f)
    return list(groups.items())


def render_plain(findings: list[Finding], summary: dict[str, int]) -> str:
    """The text report without colour (piped output, tests)."""
    lines: list[str] = []
    for path, items in _groups(findings):
        lines.append(path)
        width = max(len(f.rule) for f in items)
        for f in items:
            lines.append(f"  {path}:{f.line}  {f.severity:<7}  {f.rule:<{width}}  {f.message}")
            lines.append(f"      fix: {f.fix}")
        lines.append("")
    lines.append(summary_line(summary))
    return "\n".join(lines) + "\n"


def render(findings: list[Finding], summary: dict[str, int], stream: TextIO | None = None) -> None:
    """Write the report to ``stream`` (stdout): rich colours on a TTY, plain text otherwise."""
    from gpuplane.report.console import color_mode

    out = stream or sys.stdout
    tty = hasattr(out, "isatty") and out.isatty()
    mode = color_mode()
    if (not tty and mode != "always") or (tty and mode == "never"):
        out.write(render_plain(findings, summary))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False, soft_wrap=True, force_terminal=True if not tty else None)
    for path, items in _groups(findings):
        console.print(Text(path, style="bold underline"))
        width = max(len(f.rule) for f in items)
        for f in items:
            line = Text("  ")
            line.append(f"{path}:{f.line}", style="bold")
            line.append("  ")
            line.append(f"{f.severity:<7}", style=_STYLE.get(f.severity, ""))
            line.append("  ")
            line.append(f"{f.rule:<{width}}", style="magenta")
            line.append("  ")
            line.append(f.message)
            console.print(line)
            fix = Text("      fix: ", style="green")
            fix.append(f.fix)
            console.print(fix)
        console.print()
    style = "bold red" if summary["error"] else ("yellow" if summary["warning"] else "green")
    console.print(Text(summary_line(summary), style=style))
