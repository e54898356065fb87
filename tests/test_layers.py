"""The import layers of docs/architecture.md, enforced.

Every ``gpuplane.<package>`` may import only packages of a lower layer (and itself). The check
reads the source with ``ast``, so it sees imports inside functions too: a function-level import
is allowed for start-up time, never to reach upward. A second check refuses the other way of
hiding a cycle: a function-level import of a module whose own imports lead back to the importer.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "gpuplane"

# Bottom first. A package may import the packages of the layers before its own, never after.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("lazy_pattern",),  # regular expressions compiled on first use (start-up time)
    ("records",),  # value classes without dataclasses' import cost (start-up time)
    ("pyyaml",),  # PyYAML with its costly pattern pre-compiled (start-up time)
    ("cache",),  # where derived data is kept between runs
    ("progress",),  # long work reports progress here; the CLI decides who shows it
    ("k8s",),  # the model: Manifest, LoadError, typed objects, workloads, ClusterState
    ("gpu",),  # accelerator semantics over the model
    ("sources",),  # reading files, stdin, snapshots, live clusters into the model
    ("advise",),
    ("generate",),  # renders with advise's MIG planner
    ("scheduler",),
    ("why_pending",),
    ("ruleset",),  # the neutral rule registry
    ("lint",),  # schema rule validates with generate's schemas; placement rules ask the scheduler
    ("policy",),  # lint rules as ValidatingAdmissionPolicies
    ("knowledge",),
    ("diagnose",),  # cluster rules in the shared registry, why-pending explanations
    ("usage",),  # joins DCGM metrics with diagnose's inventory
    ("rule_catalog",),  # names the lint and diagnose rule packages; pages link the knowledge base
    ("report",),  # renders what engines computed
    ("app",),
    ("mcp",),
    ("cli",),
    ("__main__",),
)

# (importing module, imported package): known upward imports being removed, each with its reason.
ALLOWED: dict[tuple[str, str], str] = {}

# (importer, imported) function-level imports inside a cycle, being untangled by their owners.
ALLOWED_CYCLES: dict[tuple[str, str], str] = {}


def _rank() -> dict[str, int]:
    return {package: index for index, tier in enumerate(LAYERS) for package in tier}


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.Import | ast.ImportFrom, module: str, src: Path) -> Iterator[str]:
    """The ``gpuplane`` modules one statement imports (absolute or relative):
    ``from gpuplane.x import y`` is ``x.y`` when ``y`` is a submodule, else ``x``."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith("gpuplane."):
                yield alias.name[len("gpuplane.") :]
        return
    if node.level:
        package_parts = module.split(".")
        keep = len(package_parts) - node.level + (1 if _is_package(module, src) else 0)
        base = ".".join([*package_parts[:keep], *([node.module] if node.module else [])])
    elif node.module == "gpuplane" or (node.module or "").startswith("gpuplane."):
        base = node.module[len("gpuplane.") :] if node.module != "gpuplane" else ""
    else:
        return
    for alias in node.names:
        sub = f"{base}.{alias.name}" if base else alias.name
        yield sub if _is_module(sub, src) else base


@functools.cache
def _is_module(name: str, src: Path) -> bool:
    path = src.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _is_package(module: str, src: Path) -> bool:
    return (src.joinpath(*module.split(".")) / "__init__.py").exists() if module else True


class Import(NamedTuple):
    line: int
    target: str  # ``k8s.cluster``: the gpuplane module imported
    in_function: bool
    runtime: bool  # False inside ``if TYPE_CHECKING:`` (read by type checkers only)


class Module(NamedTuple):
    name: str
    path: Path
    imports: tuple[Import, ...]


def _imports_of(tree: ast.Module, module: str, src: Path) -> tuple[Import, ...]:
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, runtime: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, module, src):
                found.append(Import(node.lineno, target, in_function, runtime))
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            in_function = True
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            runtime = False
        for child in ast.iter_child_nodes(node):
            visit(child, in_function, runtime)

    visit(tree, False, True)
    return tuple(found)


@functools.cache
def _parsed(src: Path) -> tuple[Module, ...]:
    return tuple(_module(path, path.read_text(encoding="utf-8"), src) for path in sorted(src.rglob("*.py")))


def _module(path: Path, text: str, src: Path) -> Module:
    name = _module_name(path, src)
    return Module(name, path, _imports_of(ast.parse(text, str(path)), name, src))


def _sources(src: Path, planted: Mapping[str, str] | None = None) -> Iterator[Module]:
    """The package's modules; ``planted`` adds modules (relative path -> source) as if they were there."""
    yield from _parsed(src)
    for relative, text in (planted or {}).items():
        yield _module(src / relative, text, src)


def layer_violations(src: Path = SRC, planted: Mapping[str, str] | None = None) -> list[str]:
    """``file:line: a imports b`` for every import against the layer order."""
    rank = _rank()
    found: list[str] = []
    for module, path, imports in _sources(src, planted):
        own = module.split(".")[0]
        if own not in rank:
            if module:  # gpuplane/__init__.py itself
                found.append(f"{path}: package gpuplane.{own} is in no layer: add it to LAYERS")
            continue
        for line, target, _, _ in imports:
            other = target.split(".")[0]
            if not target:
                continue  # ``from gpuplane import __version__``: the root package holds only that
            if other == own:
                continue
            if other not in rank:
                found.append(f"{path}:{line}: gpuplane.{other} is in no layer: add it to LAYERS")
            elif rank[other] > rank[own] and not _allowed(module, other):
                found.append(
                    f"{path.relative_to(src.parent)}:{line}: {module} imports gpuplane.{target} "
                    f"({other} is above {own} in docs/architecture.md)"
                )
    return sorted(set(found))


