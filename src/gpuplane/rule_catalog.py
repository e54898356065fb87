"""The whole rule catalog: lint's rule packages and diagnose's cluster rules, in one registry.

This module sits above both engines and names their rule packages for the neutral registry
(:mod:`gpuplane.ruleset`), so neither engine loads the other. ``gpuplane rules``, ``explain``,
``lint`` (rule-id validation, SARIF), MCP and ``ask`` read the catalog from here.

The catalog is read from the cached rule index (:mod:`gpuplane.ruleset.index`) when it is
fresh, so ``rules`` and ``explain`` import no rule module.
``python -m gpuplane.rule_catalog [OUT_DIR]`` writes ``<id>.md`` per rule and an ``index.md``
(the Ruff model: the docs site is generated from the code, never written twice). Every page
gets a ``## Background`` section linking the rule's knowledge-base section
(:func:`gpuplane.knowledge.section_for_rule`), added here so the link cannot go stale.
"""

from __future__ import annotations

import os
import sys

from gpuplane.ruleset import RuleMeta, find, load, pages

RULE_PACKAGES = ("gpuplane.lint.rules", "gpuplane.diagnose.rules")
GENERATOR = "python -m gpuplane.rule_catalog"
# The knowledge-base section as a path in the repository: what ``explain`` and MCP print, where
# a link relative to some folder would mean nothing to the reader.
SECTIONS_PATH = "src/gpuplane/knowledge/sections/{}.md"
# The same file relative to docs/rules/<id>.md, where the generated docs pages live (a link that
# works when the repository is browsed).
SECTIONS_LINK = "../../" + SECTIONS_PATH


def all_rules() -> list[RuleMeta]:
    """Every rule of the catalog, sorted by category (catalog order) then id."""
    return load(RULE_PACKAGES)


def get_rule(rule_id: str) -> RuleMeta | None:
    return find(rule_id, RULE_PACKAGES)


def background(rule_id: str, *, docs_link: bool = False) -> str:
    """The ``## Background`` section of a rule's page: its knowledge-base section and the
    ``gpuplane ask`` hint; empty when no section claims the rule (the knowledge-base tests make
    sure every registered rule has one). The section is named by its repository path, or, with
    ``docs_link`` (the pages under docs/rules/), linked relative to that folder."""
    from gpuplane.knowledge import rule_section  # for start-up time: the knowledge base is big

    found = rule_section(rule_id)
    if found is None:
        return ""
    section_id, title = found
    if docs_link:
        where = f"[{title}]({SECTIONS_LINK.format(section_id)})"
    else:
        where = f"{title}, `{SECTIONS_PATH.format(section_id)}` in the gpuplane repository"
    return f"## Background\n\nKnowledge base: {where} (`gpuplane ask` searches it).\n"


def render_page(meta: RuleMeta, *, docs_link: bool = False) -> str:
    """The full Markdown page of one rule, with its knowledge-base Background (``docs_link``:
    as written under docs/rules/, see :func:`background`)."""
    return pages.render_page(meta, background(meta.id, docs_link=docs_link))


def render_index(rules: list[RuleMeta]) -> str:
    return pages.render_index(rules, GENERATOR)


def write_docs(out_dir: str) -> list[str]:
    """Write every page; return the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    rules = all_rules()
    written = []
    for meta in rules:
        path = os.path.join(out_dir, f"{meta.id}.md")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(render_page(meta, docs_link=True))
        written.append(path)
    index = os.path.join(out_dir, "index.md")
    with open(index, "w", encoding="utf-8") as handle:
        handle.write(render_index(rules))
    written.append(index)
    return written


class CatalogRuleSource:
    """The catalog as :class:`gpuplane.knowledge.rule_source.RuleSource`: the knowledge base
    indexes its pages without importing this module (which sits above knowledge)."""

    def rules(self) -> list[RuleMeta]:
        return all_rules()

    def page(self, rule_id: str) -> str | None:
        meta = get_rule(rule_id)
        return render_page(meta) if meta is not None else None

    def input_files(self) -> list[str]:
        """Every module and docs page of the rule packages, found by path so that checking the
        index cache imports no rule."""
        root = os.path.dirname(os.path.abspath(__file__))
        files: list[str] = []
        for package in RULE_PACKAGES:
            top = os.path.join(root, *package.split(".")[1:])
            for directory, subdirs, names in os.walk(top):
                subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
                files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith((".py", ".md")))
        return files


RULE_SOURCE = CatalogRuleSource()


def install_in_knowledge() -> None:
    """Make ``gpuplane ask`` (and LLM mode's ``explain_rule``) search this catalog's pages."""
    from gpuplane.knowledge.rule_source import use  # for start-up time: only asking needs it

    use(RULE_SOURCE)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_dir = args[0] if args else os.path.join("docs", "rules")
    written = write_docs(out_dir)
    print(f"wrote {len(written)} files to {out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
