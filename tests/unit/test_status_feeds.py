"""The feeds' pure parts: text XML can carry, ordering, ids and times, and that what the
templates write parses as a feed whatever the text holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import feedparser
import pytest

from chalicelib.statuspage import feeds
from chalicelib.statuspage.public_models import (
    AffectedComponent,
    PublicIncident,
    PublicIncidentUpdate,
    PublicMaintenance,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PAGE = feeds.FeedPage("page_1", "Acme", "https://status.example.com:8443/status/acme", NOW, NOW)
# Text stored before the text rule, or written around it: controls, a lone surrogate, U+FFFE.
HOSTILE = "a\x00b\x1bc\ud800d\ufffee ]]> <![CDATA[ &amp; </div> \t\U0001f525"


def incident(incident_id: str, updated: datetime, title: str = "Down", body: str = "Body") -> PublicIncident:
    return PublicIncident(
        incident_id=incident_id,
        title=title,
        status="monitoring",
        impact="critical",
        started_at=NOW,
        resolved_at=None,
        updated_at=updated,
        updates=[PublicIncidentUpdate(status="monitoring", body=body, published_at=updated)],
        affected_components=[AffectedComponent(component_id="cmp_1", name=title)],
    )


def window(maintenance_id: str, updated: datetime) -> PublicMaintenance:
    return PublicMaintenance(
        maintenance_id=maintenance_id,
        title="Upgrade",
        status="cancelled",
        scheduled_start=NOW,
        scheduled_end=NOW + timedelta(days=1),
        updated_at=updated,
        affected_components=[],
    )


def test_xml_text_drops_what_xml_cannot_carry():
    assert feeds.xml_text(HOSTILE) == "abcde ]]> <![CDATA[ &amp; </div> \t\U0001f525"
    assert feeds.xml_text(None) == "" and feeds.xml_text("line\nnext\r") == "line\nnext\r"


def test_entries_newest_change_first_and_times():
    built = feeds.build_feed(
        PAGE,
        [incident("inc_a", NOW + timedelta(hours=1)), incident("inc_b", NOW + timedelta(hours=3))],
        [(window("mnt_a", NOW + timedelta(hours=2)), NOW - timedelta(days=2))],
    )
    assert [e.id.rsplit("/", 1)[1] for e in built.entries] == ["inc_b", "mnt_a", "inc_a"]
    assert built.updated == feeds.Stamp("2026-11-22T15:00:00Z", "Sun, 22 Nov 2026 15:00:00 GMT")
    assert built.entries[1].published.rfc3339 == "2026-11-20T12:00:00Z"
    # The port is no part of a tag URI's authority.
    assert built.id.startswith("tag:status.example.com,2026-11-22:page/") and "page_1" not in built.id
    assert built.links == feeds.links(PAGE.url)
    assert built.links.atom == PAGE.url + "/history.atom"


def test_a_feed_without_entries_is_as_new_as_its_page():
    later = feeds.FeedPage("page_1", "", PAGE.url, NOW, NOW + timedelta(days=1))
    built = feeds.build_feed(later, [], [])
    assert built.updated.rfc3339 == "2026-11-23T12:00:00Z" and built.title == "Status status history"


@pytest.mark.parametrize(("render", "version"), [(feeds.render_atom, "atom10"), (feeds.render_rss, "rss20")])
def test_hostile_text_still_parses(render, version):
    built = feeds.build_feed(
        feeds.FeedPage("page_1", HOSTILE, PAGE.url, NOW, NOW),
        [incident("inc_a", NOW, title=HOSTILE, body=f"{HOSTILE}\n{HOSTILE}")],
        [(window("mnt_a", NOW), NOW)],
    )
    result = feedparser.parse(render(built).encode(), response_headers={"content-type": "application/xml"})
    assert not result.bozo, result.get("bozo_exception")
    assert result.version == version
    # A tie in time: by id. RSS titles may be HTML, so feedparser re-escapes a `<` it reads.
    titles = [e.title for e in result.entries] + [result.feed.title]
    if version == "rss20":
        titles = [title.replace("&lt;", "<") for title in titles]
    assert titles == ["Maintenance: Upgrade", feeds.xml_text(HOSTILE), feeds.xml_text(HOSTILE) + " status history"]
