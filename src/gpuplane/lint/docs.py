"""Render each rule's docs page (kept next to the rule) into docs/rules/.

``python -m gpuplane.lint.docs [OUT_DIR]`` writes ``<id>.md`` per rule and an
``index.md``; ``gpuplane explain ID`` prints the same page (the Ruff model:
the docs site is generated from the code, never written twice).
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


def render_page(meta: RuleMeta) -> str:
    """The full Markdown page of one rule: header table + the rule's own docs."""
    head = [
        f"# {meta.id}",
        "",
        f"> {meta.summary}",
        "",
        "| severity | category | cluster context | `--fix` |",
        "|---|---|---|---|",
        f"| {meta.severity} | {meta.category} | {_CONTEXT[meta.context]} | {'yes' if meta.fixable else 'no'} |",
        "",
        f"Silence it on one object with the annotation `gpuplane.io/ignore: \"{meta.id}\"`, or for a whole "
        "repository with `disable: [" + meta.id + "]` in `.gpuplane.yaml`.",
        "",
    ]
    return "\n".join(head) + "\n" + meta.docs.strip() + "\n"


def render_index(rules: list[RuleMeta]) -> str:
    lines = ["# gpuplane lint rules", "", "Generated from the rule registry by `python -m gpuplane.lint.docs`.", ""]
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
