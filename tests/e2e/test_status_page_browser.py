"""The human status page in a real browser: headless Chromium loads /status/tocsin-demo from the
running local stack and we read the text it rendered.

The demo data (chalicelib/local/demo.py) seeds the page this test expects. Skipped only when
Chromium is absent outside CI; in CI (CI set) a missing binary fails (`make test` installs it).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
import requests

from tests.e2e.browser import Element, dump_dom, is_png, needs_chromium, parse, screenshot
from tests.e2e.conftest import LocalStack

pytestmark = needs_chromium

PHONE = (390, 844)


@pytest.fixture(scope="module")
def page_url(stack: LocalStack) -> str:
    status_page = stack.demo["status_page"]
    assert status_page["slug"] == "tocsin-demo"
    assert status_page["url"] == f"{stack.base_url}/status/tocsin-demo"
    return str(status_page["url"])


@pytest.fixture(scope="module")
def served(stack: LocalStack, page_url: str) -> Element:
    """The HTML as the server sent it. Plain HTTP first: a failing route would otherwise show up
    only as Chromium's error page."""
    answer = requests.get(page_url, timeout=10)
    assert answer.status_code == 200, f"{answer.status_code} {answer.text[:500]}\n{stack.log()[-3000:]}"
    assert answer.headers["Content-Type"].startswith("text/html")
    return parse(answer.text)


@pytest.fixture(scope="module")
def rendered(served: Element, page_url: str) -> Element:
    return parse(dump_dom(page_url))


def test_works_without_javascript(served: Element, rendered: Element):
    # Nothing to run, and the browser's DOM holds exactly the text the server sent.
    assert served.find_all("script") == [] and rendered.find_all("script") == []
    # The footer names the minute each copy was rendered; the two fetches may straddle a minute.
    assert _without_minutes(rendered.find("body").text()) == _without_minutes(served.find("body").text())
    assert rendered.find("html").attrs["lang"] == "en"


def _without_minutes(text: str) -> str:
    return re.sub(r"\b\d{2}:\d{2} UTC\b", "HH:MM UTC", text)


def _section(document: Element, anchor: str) -> Element:
    return document.find("section", id=anchor)


def test_page_name_and_overall_status(rendered: Element):
    assert rendered.find("title").children == ["Tocsin Demo status"]
    assert rendered.find("h1").text() == "Tocsin Demo"
    banner = rendered.find("section", cls="banner")
    assert banner.find("h2").text() == "Degraded performance"
    assert [link.text() for link in banner.find_all("a")] == ["1 active incident", "1 upcoming maintenance"]


def test_components_by_section_and_group_with_status_text(rendered: Element):
    core = next(card for card in rendered.find_all("section", cls="card") if card.find("h3").text() == "Core services")
    rows = [row.text() for row in core.find_all("li", cls="row")]
    assert rows == ["Dashboard Operational", "Checkout API Degraded performance", "Billing API Operational"]
    apis = core.find("li", cls="group")
    assert apis.find("div", cls="row").text() == "APIs Degraded performance"


def test_active_incident_with_both_updates_newest_first(rendered: Element):
    cards = _section(rendered, "incidents").find_all("article")
    assert [card.find("h3").text() for card in cards] == ["Elevated checkout latency"]
    (card,) = cards
    assert card.find("p", cls="badges").text() == "Identified Minor impact"
    assert "Affects: Checkout API" in card.text()
    updates = card.find("ol", cls="updates").find_all("li")
    assert [(update.find("strong").text(), update.find("p", cls="body").text()) for update in updates] == [
        ("Identified", "A slow database query has been identified; a fix is rolling out."),
        ("Investigating", "We are investigating slow checkouts."),
    ]


def test_upcoming_maintenance(rendered: Element):
    cards = _section(rendered, "maintenance").find_all("article")
    assert [card.find("h3").text() for card in cards] == ["Database upgrade"]
    (card,) = cards
    assert card.find("p", cls="badges").text() == "Scheduled"
    assert "Affects: Billing API" in card.text()
    start, end = (time.attrs["datetime"] or "" for time in card.find("p", cls="meta").find_all("time"))
    assert start.endswith("T02:00:00Z") and end.endswith("T03:00:00Z")
    # The demo's past outages (resolved) are the page's recent history, newest first.
    history = [card.find("h3").text() for card in _section(rendered, "history").find_all("article")]
    assert history == ["Dashboards slow for some customers", "Payment provider outage"]


def test_phone_width_screenshot_is_a_png_of_that_size(page_url: str, tmp_path: Path):
    shot = screenshot(page_url, tmp_path / "status-phone.png", width=PHONE[0], height=PHONE[1])
    assert is_png(shot)
    data = shot.read_bytes()
    # IHDR is the first chunk: width and height are big-endian 32-bit integers at bytes 16-24.
    assert struct.unpack(">II", data[16:24]) == PHONE
    # Blank is about 3 KB and a one-heading error page about 10 KB; the demo page is several times that.
    assert len(data) > 20_000


def test_the_feeds_it_links_parse_in_a_feed_reader(served: Element, rendered: Element):
    import feedparser

    alternates = {link.attrs["type"]: link.attrs["href"] or "" for link in rendered.find_all("link", rel="alternate")}
    assert set(alternates) == {"application/atom+xml", "application/rss+xml"}
    footer_links = [a.attrs["href"] for a in served.find("footer").find_all("a")]
    assert footer_links == [alternates["application/atom+xml"], alternates["application/rss+xml"]]
    for media_type, url in alternates.items():
        answer = requests.get(url, timeout=10)
        assert answer.status_code == 200 and answer.headers["Content-Type"] == f"{media_type}; charset=utf-8"
        feed = feedparser.parse(answer.content, response_headers={"content-type": answer.headers["Content-Type"]})
        assert not feed.bozo, feed.get("bozo_exception")
        titles = [entry.title for entry in feed.entries]
        assert "Elevated checkout latency" in titles and "Maintenance: Database upgrade" in titles
