"""The neutral rule registry: given its packages by the layer above, docs beside each rule."""

from __future__ import annotations

import ast
from pathlib import Path

from gpuplane.rule_catalog import all_rules
from gpuplane.ruleset import load

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuplane"


def test_registry_imports_no_engine() -> None:
    """gpuplane.ruleset sits below lint and diagnose: no runtime import of either (type-only
    imports under TYPE_CHECKING aside)."""
    for path in (SRC / "ruleset").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only: TYPE_CHECKING blocks are `if` statements
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("gpuplane.lint", "gpuplane.diagnose")), (path, node.module)


def test_each_engine_loads_only_its_own_packages() -> None:
    lint_rules = load(("gpuplane.lint.rules",))
    cluster_rules = load(("gpuplane.diagnose.rules",))
    assert lint_rules and all(m.category != "cluster" for m in lint_rules)
    assert cluster_rules and all(m.category == "cluster" for m in cluster_rules)
    catalog = [m.id for m in all_rules()]
    assert sorted(catalog) == sorted(m.id for m in lint_rules + cluster_rules)
    assert len(set(catalog)) == len(catalog)


def test_docs_are_markdown_files_beside_each_rule_module() -> None:
    for meta in all_rules():
        docs = Path(meta.docs_path)
        module = docs.with_name(meta.check.__module__.rsplit(".", 1)[1] + ".py")
        assert docs.name == f"{meta.id}.md" and module.is_file(), meta.id
        assert meta.docs == docs.read_text(encoding="utf-8").strip() + "\n"


def test_no_markdown_left_in_rule_modules() -> None:
    """Rule pages are Markdown files; a rule module holds no ``## `` heading in a string."""
    for path in list((SRC / "lint" / "rules").rglob("*.py")) + list(
        (SRC / "diagnose" / "rules").rglob("*.py")
    ):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert "\n## " not in node.value, path
