"""Render each rule's docs page (kept next to the rule) into docs/rules/.

``python -m gpuplane.lint.docs [OUT_DIR]`` writes ``<id>.md`` per rule and an
``index.md``; ``gpuplane explain ID`` prints the same page (the Ruff model:
the docs site is generated from the code, never written twice).

Every page gets a ``## Background`` section linking the rule's knowledge-base section
(:func:`gpuplane.knowledge.section_for_rule`). It is added here, not written in each rule's
docs, so the link cannot go stale or be forgotten, and the rule text and the knowledge base
each say their part once.
"""

from __future__ import annotations

import os
import sys

from gpuplane.lint.registry import CATEGORIES, RuleMeta, all_rules

_CONTEXT = {
    "none": "works on manifests alone",
    "optional": "exact with `--cluster` (works without it)",
    "required": "needs `--cluster` (silent without it)",
}


# Relative to docs/rules/<id>.md, where the generated pages live.
SECTIONS_LINK = "../../src/gpuplane/knowledge/sections/{}.md"


def background(rule_id: str) -> str:
    """The ``## Background`` section of a rule's page: a link to its knowledge-base section
    and the ``gpuplane ask`` hint; empty when no section claims the rule (the knowledge-base
    tests make sure every registered rule has one)."""
    from gpuplane.knowledge import section_for_rule

    sec = section_for_rule(rule_id)
    if sec is None:
        return ""
    link = SECTIONS_LINK.format(sec.id)
    return f"## Background\n\nKnowledge base: [{sec.title}]({link}) (`gpuplane ask` searches it).\n"


def _with_background(docs: str, rule_id: str) -> str:
    """The rule's docs with its Background section before ``## References`` (or at the end)."""
    extra = background(rule_id)
    if not extra:
        return docs + "\n"
    at = docs.find("\n## References")
    if at < 0:
        return f"{docs}\n\n{extra}"
    return f"{docs[:at].rstrip()}\n\n{extra}{docs[at:]}\n"


def render_page(meta: RuleMeta) -> str:
    """The full Markdown page of one rule: header table, the rule's own docs, Background."""
    head = [
        f"# {meta.id}",
        "",
        f"> {meta.summary}",
        "",
        "| severity | category | cluster context | `--fix` |",
        "|---|---|---|---|",
        f"| {meta.severity} | {meta.category} | {_CONTEXT[meta.context]} | {'yes' if meta.fixable else 'no'} |",
        "",
        f'Silence it on one object with the annotation `gpuplane.io/ignore: "{meta.id}"`, or for a whole '
        "repository with `disable: [" + meta.id + "]` in `.gpuplane.yaml`.",
        "",
    ]
    return "\n".join(head) + "\n" + _with_background(meta.docs.strip(), meta.id)


def render_index(rules: list[RuleMeta]) -> str:
    lines = [
        "# gpuplane lint rules",
        "",
        "Generated from the rule registry by `python -m gpuplane.lint.docs`.",
        "",
    ]
    for category in CATEGORIES:
        members = [m for m in rules if m.category == category]
        if not members:
            continue
        lines += [f"## {category}", "", "| id | severity | summary |", "|---|---|---|"]
        lines += [f"| [{m.id}]({m.id}.md) | {m.severity} | {m.summary} |" for m in members]
        lines.append("")
    return "\n".join(lines)


def write_docs(out_dir: str) -> list[str]:
    """Write every page; return the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    rules = all_rules()
    written = []
    for meta in rules:
        path = os.path.join(out_dir, f"{meta.id}.md")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(render_page(meta))
        written.append(path)
    index = os.path.join(out_dir, "index.md")
    with open(index, "w", encoding="utf-8") as handle:
        handle.write(render_index(rules))
    written.append(index)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_dir = args[0] if args else os.path.join("docs", "rules")
    written = write_docs(out_dir)
    print(f"wrote {len(written)} files to {out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
