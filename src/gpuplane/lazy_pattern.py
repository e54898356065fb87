"""Regular expressions compiled on their first use, not when their module is imported.

Why: ``re.compile`` is pure Python and costs 0.05-0.5 ms a pattern; a one-file lint imports
some fifty rule modules whose patterns mostly look at commands, images or error texts the file
may not have, and compiling them all was a few percent of its start-up (issue 14 item 4).
A :class:`LazyPattern` stands where the compiled pattern stood (``_IDLE.search(text)``) and
compiles once, on the first call; the answers are those of the compiled pattern. It covers the
methods the project calls; a pattern used in a loop over a whole cluster is better compiled
eagerly (each call here costs one Python call more).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, done on the first match, search, sub... call."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return compiled

    @property
    def pattern(self) -> str:
        return self._pattern

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self._pattern!r}, {self._flags!r})"
