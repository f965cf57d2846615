"""The human status page: server-rendered HTML that needs no JavaScript and no external assets.

Pure: the documents of summary.json / components.json plus the public incident and maintenance
objects go in, one HTML string comes out. This module decides what the page says (order, labels,
times, colours); the templates in chalicelib/templates/statuspage/ lay it out, and their
autoescape escapes every value taken from the data. Element ids and CSS classes come only from
this module and the templates, never from data. Colour is never the only signal: each status is
also written out as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from chalicelib.statuspage.page_style import STATUS_STYLES, STYLESHEET
from chalicelib.statuspage.subscribe_form import SubscribeForm
from chalicelib.statuspage.uptime_html import LEGEND, UptimeBars, uptime_by_component
from chalicelib.templates import render

__all__ = [
    "FeedLinks",
    "render_error",
    "render_not_found",
    "render_status_page",
]


# Worst first: a group shows the worst status among its components.
_SEVERITY_ORDER = ("major_outage", "partial_outage", "degraded_performance", "under_maintenance", "unknown")
# Incident impact borrows the component palette so the colours mean the same thing everywhere.
_IMPACT_STYLE = {
    "none": "unknown",
    "minor": "degraded_performance",
    "major": "partial_outage",
    "critical": "major_outage",
}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _moment(value: object) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _sort_key(value: object) -> datetime:
    return _moment(value) or _EARLIEST


def _date_text(moment: datetime) -> str:
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}, {moment:%H:%M}"


# ---------------------------------------------------------------- what the templates receive


@dataclass(frozen=True)
class Moment:
    """A time on the page: a <time> element in UTC, or (`iso` None) a value that is not a
    date-time, shown as text."""

    iso: str | None
    text: str


@dataclass(frozen=True)
class Badge:
    css: str  # "st-<status key>" or "tag"
    text: str
    icon: str | None = None


@dataclass(frozen=True)
class Update:
    status: str
    published: Moment
    body: object


@dataclass(frozen=True)
class Card:
    """An incident or a maintenance window: meta line is prefix, start (to end), suffix."""

    title: object
    badges: list[Badge]
    when_prefix: str
    start: Moment
    end: Moment | None
    when_suffix: str
    affected: list[object]  # component names
    updates: list[Update]  # newest first
    updates_folded: bool = False  # history: behind a disclosure


@dataclass(frozen=True)
class ComponentRow:
    name: object
    badge: Badge
    uptime: UptimeBars | None = None  # its 90 bars (chalicelib/statuspage/uptime_html.py)


@dataclass(frozen=True)
class ComponentGroup:
    name: object
    badge: Badge
    rows: list[ComponentRow]


@dataclass(frozen=True)
class ComponentSection:
    name: object
    rows: list[ComponentRow]
    groups: list[ComponentGroup]


@dataclass(frozen=True)
class FeedLinks:
    """The page's history feeds (absolute URLs): `<link rel="alternate">` in the head, and the footer."""

    atom: str
    rss: str


@dataclass(frozen=True)
class Banner:
    status: str
    icon: str
    headline: str
    updated: Moment
    jumps: list[tuple[str, str]]  # (anchor, link text)


def _time(value: object, *, text: str | None = None) -> Moment:
    moment = _moment(value)
    if moment is None:
        return Moment(None, ("" if value is None else str(value)) or "unknown time")
    return Moment(f"{moment:%Y-%m-%dT%H:%M:%SZ}", text if text is not None else f"{_date_text(moment)} UTC")


def _time_range(start: object, end: object) -> tuple[Moment, Moment]:
    begins, ends = _moment(start), _moment(end)
    if begins is not None and ends is not None and begins.date() == ends.date():
        return _time(start, text=_date_text(begins)), _time(end, text=f"{ends:%H:%M} UTC")
    return _time(start), _time(end)


