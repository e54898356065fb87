"""Human output of ``gpuplane lint``: grouped by file, line-ordered, fix under each finding.

Layout (plain when piped, coloured on a TTY through rich, imported lazily)::

    k8s/train.yaml
      12:5  error    gpu-request-without-limit  Deployment team-a/train: container "trainer" ...
                     fix [*]: set limits[nvidia.com/gpu]: 1 (the request defaults to the limit)

    3 findings (1 error, 2 warnings, 0 info) in 14 objects
    [*] 1 fixable with the `--fix` option.

A fix line says whether ``--fix`` applies it (Ruff's marks, astral-sh/ruff#7769): ``[*]`` a
fix ``--fix`` applies, ``[unsafe fix]`` one that may change how the workload behaves and is
applied only with ``--unsafe-fixes`` (with that option given, it is ``[*]`` too).
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
    hidden = f"; {summary['suppressed']} suppressed" if summary.get("suppressed") else ""
    if not n:
        return f"No findings in {plural(summary['objects'], 'object')}{hidden}."
    return (
        f"{plural(n, 'finding')} ({plural(summary['error'], 'error')}, "
        f"{plural(summary['warning'], 'warning')}, {summary['info']} info) "
        f"in {plural(summary['objects'], 'object')}" + hidden
    )


def _groups(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.object.path or "<input>", []).append(f)
    return list(groups.items())


FINDING_INDENT = 6  # continuation lines of a finding's message
FIX_INDENT = 11  # continuation lines of its fix (under the text after "fix: ")


def fix_mark(f: Finding, unsafe_fixes: bool) -> str:
    """`` [*]`` (``--fix`` applies it), `` [unsafe fix]`` (only with ``--unsafe-fixes``) or ``""``."""
    if not f.patch:
        return ""
    return " [*]" if unsafe_fixes or f.fix_safety == "safe" else " [unsafe fix]"


def fix_hint_line(findings: Iterable[Finding], unsafe_fixes: bool) -> str:
    """Ruff's closing hint: how many findings ``--fix`` would fix, and how many more it would with
    ``--unsafe-fixes``; empty when none has a mechanical fix."""
    marks = [fix_mark(f, unsafe_fixes) for f in findings]
    safe, unsafe = marks.count(" [*]"), marks.count(" [unsafe fix]")
    if not safe and not unsafe:
        return ""
    more = ""
    if unsafe:
        more = f" ({unsafe} unsafe fix{'' if unsafe == 1 else 'es'} can be enabled with the `--unsafe-fixes` option)"
    if not safe:
        return f"No fixes available{more}."
    option = "`--fix --unsafe-fixes`" if unsafe_fixes else "`--fix`"
    return f"[*] {safe} fixable with the {option} option{more}."


def _finding_lines(
    path: str, f: Finding, rule_width: int, width: int | None, unsafe_fixes: bool = False
) -> tuple[list[str], list[str]]:
    """The message lines and the fix lines of one finding, wrapped at word boundaries to
    ``width`` (``None``: one line each).

    The message's continuation lines line up under its first word: after the location,
    severity and rule when those leave at least half the width for the message; otherwise the
    message starts on its own line under the location, indented by ``FINDING_INDENT``, so the
    padding that aligns rule ids never shows up as a gap inside a wrapped line."""
    from gpuplane.report.console import wrap_hanging  # deferred for start-up time

    prefix = f"  {path}:{f.line}  {f.severity:<7}  {f.rule:<{rule_width}}  "
    fix = wrap_hanging(f"      fix{fix_mark(f, unsafe_fixes)}: {f.fix}", width, FIX_INDENT)
    if width is None or len(prefix) + len(f.message) <= width:
        return [prefix + f.message], fix
    if len(prefix) <= width // 2:
        return wrap_hanging(prefix + f.message, width, len(prefix)), fix
    where = wrap_hanging(f"  {path}:{f.line}  {f.severity:<7}  {f.rule}", width, FINDING_INDENT)
    return where + wrap_hanging(" " * FINDING_INDENT + f.message, width, FINDING_INDENT), fix


def render_plain(
    findings: list[Finding],
    summary: dict[str, int],
    width: int | None = None,
    not_analysed: str | None = None,
    unsafe_fixes: bool = False,
) -> str:
    """The text report without colour (piped output, tests); wrapped to ``width`` when given.
    ``not_analysed`` is the closing line naming the objects no rule could analyse."""
    from gpuplane.report.console import wrap_hanging  # deferred for start-up time

    lines: list[str] = []
    for path, items in _groups(findings):
        lines.append(path)
        rule_width = max(len(f.rule) for f in items)
        for f in items:
            head, fix = _finding_lines(path, f, rule_width, width, unsafe_fixes)
            lines.extend(head)
            lines.extend(fix)
        lines.append("")
    lines.extend(wrap_hanging(summary_line(summary), width, 2))
    hint = fix_hint_line(findings, unsafe_fixes)
    if hint:
        lines.extend(wrap_hanging(hint, width, 2))
    if not_analysed:
        lines.extend(wrap_hanging(not_analysed, width, 2))
    return "\n".join(lines) + "\n"


def render(
    findings: list[Finding],
    summary: dict[str, int],
    stream: TextIO | None = None,
    not_analysed: str | None = None,
    unsafe_fixes: bool = False,
) -> None:
    """Write the report to ``stream`` (stdout): rich colours on a TTY, plain text otherwise;
    ``not_analysed`` (how many objects no rule could analyse, and why) closes it."""
    from gpuplane.report.console import color_mode, wrap_width  # deferred for start-up time

    out = stream or sys.stdout
    tty = hasattr(out, "isatty") and out.isatty()
    mode = color_mode()
    width = wrap_width(out)
    if (not tty and mode != "always") or (tty and mode == "never"):
        out.write(render_plain(findings, summary, width, not_analysed, unsafe_fixes))
        return
    from rich.console import Console  # deferred for start-up time
    from rich.text import Text

    from gpuplane.report.console import wrap_hanging

    console = Console(file=out, highlight=False, soft_wrap=True, force_terminal=True if not tty else None)
    for path, items in _groups(findings):
        console.print(Text(path, style="bold underline"))
        rule_width = max(len(f.rule) for f in items)
        for f in items:
            head, fix = _finding_lines(path, f, rule_width, width, unsafe_fixes)
            # style the prefix of the first line by offsets: the wrapping never splits it
            # (it only breaks at spaces after the rule column or inside a long message)
            first = Text(head[0])
            start = 2
            for part, style in (
                (f"{path}:{f.line}", "bold"),
                (f"{f.severity:<7}", _STYLE.get(f.severity, "")),
                (f.rule, "magenta"),
            ):
                first.stylize(style, start, min(start + len(part), len(head[0])))
                start += len(part) + 2 if part != f.rule else 0
            console.print(first)
            for line in head[1:]:
                console.print(Text(line))
            fix_first = Text(fix[0])
            fix_first.stylize("green", 0, min(fix[0].index(":") + 1, len(fix[0])))
            console.print(fix_first)
            for line in fix[1:]:
                console.print(Text(line))
        console.print()
    style = "bold red" if summary["error"] else ("yellow" if summary["warning"] else "green")
    for line in wrap_hanging(summary_line(summary), width, 2):
        console.print(Text(line, style=style))
    hint = fix_hint_line(findings, unsafe_fixes)
    for line in wrap_hanging(hint, width, 2) if hint else ():
        console.print(Text(line))
    if not_analysed:
        for line in wrap_hanging(not_analysed, width, 2):
            console.print(Text(line, style="dim"))
