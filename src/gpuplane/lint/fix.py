"""``gpuplane lint --fix``: apply the findings' patch operations to the source files.

Each operation becomes a minimal text edit: the YAML document is composed (PyYAML's pure-Python
composer, whose marks are character offsets) to find the exact span of the key or value the
operation touches, and only that span, or a block of new lines inserted after the last line of
the mapping or sequence it extends, changes. Every other byte of the file is kept: flow style
(``{a: 1}``), quoting, comments, blank lines, indentation, and (through
:func:`gpuplane.sources.writes.rewrite_file`) line endings. New lines follow the document's own
indentation. After each edit the document is parsed again and compared with the same operation
applied to the parsed data: an edit that would not produce exactly that data is not written, it
is reported as a problem instead.

Fixes are safe or unsafe (Ruff's model, astral-sh/ruff#7769): a safe fix keeps what the manifest
means, an unsafe one may change how it behaves; ``apply_fixes(..., unsafe=False)`` applies only
the safe ones.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any

from gpuplane.lint.finding import AppendItem, DeleteKey, Finding, PatchOp, RenameKey, SetValue

# Same document markers as gpuplane.sources.loader (kept in step with it).
_DOC_MARKER = re.compile(r"^---(?:[ \t].*)?$|^\.\.\.[ \t]*$", re.MULTILINE)
_SEQ_INDENT = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", re.MULTILINE)
_MAP_INDENT = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)[^\s#-]", re.MULTILINE)


class Unpatchable(Exception):
    """An operation that cannot be written as a minimal edit of this text."""


@dataclass(slots=True)
class FixOutcome:
    applied: int = 0
    files: list[str] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    diff: str = ""
    problems: list[str] = field(default_factory=list)


def applicable(finding: Finding, unsafe: bool) -> bool:
    """Whether ``--fix`` applies this finding's patch (unsafe ones only with ``--unsafe-fixes``)."""
    return bool(finding.patch) and (unsafe or finding.fix_safety == "safe")


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


def _indent_style(text: str) -> tuple[int, int]:
    """(mapping indent, sequence offset) the document uses, for the lines a fix adds."""
    mapping = 2
    m = _MAP_INDENT.search(text)
    if m and len(m.group(2)) > len(m.group(1)):
        mapping = len(m.group(2)) - len(m.group(1))
    s = _SEQ_INDENT.search(text)
    offset = max(0, len(s.group(2)) - len(s.group(1))) if s else 0
    return mapping, offset


# -- rendering new YAML ----------------------------------------------------------------------------


