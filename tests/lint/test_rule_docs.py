"""Every rule's docs page links its knowledge-base section, once, to a file that exists.

The page is what ``docs/rules/<id>.md`` holds (``rule_catalog.render_page(meta, docs_link=True)``:
the link is relative to ``docs/rules/``) and what ``gpuplane explain ID`` and MCP print
(``render_page(meta)``: the section named by its repository path, no relative link).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplane.knowledge import section_for_rule
from gpuplane.rule_catalog import all_rules, render_page

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "docs" / "rules"
_LINK = re.compile(r"^Knowledge base: \[([^\]]+)\]\(([^)]+)\) \(`gpuplane ask` searches it\)\.$", re.M)


def _rules():
    return all_rules()


@pytest.mark.parametrize("meta", _rules(), ids=lambda m: m.id)
def test_page_has_one_background_linking_an_existing_section(meta) -> None:
    page = render_page(meta, docs_link=True)
    assert page.count("## Background") == 1, meta.id
    assert "## Background" not in meta.docs, f"{meta.id}: render_page adds Background; drop it from the docs"
    section = section_for_rule(meta.id)
    assert section is not None, f"no knowledge-base section lists {meta.id} in its rules:"
    ((title, link),) = _LINK.findall(page)
    assert title == section.title
    assert link == f"../../src/gpuplane/knowledge/sections/{section.id}.md"
    assert (RULES_DIR / link).resolve() == Path(section.path).resolve()
    assert Path(section.path).is_file()
    # the section sits between the rule's own text and its references
    if "\n## References" in page:
        assert page.index("## Background") < page.index("\n## References")


def test_generated_pages_are_current() -> None:
    """docs/rules/ is regenerated whenever a rule's docs change (python -m gpuplane.rule_catalog docs/rules)."""
    for meta in _rules():
        path = RULES_DIR / f"{meta.id}.md"
        assert path.read_text(encoding="utf-8") == render_page(meta, docs_link=True), f"{path} is stale"


def test_explain_prints_the_background() -> None:
    from click.testing import CliRunner

    from gpuplane.cli.main import cli

    res = CliRunner().invoke(cli, ["explain", "gpu-request-limit-mismatch"])
    assert res.exit_code == 0, res.output
    assert res.output.count("## Background") == 1
    assert (
        "Knowledge base: Requesting GPUs in a pod - limits, requests and whole numbers, "
        "`src/gpuplane/knowledge/sections/requesting-gpus-in-pods.md` in the gpuplane repository "
        "(`gpuplane ask` searches it)."
    ) in res.output


@pytest.mark.parametrize("meta", _rules(), ids=lambda m: m.id)
def test_explain_page_has_no_relative_path(meta) -> None:
    """What ``explain`` and MCP print is read outside the repository's docs/rules/ folder: no
    ``../`` link (upstream sources are cited as URLs or repository paths), and the section's
    repository path names a file that exists."""
    page = render_page(meta)
    assert "../" not in page, meta.id
    section = section_for_rule(meta.id)
    assert section is not None
    path = f"src/gpuplane/knowledge/sections/{section.id}.md"
    assert f"`{path}` in the gpuplane repository" in page
    assert (ROOT / path).is_file()


def test_explain_cli_has_no_relative_path() -> None:
    from click.testing import CliRunner

    from gpuplane.cli.main import cli

    for meta in _rules()[:: max(1, len(_rules()) // 8)]:
        res = CliRunner().invoke(cli, ["explain", meta.id])
        assert res.exit_code == 0 and "../" not in res.output, meta.id


_RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)\s]+)\)")
_LOCAL_NOTES = re.compile(r"(?<![\w/`.-])reference/[\w.-]+\.md")


@pytest.mark.parametrize("meta", _rules(), ids=lambda m: m.id)
def test_page_cites_only_files_in_the_repository(meta) -> None:
    """Relative links resolve inside the repository, and no page cites the session's private
    notes (``reference/*.md``, not in the repository): upstream sources are cited by repository
    path or URL."""
    page = render_page(meta)
    for target in _RELATIVE_LINK.findall(page):
        assert (RULES_DIR / target).resolve().is_file(), (meta.id, target)
    assert not _LOCAL_NOTES.findall(page), meta.id
