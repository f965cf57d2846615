"""The human status page renderer: escaping, status text, banner, empty states, ordering, structure."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.statuspage.page_html import relative, render_not_found, render_status_page
from chalicelib.statuspage.page_style import CONTENT_SECURITY_POLICY, STATUS_STYLES, TEXT_PAIRS
from tests.e2e.browser import Element, parse

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script>'
ATTRIBUTE_EVIL = '" onmouseover="alert(1)" x="'
COMPONENT_STATUSES = (
    "operational",
    "degraded_performance",
    "partial_outage",
    "major_outage",
    "under_maintenance",
    "unknown",
)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def component(name: str, status: str = "operational", number: int = 1) -> dict[str, Any]:
    return {"component_id": f"cmp_{number}", "name": name, "status": status, "updated_at": iso(NOW)}


def summary(status: str = "operational", name: str = "Tocsin Demo") -> dict[str, Any]:
    return {
        "page": {"name": name, "url": "https://status.example.com/status/tocsin-demo"},
        "status": status,
        "updated_at": iso(NOW - timedelta(minutes=2)),
        "active_incident_count": 0,
        "active_maintenance_count": 0,
    }


def section(name: str, components: list[dict[str, Any]], groups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"section_id": "sec_1", "name": name, "components": components, "groups": groups or []}


def group(name: str, components: list[dict[str, Any]]) -> dict[str, Any]:
    return {"group_id": "grp_1", "name": name, "components": components}


def incident(
    title: str = "Elevated checkout latency",
    *,
    status: str = "identified",
    impact: str = "minor",
    started: datetime = NOW - timedelta(hours=2),
    resolved: datetime | None = None,
    updates: list[dict[str, Any]] | None = None,
    affected: tuple[str, ...] = ("Checkout API",),
) -> dict[str, Any]:
    return {
        "incident_id": "inc_1",
        "title": title,
        "status": status,
        "impact": impact,
        "started_at": iso(started),
        "resolved_at": iso(resolved) if resolved else None,
        "updated_at": iso(resolved or started),
        "updates": updates if updates is not None else [update("investigating", "Looking.", started)],
        "affected_components": [{"component_id": f"cmp_{n}", "name": name} for n, name in enumerate(affected)],
    }


def update(status: str, body: str, published: datetime) -> dict[str, Any]:
    return {"status": status, "body": body, "published_at": iso(published)}


def window(
    title: str = "Database upgrade",
    *,
    status: str = "scheduled",
    start: datetime = NOW + timedelta(hours=14),
    hours: float = 1,
    updated: datetime = NOW - timedelta(hours=3),
    affected: tuple[str, ...] = ("Billing API",),
) -> dict[str, Any]:
    return {
        "maintenance_id": "mnt_1",
        "title": title,
        "status": status,
        "scheduled_start": iso(start),
        "scheduled_end": iso(start + timedelta(hours=hours)),
        "updated_at": iso(updated),
        "affected_components": [{"component_id": f"cmp_{n}", "name": name} for n, name in enumerate(affected)],
    }


def render(
    *,
    status: str = "operational",
    name: str = "Tocsin Demo",
    sections: list[dict[str, Any]] | None = None,
    incidents: list[dict[str, Any]] | None = None,
    maintenance: list[dict[str, Any]] | None = None,
    now: datetime = NOW,
) -> str:
    return render_status_page(
        summary=summary(status, name),
        components={"sections": sections if sections is not None else [section("Core", [component("API")])]},
        incidents=incidents or [],
        maintenance=maintenance or [],
        now=now,
    )


def page(**kwargs: Any) -> Element:
    return parse(render(**kwargs))


def region(document: Element, anchor: str) -> Element:
    return document.find("section", id=anchor)


def titles(container: Element) -> list[str]:
    return [heading.text() for heading in container.find_all("h3")]


# --- escaping -----------------------------------------------------------------------------------


def test_script_in_every_data_field_is_inert_text():
    markup = render(
        name=EVIL,
        sections=[section(EVIL, [component(EVIL)], [group(EVIL, [component(EVIL, number=2)])])],
        incidents=[
            incident(EVIL, updates=[update(EVIL, EVIL, NOW)], affected=(EVIL,)),
            incident(EVIL, status="resolved", resolved=NOW, updates=[update("resolved", EVIL, NOW)]),
        ],
        maintenance=[window(EVIL, affected=(EVIL,)), window(EVIL, status="completed", start=NOW - timedelta(days=1))],
    )
    document = parse(markup)
    assert "<script" not in markup.lower()
    assert document.find_all("script") == []
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    # page name (<title>, <h1>), section, group (<h4>, aria-label), 2 components, 2 incident titles,
    # 1 update status, 2 update bodies, 1 incident affected name, 2 maintenance titles, 1 affected name
    assert markup.count(escaped) == 16
    assert document.find("h1").text() == EVIL
    assert document.find("title").children == [f"{EVIL} status"]
    assert EVIL in [heading.text() for heading in document.find_all("h4")]


ALLOWED_TAGS = {
    *("html", "head", "meta", "title", "link", "style", "body", "a", "header", "main", "footer", "section"),
    *("h1", "h2", "h3", "h4", "p", "span", "ul", "ol", "li", "div", "article", "strong", "time", "details"),
    "summary",
}


@settings(max_examples=75, deadline=None)
@given(text=st.text(min_size=1, max_size=40))
def test_any_text_round_trips_as_text_and_adds_no_markup(text):
    markup = render(
        name=text,
        sections=[section(text, [component(text)], [group(text, [component(text, number=2)])])],
        incidents=[incident(text, updates=[update("identified", text, NOW)], affected=(text,))],
        maintenance=[window(text)],
    )
    document = parse(markup)
    expected = " ".join(text.split())
    assert {element.tag for element in document.iter()} <= ALLOWED_TAGS
    assert [row.find("span", cls="name").text() for row in document.find_all("li", cls="row")] == [expected] * 2
    assert document.find("h1").text() == expected
    assert region(document, "incidents").find("p", cls="body").text() == expected
    assert [h3.text() for h3 in document.find_all("h3")] == [expected] * 3


def test_quotes_cannot_break_out_of_attributes():
    markup = render(sections=[section("Core", [], [group(ATTRIBUTE_EVIL, [component("API")])])])
    document = parse(markup)
    assert all("onmouseover" not in element.attrs for element in document.iter())
    assert document.find("ul", aria_label=ATTRIBUTE_EVIL).text() == "API Operational"


def test_unexpected_status_values_are_escaped_text_with_neutral_style():
    document = page(sections=[section("Core", [component("API", "<b>on_fire</b>")])])
    row = document.find("li", cls="row")
    assert row.text() == "API <b>on fire</b>"
    assert row.find("span", cls="badge").classes == {"badge", "st-unknown"}
    assert document.find_all("b") == []


def test_not_found_page_escapes_the_slug():
    markup = render_not_found(EVIL)
    document = parse(markup)
    assert "<script" not in markup.lower()
    assert EVIL in document.find("main").text()
    assert document.find("h2").text() == "Status page not found"
    assert document.find("html").attrs["lang"] == "en"


# --- statuses as text ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "label"),
    [
        ("operational", "Operational"),
        ("degraded_performance", "Degraded performance"),
        ("partial_outage", "Partial outage"),
        ("major_outage", "Major outage"),
        ("under_maintenance", "Under maintenance"),
        ("unknown", "Unknown"),
    ],
)
def test_every_component_status_is_written_out(status, label):
    document = page(sections=[section("Core", [component("Checkout API", status)])])
    row = document.find("li", cls="row")
    assert row.text() == f"Checkout API {label}"
    badge = row.find("span", cls="badge")
    assert f"st-{status}" in badge.classes
    # the symbol is decoration only; assistive technology reads the label
    assert badge.find("span").attrs["aria-hidden"] == "true"


@pytest.mark.parametrize(
    ("status", "headline"),
    [
        ("operational", "All systems operational"),
        ("degraded_performance", "Degraded performance"),
        ("partial_outage", "Partial system outage"),
        ("major_outage", "Major system outage"),
        ("under_maintenance", "Maintenance in progress"),
        ("unknown", "Status unknown"),
    ],
)
def test_overall_banner_for_each_status(status, headline):
    document = page(status=status)
    banner = document.find("section", cls="banner")
    assert banner.find("h2").text() == headline
    assert f"st-{status}" in banner.classes
    assert "Last updated 22 Nov 2026, 11:58 UTC" in banner.text()


def test_banner_for_a_status_it_does_not_know_says_unknown():
    document = page(status="exploded")
    assert document.find("section", cls="banner").find("h2").text() == "Status unknown"


@pytest.mark.parametrize(
    ("impact", "text", "style"),
    [
        ("none", "No impact", "st-unknown"),
        ("<i>weird</i>", "<i>weird</i> impact", "st-unknown"),
        ("minor", "Minor impact", "st-degraded_performance"),
        ("major", "Major impact", "st-partial_outage"),
        ("critical", "Critical impact", "st-major_outage"),
    ],
)
def test_incident_impact_and_status_are_text(impact, text, style):
    document = page(incidents=[incident(status="monitoring", impact=impact)])
    card = region(document, "incidents").find("article")
    badges = card.find("p", cls="badges").find_all("span", cls="badge")
    assert [badge.text() for badge in badges] == ["Monitoring", text]
    assert card.find("p", cls="badges").text() == f"Monitoring {text}"
    assert style in badges[1].classes


# --- empty states -------------------------------------------------------------------------------


def test_empty_page_says_so_in_every_section():
    document = page(sections=[])
    assert region(document, "incidents").text() == "Active incidents No incidents reported."
    assert region(document, "maintenance").text() == "Scheduled maintenance No maintenance scheduled."
    assert region(document, "history").text() == "Recent history No incidents or maintenance recently."
    assert "No components are listed yet." in document.find("main").text()
    banner = document.find("section", cls="banner")
    assert banner.find_all("a") == []


def test_section_without_components_says_so():
    document = page(sections=[section("Empty", [])])
    assert document.find("section", cls="card").text() == "Empty No components in this section."


# --- components: sections, groups, ungrouped ----------------------------------------------------


def test_sections_groups_and_ungrouped_components_keep_their_order():
    sections = [
        section(
            "Core services",
            [component("Dashboard", number=3)],
            [
                group(
                    "APIs",
                    [component("Checkout API", "degraded_performance", 1), component("Billing API", "operational", 2)],
                )
            ],
        ),
        section("Messaging", [component("Email", "major_outage", 4), component("SMS", "operational", 5)]),
    ]
    document = page(status="major_outage", sections=sections)
    cards = document.find_all("section", cls="card")
    assert [card.find("h3").text() for card in cards] == ["Core services", "Messaging"]
    core, messaging = cards
    assert [row.text() for row in core.find_all("li", cls="row")] == [
        "Dashboard Operational",
        "Checkout API Degraded performance",
        "Billing API Operational",
    ]
    apis = core.find("li", cls="group")
    # a group shows its worst component's status, as text
    assert apis.find("div", cls="row").text() == "APIs Degraded performance"
    assert apis.find("h4").text() == "APIs"
    assert [row.text() for row in messaging.find_all("li", cls="row")] == ["Email Major outage", "SMS Operational"]
    # each section is a labelled region whose heading id is generated, never taken from data
    assert [card.attrs["aria-labelledby"] for card in cards] == ["section-1", "section-2"]


@pytest.mark.parametrize(
    ("statuses", "worst"),
    [
        (["operational", "unknown"], "Unknown"),
        (["unknown", "under_maintenance"], "Under maintenance"),
        (["under_maintenance", "degraded_performance", "operational"], "Degraded performance"),
        (["partial_outage", "degraded_performance"], "Partial outage"),
        (["major_outage", "partial_outage"], "Major outage"),
        (["operational", "operational"], "Operational"),
        ([], "Unknown"),
    ],
)
def test_group_status_is_the_worst_of_its_components(statuses, worst):
    members = [component(f"C{n}", status, n) for n, status in enumerate(statuses)]
    document = page(sections=[section("Core", [], [group("G", members)])])
    assert document.find("li", cls="group").find("div", cls="row").text() == f"G {worst}"


# --- incidents ----------------------------------------------------------------------------------


def test_active_incident_shows_every_update_newest_first():
    started = NOW - timedelta(hours=2)
    updates = [
        update("investigating", "We are investigating slow checkouts.", started),
        update("monitoring", "Fix deployed; watching.", started + timedelta(hours=1)),
        update("identified", "A slow query.\nA fix is rolling out.", started + timedelta(minutes=30)),
    ]
    document = page(incidents=[incident(updates=updates)])
    card = region(document, "incidents").find("article")
    assert card.find("h3").text() == "Elevated checkout latency"
    assert "Started 22 Nov 2026, 10:00 UTC (2 hours ago)" in card.text()
    assert card.find("p", cls="meta").text() == "Started 22 Nov 2026, 10:00 UTC (2 hours ago)"
    assert "Affects: Checkout API" in card.text()
    rows = card.find("ol", cls="updates").find_all("li")
    assert [row.find("strong").text() for row in rows] == ["Monitoring", "Identified", "Investigating"]
    assert rows[1].find("p", cls="body").text() == "A slow query. A fix is rolling out."
    assert rows[1].find("time").attrs["datetime"] == "2026-11-22T10:30:00Z"


def test_active_incidents_newest_first_and_resolved_ones_go_to_history():
    document = page(
        incidents=[
            incident("Older", started=NOW - timedelta(days=1)),
            incident("Fixed", status="resolved", started=NOW - timedelta(days=2), resolved=NOW - timedelta(days=1)),
            incident("Newer", status="investigating", started=NOW - timedelta(minutes=5)),
        ]
    )
    assert titles(region(document, "incidents")) == ["Newer", "Older"]
    assert titles(region(document, "history")) == ["Fixed"]
    assert document.find("section", cls="banner").find_all("a")[0].text() == "2 active incidents"
    assert document.find("section", cls="banner").find_all("a")[0].attrs["href"] == "#incidents"


def test_resolved_incident_in_history_keeps_its_updates_behind_a_disclosure():
    fixed = incident(
        "Login failures",
        status="resolved",
        impact="major",
        started=NOW - timedelta(days=2, hours=4),
        resolved=NOW - timedelta(days=2, hours=2, minutes=45),
        updates=[
            update("investigating", "Looking.", NOW - timedelta(days=2, hours=4)),
            update("resolved", "Fixed.", NOW - timedelta(days=2, hours=2, minutes=45)),
        ],
    )
    card = region(page(incidents=[fixed]), "history").find("article")
    assert [badge.text() for badge in card.find_all("span", cls="badge")] == ["Incident", "Resolved", "Major impact"]
    assert card.find("p", cls="meta").text() == "20 Nov 2026, 08:00 to 09:15 UTC"
    details = card.find("details")
    assert details.find("summary").text() == "Updates (2)"
    assert [row.find("strong").text() for row in details.find_all("li")] == ["Resolved", "Investigating"]


def test_incident_without_updates_or_components_renders_without_empty_lists():
    document = page(incidents=[incident(updates=[], affected=())])
    card = region(document, "incidents").find("article")
    assert card.find_all("ol") == []
    assert "Affects" not in card.text()


# --- maintenance --------------------------------------------------------------------------------


def test_maintenance_in_progress_first_then_upcoming_soonest_first():
    document = page(
        maintenance=[
            window("Later", start=NOW + timedelta(days=3)),
            window("Now", status="in_progress", start=NOW - timedelta(minutes=30)),
            window("Sooner", start=NOW + timedelta(hours=14)),
        ]
    )
    cards = region(document, "maintenance").find_all("article")
    assert [card.find("h3").text() for card in cards] == ["Now", "Sooner", "Later"]
    assert cards[0].find("span", cls="badge").text() == "In progress"
    assert "(ends in 30 minutes)" in cards[0].text()
    assert cards[1].find("span", cls="badge").text() == "Scheduled"
    assert cards[1].find("p", cls="meta").text() == "23 Nov 2026, 02:00 to 03:00 UTC (in 14 hours)"
    assert "Affects: Billing API" in cards[1].text()
    jumps = [link.text() for link in document.find("section", cls="banner").find_all("a")]
    assert jumps == ["1 maintenance in progress", "2 upcoming maintenance windows"]


def test_window_spanning_midnight_shows_both_dates():
    document = page(maintenance=[window(start=NOW + timedelta(hours=11), hours=4)])
    meta = region(document, "maintenance").find("p", cls="meta")
    assert meta.text() == "22 Nov 2026, 23:00 UTC to 23 Nov 2026, 03:00 UTC (in 11 hours)"
    assert [time.attrs["datetime"] for time in meta.find_all("time")] == [
        "2026-11-22T23:00:00Z",
        "2026-11-23T03:00:00Z",
    ]


def test_history_mixes_incidents_and_finished_maintenance_newest_first():
    document = page(
        incidents=[
            incident(
                "Incident 2 days ago",
                status="resolved",
                started=NOW - timedelta(days=2, hours=1),
                resolved=NOW - timedelta(days=2),
            ),
        ],
        maintenance=[
            window("Completed yesterday", status="completed", start=NOW - timedelta(days=1, hours=2)),
            window("Completed 3 days ago", status="completed", start=NOW - timedelta(days=3)),
            window(
                "Cancelled today", status="cancelled", start=NOW + timedelta(days=1), updated=NOW - timedelta(hours=1)
            ),
        ],
    )
    history = region(document, "history")
    assert titles(history) == ["Cancelled today", "Completed yesterday", "Incident 2 days ago", "Completed 3 days ago"]
    cards = history.find_all("article")
    assert [badge.text() for badge in cards[0].find_all("span", cls="badge")] == ["Maintenance", "Cancelled"]
    assert [badge.text() for badge in cards[1].find_all("span", cls="badge")] == ["Maintenance", "Completed"]
    assert region(document, "maintenance").text().endswith("No maintenance scheduled.")


# --- times --------------------------------------------------------------------------------------


def test_times_are_utc_time_elements_whatever_the_input_form():
    offset = timezone(timedelta(hours=5, minutes=30))
    fixed_started = datetime(2026, 11, 22, 15, 30, tzinfo=offset)  # 10:00 UTC
    as_objects = incident(updates=[])
    as_objects["started_at"] = fixed_started  # a model_dump() without mode="json" passes datetimes
    naive = incident("Naive", updates=[])
    naive["started_at"] = "2026-11-22T10:00:00"  # no offset: read as UTC
    document = page(incidents=[as_objects, naive])
    times = [card.find("p", cls="meta").find("time") for card in region(document, "incidents").find_all("article")]
    assert [t.attrs["datetime"] for t in times] == ["2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z"]
    assert [t.text() for t in times] == ["22 Nov 2026, 10:00 UTC"] * 2
    for element in document.find_all("time"):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", element.attrs["datetime"] or "")
    assert (
        document.find("footer").text()
        == "All times are in UTC. Page generated 22 Nov 2026, 12:00 UTC. Powered by Tocsin."
    )


def test_same_minute_renders_the_same_bytes():
    """The route's ETag is a hash of the page: it may change once a minute, not on every request."""
    data: dict[str, Any] = {
        "incidents": [incident()],
        "maintenance": [window(status="in_progress", start=NOW - timedelta(minutes=5))],
    }
    first = render(now=NOW + timedelta(seconds=1), **data)
    assert render(now=NOW + timedelta(seconds=59, microseconds=999), **data) == first
    assert render(now=NOW + timedelta(minutes=1), **data) != first
    assert parse(first).find("footer").find("time").attrs["datetime"] == "2026-11-22T12:00:00Z"


