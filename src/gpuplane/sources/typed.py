"""Typed validation of side inputs: a pydantic model per section, errors as one line.

A wrong type in a scenario or config file must read ``file:line: field.path: problem`` (exit 2),
never a traceback from deep inside an engine. :func:`validate` converts ``data`` with a pydantic
model (strict: no "5m" as a number of seconds) and turns the first problem into that line; the
line comes from the file itself (:class:`~gpuplane.sources.locate.DocumentLocator`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


class TypedInputError(ValueError):
    """A side input of the wrong shape: ``str()`` is ``path:line: field.path: problem``."""


def _line(path: str, steps: tuple[str | int, ...]) -> int | None:
    from gpuplane.sources.locate import DocumentLocator  # for start-up time

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(1 << 22)
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return DocumentLocator(text, 1).line_of(steps)
    except Exception:  # a locator problem must not hide the real error
        return None


def validate(model: type[M], data: Any, path: str, prefix: tuple[str | int, ...] = ()) -> M:
    """``data`` (the section at ``prefix`` of the file ``path``) as ``model``."""
    return _convert(model, data, path, prefix, lambda steps: _line(path, steps))


def validate_object(model: type[M], obj: Any, prefix: tuple[str | int, ...] = ()) -> M:
    """The section at ``prefix`` of a loaded manifest (a :class:`~gpuplane.k8s.manifest.Manifest`)
    as ``model``; the line comes from the manifest's own locator (the file it was read from)."""
    data: Any = obj.data
    for step in prefix:
        data = data.get(step) if isinstance(data, dict) else None
    label = f"{obj.kind} {obj.name}" if isinstance(obj.name, str) and obj.name else str(obj.kind)
    path = obj.path or label
    return _convert(model, data, path, prefix, lambda steps: obj.field_line(steps) if obj.path else None)


def _shown(got: Any) -> str:
    if isinstance(got, str | int | float | bool) or got is None:
        try:
            shown = repr(got)
        except ValueError:  # an integer beyond Python's int-to-str digit limit
            return "an integer of more than 4300 digits"
    else:
        shown = type(got).__name__
    return shown[:57] + "..." if len(shown) > 60 else shown


def _convert(
    model: type[M],
    data: Any,
    path: str,
    prefix: tuple[str | int, ...],
    line_of: Callable[[tuple[str | int, ...]], int | None],
) -> M:
    from pydantic import ValidationError  # for start-up time

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        steps = (*prefix, *(s for s in first.get("loc", ()) if isinstance(s, str | int)))
        field = ".".join(str(s) for s in steps) or "(document)"
        try:
            line = line_of(steps)
        except Exception:  # a locator problem must not hide the real error
            line = None
        where = f"{path}:{line}" if line else path
        msg = first.get("msg", "invalid")
        raise TypedInputError(f"{where}: {field}: {msg} (got {_shown(first.get('input'))})") from None