def _allowed(module: str, other: str) -> bool:
    return (module, other) in ALLOWED


def _runtime_graph(src: Path, planted: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """Module -> the gpuplane modules it imports when run (anywhere but ``if TYPE_CHECKING``)."""
    modules = list(_sources(src, planted))
    names = {module.name for module in modules}
    return {
        module.name: {imp.target for imp in module.imports if imp.runtime and imp.target in names}
        for module in modules
    }


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen: set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(graph.get(current, ()))
    return False


def _function_cycles(src: Path, planted: Mapping[str, str] | None) -> Iterator[tuple[Module, Import]]:
    graph = _runtime_graph(src, planted)
    for module in _sources(src, planted):
        for imp in module.imports:
            inside = imp.in_function and imp.target in graph and imp.target != module.name
            if inside and _reaches(graph, imp.target, module.name):
                yield module, imp


def hidden_cycles(src: Path = SRC, planted: Mapping[str, str] | None = None) -> list[str]:
    """Function-level imports of a module from which the importer is reached again at run time."""
    return sorted(
        {
            f"{module.path.relative_to(src.parent)}:{imp.line}: {module.name} imports {imp.target} inside "
            f"a function, and {imp.target} leads back to {module.name}: a hidden import cycle"
            for module, imp in _function_cycles(src, planted)
            if (module.name, imp.target) not in ALLOWED_CYCLES
        }
    )


def test_imports_follow_the_layers() -> None:
    assert layer_violations() == []


def test_no_function_level_import_hides_a_cycle() -> None:
    assert hidden_cycles() == []


def test_the_allowed_exceptions_are_still_needed() -> None:
    """An exception whose import is gone must be deleted, so the lists only shrink."""
    rank = _rank()
    upward = {
        (module.name, imp.target.split(".")[0])
        for module in _sources(SRC)
        for imp in module.imports
        if rank.get(imp.target.split(".")[0], -1) > rank.get(module.name.split(".")[0], len(rank))
    }
    assert sorted(set(ALLOWED) - upward) == []
    cycles = {(module.name, imp.target) for module, imp in _function_cycles(SRC, None)}
    assert sorted(set(ALLOWED_CYCLES) - cycles) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "k8s/probe.py",
            "from gpuplane.sources.loader import load_paths\n",
            "k8s.probe imports gpuplane.sources.loader (sources is above k8s",
        ),
        (
            "gpu/probe.py",
            "def f():\n    from gpuplane.lint import engine\n",
            "gpu.probe imports gpuplane.lint.engine (lint is above gpu",
        ),
        ("k8s/probe.py", "from ..scheduler import framework\n", "k8s.probe imports gpuplane.scheduler"),
    ],
)
def test_a_forbidden_import_fails(module: str, source: str, expected: str) -> None:
    """The check bites: a planted upward import (module level or inside a function) is named."""
    found = layer_violations(planted={module: source})
    assert any(expected in line for line in found), found


def test_a_hidden_cycle_fails() -> None:
    planted = {
        "k8s/probe_a.py": "import gpuplane.k8s.probe_b\n",
        "k8s/probe_b.py": "def f():\n    import gpuplane.k8s.probe_a\n",
    }
    found = hidden_cycles(planted=planted)
    assert any("k8s.probe_b imports k8s.probe_a inside a function" in line for line in found), found


_STDLIB = frozenset(__import__("sys").stdlib_module_names)


def _import_roots(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    return ["gpuplane"] if node.level else [(node.module or "").split(".")[0]]


def _function_import_blocks(tree: ast.Module) -> Iterator[list[ast.Import | ast.ImportFrom]]:
    """Runs of consecutive import statements inside function bodies (at any depth)."""

    def visit(node: ast.AST, in_function: bool) -> Iterator[list[ast.Import | ast.ImportFrom]]:
        for field in ("body", "orelse", "finalbody", "handlers"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            run: list[ast.Import | ast.ImportFrom] = []
            for statement in statements:
                if in_function and isinstance(statement, ast.Import | ast.ImportFrom):
                    run.append(statement)
                    continue
                if run:
                    yield run
                    run = []
                if isinstance(statement, ast.AST):
                    nested = in_function or isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
                    yield from visit(statement, nested)
            if run:
                yield run

    yield from visit(tree, False)


def undocumented_function_imports(src: Path = SRC) -> list[str]:
    """Function-level imports of gpuplane or third-party modules without a start-up comment.

    Imports stay inside functions only to keep start-up instant (the layer and cycle tests above
    forbid every other reason); each run of them says so in a comment on or just above it.
    Standard-library imports are exempt: they cannot form a cycle and cost nothing to defer.
    """
    found = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for run in _function_import_blocks(ast.parse(text)):
            if all(root in _STDLIB or root == "__future__" for node in run for root in _import_roots(node)):
                continue
            span = lines[max(run[0].lineno - 2, 0) : run[-1].end_lineno or run[-1].lineno]
            if not any("start-up" in line for line in span):
                found.append(f"{path.relative_to(src)}:{run[0].lineno}")
    return found


def test_function_level_imports_say_they_are_for_start_up_time() -> None:
    assert undocumented_function_imports() == []


def test_an_undocumented_function_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def f():\n    from gpuplane.k8s import quantity\n\n"
        "def g():\n    import sys\n\n"
        "def h():\n    import yaml  # deferred for start-up time\n",
        encoding="utf-8",
    )
    assert undocumented_function_imports(tmp_path) == ["m.py:2"]
