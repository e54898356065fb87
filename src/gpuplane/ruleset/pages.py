"""Rule pages: the Markdown ``gpuplane explain ID`` prints and ``docs/rules/<id>.md`` holds.

A page is the header the registry knows (severity, category, context, fix, how to silence it),
the rule's own Markdown file, and a ``## Background`` section given by the caller (the
knowledge-base link, added by :mod:`gpuplane.rule_catalog`) placed before ``## References``.
"""

from __future__ import annotations

from gpuplane.ruleset.registry import CATEGORIES, RuleMeta

_TIER = {
    "default": "default",
    "opt-in": "opt-in (`--enable-all`, `profile: all` or `enable: [id]`)",
}
_CONTEXT = {
    "none": "works on manifests alone",
    "optional": "exact with `--cluster` (works without it)",
    "required": "needs `--cluster` (silent without it)",
}


def _with_background(docs: str, background: str) -> str:
    """The rule's docs with its Background section before ``## References`` (or at the end)."""
    if not background:
        return docs + "\n"
    at = docs.find("\n## References")
    if at < 0:
        return f"{docs}\n\n{background}"
    return f"{docs[:at].rstrip()}\n\n{background}{docs[at:]}\n"


def render_page(meta: RuleMeta, background: str = "") -> str:
    """The full Markdown page of one rule: header table, the rule's own docs, ``background``."""
    head = [
        f"# {meta.id}",
        "",
        f"> {meta.summary}",
        "",
        "| severity | category | tier | cluster context | `--fix` |",
        "|---|---|---|---|---|",
        f"| {meta.severity} | {meta.category} | {_TIER[meta.tier]} | {_CONTEXT[meta.context]} "
        f"| {'yes' if meta.fixable else 'no'} |",
        "",
        f'Silence it on one object with the annotation `ignore-rule.gpuplane.io/{meta.id}: "<reason>"` '
        f'(or `gpuplane.io/ignore: "{meta.id}"`), or for a whole repository with `disable: [{meta.id}]` '
        "in `.gpuplane.yaml`; suppressed findings are still counted in the summary.",
        "",
    ]
    return "\n".join(head) + "\n" + _with_background(meta.docs.strip(), background)


def render_index(rules: list[RuleMeta], generator: str) -> str:
    """The index page: one table per category, in catalog order."""
    lines = [
        "# gpuplane lint rules",
        "",
        f"Generated from the rule registry by `{generator}`.",
        "",
    ]
    for category in CATEGORIES:
        members = [m for m in rules if m.category == category]
        if not members:
            continue
        lines += [f"## {category}", "", "| id | severity | tier | summary |", "|---|---|---|---|"]
        lines += [f"| [{m.id}]({m.id}.md) | {m.severity} | {m.tier} | {m.summary} |" for m in members]
        lines.append("")
    return "\n".join(lines)
