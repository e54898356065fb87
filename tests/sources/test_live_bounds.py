"""Live listing is bounded (issue 11 item 4): a repeated ``continue`` token and a page limit stop
the list with one clear error instead of reading forever."""

from __future__ import annotations

import itertools
import json

from gpuplane.sources.catalog import RESOURCES
from gpuplane.sources.live import MAX_PAGES, LiveReader

NODES = next(r for r in RESOURCES if r.kind == "Node" and not r.group)


def _page(token: str) -> bytes:
    return json.dumps(
        {
            "kind": "NodeList",
            "apiVersion": "v1",
            "metadata": {"continue": token},
            "items": [{"metadata": {"name": "n"}}],
        }
    ).encode()


def test_a_repeated_continue_token_stops_the_list() -> None:
    reader = LiveReader(page_size=1)
    calls: list[dict[str, str] | None] = []

    def get(url: str, params: dict[str, str] | None = None) -> tuple[int, bytes]:
        calls.append(params)
        return 200, _page("same-token")

    reader._get = get  # type: ignore[method-assign]
    pages = list(reader._list(NODES, "v1", None))
    assert len(pages) == 2 and len(calls) == 2
    assert [str(e) for e in reader.session.errors] == [
        f"{reader.session.source}: cannot list nodes: the API server returned the same continue token twice; "
        "stopped (the list would never end)"
    ]


def test_a_page_limit_stops_an_endless_list() -> None:
    reader = LiveReader(page_size=1, max_pages=5)
    tokens = (f"t{i}" for i in itertools.count())
    calls = 0

    def get(url: str, params: dict[str, str] | None = None) -> tuple[int, bytes]:
        nonlocal calls
        calls += 1
        return 200, _page(next(tokens))

    reader._get = get  # type: ignore[method-assign]
    pages = list(reader._list(NODES, "v1", None))
    assert len(pages) == 5 and calls == 5
    assert [e.message for e in reader.session.errors] == [
        "cannot list nodes: more than 5 pages of 1; stopped (the API server keeps returning a continue token)"
    ]


def test_the_default_page_limit_covers_ten_million_objects() -> None:
    assert MAX_PAGES * 500 == 10_000_000