def _scalar(value: Any, style: str | None = None) -> str:
    """One scalar as YAML would read it back as ``value`` (quoted like ``style`` when a string)."""
    import yaml  # deferred for start-up time

    if isinstance(value, str) and style == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, str) and style == "'":
        return "'" + value.replace("'", "''") + "'"
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 20, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _block(value: Any, indent: int, step: int, offset: int) -> list[str]:
    """``value`` (a map or a list) as block YAML lines at ``indent`` columns."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict) and item:
                lines.append(f"{pad}{_scalar(key)}:")
                lines.extend(_block(item, indent + step, step, offset))
            elif isinstance(item, list) and item:
                lines.append(f"{pad}{_scalar(key)}:")
                lines.extend(_block(item, indent + offset, step, offset))
            else:
                lines.append(f"{pad}{_scalar(key)}: {_flow(item)}")
        return lines
    for item in value:
        if isinstance(item, (dict, list)) and item:
            inner = _block(item, indent + 2, step, offset)
            inner[0] = f"{pad}- " + inner[0][indent + 2 :]
            lines.extend(inner)
        else:
            lines.append(f"{pad}- {_flow(item)}")
    return lines


# -- locating nodes ----------------------------------------------------------------------------------


def _compose(text: str) -> Any:
    import yaml  # deferred for start-up time

    return yaml.compose(text, Loader=yaml.SafeLoader)


def _is_map(node: Any) -> bool:
    import yaml  # deferred for start-up time

    return isinstance(node, yaml.MappingNode)


def _is_seq(node: Any) -> bool:
    import yaml  # deferred for start-up time

    return isinstance(node, yaml.SequenceNode)


def _is_null(node: Any) -> bool:
    return (
        not _is_map(node)
        and not _is_seq(node)
        and node.tag == "tag:yaml.org,2002:null"
        and node.value in ("", "~", "null", "Null", "NULL")
    )


def _entry(node: Any, step: str | int) -> tuple[Any, Any] | None:
    """(key node, value node) of a mapping entry, or (None, item) of a sequence item."""
    if _is_map(node) and isinstance(step, str):
        for key, value in node.value:
            if not _is_map(key) and not _is_seq(key) and str(key.value) == step:
                return key, value
        return None
    if _is_seq(node) and isinstance(step, int) and -len(node.value) <= step < len(node.value):
        return None, node.value[step]
    return None


def _end(node: Any) -> int:
    """Offset just after the node's last character (a block collection ends with its last item)."""
    if (_is_map(node) or _is_seq(node)) and not node.flow_style and node.value:
        last = node.value[-1]
        return _end(last[1] if _is_map(node) else last)
    return int(node.end_mark.index)


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _object_path(document: Any, finding: Finding) -> tuple[str | int, ...]:
    """Path of the finding's object inside its document (``items[i]`` of a ``kind: List``)."""
    obj = finding.object

    def same(data: Any) -> bool:
        if not isinstance(data, dict) or data.get("kind") != obj.kind:
            return False
        meta = data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        ns = meta.get("namespace")
        name = meta.get("name") or meta.get("generateName") or ""
        return (str(ns) if ns else None, str(name)) == (obj.namespace, obj.name)

    if same(document):
        return ()
    items = document.get("items") if isinstance(document, dict) else None
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if same(item):
            return ("items", i)
    raise Unpatchable("object not found in its document")


# -- the edits ---------------------------------------------------------------------------------------


def _insert_entry(text: str, mapping: Any, key: str, value: Any, style: tuple[int, int]) -> str:
    """Add ``key: value`` as the last entry of ``mapping``."""
    step, offset = style
    if mapping.flow_style:
        close = int(mapping.end_mark.index) - 1
        if text[close] != "}":
            raise Unpatchable("flow mapping without its closing brace")
        entry = f"{_scalar(key)}: {_flow(value)}"
        if mapping.value:
            at = _end(mapping.value[-1][1])
            return text[:at] + ", " + entry + text[at:]
        return text[:close] + entry + text[close:]
    if not mapping.value:
        raise Unpatchable("empty block mapping")
    column = int(mapping.value[0][0].start_mark.column)
    lines = _block({key: value}, column, step, offset)
    at = _line_end(text, _end(mapping.value[-1][1]))
    return text[:at] + "\n" + "\n".join(lines) + text[at:]


def _replace_value(text: str, key: Any, node: Any, value: Any, style: tuple[int, int]) -> str:
    """Write ``value`` where ``node`` (the value of ``key``) is."""
    step, offset = style
    if not isinstance(value, (dict, list)) or not value:
        if _is_map(node) or _is_seq(node):
            if node.flow_style:
                return text[: node.start_mark.index] + _flow(value) + text[_end(node) :]
            raise Unpatchable("a block collection replaced by a scalar")
        if _is_null(node) and node.start_mark.index == node.end_mark.index:
            # `key:` with nothing after the colon
            colon = text.index(":", key.end_mark.index)
            return text[: colon + 1] + " " + _flow(value) + text[colon + 1 :]
        rendered = _flow(value) if isinstance(value, (dict, list)) else _scalar(value, node.style)
        return text[: node.start_mark.index] + rendered + text[node.end_mark.index :]
    if key is not None and (_is_null(node) or not (_is_map(node) or _is_seq(node)) or not node.flow_style):
        # a block value under its key: rewrite `key: ...` from the key to the value's last line
        start = int(key.start_mark.index)
        column = int(key.start_mark.column)
        lines = _block({key.value: value}, column, step, offset)
        body = "\n".join(lines)[column:]
        end = _line_end(text, _end(node)) if (_is_map(node) or _is_seq(node)) else int(node.end_mark.index)
        if not (_is_map(node) or _is_seq(node)):
            end = _line_end(text, end)
            tail = text[node.end_mark.index : end]
            if tail.strip() and not tail.strip().startswith("#"):
                raise Unpatchable("text after the value")
            body += tail
        return text[:start] + body + text[end:]
    return text[: node.start_mark.index] + _flow(value) + text[_end(node) :]


