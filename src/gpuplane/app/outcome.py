"""What a command gives back besides its document: unusable-input errors and ordered messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Literal, TypeVar

from gpuplane.records import FrozenRecord, Record, set_field

Result = TypeVar("Result")


class AppError(ValueError):
    """The input is unusable: one line saying why (the CLI exits 2, MCP returns a tool error)."""


MessageKind = Literal["note", "warning", "error", "input-error"]


class Message(FrozenRecord):
    """One thing worth telling the user, in the order it happened.

    ``note``: informational (a skipped file, nothing found in a folder). ``warning``: the
    result may be off (cluster version skew). ``error``: an input problem the command worked
    around (a bad snapshot item, a rule that failed); ``input-error``: the same, but a
    :class:`~gpuplane.sources.loader.LoadError` whose text already starts with its file name.
    """

    __slots__ = ("kind", "text")
    kind: MessageKind
    text: str

    def __init__(self, kind: MessageKind, text: str) -> None:
        set_field(self, "kind", kind)
        set_field(self, "text", text)


class Messages(Record):
    """The messages of one command, kept in order and passed to ``listener`` as they come."""

    __slots__ = ("items", "listener")
    listener: Callable[[Message], None] | None
    items: list[Message]

    def __init__(
        self, listener: Callable[[Message], None] | None = None, items: list[Message] | None = None
    ) -> None:
        self.listener = listener
        self.items = [] if items is None else items

    def add(self, kind: MessageKind, text: str) -> None:
        message = Message(kind, text)
        self.items.append(message)
        if self.listener is not None:
            self.listener(message)

    def note(self, text: str) -> None:
        self.add("note", text)

    def warning(self, text: str) -> None:
        self.add("warning", text)

    def error(self, text: str) -> None:
        self.add("error", text)

    def input_error(self, text: str) -> None:
        self.add("input-error", text)

    @property
    def errors(self) -> list[str]:
        """Every input problem, as the MCP documents list them in ``errors``."""
        return [m.text for m in self.items if m.kind in ("error", "input-error")]


class Surface(FrozenRecord):
    """How the calling front end names options and where it points for the rule list.

    ``streams`` is True when the caller shows each message as it comes (the CLI's stderr): an
    unusable-input error then says only what failed; otherwise (MCP) it carries the first
    problem too, the caller having no other place to see it. ``refuse_empty``: manifests that
    gave nothing but errors are an :class:`AppError` (MCP: an empty result would read as "no
    findings"); the CLI prints the errors and exits 2 itself.
    """

    __slots__ = ("option_prefix", "refuse_empty", "rules_hint", "streams", "word_separator")
    option_prefix: str
    rules_hint: str
    streams: bool
    refuse_empty: bool
    word_separator: str  # kubernetes-version (CLI) or kubernetes_version (MCP)

    def __init__(
        self,
        option_prefix: str,
        rules_hint: str,
        streams: bool,
        refuse_empty: bool,
        word_separator: str = "-",
    ) -> None:
        set_field(self, "option_prefix", option_prefix)
        set_field(self, "rules_hint", rules_hint)
        set_field(self, "streams", streams)
        set_field(self, "refuse_empty", refuse_empty)
        set_field(self, "word_separator", word_separator)

    def option(self, name: str) -> str:
        """The option as this front end spells it: ``--kubernetes-version``, ``kubernetes_version``."""
        words = name.replace("_", "-").split("-")
        return f"{self.option_prefix}{self.word_separator.join(words)}"


CLI = Surface(option_prefix="--", rules_hint="`gpuplane rules`", streams=True, refuse_empty=False)
MCP = Surface(
    option_prefix="",
    rules_hint="the list_rules tool",
    streams=False,
    refuse_empty=True,
    word_separator="_",
)


class Served(Record, Generic[Result]):
    """A service's result and whether some input was bad (the cluster source had errors: the
    CLI still reports on what was read, then exits 2)."""

    __slots__ = ("bad_input", "result")
    result: Result
    bad_input: bool

    def __init__(self, result: Result, bad_input: bool) -> None:
        self.result = result
        self.bad_input = bad_input


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