def test_a_value_that_is_not_a_time_is_shown_as_text_not_a_crash():
    broken = incident(updates=[update("identified", "Body", NOW)])
    broken["started_at"] = "<soon>"
    broken["updates"][0]["published_at"] = None
    card = region(page(incidents=[broken]), "incidents").find("article")
    assert card.find("p", cls="meta").text() == "Started <soon>"
    assert "unknown time" in card.find("ol").text()


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=59), "just now"),
        (timedelta(seconds=-59), "just now"),
        (timedelta(minutes=1), "in 1 minute"),
        (timedelta(minutes=-59, seconds=-59), "59 minutes ago"),
        (timedelta(hours=1), "in 1 hour"),
        (timedelta(hours=-23, minutes=-59), "23 hours ago"),
        (timedelta(days=1), "in 1 day"),
        (timedelta(days=-9, hours=-23), "9 days ago"),
    ],
)
def test_relative_times_use_the_largest_whole_unit(delta, text):
    assert relative(NOW + delta, NOW) == text


# --- document, accessibility and policy ---------------------------------------------------------


def test_document_has_language_viewport_landmarks_and_no_external_assets():
    markup = render(incidents=[incident()], maintenance=[window()])
    document = parse(markup)
    assert markup.startswith("<!DOCTYPE html>")
    assert document.find("html").attrs["lang"] == "en"
    assert document.find("meta", name="viewport").attrs["content"] == "width=device-width, initial-scale=1"
    assert document.find("meta", charset="utf-8") is not None
    for landmark in ("header", "main", "footer"):
        assert len(document.find_all(landmark)) == 1
    assert len(document.find_all("h1")) == 1
    for labelled in document.find_all("section"):
        heading_id = labelled.attrs["aria-labelledby"] or ""
        assert document.find(id=heading_id).tag in {"h2", "h3"}
    assert document.find("a", cls="skip").attrs["href"] == "#main"
    assert document.find("main").attrs["id"] == "main"
    references = [element.attrs.get(name) for element in document.iter() for name in ("src", "href")]
    assert [ref for ref in references if ref and not ref.startswith(("#", "data:"))] == []
    assert document.find_all("script") == [] and "javascript:" not in markup


