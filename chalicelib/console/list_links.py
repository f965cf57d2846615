"""Links between the pages of a console list (incidents, alerts, a status page's followers): the
filters the person chose, kept, and the offset of the page wanted (none for the first)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlencode


def page_link(path: str, filters: Iterable[tuple[str, str]], offset: int) -> str:
    pairs = list(filters)
    if offset:
        pairs.append(("offset", str(offset)))
    return path + ("?" + urlencode(pairs) if pairs else "")
