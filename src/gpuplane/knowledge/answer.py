"""Compose an answer from the best sections: their most relevant paragraphs, with sources.

Offline and extractive on purpose: every sentence of the answer is text a human
wrote and checked against upstream (the sections cite it), so the answer is
never more wrong than the knowledge base. The LLM mode (``knowledge.llm``) only
rephrases on top of the same retrieved sections.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpuplane.knowledge.search import Hit, Index, index, tokenize

# A section joins the answer when it scores at least this share of the best hit.
RELATIVE_CUTOFF = 0.5
MAX_SECTIONS = 3
# Character budget per section (the first, best section gets the most room).
CHARS_PER_SECTION = (1400, 900, 700)
MAX_UNITS = 6
UNIT_CUTOFF = 0.3
# A code block joins without being asked for when it scores this share of the best unit.
CODE_CUTOFF = 0.6

_HEADING = re.compile(r"^#{1,6} ")
_BULLET = re.compile(r"^\s*(?:[-*]|\d+\.) ")

NO_ANSWER = (
    "The knowledge base has nothing that matches this question. Try the exact Kubernetes "
    "names (a resource such as `nvidia.com/gpu`, a field such as `minAvailable`, a kind such as "
    "`ResourceQuota`), or list the rules with `gpuplane rules`."
)


@dataclass(slots=True)
class Unit:
    """A paragraph, list item, table or code block of a section, with the heading above it."""

    text: str
    heading: str
    order: int
    code: bool = False


@dataclass(slots=True)
class Answer:
    """The result of ``gpuplane ask``: Markdown text plus the sections it came from."""

    question: str
    answer: str
    sources: list[dict[str, str]]
    hits: list[Hit] = field(default_factory=list)
    mode: str = "offline"
    known: bool = True

    def to_json(self) -> dict[str, object]:
        """The JSON document of spec/cli.md: ``{"answer", "sources": [{"section", "title"}]}``."""
        return {"answer": self.answer, "sources": self.sources}


def split_units(body: str) -> list[Unit]:
    """Cut a Markdown body into answerable units; the References list and H1 are dropped."""
    units: list[Unit] = []
    heading = ""
    block: list[str] = []
    in_code = False

    def flush(code: bool = False) -> None:
        text = "\n".join(block).strip("\n")
        block.clear()
        if text.strip():
            units.append(Unit(text=text, heading=heading, order=len(units), code=code))

    for line in body.splitlines():
        if in_code:
            block.append(line)
            if line.lstrip().startswith("```"):
                in_code = False
                flush(code=True)
            continue
        if line.lstrip().startswith("```"):
            flush()
            in_code = True
            block.append(line)
            continue
        if _HEADING.match(line):
            flush()
            if line.startswith("# "):
                continue
            heading = line.lstrip("#").strip()
            if heading.lower() == "references":
                break
            continue
        if not line.strip():
            flush()
            continue
        if _BULLET.match(line) and block and not block[0].lstrip().startswith("|"):
            flush()  # each list item is its own unit; continuation lines stay with it
        block.append(line)
    if in_code:
        flush(code=True)
    else:
        flush()
    return units


def _score_units(units: list[Unit], weights: dict[str, float]) -> list[float]:
    """BM25-style scores of units against the query terms (unit length normalised)."""
    if not units or not weights:
        return [0.0] * len(units)
    tokens = [tokenize(u.text) for u in units]
    heads = [set(tokenize(u.heading)) for u in units]
    avg = sum(len(t) for t in tokens) / len(tokens) or 1.0
    scores = []
    for toks, head in zip(tokens, heads):
        counts: dict[str, int] = {}
        for t in toks:
            if t in weights:
                counts[t] = counts.get(t, 0) + 1
        norm = 1.2 * (0.5 + 0.5 * len(toks) / avg)
        score = sum(weights[t] * c * 2.2 / (c + norm) for t, c in counts.items())
        score += 0.3 * sum(weights[t] for t in head if t in weights)
        # breadth: a unit that covers more distinct query terms answers more of the question
        scores.append(score * (1.0 + 0.15 * math.log1p(len(counts))))
    return scores


def _pick(units: list[Unit], scores: list[float], budget: int, want_code: bool) -> list[Unit]:
    """The best units of one section, within a character budget, in reading order.

    A budget in characters (not units) lets several short, precise list items in
    where one long paragraph would otherwise take the room. Code blocks join
    when the question asks for an example, or when one matches strongly.
    """
    ranked = sorted(range(len(units)), key=lambda i: -scores[i])
    if not ranked or scores[ranked[0]] <= 0:
        return units[:1]
    # The cutoff is relative to the best *prose* unit: a code block that repeats the
    # question's exact strings must not push every explanation below the cutoff.
    prose = [scores[i] for i in ranked if not units[i].code]
    best = max(prose) if prose and max(prose) > 0 else scores[ranked[0]]
    chosen: list[Unit] = []
    used = 0
    code_taken = False
    for i in ranked:
        unit = units[i]
        if scores[i] < UNIT_CUTOFF * best or len(chosen) >= MAX_UNITS:
            break
        if unit.code:
            if code_taken or not (want_code or scores[i] >= CODE_CUTOFF * best):
                continue
            code_taken = True
        elif chosen and used + len(unit.text) > budget:
            continue
        chosen.append(unit)
        if not unit.code:
            used += len(unit.text)
    if want_code and not code_taken:
        code = [i for i in ranked if units[i].code and scores[i] > 0]
        if code:
            chosen.append(units[code[0]])
    # A chosen paragraph that ends with ':' announces what follows (list items, a
    # code block): without it the answer would stop mid-thought.
    for unit in list(chosen):
        if not unit.text.rstrip("* \n").endswith(":"):
            continue
        nxt = unit.order + 1
        while nxt < len(units) and units[nxt] not in chosen:
            chosen.append(units[nxt])
            if not _BULLET.match(units[nxt].text) or nxt - unit.order >= 5:
                break
            nxt += 1
            if nxt < len(units) and not _BULLET.match(units[nxt].text):
                break
    return sorted(chosen, key=lambda u: u.order)


def _join(units: list[Unit]) -> str:
    """Units in order; adjacent list items stay one list, other units are separate paragraphs."""
    out: list[str] = []
    prev: Unit | None = None
    for unit in units:
        if (
            out
            and prev is not None
            and unit.order == prev.order + 1
            and _BULLET.match(unit.text)
            and _BULLET.match(prev.text)
        ):
            out[-1] += "\n" + unit.text
        else:
            out.append(unit.text)
        prev = unit
    return "\n\n".join(out)


_CODE_WORDS = frozenset(
    {
        "example",
        "yaml",
        "manifest",
        "configure",
        "config",
        "snippet",
        "write",
        "sample",
        "setup",
        "create",
        "define",
        "spec",
        "template",
    }
)


def compose(question: str, hits: list[Hit], idx: Index) -> str:
    """Markdown answer: per chosen hit a bold title line and its most relevant units."""
    weights = idx.term_weights(question)
    want_code = bool(_CODE_WORDS & set(tokenize(question)))
    parts = []
    for rank, hit in enumerate(hits):
        units = split_units(hit.document.body)
        if not units:
            continue
        chosen = _pick(units, _score_units(units, weights), CHARS_PER_SECTION[min(rank, 2)], want_code)
        label = hit.document.title if hit.document.kind == "section" else f"Lint rule {hit.document.title}"
        parts.append(f"**{label}**\n\n" + _join(chosen))
    return "\n\n".join(parts)


def select_hits(hits: list[Hit], max_sections: int = MAX_SECTIONS) -> list[Hit]:
    """The best hit plus the following ones that score close enough to it."""
    if not hits:
        return []
    top = hits[0].score
    return [h for h in hits[:max_sections] if h.score >= RELATIVE_CUTOFF * top]


def sources_of(hits: list[Hit]) -> list[dict[str, str]]:
    return [{"section": h.document.id, "title": h.document.title} for h in hits]


def answer(question: str, max_sections: int = MAX_SECTIONS, include_rules: bool = True) -> Answer:
    """Answer ``question`` offline from the knowledge base (and rule docs)."""
    idx = index(include_rules)
    hits = select_hits(idx.search(question, limit=max(max_sections, 5)), max_sections)
    if not hits:
        return Answer(question=question, answer=NO_ANSWER, sources=[], hits=[], known=False)
    return Answer(question=question, answer=compose(question, hits, idx), sources=sources_of(hits), hits=hits)


__all__ = ["NO_ANSWER", "Answer", "Unit", "answer", "compose", "select_hits", "sources_of", "split_units"]
