"""The alert pages: every role reads them (incidents:read); the list filters as GET /api/v1/alerts
does and refuses what it refuses; one alert shows every field; an incident's page counts and
lists its alerts and links to all of them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import pytest

from chalicelib.console.pages.alerts import safe_link, suppressed_reason
from chalicelib.integration.ingest import ingest
from chalicelib.maintenance.in_effect import WindowInEffect
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.alert_world import AlertWorld, build_alerts, event
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.e2e.browser import Element

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> AlertWorld:
    return build_alerts(org)


def _titles(page: Element) -> list[str]:
    return [cell.find("a").text() for cell in page.find_all("td", cls="alert-title")]


def _link(page: Element, words: str) -> str:
    [found] = [a for a in page.find_all("a") if a.text() == words]
    return str(found.attrs["href"])


def _list(browser: ConsoleClient, **filters: Any) -> Any:
    return browser.get("/app/alerts" + ("?" + urlencode(filters, doseq=True) if filters else ""))


@pytest.mark.parametrize("role", ROLES)
def test_every_alert_page_renders_for_every_role_without_a_form(
    role: str, world: AlertWorld, signed_in: Browser
) -> None:
    browser = signed_in(role)
    for path in ("/app/alerts", f"/app/alerts/{world.db1_alert}", f"/app/alerts/{world.suppressed_alert}"):
        answer = browser.get(path)
        assert answer.status == 200, (path, answer.body[:500])
        assert len(answer.dom().find_all("h1")) == 1
        assert action_forms(answer) == [], path
    incident = browser.get(f"/app/incidents/{world.checkout_incident}")
    assert incident.status == 200 and incident.dom().find(id="h-alerts").text() == "Alerts"
    nav = browser.get("/app/alerts").dom().find("nav").find("a", href="/app/alerts")
    assert nav.text() == "Alerts" and nav.attrs.get("aria-current") == "page"


def test_the_list_shows_each_alert_newest_first_with_why_it_was_suppressed(
    world: AlertWorld, signed_in: Browser
) -> None:
    page = signed_in("viewer").get("/app/alerts").dom()
    assert _titles(page) == ["Search p99 above 2 s", "Disk full on db2", "Disk full on db1", "Planned reboot of db3"]
    assert "1\N{EN DASH}4 of 4 alerts from the last 30 days, newest first" in page.text()
    latency, db2, db1, reboot = page.find("tbody").find_all("tr")
    assert latency.find("td", **{"data-label": "Service"}).text() == "Search"
    assert latency.find("td", **{"data-label": "Source"}).text() == "probe (custom)"
    incident = db2.find("td", **{"data-label": "Incident"})
    assert incident.find("a").attrs["href"] == f"/app/incidents/{world.checkout_incident}"
    assert "grouped" in incident.text()
    assert db2.find("td", **{"data-label": "Count"}).text() == "2"
    received = db2.find("td", **{"data-label": "Received"}).text()
    assert "first 22 Nov 2026, 11:35 UTC" in received and "last 22 Nov 2026, 11:40 UTC" in received
    assert "resolved" in db1.find("td", cls="badge-cell").text()
    assert reboot.find("td", cls="badge-cell").text() == "suppressedby maintenance window mw_upgrade"
    assert reboot.find("td", **{"data-label": "Incident"}).text() == "—"
    assert db1.find("a").attrs["href"] == f"/app/alerts/{world.db1_alert}"


@pytest.mark.parametrize(
    ("filters", "titles"),
    [
        ({"status": "suppressed"}, ["Planned reboot of db3"]),
        ({"status": ["triggered", "resolved"]}, ["Search p99 above 2 s", "Disk full on db2", "Disk full on db1"]),
        ({"service_id": "SER-00002"}, ["Search p99 above 2 s"]),
        ({"service_id": "SER-00001", "status": "triggered"}, ["Disk full on db2"]),
        ({"since": "2026-11-22", "until": "2026-11-22"}, None),  # every one: all came on the 22nd
        ({"until": "2026-11-21"}, []),
        ({"since": "2026-11-23"}, []),
    ],
)
def test_the_filters_mean_what_the_apis_mean(
    filters: dict[str, Any], titles: list[str] | None, world: AlertWorld, signed_in: Browser
) -> None:
    answer = _list(signed_in("responder"), **filters)
    assert answer.status == 200, answer.body[:800]
    page = answer.dom()
    expected = titles if titles is not None else _titles(_list(signed_in("viewer")).dom())
    assert _titles(page) == expected
    if not expected:
        assert "No alerts match these filters." in page.text()
    assert "open" in page.find("details", id="filters").attrs
    for value in [filters.get("status")] if isinstance(filters.get("status"), str) else filters.get("status", []):
        assert "checked" in page.find("input", name="status", value=value).attrs


def test_the_incident_filter_takes_any_case_and_the_service_filter_a_key(world: AlertWorld, signed_in: Browser) -> None:
    browser = signed_in("viewer")
    by_incident = _list(browser, incident_number=world.checkout_incident.lower()).dom()
    assert _titles(by_incident) == ["Disk full on db2", "Disk full on db1"]
    assert by_incident.find("input", name="incident_number").attrs["value"] == world.checkout_incident
    by_key = _list(browser, service_id=world.search_key).dom()
    assert _titles(by_key) == ["Search p99 above 2 s"]
    assert "selected" in by_key.find("option", value=world.search_key).attrs


@pytest.mark.parametrize(
    ("filters", "field", "words"),
    [
        ({"service_id": "SER-09999"}, "service_id", "no such service in this organization"),
        ({"since": "2026-11-22", "until": "2026-11-21"}, "until", "must not be earlier than since"),
        ({"since": "2026-02-30"}, "since", "must be a day of the calendar"),
        ({"until": "yesterday"}, "until", ""),
        ({"status": "open"}, "status", "triggered"),
        ({"offset": "-1"}, None, "offset"),
    ],
)
def test_a_bad_filter_is_refused_with_the_apis_words_next_to_it(
    filters: dict[str, Any], field: str | None, words: str, world: AlertWorld, signed_in: Browser
) -> None:
    answer = _list(signed_in("viewer"), **filters)
    assert answer.status == 400, answer.body[:800]
    page = answer.dom()
    assert page.find(cls="problem").text() and words in page.text()
    assert page.find_all("tbody") == []
    if field == "status":
        assert page.find("fieldset", cls="choices").find("p", cls="field-error").text()
    elif field is not None:
        assert page.find(id=f"f-{field}").attrs.get("aria-invalid") == "true"
        assert words in page.find(id=f"e-f-{field}").text()


def test_twenty_five_a_page_with_older_and_newer_links(org: Org, world: AlertWorld, signed_in: Browser) -> None:
    prom = world.prom
    window = WindowInEffect(window_id="mw_more", description=None, end_at=NOW)
    with mock.patch("chalicelib.integration.triggering.window_in_effect", return_value=window):
        for index in range(22):  # 4 + 22: two pages
            ingest(
                prom,
                event(f"quiet-{index}", f"Quiet {index:02d}"),
                now=NOW - timedelta(hours=2, minutes=index),
                settings=get_settings(),
            )
    browser = signed_in("viewer")
    first = _list(browser, status="suppressed").dom()
    assert len(_titles(first)) == 23 and "1\N{EN DASH}23 of 23" in first.text()
    everything = _list(browser).dom()
    assert len(_titles(everything)) == 25 and "1\N{EN DASH}25 of 26 alerts" in everything.text()
    older = _link(everything, "Older")
    assert older == "/app/alerts?offset=25"
    last = browser.get(older).dom()
    assert _titles(last) == ["Quiet 21"] and "26\N{EN DASH}26 of 26" in last.text()
    assert _link(last, "Newer") == "/app/alerts"


def test_one_alert_shows_every_field(world: AlertWorld, signed_in: Browser) -> None:
    page = signed_in("viewer").get(f"/app/alerts/{world.db1_alert}").dom()
    assert page.find("h1").text().endswith("Disk full on db1")
    facts = page.find("dl", cls="facts")
    text = " ".join(facts.text().split())
    for expected in (
        f"Incident {world.checkout_incident}",
        "Service Checkout SER-00001",
        "Count 1 event",
        "First received 22 Nov 2026, 11:30 UTC",
        "Resolved 22 Nov 2026, 11:50 UTC",
        "Source alertmanager",
        "Integration prom alertmanager",
        "Dedup key db1",
        "Suppressed by —",
    ):
        assert expected in text, (expected, text)
    assert facts.find("a", href=f"/app/incidents/{world.checkout_incident}")
    assert facts.find("a", href="https://grafana.example/d/disk")
    rows = page.find("table", cls="labels").find("tbody").find_all("tr")
    assert [(row.find("th").text(), row.find("td").text()) for row in rows] == [("env", "prod"), ("host", "db1")]
    assert "95% used on /var" in page.text()
    details = page.find("table", cls="alert-details").find("tbody").find_all("tr")
    assert [row.find("th").text() for row in details] == ["disk", "owner"]
    assert details[0].find("pre", cls="details-json").text() == '{ "mount": "/var", "used": 0.95 }'
    assert details[1].find("td").text() == "<b>storage</b>"  # text, never markup
    grouped_page = signed_in("viewer").get(f"/app/alerts/{world.db2_alert}")
    assert "No details" in grouped_page.dom().find("section", **{"aria-labelledby": "h-details"}).text()
    grouped = signed_in("viewer").get(f"/app/alerts/{world.db2_alert}").dom()
    assert "joined by alert grouping" in grouped.find("dl", cls="facts").text()
    quiet = signed_in("viewer").get(f"/app/alerts/{world.suppressed_alert}").dom()
    assert "Suppressed by maintenance window mw_upgrade" in quiet.find(cls="suppressed-note").text()
    assert "Incident None" in " ".join(quiet.find("dl", cls="facts").text().split())


def test_an_unknown_or_malformed_alert_is_404(world: AlertWorld, signed_in: Browser) -> None:
    browser = signed_in("viewer")
    for path in ("/app/alerts/alr_nope", "/app/alerts/other", f"/app/alerts/{world.db1_alert}x"):
        assert browser.get(path).status == 404, path


def test_the_incident_page_counts_its_alerts_and_links_to_them_all(world: AlertWorld, signed_in: Browser) -> None:
    browser = signed_in("viewer")
    page = browser.get(f"/app/incidents/{world.checkout_incident}").dom()
    section = page.find("section", **{"aria-labelledby": "h-alerts"})
    assert section.find("p", cls="alert-counts").text() == "2 alerts: 1 triggered, 1 resolved"
    rows = section.find("ul", cls="alert-rows").find_all("li")
    assert [row.find("a").text() for row in rows] == ["Disk full on db2", "Disk full on db1"]
    assert "triggered" in rows[0].text() and "2 events" in rows[0].text() and "grouped" in rows[0].text()
    assert rows[1].find("a").attrs["href"] == f"/app/alerts/{world.db1_alert}"
    link = _link(section, f"All 2 alerts of {world.checkout_incident}")
    assert link == f"/app/alerts?incident_number={world.checkout_incident}&since=2026-11-22"
    assert _titles(browser.get(link).dom()) == ["Disk full on db2", "Disk full on db1"]
    details = page.find("section", **{"aria-labelledby": "h-details"})
    assert "Of the alert that opened the incident" in details.text()
    rows = details.find("table", cls="alert-details").find("tbody").find_all("tr")
    assert [(row.find("th").text(), row.find("td").text()) for row in rows][1] == ("owner", "<b>storage</b>")
    hand_made = browser.get(f"/app/incidents/{world.search_incident}").dom()
    assert "No details" in hand_made.find("section", **{"aria-labelledby": "h-details"}).text()


def test_the_incident_page_shows_the_newest_ten_of_many(org: Org, world: AlertWorld, signed_in: Browser) -> None:
    prom = world.prom
    for index in range(10):  # inside the 15 minutes of the incident's first alert: all join it
        ingest(
            prom,
            event(f"db-{index}", f"Disk full on node {index}"),
            now=NOW - timedelta(minutes=29, seconds=-index),
            settings=get_settings(),
        )
    section = (
        signed_in("viewer")
        .get(f"/app/incidents/{world.checkout_incident}")
        .dom()
        .find("section", **{"aria-labelledby": "h-alerts"})
    )
    assert section.find("p", cls="alert-counts").text() == "12 alerts: 11 triggered, 1 resolved"
    assert "The newest 10:" in section.text()
    assert len(section.find("ul", cls="alert-rows").find_all("li")) == 10
    assert _link(section, f"All 12 alerts of {world.checkout_incident}").startswith("/app/alerts?")


def test_an_incident_opened_by_hand_has_no_alerts(org: Org, world: AlertWorld, signed_in: Browser) -> None:
    from chalicelib.incident import service

    opened = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="By hand", service_keys=[world.search_key]),
        now=NOW,
        actor="ana",
        settings=get_settings(),
    )
    page = signed_in("viewer").get(f"/app/incidents/{opened.incident_number}").dom()
    section = page.find("section", **{"aria-labelledby": "h-alerts"})
    assert "No alerts recorded" in section.text() and section.find_all("a") == []


def test_why_an_alert_is_suppressed_and_which_links_are_safe() -> None:
    assert suppressed_reason({"kind": "maintenance", "window_id": "mw_1"}) == "maintenance window mw_1"
    assert suppressed_reason({"kind": "event_rule", "rule_ids": ["rul_a", "rul_b"]}) == "event rules rul_a, rul_b"
    assert suppressed_reason({"kind": "event_rule", "rule_ids": ["rul_a"]}) == "event rule rul_a"
    assert suppressed_reason({"kind": "event_rule", "rule_id": "rul_c"}) == "event rule rul_c"
    assert suppressed_reason({"kind": "event_rule"}) == "an event rule"
    assert suppressed_reason(None) == ""
    assert safe_link("https://grafana.example/x") == "https://grafana.example/x"
    assert safe_link("HTTP://grafana.example/x") == "HTTP://grafana.example/x"
    for unsafe in ("javascript:alert(1)", "data:text/html,x", "//evil.example", None, ""):
        assert safe_link(unsafe) is None, unsafe
