"""The console shows every time in the viewer's zone, the zone named; a person chooses it on their profile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.directory import users
from chalicelib.organization import service as organizations
from tests.conftest import NOW, Org
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.console.incident_data import World, seed

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return seed(org, people)


def created_fact(answer: Any) -> tuple[str, str, str | None]:
    """The incident page's Created fact: its text, its <time datetime> and its title (the UTC time)."""
    dom = answer.dom()
    for dt, dd in zip(dom.find_all("dt"), dom.find_all("dd"), strict=True):
        if dt.text() == "Created":
            time = dd.find("time")
            return dd.text(), str(time.attrs.get("datetime")), time.attrs.get("title")
    raise AssertionError("no Created fact")


def facts_of(answer: Any) -> dict[str, str]:
    dom = answer.dom()
    return {
        dt.text(): " ".join(dd.text().split()) for dt, dd in zip(dom.find_all("dt"), dom.find_all("dd"), strict=True)
    }


def zone_field(answer: Any) -> Any:
    return answer.dom().find("select", name="time_zone")


def test_a_person_sets_their_zone_and_every_page_shows_it(
    signed_in: Browser, world: World, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("responder")
    incident = f"/app/incidents/{world.checkout_down}"
    assert created_fact(browser.get(incident)) == ("22 Nov 2026, 10:00 UTC by seed", "2026-11-22T10:00:00+00:00", None)

    profile = browser.get("/app/profile")
    assert "/app/profile/time-zone" in action_forms(profile)
    select = zone_field(profile)
    chosen = [option for option in select.find_all("option") if "selected" in option.attrs]
    assert [option.attrs.get("value") for option in chosen] == [""]
    assert chosen[0].text() == "The organization's zone (UTC)"
    assert "shown in UTC, your organization's zone" in " ".join(profile.text().split())

    saved = browser.post("/app/profile/time-zone", {"time_zone": "Europe/Paris"})
    assert saved.status == 303 and saved.location == "/app/profile?done=profile_zone_saved"
    shown = browser.follow(saved)
    assert "Time zone saved." in shown.text() and "shown in Europe/Paris" in " ".join(shown.text().split())
    assert users.get_user(organization_id=org.organization_id, user_id=people["responder"].user_id).time_zone == (
        "Europe/Paris"
    )
    # The incident page, its list and the alert-free pages read the same zone; the UTC time is the tooltip.
    assert created_fact(browser.get(incident)) == (
        "22 Nov 2026, 11:00 CET by seed",
        "2026-11-22T10:00:00+00:00",
        "22 Nov 2026, 10:00 UTC",
    )
    listed = browser.get("/app/incidents").dom().find("tbody").find_all("tr")
    assert [row.find("td", **{"data-label": "Created"}).text() for row in listed] == [
        "22 Nov 2026, 12:00 CET",
        "22 Nov 2026, 11:00 CET",
    ]
    # Someone else still reads UTC: the zone is the viewer's, not the page's.
    assert created_fact(signed_in("viewer").get(incident))[0] == "22 Nov 2026, 10:00 UTC by seed"


def test_back_to_the_organization_zone_follows_the_organization(
    signed_in: Browser, world: World, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("viewer")
    browser.get("/app/profile")
    assert browser.post("/app/profile/time-zone", {"time_zone": "Asia/Tokyo"}).status == 303
    assert created_fact(browser.get(f"/app/incidents/{world.checkout_down}"))[0] == "22 Nov 2026, 19:00 JST by seed"
    organizations.set_time_zone(organization_id=org.organization_id, time_zone="America/New_York")
    # An own zone wins over the organization's.
    assert created_fact(browser.get(f"/app/incidents/{world.checkout_down}"))[0] == "22 Nov 2026, 19:00 JST by seed"
    browser.get("/app/profile")
    assert browser.post("/app/profile/time-zone", {"time_zone": ""}).status == 303
    assert created_fact(browser.get(f"/app/incidents/{world.checkout_down}"))[0] == "22 Nov 2026, 05:00 EST by seed"
    profile = browser.get("/app/profile")
    chosen = [o for o in zone_field(profile).find_all("option") if "selected" in o.attrs]
    assert [(o.attrs.get("value"), o.text()) for o in chosen] == [("", "The organization's zone (America/New_York)")]
    assert users.get_user(organization_id=org.organization_id, user_id=people["viewer"].user_id).time_zone is None


@pytest.mark.parametrize("zone", ["Mars/Olympus", "europe/paris", "../etc/passwd", "E" * 65])
def test_a_zone_the_database_lacks_is_refused_on_the_form(
    signed_in: Browser, people: dict[str, Person], org: Org, zone: str
) -> None:
    browser = signed_in("viewer")
    browser.get("/app/profile")
    refused = browser.post("/app/profile/time-zone", {"time_zone": zone})
    assert refused.status == 400
    select = zone_field(refused)
    assert select.attrs.get("aria-invalid") == "true"
    problem = refused.dom().find("p", cls="field-error")
    assert problem is not None and problem.text()
    # What was typed stays chosen, so the person sees what was refused.
    chosen = [o.attrs.get("value") for o in select.find_all("option") if "selected" in o.attrs]
    assert chosen == [zone]
    assert users.get_user(organization_id=org.organization_id, user_id=people["viewer"].user_id).time_zone is None


def test_the_form_needs_its_csrf_token(signed_in: Browser, people: dict[str, Person], org: Org) -> None:
    browser = signed_in("viewer")
    browser.get("/app/profile")
    assert browser.post("/app/profile/time-zone", {"time_zone": "Europe/Paris"}, csrf="-").status == 403
    assert users.get_user(organization_id=org.organization_id, user_id=people["viewer"].user_id).time_zone is None


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sets_its_own_zone_only(role: str, signed_in: Browser, people: dict[str, Person], org: Org) -> None:
    browser = signed_in(role)
    browser.get("/app/profile")
    # A field naming another person is not read: the form acts on the signed-in person only.
    other = people["owner" if role != "owner" else "viewer"]
    answer = browser.post("/app/profile/time-zone", {"time_zone": "Europe/Berlin", "user_id": other.user_id})
    assert answer.status == 303
    assert users.get_user(organization_id=org.organization_id, user_id=people[role].user_id).time_zone == (
        "Europe/Berlin"
    )
    assert users.get_user(organization_id=org.organization_id, user_id=other.user_id).time_zone is None


def test_the_when_macro_shows_the_viewers_zone_and_utc_without_one() -> None:
    from datetime import UTC, datetime

    from chalicelib import templates

    macros = templates.environment().get_template("console/macros.html")

    def when(moment: datetime | None, **page: str) -> str:
        return str(macros.make_module(page).when(moment))  # the macros as imported with the page's context

    moment = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert when(moment, viewer_zone="Europe/Paris") == (
        '<time datetime="2026-07-01T12:00:00+00:00" title="1 Jul 2026, 12:00 UTC">1 Jul 2026, 14:00 CEST</time>'
    )
    # A page rendered without a viewer (the error page) shows UTC.
    assert when(moment) == '<time datetime="2026-07-01T12:00:00+00:00">1 Jul 2026, 12:00 UTC</time>'
    assert when(None, viewer_zone="Europe/Paris") == "\u2014"


def _set_zone(org: Org, person: Person, zone: str) -> None:
    users.update_user(organization_id=org.organization_id, user_id=person.user_id, now=NOW, time_zone=zone)


def test_a_maintenance_window_is_typed_in_the_viewers_zone(
    org: Org, people: dict[str, Person], client: Any, signed_in: Browser
) -> None:
    from tests.console.routing_world import build_world
    from tests.console.test_maintenance import _api_windows

    world = build_world(org, people)
    _set_zone(org, people["owner"], "America/New_York")
    browser = signed_in("owner")
    page = browser.get("/app/maintenance")
    labels = [label.text() for label in page.dom().find_all("label")]
    assert "Starts (America/New_York)" in labels and "Ends (America/New_York)" in labels
    fields = [
        ("form", "create"),
        ("form_key", "k-ny"),
        ("service_ids", world.service_key),
        # 10 Mar is EST (UTC-5); 14 Mar 02:30 does not exist (spring forward): the end of the jump, 03:00 EDT.
        ("start", "2027-03-10T22:00"),
        ("end", "2027-03-14T02:30"),
        ("description", "Move the data centre"),
    ]
    answer = browser.post("/app/maintenance", fields)
    assert answer.status == 303, answer.body[:500]
    [created] = _api_windows(client, org)
    assert (created["start"], created["end"]) == ("2027-03-11T03:00:00Z", "2027-03-14T07:00:00Z")
    shown = " ".join(browser.follow(answer).text().split())
    assert "14 Mar 2027, 03:00 EDT" in shown  # the list reads it back in the same zone


def test_list_filters_take_days_on_the_viewers_calendar(
    signed_in: Browser, world: World, org: Org, people: dict[str, Person]
) -> None:
    # The open incidents were created at 10:00Z and 11:00Z on 22 Nov: on 23 Nov in Kiritimati (UTC+14).
    browser = signed_in("viewer")
    utc_day = browser.get("/app/incidents?created_after=2026-11-22&created_before=2026-11-22")
    assert len(utc_day.dom().find("tbody").find_all("tr")) == 2
    _set_zone(org, people["viewer"], "Pacific/Kiritimati")  # UTC+14: 10:00Z is 00:00 on 23 Nov
    page = browser.get("/app/incidents?created_after=2026-11-22&created_before=2026-11-22")
    assert page.status == 200 and "No incidents match these filters." in page.text()
    next_day = browser.get("/app/incidents?created_after=2026-11-23&created_before=2026-11-23")
    assert len(next_day.dom().find("tbody").find_all("tr")) == 2
    labels = [label.text() for label in next_day.dom().find_all("label")]
    assert "Created from (day in Pacific/Kiritimati)" in labels


def test_a_schedule_shows_its_own_zone_or_the_viewers_on_request(
    org: Org, people: dict[str, Person], client: Any, signed_in: Browser
) -> None:
    from tests.console.routing_world import build_world
    from tests.console.test_oncall import _overrides, words

    world = build_world(org, people)
    _set_zone(org, people["admin"], "America/New_York")
    browser = signed_in("admin")
    page = browser.get(f"/app/schedules/{world.schedule_id}")
    facts = facts_of(page)
    assert facts["Times shown in"] == ("Europe/Berlin, the schedule's zone. Show them in yours (America/New_York)")
    mine = browser.get(f"/app/schedules/{world.schedule_id}?in=mine")
    facts = facts_of(mine)
    assert facts["Times shown in"] == "America/New_York, your zone. Show them in the schedule's zone"
    assert f"/app/schedules/{world.schedule_id}?from=2026-12-06&in=mine#shifts" in [
        a.attrs.get("href") for a in mine.dom().find_all("a")
    ]
    # The override form says and reads the zone it shows.
    assert "Times in America/New_York." in mine.text()
    answer = browser.post(
        f"/app/schedules/{world.schedule_id}/overrides",
        {"user_id": people["viewer"].user_id, "start": "2026-11-25T10:00", "end": "2026-11-25T12:30", "in": "mine"},
    )
    assert answer.status == 303 and answer.location == f"/app/schedules/{world.schedule_id}?in=mine&done=override_added"
    added = [o for o in _overrides(org, client, world.schedule_id) if o["user_id"] == people["viewer"].user_id]
    assert [(o["start"], o["end"]) for o in added] == [("2026-11-25T15:00:00Z", "2026-11-25T17:30:00Z")]
    shown = browser.follow(answer)
    wednesday = shown.dom().find("table", cls="shifts").find("tbody").find_all("tr")[3]
    assert "10:00-12:30 Viewer Person override" in words(wednesday)
    # In the schedule's zone the same override is 16:00 to 18:30, its zone named in the override list.
    berlin = browser.get(f"/app/schedules/{world.schedule_id}")
    assert "16:00-18:30 Viewer Person override" in words(berlin.dom().find("table", cls="shifts").find("tbody"))
    assert "25 Nov 2026, 16:00 CET" in berlin.text()


def test_a_viewer_in_the_schedules_zone_gets_no_switch(org: Org, people: dict[str, Person], signed_in: Browser) -> None:
    from tests.console.routing_world import build_world

    world = build_world(org, people)
    _set_zone(org, people["viewer"], "Europe/Berlin")
    page = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}")
    facts = facts_of(page)
    assert facts["Times shown in"] == "Europe/Berlin, the schedule's zone and yours"
