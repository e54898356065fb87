"""Score ``gpuplane ask`` on a question set written from real issue threads.

The set (``bench/ask/questions.yaml``) holds questions taken from public GitHub issue
and pull-request threads, each with the terms any complete answer must contain, and
out-of-scope probes that must get "no knowledge". It is split once, by a rule on the
question id (:func:`half_of`), into a tuning half and an evaluation half: the thesaurus,
the acronyms and the no-knowledge threshold may only be tuned on the first, and the
second is what the figure reports. Keeping the rule in code lets a test prove nobody
moved a question between halves after seeing its score.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

TUNING = "tuning"
EVALUATION = "evaluation"
HALVES = (TUNING, EVALUATION)
COMPLETE, PARTIAL, NONE = "complete", "partial", "none"

DEFAULT_SET = Path(__file__).resolve().parents[3] / "bench" / "ask" / "questions.yaml"


def half_of(question_id: str) -> str:
    """The half a question belongs to: tuning when sha256(id) is even, else evaluation."""
    return TUNING if int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2 == 0 else EVALUATION


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    topic: str
    half: str
    source: str
    question: str
    must: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    """An out-of-scope question: the right answer is "no knowledge"."""

    id: str
    half: str
    question: str


@dataclass(frozen=True, slots=True)
class QuestionSet:
    questions: tuple[Question, ...]
    probes: tuple[Probe, ...]


def load(path: Path = DEFAULT_SET) -> QuestionSet:
    """Read the question set; raises ValueError on a malformed entry (names its id)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    questions = []
    for raw in data["questions"]:
        qid = str(raw["id"])
        must = raw.get("must") or []
        if not must or not raw.get("source", "").startswith("https://"):
            raise ValueError(f"question {qid}: needs an https source and at least one must term")
        questions.append(
            Question(
                id=qid,
                topic=str(raw["topic"]),
                half=str(raw["half"]),
                source=str(raw["source"]),
                question=str(raw["question"]),
                must=tuple(str(m) for m in must),
            )
        )
    probes = [
        Probe(id=str(p["id"]), half=str(p["half"]), question=str(p["question"])) for p in data["out_of_scope"]
    ]
    return QuestionSet(tuple(questions), tuple(probes))


def grade(answer_text: str, must: tuple[str, ...]) -> tuple[str, list[str]]:
    """``complete`` / ``partial`` / ``none`` and the missing terms (case-insensitive substrings)."""
    text = answer_text.lower()
    missing = [m for m in must if m.lower() not in text]
    if not missing:
        return COMPLETE, []
    return (PARTIAL if len(missing) < len(must) else NONE), missing


@dataclass(slots=True)
class Report:
    """Counts per half and per (half, topic); ``misses`` holds what each non-complete answer lacked."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    by_topic: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    misses: dict[str, list[str]] = field(default_factory=dict)
    probes: dict[str, Counter[str]] = field(default_factory=dict)
    probe_failures: list[str] = field(default_factory=list)

    def share_complete(self, half: str) -> float:
        c = self.counts.get(half, Counter())
        total = sum(c.values())
        return c[COMPLETE] / total if total else 0.0


def evaluate(
    qset: QuestionSet, ask: Callable[[str], tuple[str, bool]], halves: tuple[str, ...] = HALVES
) -> Report:
    """Run every question of ``halves`` through ``ask`` (question -> (answer text, knew it)).

    A question whose answer claims no knowledge scores ``none``; a probe scores right only
    when ``ask`` says it did not know.
    """
    report = Report()
    for q in qset.questions:
        if q.half not in halves:
            continue
        text, knew = ask(q.question)
        verdict, missing = grade(text, q.must) if knew else (NONE, list(q.must))
        report.counts.setdefault(q.half, Counter())[verdict] += 1
        report.by_topic.setdefault((q.half, q.topic), Counter())[verdict] += 1
        if verdict != COMPLETE:
            report.misses[q.id] = missing
    for p in qset.probes:
        if p.half not in halves:
            continue
        _, knew = ask(p.question)
        report.probes.setdefault(p.half, Counter())["right" if not knew else "wrong"] += 1
        if knew:
            report.probe_failures.append(p.id)
    return report


def format_report(report: Report) -> str:
    """Plain-text table: per half the totals, then per topic complete/partial/none."""
    lines = []
    for half in dict.fromkeys([*HALVES, *report.counts, *report.probes]):
        c = report.counts.get(half)
        if not c:
            continue
        total = sum(c.values())
        lines.append(
            f"{half}: {c[COMPLETE]}/{total} complete ({100 * c[COMPLETE] / total:.0f}%), "
            f"{c[PARTIAL]} partial, {c[NONE]} none"
        )
        for (h, topic), tc in sorted(report.by_topic.items()):
            if h == half:
                lines.append(
                    f"  {topic:<14} {tc[COMPLETE]:>2} complete {tc[PARTIAL]:>2} partial {tc[NONE]:>2} none"
                )
        p = report.probes.get(half)
        if p:
            lines.append(
                f"  out-of-scope probes: {p['right']}/{p['right'] + p['wrong']} answered 'no knowledge'"
            )
    return "\n".join(lines)


__all__ = [
    "COMPLETE",
    "DEFAULT_SET",
    "EVALUATION",
    "HALVES",
    "NONE",
    "PARTIAL",
    "TUNING",
    "Probe",
    "Question",
    "QuestionSet",
    "Report",
    "evaluate",
    "format_report",
    "grade",
    "half_of",
    "load",
]
