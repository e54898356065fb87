"""A lint finding and the mechanical patches that fix it.

A finding points at one field of one object (so the report can give the line of
the offending field, not just of the object) and always carries a human fix.
Rules with a safe mechanical fix also attach patch operations; ``--fix`` applies
them to the source file (lint/fix.py), and a future admission webhook can apply
the same operations as a JSON patch (the Polaris model in design.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplane.records import FrozenRecord, set_field
from gpuplane.ruleset.registry import SEVERITIES as SEVERITIES
from gpuplane.sources.manifest import FieldPath, Manifest

# Rank used for --fail-on and sorting: higher is more severe.
SEVERITY_RANK = {"info": 1, "warning": 2, "error": 3}


# Records, not dataclasses: every lint imports them (gpuplane.records).
class SetValue(FrozenRecord):
    """Set the field at ``path`` to ``value``, creating missing maps on the way."""

    __slots__ = ("path", "value")
    path: FieldPath
    value: Any

    def __init__(self, path: FieldPath, value: Any) -> None:
        set_field(self, "path", path)
        set_field(self, "value", value)

    def at(self, path: FieldPath) -> SetValue:
        """The same operation on the field at ``path``."""
        return SetValue(path, self.value)


class AppendItem(FrozenRecord):
    """Append ``value`` to the list at ``path`` (the list is created when missing)."""

    __slots__ = ("path", "value")
    path: FieldPath
    value: Any

    def __init__(self, path: FieldPath, value: Any) -> None:
        set_field(self, "path", path)
        set_field(self, "value", value)

    def at(self, path: FieldPath) -> AppendItem:
        """The same operation on the list at ``path``."""
        return AppendItem(path, self.value)


class RenameKey(FrozenRecord):
    """Rename the last key of ``path`` to ``new_key``, keeping its value and position."""

    __slots__ = ("new_key", "path")
    path: FieldPath
    new_key: str

    def __init__(self, path: FieldPath, new_key: str) -> None:
        set_field(self, "path", path)
        set_field(self, "new_key", new_key)

    def at(self, path: FieldPath) -> RenameKey:
        """The same operation on the key at ``path``."""
        return RenameKey(path, self.new_key)


class DeleteKey(FrozenRecord):
    """Remove the field at ``path``."""

    __slots__ = ("path",)
    path: FieldPath

    def __init__(self, path: FieldPath) -> None:
        set_field(self, "path", path)

    def at(self, path: FieldPath) -> DeleteKey:
        """The same operation on the field at ``path``."""
        return DeleteKey(path)


# Paths of every operation are relative to the object root (``Manifest.data``).
PatchOp = SetValue | AppendItem | RenameKey | DeleteKey


def format_field(path: FieldPath) -> str:
    """Render a field path the way kubectl explain and API errors do.

    ``("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")`` ->
    ``spec.containers[0].resources.limits[nvidia.com/gpu]`` (keys holding dots
    or slashes are bracketed, as the API server prints them in field errors).
    """
    out: list[str] = []
    for step in path:
        if isinstance(step, int) or "." in step or "/" in step:
            out.append(f"[{step}]")
        else:
            out.append(f".{step}" if out else step)
    return "".join(out)


# A dataclass: diagnose's ClusterFinding extends it with dataclass fields.
@dataclass(slots=True)
class Finding:
    """One problem: which rule, how bad, where (object + field), what and how to fix."""

    rule: str
    severity: str
    object: Manifest
    path: FieldPath
    message: str
    fix: str
    patch: tuple[PatchOp, ...] = ()
    # "safe" (--fix applies it) or "unsafe" (only with --unsafe-fixes): may change how it behaves
    fix_safety: str = "safe"
    _line: int = field(default=-1, repr=False, compare=False)

    @property
    def line(self) -> int:
        """Line of the offending field (nearest existing ancestor), computed once on demand."""
        if self._line < 0:
            self._line = self.object.field_line(self.path)
        return self._line

    @property
    def field(self) -> str:
        return format_field(self.path)

    @property
    def file(self) -> str:
        return self.object.path

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.object.path, self.line, -SEVERITY_RANK.get(self.severity, 0), self.rule)

    def to_json(self) -> dict[str, Any]:
        """The finding as spec/cli.md shows it (plus ``field``, ``fixable`` and ``fix_safety``:
        ``safe``, ``unsafe`` or null when there is no mechanical fix)."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "object": self.object.ref(),
            "path": self.object.path,
            "line": self.line,
            "field": self.field,
            "message": self.message,
            "fix": self.fix,
            "fixable": bool(self.patch),
            "fix_safety": self.fix_safety if self.patch else None,
        }
