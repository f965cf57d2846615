"""The history feeds: history.atom and history.rss parse in feedparser with no bozo flag, carry
one entry per public incident or maintenance window with its updates, keep their ids across a
slug change, cache like the other public documents, and leak nothing internal."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import feedparser
import pytest

from chalicelib import clock
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, pages, scheduled_maintenance, structure
from chalicelib.statuspage.repository import item_id
from tests.conftest import NOW

STATUS = "/status/acme"
FEEDS = {
    "history.atom": "application/atom+xml; charset=utf-8",
    "history.rss": "application/rss+xml; charset=utf-8",
}


@pytest.fixture
def site(client, org):
    clock.freeze(NOW)
    oid = org.organization_id
    page = pages.create_page(organization_id=oid, name="Acme & Sons <Ltd>", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    checkout = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="Checkout", status="operational", now=NOW
    )
    old = incidents.create_incident(
        organization_id=oid,
        page_id=page.page_id,
        title='Slow <checkout> & "carts"',
        status="investigating",
        impact="major",
        body="Looking.\nLine two with ]]> and <b>tags</b>.",
        component_ids=[item_id(checkout)],
        incident_number=None,
        now=NOW,
        settings=get_settings(),
    )
    incidents.add_update(
        page_id=page.page_id,
        incident_id=item_id(old),
        status="resolved",
        body="Fixed.",
        now=NOW + timedelta(hours=1),
        settings=get_settings(),
    )
    window = scheduled_maintenance.create_window(
        page_id=page.page_id,
        title="Database upgrade",
        scheduled_start=NOW + timedelta(days=1),
        scheduled_end=NOW + timedelta(days=1, hours=2),
        component_ids=[item_id(checkout)],
        now=NOW + timedelta(minutes=30),
        settings=get_settings(),
    )
    return page, old, window


def parsed(client, name: str, **headers: str) -> Any:
    response = client.http.get(f"{STATUS}/{name}", headers=headers)
    assert response.status_code == 200, response.body
    assert response.headers["Content-Type"] == FEEDS[name]
    result = feedparser.parse(response.body, response_headers={"content-type": FEEDS[name]})
    assert not result.bozo, result.get("bozo_exception")
    return result


@pytest.mark.parametrize("name", sorted(FEEDS))
def test_feed_is_valid_with_one_entry_per_item(client, site, name):
    _, old, window = site
    result = parsed(client, name)
    assert result.version == ("atom10" if name.endswith("atom") else "rss20")
    assert result.feed.title == "Acme & Sons <Ltd> status history"
    assert result.feed.link == "http://127.0.0.1:8000/status/acme"
    # Newest change first: the incident resolved at 13:00, the window created at 12:30.
    incident_entry, window_entry = result.entries
    assert incident_entry.title == 'Slow <checkout> & "carts"'
    assert incident_entry.id == f"tag:127.0.0.1,2026-11-22:incident/{item_id(old)}"
    assert window_entry.title == "Maintenance: Database upgrade"
    assert window_entry.id == f"tag:127.0.0.1,2026-11-22:maintenance/{item_id(window)}"
    assert [tag.term for tag in incident_entry.tags] == ["incident"]
    assert [tag.term for tag in window_entry.tags] == ["maintenance"]
    body = incident_entry.content[0].value if name.endswith("atom") else incident_entry.description
    # Both updates, newest first, the text escaped (never markup of its own).
    assert body.index("Resolved · 22 Nov 2026, 13:00 UTC") < body.index("Investigating · 22 Nov 2026, 12:00 UTC")
    assert "Fixed." in body and "&lt;b&gt;tags&lt;/b&gt;" in body and "<b>" not in body
    assert "Impact: Major" in body and "Affects: Checkout" in body
    window_body = window_entry.content[0].value if name.endswith("atom") else window_entry.description
    assert "Scheduled 23 Nov 2026, 12:00 UTC to 23 Nov 2026, 14:00 UTC" in window_body


def test_atom_times_and_links(client, site):
    result = parsed(client, "history.atom")
    incident_entry, window_entry = result.entries
    assert incident_entry.published == "2026-11-22T12:00:00Z" and incident_entry.updated == "2026-11-22T13:00:00Z"
    assert window_entry.published == "2026-11-22T12:30:00Z"
    assert result.feed.updated == "2026-11-22T13:00:00Z"
    assert result.feed.author == "Acme & Sons <Ltd>"
    rels = {link.rel: link.href for link in result.feed.links}
    assert rels == {
        "self": "http://127.0.0.1:8000/status/acme/history.atom",
        "alternate": "http://127.0.0.1:8000/status/acme",
    }
    assert result.feed.id.startswith("tag:127.0.0.1,2026-11-22:page/")


def test_rss_times(client, site):
    result = parsed(client, "history.rss")
    assert result.feed.updated == "Sun, 22 Nov 2026 13:00:00 GMT"
    assert [e.published for e in result.entries] == ["Sun, 22 Nov 2026 12:00:00 GMT", "Sun, 22 Nov 2026 12:30:00 GMT"]
    assert result.entries[0].guidislink is False


def test_ids_survive_a_slug_change(client, site):
    page, *_ = site
    before = {name: [e.id for e in parsed(client, name).entries] for name in FEEDS}
    pages.update_page(organization_id=page.organization_id, page_id=page.page_id, now=NOW, slug="acme-2")
    for name in FEEDS:
        moved = client.http.get(f"/status/acme-2/{name}")
        result = feedparser.parse(moved.body, response_headers={"content-type": FEEDS[name]})
        assert not result.bozo and [e.id for e in result.entries] == before[name]
        assert result.feed.link == "http://127.0.0.1:8000/status/acme-2"


def test_empty_page_has_a_valid_feed(client, org):
    clock.freeze(NOW)
    pages.create_page(organization_id=org.organization_id, name="Quiet", slug="acme", now=NOW)
    for name in FEEDS:
        result = parsed(client, name)
        assert result.entries == [] and result.feed.title == "Quiet status history"


def test_caching_etag_and_304(client, site):
    for name in FEEDS:
        first = client.http.get(f"{STATUS}/{name}")
        assert first.headers["Cache-Control"] == "public, max-age=30"
        assert first.headers["Access-Control-Allow-Origin"] == "*"
        assert "X-RateLimit-Remaining" in first.headers
        etag = first.headers["ETag"]
        clock.freeze(NOW + timedelta(hours=5))  # nothing in a feed depends on the time of the request
        again = client.http.get(f"{STATUS}/{name}", headers={"If-None-Match": etag})
        assert (again.status_code, again.body) == (304, b"")
        clock.freeze(NOW)


@pytest.mark.parametrize("name", sorted(FEEDS))
def test_a_client_that_prefers_text_xml_gets_the_same_feed_as_text_xml(client, site, name):
    own = client.http.get(f"{STATUS}/{name}")
    feed_reader = client.http.get(
        f"{STATUS}/{name}", headers={"Accept": "application/atom+xml, application/rss+xml, text/xml;q=0.9, */*;q=0.8"}
    )
    as_text = client.http.get(f"{STATUS}/{name}", headers={"Accept": "text/xml"})
    assert own.headers["Content-Type"] == feed_reader.headers["Content-Type"] == FEEDS[name]
    assert as_text.status_code == 200 and as_text.headers["Content-Type"] == "text/xml; charset=utf-8"
    assert as_text.body == own.body and own.headers["Vary"] == as_text.headers["Vary"] == "Accept"
    # One strong ETag per representation; each revalidates itself only.
    assert as_text.headers["ETag"] != own.headers["ETag"]
    revalidate = {"Accept": "text/xml", "If-None-Match": as_text.headers["ETag"]}
    again = client.http.get(f"{STATUS}/{name}", headers=revalidate)
    assert again.status_code == 304 and again.headers["Content-Type"] == "text/xml; charset=utf-8"
    assert feedparser.parse(as_text.body).version == ("atom10" if name.endswith("atom") else "rss20")


def test_a_new_update_changes_the_feed(client, site):
    page, old, _ = site
    etag = client.http.get(f"{STATUS}/history.atom").headers["ETag"]
    incidents.add_update(
        page_id=page.page_id,
        incident_id=item_id(old),
        status="monitoring",
        body="Again.",
        now=NOW + timedelta(hours=2),
        settings=get_settings(),
    )
    changed = client.http.get(f"{STATUS}/history.atom", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and "Again." in changed.body.decode()


def test_errors_are_public_json(client, site):
    for name in FEEDS:
        missing = client.http.get(f"/status/nope/{name}")
        assert missing.status_code == 404 and missing.headers["Cache-Control"] == "no-store"
        assert json.loads(missing.body)["error"]["code"] == "NOT_FOUND"
        unknown = client.http.get(f"{STATUS}/{name}?page=2")
        assert unknown.status_code == 400
        assert json.loads(unknown.body)["error"]["code"] == "VALIDATION_ERROR"


def test_nothing_internal_leaks(client, site, org):
    page, *_ = site
    for name in FEEDS:
        body = client.http.get(f"{STATUS}/{name}").body.decode()
        for secret in (org.organization_id, page.page_id, "incident_number", "@"):
            assert secret not in body, (name, secret)


def test_the_human_page_links_its_feeds(client, site):
    html = client.http.get(STATUS).body.decode()
    assert (
        '<link rel="alternate" type="application/atom+xml" title="Acme &amp; Sons &lt;Ltd&gt; status history (Atom)"'
        ' href="http://127.0.0.1:8000/status/acme/history.atom">' in html
    )
    assert 'type="application/rss+xml"' in html and 'href="http://127.0.0.1:8000/status/acme/history.rss"' in html
    assert '<a href="http://127.0.0.1:8000/status/acme/history.atom">Atom feed</a>' in html
