"""The on-call, schedule and override pages: every role reads them, only oncall:write changes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.oncall import service as schedules
from tests.conftest import Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def words(element: Any) -> str:
    """An element's text as read: whitespace collapsed, the en dash of time ranges as a hyphen."""
    return " ".join(element.text().replace("\N{EN DASH}", "-").split())


def _overrides(org: Org, client: Any, schedule_id: str) -> list[dict[str, Any]]:
    answer = client.http.get(f"/api/v1/schedules/{schedule_id}", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200
    return list(json.loads(answer.body)["data"]["overrides"])


@pytest.mark.parametrize("role", ROLES)
def test_every_page_renders_for_every_role(role: str, world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    browser = signed_in(role)
    for path in ("/app/on-call", "/app/schedules", f"/app/schedules/{world.schedule_id}"):
        answer = browser.get(path)
        assert answer.status == 200, (path, answer.body[:500])
        assert len(answer.dom().find_all("h1")) == 1
        forms = action_forms(answer)
        if role == "viewer" or (role == "responder" and path != f"/app/schedules/{world.schedule_id}"):
            assert forms == [], (path, forms)
        elif role == "responder":  # on call this week: asks for cover, the one thing a responder does here
            assert forms == [f"/app/schedules/{world.schedule_id}/swap-requests"], (path, forms)
    schedule = browser.get(f"/app/schedules/{world.schedule_id}")
    forms = action_forms(schedule)
    if role in ("owner", "admin"):
        assert f"/app/schedules/{world.schedule_id}/overrides" in forms
        assert f"/app/schedules/{world.schedule_id}/overrides/{world.override_id}/delete" in forms


def test_on_call_now_shows_each_service_level_by_level(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    page = signed_in("viewer").get("/app/on-call")
    rows = page.dom().find("tbody").find_all("tr")
    assert len(rows) == 2
    search, payments = rows  # newest first
    assert "Search" in search.text() and "No escalation policy" in search.text()
    assert "Payments API" in payments.text()
    assert payments.find("td", **{"data-label": "Primary"}).text() == "Responder Person"
    everyone = payments.find("td", **{"data-label": "Everyone on call"}).text()
    assert "primary: Responder Person via Payments primary" in everyone
    assert "secondary: Owner Person" in everyone
    assert "1 of 2 services covered (50%)" in words(page.dom())


def test_on_call_filters_by_team_name(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    page = signed_in("viewer").get("/app/on-call?team=Nobody")
    assert page.status == 200
    assert "No active services belong to the team “Nobody”." in page.text()
    too_long = signed_in("viewer").get("/app/on-call?team=" + "x" * 401)
    assert too_long.status == 400


def test_schedules_list_says_who_is_on_call_now(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    page = signed_in("responder").get("/app/schedules")
    row = page.dom().find("tbody").find("tr")
    assert "Payments primary" in row.text()
    assert row.find("td", **{"data-label": "On call now"}).text() == "Responder Person"


def test_the_schedule_shows_two_weeks_of_final_shifts_with_overrides_and_gaps(
    world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    page = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}")
    days = page.dom().find("table", cls="shifts").find("tbody").find_all("tr")
    assert len(days) == 14
    today, monday = days[0], days[1]
    assert "Sunday 22 Nov" in today.text() and "today" in today.text()
    assert "00:00-24:00 Responder Person Weekly" in words(today)
    monday_lines = [words(item) for item in monday.find_all("li")]
    assert monday_lines == [
        "00:00-09:00 Responder Person Weekly",
        "09:00-18:00 Admin Person Weekly",
        "18:00-22:00 Owner Person override",
        "22:00-24:00 Admin Person Weekly",
    ]
    later = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}?from=2026-12-06")
    first_later = later.dom().find("table", cls="shifts").find("tbody").find("tr")
    assert "Sunday 6 Dec" in first_later.text() and "today" not in first_later.text()


def test_a_layer_that_has_not_started_leaves_a_gap(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    page = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}?from=2026-11-15")
    first = page.dom().find("table", cls="shifts").find("tbody").find("tr")
    lines = [words(item) for item in first.find_all("li")]
    assert lines == ["00:00-24:00 Nobody on call"]


def test_a_bad_first_day_is_a_400(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    answer = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}?from=yesterday")
    assert answer.status == 400
    assert "must be a date" in answer.text()


def test_an_unknown_schedule_is_a_404(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    assert signed_in("viewer").get("/app/schedules/sch_nope").status == 404


def test_an_admin_adds_an_override_in_the_schedules_zone(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(
        f"/app/schedules/{world.schedule_id}/overrides",
        {"user_id": people["viewer"].user_id, "start": "2026-11-25T10:00", "end": "2026-11-25T12:30"},
    )
    assert answer.status == 303, answer.body[:800]
    shown = browser.follow(answer)
    assert "Override added." in shown.text()
    added = [o for o in _overrides(org, client, world.schedule_id) if o["user_id"] == people["viewer"].user_id]
    assert [(o["start"], o["end"]) for o in added] == [("2026-11-25T09:00:00Z", "2026-11-25T11:30:00Z")]
    wednesday = shown.dom().find("table", cls="shifts").find("tbody").find_all("tr")[3]
    assert "10:00-12:30 Viewer Person override" in words(wednesday)


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({"user_id": "", "start": "2026-11-25T10:00", "end": "2026-11-25T12:00"}, 400, "required"),
        ({"user_id": "VIEWER", "start": "tomorrow", "end": "2026-11-25T12:00"}, 400, "must be a date and time"),
        ({"user_id": "VIEWER", "start": "2026-11-25T12:00", "end": "2026-11-25T10:00"}, 400, "must be after start"),
        ({"user_id": "usr_nobody", "start": "2026-11-25T10:00", "end": "2026-11-25T12:00"}, 400, "no such user"),
    ],
)
def test_a_bad_override_reshows_the_form_with_the_problem(
    fields: dict[str, str],
    status: int,
    message: str,
    org: Org,
    client: Any,
    people: dict[str, Person],
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/schedules/{world.schedule_id}")
    sent = {k: (people["viewer"].user_id if v == "VIEWER" else v) for k, v in fields.items()}
    answer = browser.post(f"/app/schedules/{world.schedule_id}/overrides", sent)
    assert answer.status == status, answer.body[:800]
    assert message in answer.text()  # by the field as labelled, not its API path ("end", "user_id")
    form = answer.dom().find("form", action=f"/app/schedules/{world.schedule_id}/overrides")
    assert form.find("input", name="start").attrs.get("value") == sent["start"]
    assert len(_overrides(org, client, world.schedule_id)) == 1


def test_an_admin_deletes_an_override(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/overrides/{world.override_id}/delete", CONFIRMED)
    assert answer.status == 303
    assert "Override removed." in browser.follow(answer).text()
    assert _overrides(org, client, world.schedule_id) == []
    again = browser.post(f"/app/schedules/{world.schedule_id}/overrides/{world.override_id}/delete", CONFIRMED)
    assert again.status == 404
    assert "Override not found." in again.text()


@pytest.mark.parametrize("role", ["viewer", "responder"])
def test_a_forged_post_without_oncall_write_is_refused(
    role: str,
    org: Org,
    client: Any,
    people: dict[str, Person],
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in(role)
    browser.get(f"/app/schedules/{world.schedule_id}")
    added = browser.post(
        f"/app/schedules/{world.schedule_id}/overrides",
        {"user_id": people[role].user_id, "start": "2026-11-25T10:00", "end": "2026-11-25T12:00"},
    )
    removed = browser.post(f"/app/schedules/{world.schedule_id}/overrides/{world.override_id}/delete")
    assert added.status == removed.status == 403
    assert [o["override_id"] for o in _overrides(org, client, world.schedule_id)] == [world.override_id]


def test_override_forms_refuse_a_missing_or_wrong_csrf_token(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/schedules/{world.schedule_id}")
    path = f"/app/schedules/{world.schedule_id}/overrides/{world.override_id}/delete"
    assert browser.post(path, csrf="-").status == 403
    assert browser.post(path, csrf="bad").status == 403
    assert len(_overrides(org, client, world.schedule_id)) == 1
    assert schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).version >= 1


def test_coverage_gaps_are_flagged_on_the_schedule_policy_and_on_call_pages(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    from datetime import datetime

    from chalicelib.oncall.schedule import Layer
    from tests.conftest import NOW

    # A second rotation that starts Wednesday 09:00 Berlin: nobody until then, a gap of the next 14 days.
    late = Layer(
        layer_id="lyr_late",
        name="Late",
        members=(people["admin"].user_id,),
        rotation="weekly",
        handoff_time="09:00",
        start=datetime.fromisoformat("2026-11-25T08:00:00+00:00"),
    )
    gappy = schedules.create_schedule(
        organization_id=org.organization_id, name="Search primary", time_zone="Europe/Berlin", layers=[late], now=NOW
    )
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target

    policy = policies.create_policy(
        organization_id=org.organization_id,
        name="Search escalation",
        levels=[Level((Target("schedule", gappy.schedule_id),), 5)],
        repeat_count=0,
        now=NOW,
    )
    browser = signed_in("viewer")
    page = browser.get(f"/app/schedules/{gappy.schedule_id}").dom()
    warning = words(page.find(id="coverage"))
    assert "this schedule has 1 coverage gap in the next 14 days" in warning
    assert "22 Nov 2026, 12:00 UTC to 25 Nov 2026, 08:00 UTC" in warning  # the viewer's zone, named
    covered = browser.get(f"/app/schedules/{world.schedule_id}").dom()
    assert not covered.find_all(id="coverage")
    rows = {words(row.find("td")): row for row in browser.get("/app/schedules").dom().find("tbody").find_all("tr")}
    assert words(rows["Search primary"].find("td", **{"data-label": "Next 14 days"})) == "1 coverage gap"
    assert words(rows["Payments primary"].find("td", **{"data-label": "Next 14 days"})) == "Covered"
    on_call = words(browser.get("/app/on-call").dom().find(id="coverage"))
    assert "Schedule Search primary: 1 gap, the first 22 Nov 2026, 12:00 UTC to 25 Nov 2026, 08:00 UTC" in on_call
    assert "Escalation policy Search escalation: 1 gap" in on_call and "(level 1)" in on_call
    assert "Payments" not in on_call
    policy_page = words(browser.get(f"/app/escalation-policies/{policy.policy_id}").dom().find(id="coverage"))
    assert "this escalation policy has 1 coverage gap" in policy_page and "(level 1)" in policy_page
    listed = {
        words(r.find("td")): r for r in browser.get("/app/escalation-policies").dom().find("tbody").find_all("tr")
    }
    assert words(listed["Search escalation"].find("td", **{"data-label": "Next 14 days"})) == "1 coverage gap"
    assert words(listed["Payments escalation"].find("td", **{"data-label": "Next 14 days"})) == "Covered"
