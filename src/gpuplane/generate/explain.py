"""Design decisions: what the generator chose, for which field, and why.

Every renderer records its non-obvious choices here (why MIG for this pool, why
``WaitForFirstConsumer``, why consolidation is off for training pools). ``gpuplane generate
--explain`` prints them; the output README lists them too, so the reasoning travels with
the configuration it produced.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Decision:
    """One choice: the component, the blueprint field it answers, the choice and the reason.

    ``source`` cites the upstream document or code the reason rests on.
    """

    component: str
    subject: str
    choice: str
    why: str
    source: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "component": self.component,
            "subject": self.subject,
            "choice": self.choice,
            "why": self.why,
            "source": self.source,
        }


def format_decisions(decisions: list[Decision]) -> str:
    """Plain text, one block per decision, in render order (stage by stage)."""
    lines: list[str] = []
    for i, d in enumerate(decisions, 1):
        lines.append(f"{i}. [{d.component}] {d.subject}: {d.choice}")
        lines.append(f"   why: {d.why}")
        if d.source:
            lines.append(f"   source: {d.source}")
    return "\n".join(lines)


def decisions_markdown(decisions: list[Decision]) -> str:
    """The README section: a table of every decision."""
    rows = ["| # | component | subject | choice | why |", "|---|---|---|---|---|"]
    for i, d in enumerate(decisions, 1):
        why = d.why + (f" ({d.source})" if d.source else "")
        rows.append(f"| {i} | {d.component} | {d.subject} | {d.choice} | {why.replace('|', '/')} |")
    return "\n".join(rows)
