"""Value classes for the start-up path: what ``@dataclass(slots=True)`` gives, without its cost.

``@dataclass`` writes each class's ``__init__``, ``__repr__`` and ``__eq__`` as source text and
``exec``\\ s it when its module is imported: about 4 M instructions (half a millisecond) a
class, and a one-file ``gpuplane lint`` imported 29 of them, a quarter of what gpuplane itself
cost it (issue 14 item 4). A :class:`Record` writes its ``__init__`` in its own module, where
the bytecode cache keeps it compiled, and inherits ``__repr__`` and ``__eq__`` (a
:class:`FrozenRecord` also ``__hash__`` and refusing assignment) that read the fields from
``__slots__``: the answers of the dataclass it replaces (``tests/test_records.py`` holds every
record to a dataclass built from it, on random values).

The fields are the class's annotated names, in order (``__slots__`` must name the same); a name
starting with ``_`` is a cache (a dataclass field with ``repr=False, compare=False``), left out
of ``repr`` and equality, and the names in a class's ``_not_compared`` are shown but not
compared (``compare=False``).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar

_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record (``dataclasses.FrozenInstanceError``'s role)."""


def _fields_of(cls: type) -> tuple[str, ...]:
    """The annotated fields of ``cls`` and its bases, bases first (as a dataclass orders them)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        if klass.__module__ == __name__:  # Record and FrozenRecord themselves
            continue
        # the class's own annotations; not inspect.get_annotations: importing inspect is start-up time
        annotations = klass.__dict__.get("__annotations__", {})  # noqa: RUF063
        names.extend(n for n, a in annotations.items() if not str(a).startswith("ClassVar"))
    return tuple(names)


def _slots_of(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    return names


class Record:
    """A mutable value class: equal to another of the same class with equal fields, unhashable
    (as a dataclass with ``eq`` and without ``frozen``)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()  # shown, in order
    _not_compared: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[Any] = staticmethod(lambda self: ())  # the tuple of the compared fields

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:  # FrozenRecord
            return
        fields = _fields_of(cls)
        if set(fields) != _slots_of(cls):
            raise TypeError(f"{cls.__qualname__}: __slots__ must name the annotated fields {fields}")
        cls._fields = tuple(name for name in fields if not name.startswith("_"))
        compared = tuple(name for name in cls._fields if name not in cls._not_compared)
        if len(compared) > 1:
            cls._values = attrgetter(*compared)  # a C getter returns the tuple; not a descriptor
        elif compared:
            only = compared[0]
            cls._values = staticmethod(lambda self: (getattr(self, only),))
        else:
            cls._values = staticmethod(lambda self: ())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == other._values(other))
        return NotImplemented

    __hash__: ClassVar[Any] = None  # unhashable, as a dataclass with eq and without frozen


class FrozenRecord(Record):
    """An immutable value class: hashable by its fields, assignment refused. Its ``__init__``
    sets the fields through ``object.__setattr__`` (as a frozen dataclass's does)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> list[Any]:
        return [getattr(self, name) for name in _fields_of(self.__class__)]

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(_fields_of(self.__class__), state, strict=True):
            _set(self, name, value)


# How a frozen record's ``__init__`` sets its fields (``set_field(self, "path", path)``).
set_field = _set