def relative(moment: datetime, now: datetime) -> str:
    """'in 3 hours' / '20 minutes ago', in the largest whole unit; under a minute is 'just now'."""
    seconds = (moment - now).total_seconds()
    span = abs(seconds)
    if span < 60:
        return "just now"
    unit, size = next((u, s) for u, s in (("day", 86400), ("hour", 3600), ("minute", 60)) if span >= s)
    count = int(span // size)
    phrase = f"{count} {unit}{'' if count == 1 else 's'}"
    return f"in {phrase}" if seconds > 0 else f"{phrase} ago"


def _style_key(status: object) -> str:
    return status if isinstance(status, str) and status in STATUS_STYLES else "unknown"


def _words(value: object) -> str:
    """'in_progress' -> 'In progress': the fallback label for values this module has no text for."""
    text = str(value or "unknown").replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _badge(style_key: str, text: str, *, icon: bool = True) -> Badge:
    return Badge(f"st-{style_key}", text, STATUS_STYLES[style_key].icon if icon else None)


def _status_badge(status: object) -> Badge:
    """Component status as coloured badge with its text; unexpected values are shown as given."""
    key = _style_key(status)
    return _badge(key, STATUS_STYLES[key].label if key == status else _words(status))


def _impact_badge(impact: object) -> Badge:
    key = _IMPACT_STYLE.get(str(impact), "unknown")
    return _badge(key, "No impact" if impact == "none" else f"{_words(impact)} impact", icon=False)


def _tag(text: str) -> Badge:
    return Badge("tag", text)


def _affected(item: Mapping[str, Any]) -> list[object]:
    return [component.get("name") for component in item.get("affected_components") or []]


def _worst(statuses: Iterable[object]) -> str:
    keys = {_style_key(status) for status in statuses}
    return next((key for key in _SEVERITY_ORDER if key in keys), "operational" if keys else "unknown")


def _component_rows(components: Iterable[Mapping[str, Any]], bars: Mapping[str, UptimeBars]) -> list[ComponentRow]:
    return [
        ComponentRow(c.get("name"), _status_badge(c.get("status")), bars.get(str(c.get("component_id"))))
        for c in components
    ]


def _sections(document: Mapping[str, Any], bars: Mapping[str, UptimeBars]) -> list[ComponentSection]:
    sections = []
    for section in document.get("sections") or []:
        groups = []
        for group in section.get("groups") or []:
            members = group.get("components") or []
            overall = _worst(member.get("status") for member in members)
            badge = _badge(overall, STATUS_STYLES[overall].label)
            groups.append(ComponentGroup(group.get("name"), badge, _component_rows(members, bars)))
        rows = _component_rows(section.get("components") or [], bars)
        sections.append(ComponentSection(section.get("name"), rows, groups))
    return sections


def _updates(incident: Mapping[str, Any]) -> list[Update]:
    updates = sorted(incident.get("updates") or [], key=lambda u: _sort_key(u.get("published_at")), reverse=True)
    return [Update(_words(u.get("status")), _time(u.get("published_at")), u.get("body")) for u in updates]


def _active_incident(incident: Mapping[str, Any], now: datetime) -> Card:
    started = _moment(incident.get("started_at"))
    return Card(
        title=incident.get("title"),
        badges=[_tag(_words(incident.get("status"))), _impact_badge(incident.get("impact"))],
        when_prefix="Started ",
        start=_time(incident.get("started_at")),
        end=None,
        when_suffix=f" ({relative(started, now)})" if started else "",
        affected=_affected(incident),
        updates=_updates(incident),
    )


def _maintenance_item(window: Mapping[str, Any], now: datetime) -> Card:
    status = window.get("status")
    start, end = _moment(window.get("scheduled_start")), _moment(window.get("scheduled_end"))
    if status == "in_progress":
        badge, when = _badge("under_maintenance", "In progress"), f" (ends {relative(end, now)})" if end else ""
    else:
        badge, when = _tag(_words(status)), f" ({relative(start, now)})" if start else ""
    begins, ends = _time_range(window.get("scheduled_start"), window.get("scheduled_end"))
    return Card(window.get("title"), [badge], "", begins, ends, when, _affected(window), [])


def _history_incident(incident: Mapping[str, Any]) -> Card:
    badges = [_tag("Incident"), _badge("operational", "Resolved"), _impact_badge(incident.get("impact"))]
    begins, ends = _time_range(incident.get("started_at"), incident.get("resolved_at"))
    return Card(incident.get("title"), badges, "", begins, ends, "", _affected(incident), _updates(incident), True)


def _history_maintenance(window: Mapping[str, Any]) -> Card:
    done = window.get("status") == "completed"
    badge = _badge("operational", "Completed") if done else _tag(_words(window.get("status")))
    begins, ends = _time_range(window.get("scheduled_start"), window.get("scheduled_end"))
    return Card(window.get("title"), [_tag("Maintenance"), badge], "", begins, ends, "", _affected(window), [])


def _history(incidents: list[dict[str, Any]], maintenance: list[dict[str, Any]]) -> list[Card]:
    """Resolved incidents and completed or cancelled maintenance, newest first."""
    dated = [
        (_sort_key(i.get("resolved_at") or i.get("updated_at")), _history_incident(i))
        for i in incidents
        if i.get("status") == "resolved"
    ]
    for window in maintenance:
        if window.get("status") == "completed":
            dated.append((_sort_key(window.get("scheduled_end")), _history_maintenance(window)))
        elif window.get("status") == "cancelled":
            dated.append((_sort_key(window.get("updated_at")), _history_maintenance(window)))
    dated.sort(key=lambda entry: entry[0], reverse=True)
    return [item for _, item in dated]


def _banner(summary: Mapping[str, Any], active: int, ongoing: int, upcoming: int) -> Banner:
    overall = _style_key(summary.get("status"))
    style = STATUS_STYLES[overall]
    counts = [
        (active, "active incident", "active incidents", "incidents"),
        (ongoing, "maintenance in progress", "maintenance windows in progress", "maintenance"),
        (upcoming, "upcoming maintenance", "upcoming maintenance windows", "maintenance"),
    ]
    jumps = [(anchor, f"{n} {one if n == 1 else many}") for n, one, many, anchor in counts if n]
    return Banner(overall, style.icon, style.headline, _time(summary.get("updated_at")), jumps)


def render_status_page(
    *,
    summary: Mapping[str, Any],
    components: Mapping[str, Any],
    incidents: list[dict[str, Any]],
    maintenance: list[dict[str, Any]],
    now: datetime,
    uptime: Mapping[str, Any] | None = None,
    feeds: FeedLinks | None = None,
    subscribe: SubscribeForm | None = None,
) -> str:
    """The whole page. Active incidents newest first (their updates newest first); maintenance in
    progress, then upcoming soonest first; history newest first. Components keep the order the
    page owner gave them, each with its uptime bars when `uptime` (the uptime.json document) is
    given. `summary.status` is the overall status as the data layer computed it."""
    now = _moment(now) or _EARLIEST
    page_name = (summary.get("page") or {}).get("name")
    newest_first = sorted(incidents, key=lambda i: _sort_key(i.get("started_at")), reverse=True)
    active = [i for i in newest_first if i.get("status") != "resolved"]
    soonest_first = sorted(maintenance, key=lambda w: _sort_key(w.get("scheduled_start")))
    ongoing = [w for w in soonest_first if w.get("status") == "in_progress"]
    upcoming = [w for w in soonest_first if w.get("status") == "scheduled"]
    return render(
        "statuspage/page.html",
        stylesheet=STYLESHEET,
        name=("" if page_name is None else str(page_name)) or "Status",
        banner=_banner(summary, len(active), len(ongoing), len(upcoming)),
        active=[_active_incident(i, now) for i in active],
        maintenance=[_maintenance_item(w, now) for w in ongoing + upcoming],
        sections=_sections(components, bars := uptime_by_component(uptime)),
        legend=LEGEND if bars else [],
        history=_history(incidents, maintenance),
        subscribe=subscribe,
        # To the minute, like every time shown: the page (and so its ETag) changes at most once a minute.
        generated=_time(now.replace(second=0, microsecond=0)),
        feeds=feeds,
    )


def render_not_found(slug: str) -> str:
    """A small 404 page for an unknown or unpublished slug."""
    return render("statuspage/not_found.html", stylesheet=STYLESHEET, slug=slug)


def render_error(title: str, message: str) -> str:
    """A bare page for a bad request or a rate limit on the HTML route."""
    return render("statuspage/error.html", title=title, message=message)
