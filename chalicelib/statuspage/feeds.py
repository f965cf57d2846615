"""A status page's history as feeds: Atom 1.0 (`history.atom`) and RSS 2.0 (`history.rss`).

Pure: the public incident and maintenance objects go in, XML comes out (the queries are in
chalicelib.statuspage.public). One entry per public incident (with its updates, newest first)
or maintenance window; entries newest first by their last change.

- Ids are tag URIs (RFC 4151) built from the public base URL's host, the page's creation date and
  the item's public id (the feed's own: a digest of the page id, which stays unpublished): they
  survive a slug change, so a reader never sees an entry twice.
- Times are UTC: RFC 3339 in Atom, RFC 822 (`email.utils`) in RSS. Nothing in a feed depends on
  the time of the request, so its ETag changes only when its content does.
- Atom content is inline XHTML; RSS carries the same fragment as escaped HTML. The templates
  (chalicelib/templates/statuspage/feed_*.xml) are autoescaped; text is also stripped of the
  characters XML 1.0 cannot carry, so old data can never make a feed ill-formed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from urllib.parse import urlsplit

from chalicelib.statuspage.page_html import FeedLinks
from chalicelib.statuspage.public_models import PublicIncident, PublicMaintenance
from chalicelib.templates import render

ATOM_NAME = "history.atom"
RSS_NAME = "history.rss"
ATOM_CONTENT_TYPE = "application/atom+xml; charset=utf-8"
RSS_CONTENT_TYPE = "application/rss+xml; charset=utf-8"
# Per kind: the newest incidents and the newest maintenance windows (one Query each).
FEED_SIZE = 25

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Everything outside XML 1.0's Char production (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: object) -> str:
    """`value` as text XML 1.0 can carry: the characters it cannot are dropped."""
    return _NOT_XML.sub("", "" if value is None else str(value))


def links(page_url: str) -> FeedLinks:
    """The feeds of the page at `page_url` (its public URL, `<base>/status/<slug>`)."""
    return FeedLinks(atom=f"{page_url}/{ATOM_NAME}", rss=f"{page_url}/{RSS_NAME}")


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _text_time(moment: datetime) -> str:
    m = _utc(moment)
    return f"{m.day} {_MONTHS[m.month - 1]} {m.year}, {m:%H:%M} UTC"


def _words(value: object) -> str:
    """'in_progress' -> 'In progress'."""
    text = str(value or "unknown").replace("_", " ").strip()
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Stamp:
    """One moment in both feed formats."""

    rfc3339: str
    rfc822: str

    @classmethod
    def of(cls, moment: datetime) -> Stamp:
        m = _utc(moment).replace(microsecond=0)
        return cls(f"{m:%Y-%m-%dT%H:%M:%SZ}", format_datetime(m, usegmt=True))


@dataclass(frozen=True)
class EntryUpdate:
    heading: str  # "Identified · 24 Nov 2026, 12:00 UTC"
    lines: list[str]  # the body, line by line (a feed reader ignores bare line breaks)


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str  # "incident" | "maintenance": the category term
    title: str
    published: Stamp
    updated: Stamp
    facts: list[str]  # status, impact, times, affected components
    updates: list[EntryUpdate]  # newest first
    sort_key: tuple[str, str]  # (updated, id): newest first when sorted in reverse


@dataclass(frozen=True)
class Feed:
    id: str
    title: str
    name: str  # the page's name: the feed's author
    page_url: str
    links: FeedLinks
    updated: Stamp
    entries: list[Entry]


@dataclass(frozen=True)
class FeedPage:
    """What a feed says about its page."""

    page_id: str
    name: str
    url: str
    created_at: datetime
    updated_at: datetime


def _tag_base(page: FeedPage) -> str:
    """`tag:<host>,<date>:`: the host of the public URL and the day the page was created."""
    host = urlsplit(page.url).hostname or "localhost"
    return f"tag:{host},{_utc(page.created_at):%Y-%m-%d}:"


def _affected(names: Iterable[str]) -> list[str]:
    listed = [xml_text(n) for n in names]
    return [f"Affects: {', '.join(listed)}"] if listed else []


def _incident(tag: str, incident: PublicIncident) -> Entry:
    facts = [f"Status: {_words(incident.status)} · Impact: {_words(incident.impact)}"]
    facts.append(f"Started {_text_time(incident.started_at)}")
    if incident.resolved_at is not None:
        facts[-1] += f", resolved {_text_time(incident.resolved_at)}"
    facts += _affected(c.name for c in incident.affected_components)
    updates = [
        EntryUpdate(f"{_words(u.status)} · {_text_time(u.published_at)}", xml_text(u.body).split("\n"))
        for u in incident.updates
    ]
    return Entry(
        id=f"{tag}incident/{incident.incident_id}",
        kind="incident",
        title=xml_text(incident.title),
        published=Stamp.of(incident.started_at),
        updated=Stamp.of(incident.updated_at),
        facts=facts,
        updates=updates,
        sort_key=(Stamp.of(incident.updated_at).rfc3339, incident.incident_id),
    )


def _window(tag: str, window: PublicMaintenance, created_at: datetime) -> Entry:
    facts = [
        f"Status: {_words(window.status)}",
        f"Scheduled {_text_time(window.scheduled_start)} to {_text_time(window.scheduled_end)}",
        *_affected(c.name for c in window.affected_components),
    ]
    return Entry(
        id=f"{tag}maintenance/{window.maintenance_id}",
        kind="maintenance",
        title=f"Maintenance: {xml_text(window.title)}",
        published=Stamp.of(created_at),
        updated=Stamp.of(window.updated_at),
        facts=facts,
        updates=[],
        sort_key=(Stamp.of(window.updated_at).rfc3339, window.maintenance_id),
    )


def build_feed(
    page: FeedPage,
    incidents: list[PublicIncident],
    windows: list[tuple[PublicMaintenance, datetime]],
) -> Feed:
    """The feed of `page`: `windows` pairs each window with its creation time (its `published`).
    Updated = the latest change of any entry, or of the page when it has none."""
    tag = _tag_base(page)
    entries = [_incident(tag, i) for i in incidents] + [_window(tag, w, created) for w, created in windows]
    entries.sort(key=lambda entry: entry.sort_key, reverse=True)
    moments = [page.updated_at, *(i.updated_at for i in incidents), *(w.updated_at for w, _ in windows)]
    name = xml_text(page.name) or "Status"
    return Feed(
        id=f"{tag}page/{hashlib.sha256(page.page_id.encode()).hexdigest()[:24]}",
        title=f"{name} status history",
        name=name,
        page_url=page.url,
        links=links(page.url),
        updated=Stamp.of(max(_utc(m) for m in moments)),
        entries=entries,
    )


def render_atom(feed: Feed) -> str:
    return render("statuspage/feed_atom.xml", feed=feed)


def render_rss(feed: Feed) -> str:
    return render("statuspage/feed_rss.xml", feed=feed)
