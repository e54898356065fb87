"""GitHub Actions workflow commands (``-f github``): one annotation per finding.

Format from GitHub's docs "Workflow commands for GitHub Actions"
(``::error file={name},line={line},title={title}::{message}``); data and
property values are escaped as the actions/toolkit ``command.ts`` does
(``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; in properties also ``:`` and ``,``).
"""

from __future__ import annotations

from gpuplane.lint.finding import Finding

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: list[Finding]) -> str:
    """All annotations, newline-terminated (empty string when there are none)."""
    out: list[str] = []
    for f in findings:
        props = [f"file={_escape_property(f.object.path)}"] if f.object.path else []
        props.append(f"line={f.line}")
        props.append(f"title={_escape_property(f.rule)}")
        message = f"{f.message}\nfix: {f.fix}"
        out.append(f"::{_LEVEL.get(f.severity, 'warning')} {','.join(props)}::{_escape_data(message)}")
    return "".join(line + "\n" for line in out)
