"""Typed validation of side inputs: a pydantic model per section, errors as one line.

A wrong type in a scenario or config file must read ``file:line: field.path: problem`` (exit 2),
never a traceback from deep inside an engine. :func:`validate` converts ``data`` with a pydantic
model (strict: no "5m" as a number of seconds) and turns the first problem into that line; the
line comes from the file itself (:class:`~gpuplane.sources.locate.DocumentLocator`).
"""

from __future__ import annotations

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
    from pydantic import ValidationError  # for start-up time

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        steps = (*prefix, *(s for s in first.get("loc", ()) if isinstance(s, str | int)))
        field = ".".join(str(s) for s in steps) or "(document)"
        line = _line(path, steps)
        where = f"{path}:{line}" if line else path
        got = first.get("input")
        shown = repr(got) if isinstance(got, str | int | float | bool) or got is None else type(got).__name__
        if len(shown) > 60:
            shown = shown[:57] + "..."
        raise TypedInputError(f"{where}: {field}: {first.get('msg', 'invalid')} (got {shown})") from None
