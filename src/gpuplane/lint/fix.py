"""``gpuplane lint --fix``: apply the findings' patch operations to the source files.

Files are edited with ruamel.yaml round-trip so comments, key order, quoting
and the rest of the formatting survive; only the YAML documents that get a
patch are re-emitted, every other byte of the file is kept as it was. The
document split is the loader's (``---``/``...`` markers), so ``Manifest.doc``
indexes the same pieces.
"""

from __future__ import annotations

import difflib
import io
import os
import re
from dataclasses import dataclass, field
from typing import Any

from gpuplane.lint.finding import AppendItem, DeleteKey, Finding, PatchOp, RenameKey, SetValue

# Same document markers as gpuplane.sources.loader (kept in step with it).
_DOC_MARKER = re.compile(r"^---(?:[ \t].*)?$|^\.\.\.[ \t]*$", re.MULTILINE)
_SEQ_INDENT = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", re.MULTILINE)
_MAP_INDENT = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)[^\s#-]", re.MULTILINE)


@dataclass(slots=True)
class FixOutcome:
    applied: int = 0
    files: list[str] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    diff: str = ""
    problems: list[str] = field(default_factory=list)


def document_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the non-empty YAML documents, as the loader numbers them."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _DOC_MARKER.finditer(text):
        spans.append((start, match.start()))
        marker = match.group(0)
        rest = marker[3:] if marker.startswith("---") else ""
        start = match.end() - len(rest)
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _indent_style(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation used by the document, for ruamel to reproduce."""
    mapping = 2
    m = _MAP_INDENT.search(text)
    if m and len(m.group(2)) > len(m.group(1)):
        mapping = len(m.group(2)) - len(m.group(1))
    s = _SEQ_INDENT.search(text)
    offset = len(s.group(2)) - len(s.group(1)) if s else 0
    offset = max(0, offset)
    return mapping, mapping + offset if offset else mapping, offset


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML  # deferred for start-up time

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    mapping, sequence, offset = _indent_style(text)
    y.indent(mapping=mapping, sequence=max(sequence, offset + 2), offset=offset)
    return y


def _walk(root: Any, path: tuple, create: bool) -> Any:
    from ruamel.yaml.comments import CommentedMap  # deferred for start-up time

    node = root
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                raise KeyError(step)
            node = node[step]
        else:
            if not isinstance(node, dict):
                raise KeyError(step)
            if step not in node or node[step] is None:
                if not create:
                    raise KeyError(step)
                node[step] = CommentedMap()
            node = node[step]
    return node


def _plain(value: Any) -> Any:
    """Convert plain Python values into ruamel's commented containers (block style)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq  # deferred for start-up time

    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _plain(v)
        return out
    if isinstance(value, list):
        return CommentedSeq([_plain(v) for v in value])
    return value


def apply_op(root: Any, op: PatchOp) -> None:
    """Apply one patch operation to a ruamel round-trip tree (raises KeyError when it cannot)."""
    from ruamel.yaml.comments import CommentedSeq  # deferred for start-up time

    if isinstance(op, SetValue):
        parent = _walk(root, op.path[:-1], create=True)
        parent[op.path[-1]] = _plain(op.value)
    elif isinstance(op, AppendItem):
        parent = _walk(root, op.path[:-1], create=True)
        key = op.path[-1]
        if key not in parent or parent[key] is None:
            parent[key] = CommentedSeq()
        parent[key].append(_plain(op.value))
    elif isinstance(op, RenameKey):
        parent = _walk(root, op.path[:-1], create=False)
        old = op.path[-1]
        if old not in parent:
            raise KeyError(old)
        if op.new_key in parent:
            raise KeyError(f"{op.new_key} already present")
        position = list(parent.keys()).index(old)
        comment = parent.ca.items.pop(old, None) if hasattr(parent, "ca") else None
        value = parent.pop(old)
        parent.insert(position, op.new_key, value)
        if comment is not None:
            parent.ca.items[op.new_key] = comment  # keep the end-of-line comment on the renamed key
    elif isinstance(op, DeleteKey):
        parent = _walk(root, op.path[:-1], create=False)
        del parent[op.path[-1]]


def _object_root(document: Any, finding: Finding) -> Any:
    """The finding's object inside a loaded document (unwrapping ``kind: List`` items)."""
    obj = finding.object
    if (
        isinstance(document, dict)
        and document.get("kind") == obj.kind
        and _meta(document) == (obj.namespace, obj.name)
    ):
        return document
    items = document.get("items") if isinstance(document, dict) else None
    if isinstance(items, list):
        for item in items:
            if (
                isinstance(item, dict)
                and item.get("kind") == obj.kind
                and _meta(item) == (obj.namespace, obj.name)
            ):
                return item
    raise KeyError("object not found in its document")


def _meta(data: dict) -> tuple[str | None, str]:
    meta = data.get("metadata") or {}
    ns = meta.get("namespace")
    return (str(ns) if ns else None, str(meta.get("name") or meta.get("generateName") or ""))


def fix_text(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[str]]:
    """Apply the patches of ``findings`` (all from one file) to ``text``."""
    spans = document_spans(text)
    by_doc: dict[int, list[Finding]] = {}
    for f in findings:
        by_doc.setdefault(f.object.doc, []).append(f)
    pieces: list[str] = []
    cursor = 0
    fixed: list[Finding] = []
    problems: list[str] = []
    for doc_index, (start, end) in enumerate(spans):
        todo = by_doc.get(doc_index)
        if not todo:
            continue
        body = text[start:end]
        y = _yaml(body)
        try:
            document = y.load(body)
        except Exception as exc:
            problems.append(f"{todo[0].object.path}:{todo[0].object.line}: cannot re-read document: {exc}")
            continue
        changed = False
        for f in todo:
            try:
                root = _object_root(document, f)
                for op in f.patch:
                    apply_op(root, op)
            except (KeyError, TypeError, IndexError, AttributeError) as exc:
                problems.append(f"{f.object.path}:{f.line}: {f.rule}: patch not applied ({exc})")
                continue
            fixed.append(f)
            changed = True
        if not changed:
            continue
        out = io.StringIO()
        y.dump(document, out)
        new_body = out.getvalue()
        lead = body[: len(body) - len(body.lstrip("\n"))]
        if body.startswith(lead) and not new_body.startswith(lead) and lead:
            new_body = lead + new_body.lstrip("\n")
        if not body.endswith("\n"):
            new_body = new_body.rstrip("\n")
        elif body.endswith("\n\n") and not new_body.endswith("\n\n"):
            new_body = new_body.rstrip("\n") + "\n" + body[len(body.rstrip("\n")) + 1 :]
        pieces.append(text[cursor:start])
        pieces.append(new_body)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), fixed, problems


def apply_fixes(
    findings: list[Finding], *, dry_run: bool = False, follow_symlinks: bool = False
) -> FixOutcome:
    """Apply every fixable finding; write files (or, with ``dry_run``, return a unified diff).

    Files are rewritten through :func:`gpuplane.sources.writes.rewrite_file` (a unique temporary
    file in the same folder, the original's mode and line endings kept); a symlink is refused
    unless ``follow_symlinks``."""
    from gpuplane.sources.writes import WriteRefused, line_ending, rewrite_file  # for start-up time

    outcome = FixOutcome()
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.patch and f.object.path and not f.object.path.startswith("<"):
            by_file.setdefault(f.object.path, []).append(f)
    diffs: list[str] = []
    for path, items in sorted(by_file.items()):
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
            original = raw.decode("utf-8").replace("\r\n", "\n")
        except OSError as exc:
            outcome.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        except UnicodeDecodeError:
            outcome.problems.append(f"{path}: not UTF-8; not rewritten")
            continue
        if path.endswith(".json"):
            outcome.problems.append(f"{path}: JSON files are not rewritten; apply the fixes by hand")
            continue
        updated, fixed, problems = fix_text(original, items)
        outcome.problems.extend(problems)
        if not fixed or updated == original:
            continue
        if not dry_run:
            try:
                rewrite_file(path, updated, newline=line_ending(raw), follow_symlinks=follow_symlinks)
            except OSError as exc:
                outcome.problems.append(str(exc) if isinstance(exc, WriteRefused) else f"{path}: {exc}")
                continue
        outcome.fixed.extend(fixed)
        outcome.applied += len(fixed)
        outcome.files.append(path)
        if dry_run:
            diffs.extend(
                difflib.unified_diff(
                    original.splitlines(keepends=True),
                    updated.splitlines(keepends=True),
                    fromfile=f"a/{os.path.normpath(path)}",
                    tofile=f"b/{os.path.normpath(path)}",
                )
            )
    outcome.diff = "".join(d if d.endswith("\n") else d + "\n" for d in diffs)
    return outcome
