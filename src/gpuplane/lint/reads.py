"""What a lint rule module reads from its :class:`~gpuplane.lint.context.LintContext`, found
from its source (issue 14 item 4: import only the rules a file can trigger).

A rule can only report on an object it was given: an input object of a kind it asks
``ctx.by_kind`` for, a pod set of ``ctx.podsets``/``ctx.gpu_podsets`` (or a workload that could
not be expanded into one, ``ctx.expansion_problems``), or anything else it reaches through
``ctx.objects``. So, without ``--cluster``, a rule module whose kinds are absent from the input
and that reads no pod set (when there is none) cannot find anything, and need not even be
imported. This module works out those reads once,
when the rule index is written (:mod:`gpuplane.ruleset.index`), by walking the syntax
tree of each rule module and of the private rule modules it imports. It is conservative: a
``by_kind`` argument it cannot resolve to strings, an access to ``ctx.objects``, or ``ctx`` handed to a function outside the rule modules makes the
module :data:`ALWAYS` needed.
"""

from __future__ import annotations

import ast
import importlib
import sys
from typing import Any

from gpuplane.ruleset.index import ALWAYS

# Markers of a module's reads (beside "kind:<Kind>").
PODSETS = "podsets"
KIND_PREFIX = "kind:"

RULES_PACKAGE = "gpuplane.lint.rules"
# The modules whose source decides the reads (the rule index is rebuilt when they change).
READS_SOURCES = ("gpuplane.lint.reads", "gpuplane.lint.context")
# LintContext members that hand out pod sets, or what expanding workloads into them found
# wrong (the engine counts the input as having pod sets when either list is not empty).
_PODSET_MEMBERS = frozenset({"podsets", "gpu_podsets", "expansion_problems"})
# Members that reach objects other than by kind or pod set: the rule must always run.
_OPEN_MEMBERS = frozenset({"objects"})
_CONTEXT_NAME = "ctx"


def reads_of_module(module_name: str) -> list[str]:
    """Sorted reads of rule module ``module_name`` and the private rule modules it imports."""
    reads: set[str] = set()
    scanned = _closure(module_name)
    defined = {
        n.name for tree, _ in scanned.values() for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
    }
    for tree, namespace in scanned.values():
        reads |= _tree_reads(tree, namespace, defined)
    if ALWAYS in reads:
        return [ALWAYS]
    return sorted(reads)


def needed(reads: list[str], kinds: set[str], has_podsets: bool) -> bool:
    """Whether a module with these reads can report anything on input of ``kinds``."""
    for read in reads:
        if read == ALWAYS or (read == PODSETS and has_podsets):
            return True
        if read.startswith(KIND_PREFIX) and read[len(KIND_PREFIX) :] in kinds:
            return True
    return False


def _closure(module_name: str) -> dict[str, tuple[ast.Module, dict[str, Any]]]:
    """``module_name`` and every ``gpuplane.lint.rules`` module it imports, transitively, each
    as its syntax tree and its (imported) namespace, used to resolve constant names."""
    out: dict[str, tuple[ast.Module, dict[str, Any]]] = {}
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        module = importlib.import_module(name)
        path = str(module.__file__)
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
        out[name] = (tree, vars(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = node.module
                if base == RULES_PACKAGE or base.startswith(RULES_PACKAGE + "."):
                    todo.append(base)
                    todo.extend(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in sys.modules)
            elif isinstance(node, ast.Import):
                todo.extend(a.name for a in node.names if a.name.startswith(RULES_PACKAGE + "."))
    return out


def _is_context(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == _CONTEXT_NAME


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple | list | frozenset | set) and value and all(isinstance(v, str) for v in value):
        return sorted(value)
    return None


def _loop_kinds(tree: ast.Module, name: str, namespace: dict[str, Any]) -> list[str] | None:
    """The strings a ``for name in ...`` loop of the module iterates over, if every such loop
    iterates over literal strings or a module constant of strings."""
    found: list[str] = []
    loops = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name
    ]
    if not loops:
        return None
    for loop in loops:
        values: list[str] | None
        if isinstance(loop.iter, ast.Tuple | ast.List):
            items = [e.value for e in loop.iter.elts if isinstance(e, ast.Constant)]
            values = _strings(tuple(items)) if len(items) == len(loop.iter.elts) else None
        elif isinstance(loop.iter, ast.Name):
            values = _strings(namespace.get(loop.iter.id))
        else:
            values = None
        if values is None:
            return None
        found.extend(values)
    return found


def _kind_argument(arg: ast.expr, tree: ast.Module, namespace: dict[str, Any]) -> list[str] | None:
    if isinstance(arg, ast.Constant):
        return _strings(arg.value)
    if isinstance(arg, ast.Name):
        constant = _strings(namespace.get(arg.id))
        return constant if constant is not None else _loop_kinds(tree, arg.id, namespace)
    return None


def _tree_reads(tree: ast.Module, namespace: dict[str, Any], defined: set[str]) -> set[str]:
    reads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_context(node.value):
            if node.attr in _PODSET_MEMBERS:
                reads.add(PODSETS)
            elif node.attr in _OPEN_MEMBERS:
                reads.add(ALWAYS)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and _is_context(func.value) and func.attr == "by_kind":
            kinds = _kind_argument(node.args[0], tree, namespace) if node.args else None
            if kinds is None:
                reads.add(ALWAYS)
            else:
                reads.update(KIND_PREFIX + k for k in kinds)
            continue
        passed = [*node.args, *(k.value for k in node.keywords)]
        if any(_is_context(a) for a in passed):
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if callee not in defined:
                reads.add(ALWAYS)  # ctx escapes to code this walk does not see
    return reads
