"""Paging the console's long lists, a hundred rows at a time, as the goals board does.

A list rendered whole grows with the home: thousands of requirements, standing intents or
gate runs made pages of megabytes that took seconds to build and to draw, and the standing
intents page read every intent's fire history, one query each, to show them all. A page
shows :data:`PAGE` rows; ``?offset=`` moves on, as the API's lists do, and the links keep
the list's filters. An offset past the end shows the last page (a link kept from a longer
list still lands somewhere), a negative one is refused (422).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import Query

__all__ = ["PAGE", "Offset", "page_of", "pager"]

PAGE = 100

#: The ``offset`` query parameter of a paged page.
Offset = Annotated[int, Query(ge=0, le=10_000_000)]

T = TypeVar("T")


def page_of(items: Sequence[T], offset: int, size: int = PAGE) -> tuple[list[T], int]:
    """The rows of the page at ``offset`` (the last page for an offset past the end), and the
    offset really shown."""
    offset = min(offset, max(0, len(items) - 1) // size * size)
    return list(items[offset : offset + size]), offset


def pager(
    url: Callable[..., str],
    slug: str,
    offset: int,
    shown: int,
    total: int,
    size: int = PAGE,
    /,
    *,
    param: str = "offset",
    **query: str,
) -> dict[str, Any]:
    """Where a list's Previous and Next links lead (``None`` at either end), with ``query``
    (its filters) kept in both, and which rows of how many the page shows. ``param`` names
    the offset in the links, for a page with two paged lists (the gate's runs and its
    waiting calls)."""
    before = max(0, offset - size)
    return {
        "first": offset + 1 if shown else 0,
        "last": offset + shown,
        "total": total,
        "prev": url(slug, **{**query, param: str(before) if before else ""}) if offset > 0 else None,
        "next": url(slug, **{**query, param: str(offset + size)}) if offset + shown < total else None,
    }
