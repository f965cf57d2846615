"""Content negotiation for the XML feeds (chalicelib.api.negotiation): the route's own type unless
the Accept header prefers text/xml, the most specific range deciding each type's q."""

from __future__ import annotations

import pytest

from chalicelib.api.negotiation import TEXT_XML, alternatives, base_type, choose

ATOM = "application/atom+xml"
OFFERED = [ATOM, TEXT_XML]


def test_alternatives_add_text_xml_to_application_xml_types_only() -> None:
    assert alternatives("application/atom+xml; charset=utf-8") == [ATOM, TEXT_XML]
    assert alternatives("application/rss+xml") == ["application/rss+xml", TEXT_XML]
    assert alternatives("text/calendar; charset=utf-8") == ["text/calendar"]
    assert alternatives("application/json") == ["application/json"]
    assert alternatives("text/xml") == [TEXT_XML]
    assert base_type(" Application/Atom+XML ; charset=utf-8") == ATOM


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        (None, ATOM),
        ("", ATOM),
        ("*/*", ATOM),  # a tie: the route's own type
        ("text/xml", TEXT_XML),
        ("text/*", TEXT_XML),
        ("TEXT/XML; charset=utf-8", TEXT_XML),
        ("application/atom+xml, text/xml;q=0.9, */*;q=0.8", ATOM),
        ("application/atom+xml;q=0.5, text/xml", TEXT_XML),
        ("text/xml;q=0.4, */*;q=0.5", ATOM),  # the specific range sets text/xml's q, lower than atom's
        ("application/json", ATOM),  # accepts neither: the own type, never a 406
        ("text/xml;q=0", ATOM),
        ("text/xml;q=oops", TEXT_XML),  # an unreadable q counts as 1
        ("garbage, ,;", ATOM),
    ],
)
def test_choose(accept: str | None, chosen: str) -> None:
    assert choose(accept, OFFERED) == chosen


def test_a_single_offer_is_always_chosen() -> None:
    assert choose("text/xml", ["text/calendar"]) == "text/calendar"
