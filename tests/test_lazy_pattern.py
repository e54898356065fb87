"""LazyPattern answers as the compiled pattern does, and compiles only when first used."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gpuplane.lazy_pattern import LazyPattern

SOURCE = r"(?:^|\s)--(workers|nnodes)(?:=|\s+)(\d+)"
TEXT = st.text(alphabet=" -=abcdeklnorsw0123456789\n", max_size=40)


def test_nothing_is_compiled_before_the_first_call() -> None:
    lazy = LazyPattern(r"(unbalanced")  # compiling it would raise
    assert lazy.pattern == "(unbalanced"
    assert repr(lazy) == "LazyPattern('(unbalanced', 0)"


@given(TEXT)
def test_every_method_answers_as_the_compiled_pattern(text: str) -> None:
    lazy, compiled = LazyPattern(SOURCE, re.MULTILINE), re.compile(SOURCE, re.MULTILINE)

    def spans(match: re.Match[str] | None) -> tuple[int, int, tuple[str | None, ...]] | None:
        return None if match is None else (*match.span(), match.groups())

    assert spans(lazy.match(text)) == spans(compiled.match(text))
    assert spans(lazy.search(text, 1)) == spans(compiled.search(text, 1))
    assert spans(lazy.fullmatch(text)) == spans(compiled.fullmatch(text))
    assert [spans(m) for m in lazy.finditer(text)] == [spans(m) for m in compiled.finditer(text)]
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub(r"<\1>", text) == compiled.sub(r"<\1>", text)
    assert lazy.split(text, 1) == compiled.split(text, 1)
    assert lazy.compiled is lazy.compiled  # compiled once