def relative_luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_contrast_helper_matches_known_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic just-fails grey


@pytest.mark.parametrize("status", COMPONENT_STATUSES)
def test_badge_and_banner_colours_meet_wcag_aa(status):
    style = STATUS_STYLES[status]
    assert contrast(style.text, style.background) >= 4.5


@pytest.mark.parametrize(("foreground", "background"), TEXT_PAIRS)
def test_body_text_colours_meet_wcag_aa(foreground, background):
    assert contrast(foreground, background) >= 4.5


def test_every_colour_pair_in_the_stylesheet_is_a_checked_one():
    style = parse(render()).find("style").children[0]
    assert isinstance(style, str)
    checked = {pair for pair in TEXT_PAIRS} | {(s.text, s.background) for s in STATUS_STYLES.values()}
    for rule in re.findall(r"\{([^}]*)\}", style):
        declarations = dict(part.split(":", 1) for part in rule.split(";") if ":" in part)
        if "color" in declarations and "background" in declarations:
            assert (declarations["color"], declarations["background"]) in checked, rule


def test_content_security_policy_allows_exactly_the_inline_stylesheet():
    style = parse(render()).find("style").children[0]
    assert isinstance(style, str)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY  # falls back to default-src 'none'
    assert parse(render_not_found("x")).find("style").children == [style]