def _append_item(text: str, seq: Any, value: Any, style: tuple[int, int]) -> str:
    step, offset = style
    if seq.flow_style:
        close = int(seq.end_mark.index) - 1
        if text[close] != "]":
            raise Unpatchable("flow sequence without its closing bracket")
        if seq.value:
            at = _end(seq.value[-1])
            return text[:at] + ", " + _flow(value) + text[at:]
        return text[:close] + _flow(value) + text[close:]
    first = seq.value[0]
    line = _line_start(text, first.start_mark.index)
    dash = text.rfind("-", line, first.start_mark.index)
    if dash < 0:
        raise Unpatchable("sequence item without its dash")
    column = dash - line
    lines = _block([value], column, step, offset)
    at = _line_end(text, _end(seq.value[-1]))
    return text[:at] + "\n" + "\n".join(lines) + text[at:]


def _delete_entry(text: str, mapping: Any, index: int) -> str:
    key, value = mapping.value[index]
    if mapping.flow_style:
        if index + 1 < len(mapping.value):
            return text[: key.start_mark.index] + text[mapping.value[index + 1][0].start_mark.index :]
        if index == 0:
            return text[: key.start_mark.index] + text[_end(value) :]
        return text[: _end(mapping.value[index - 1][1])] + text[_end(value) :]
    if len(mapping.value) == 1:
        raise Unpatchable("the only entry of a block mapping")
    line = _line_start(text, key.start_mark.index)
    if text[line : key.start_mark.index].strip():
        # the first entry of a `- key: value` item: the next key moves up to the dash
        return text[: key.start_mark.index] + text[mapping.value[index + 1][0].start_mark.index :]
    end = _line_end(text, _end(value))
    return text[:line] + text[min(end + 1, len(text)) :]


def _apply_plain(data: Any, op: PatchOp) -> None:
    """The operation on plain parsed data: what the edited text must parse to."""
    node = data
    for step in op.path[:-1]:
        if isinstance(node, dict):
            if node.get(step) is None:
                if not isinstance(op, (SetValue, AppendItem)):
                    raise Unpatchable(f"no {step}")
                node[step] = {}
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node):
            node = node[step]
        else:
            raise Unpatchable(f"no {step}")
    last = op.path[-1]
    if isinstance(op, SetValue):
        node[last] = copy.deepcopy(op.value)
    elif isinstance(op, AppendItem):
        if not isinstance(node, dict):
            raise Unpatchable("not a mapping")
        if node.get(last) is None:
            node[last] = []
        if not isinstance(node[last], list):
            raise Unpatchable(f"{last} is not a list")
        node[last].append(copy.deepcopy(op.value))
    elif isinstance(op, RenameKey):
        if not isinstance(node, dict) or last not in node:
            raise Unpatchable(f"no {last}")
        if op.new_key in node:
            raise Unpatchable(f"{op.new_key} already present")
        items = [(op.new_key if k == last else k, v) for k, v in node.items()]
        node.clear()
        node.update(items)
    elif isinstance(op, DeleteKey):
        if not isinstance(node, dict) or last not in node:
            raise Unpatchable(f"no {last}")
        del node[last]


def apply_text_op(text: str, base: tuple[str | int, ...], op: PatchOp) -> str:
    """``op`` (its path relative to the object at ``base``) as a minimal edit of document ``text``."""
    import yaml  # deferred for start-up time

    style = _indent_style(text)
    root = _compose(text)
    path = (*base, *op.path)
    node, depth = root, 0
    parent_key = None
    for step in path[:-1]:
        found = _entry(node, step)
        if found is None or _is_null(found[1]):
            break
        parent_key, node = found
        depth += 1
    last = path[-1]
    if depth < len(path) - 1:
        # missing maps on the way: one new entry holding the rest of the path
        if isinstance(op, (RenameKey, DeleteKey)):
            raise Unpatchable(f"no {path[depth]}")
        rest: Any = [op.value] if isinstance(op, AppendItem) else op.value
        for step in reversed(path[depth + 1 :]):
            if not isinstance(step, str):
                raise Unpatchable("a list index on a missing path")
            rest = {step: rest}
        found = _entry(node, path[depth])
        if found is not None:  # present but null: `strategy:` with nothing under it
            new = _replace_value(text, found[0], found[1], rest, style)
        elif _is_map(node) and isinstance(path[depth], str):
            new = _insert_entry(text, node, str(path[depth]), rest, style)
        else:
            raise Unpatchable(f"cannot add {path[depth]}")
    else:
        found = _entry(node, last)
        if isinstance(op, SetValue):
            if found is not None:
                new = _replace_value(text, found[0], found[1], op.value, style)
            elif _is_map(node) and isinstance(last, str):
                new = _insert_entry(text, node, last, op.value, style)
            else:
                raise Unpatchable(f"cannot set {last}")
        elif isinstance(op, AppendItem):
            if found is not None and _is_seq(found[1]) and found[1].value:
                new = _append_item(text, found[1], op.value, style)
            elif found is not None and (_is_null(found[1]) or _is_seq(found[1])):
                new = _replace_value(text, found[0], found[1], [op.value], style)
            elif found is None and _is_map(node) and isinstance(last, str):
                new = _insert_entry(text, node, last, [op.value], style)
            else:
                raise Unpatchable(f"{last} is not a list")
        elif isinstance(op, RenameKey):
            if found is None or found[0] is None:
                raise Unpatchable(f"no {last}")
            if _entry(node, op.new_key) is not None:
                raise Unpatchable(f"{op.new_key} already present")
            key = found[0]
            new = text[: key.start_mark.index] + _scalar(op.new_key, key.style) + text[key.end_mark.index :]
        else:
            if found is None or found[0] is None:
                raise Unpatchable(f"no {last}")
            index = next(i for i, (k, _) in enumerate(node.value) if k is found[0])
            new = _delete_entry(text, node, index)
    del parent_key
    expected = yaml.safe_load(text)
    target = expected
    for step in base:
        target = target[step]
    _apply_plain(target, op)
    try:
        got = yaml.safe_load(new)
    except yaml.YAMLError as exc:
        raise Unpatchable(f"the edit would not parse ({exc.__class__.__name__})") from None
    if got != expected:
        raise Unpatchable("the edit would change more than the fix")
    return new


def fix_text(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[str]]:
    """Apply the patches of ``findings`` (all from one file) to ``text``: each finding's operations
    all or none, every other byte kept."""
    import yaml  # deferred for start-up time

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
        for f in todo:
            try:
                base = _object_path(yaml.safe_load(body), f)
                updated = body
                for op in f.patch:
                    updated = apply_text_op(updated, base, op)
            except (Unpatchable, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
                problems.append(f"{f.object.path}:{f.line}: {f.rule}: patch not applied ({exc})")
                continue
            body = updated
            fixed.append(f)
        pieces.append(text[cursor:start])
        pieces.append(body)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), fixed, problems


def apply_fixes(
    findings: list[Finding], *, dry_run: bool = False, follow_symlinks: bool = False, unsafe: bool = False
) -> FixOutcome:
    """Apply every applicable fix (safe ones; unsafe ones too with ``unsafe``); write the files
    (or, with ``dry_run``, return a unified diff).

    Files are rewritten through :func:`gpuplane.sources.writes.rewrite_file` (a unique temporary
    file in the same folder, the original's mode and line endings kept); a symlink is refused
    unless ``follow_symlinks``."""
    from gpuplane.sources.writes import WriteRefused, line_ending, rewrite_file  # for start-up time

    outcome = FixOutcome()
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if applicable(f, unsafe) and f.object.path and not f.object.path.startswith("<"):
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
