"""The incident list: open by default, the API's filters, pages, empty states, permissions; and
opening an incident by hand (the API's create, once per form)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.console.incident_data import World, api_get, seed

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return seed(org, people)


def numbers(answer: Any) -> list[str]:
    """The incident numbers listed, in page order."""
    return [
        a.text().split()[0] for a in answer.dom().find_all("a") if "/app/incidents/INC-" in str(a.attrs.get("href"))
    ]


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_the_open_incidents_newest_first(signed_in: Browser, world: World, role: str) -> None:
    answer = signed_in(role).get("/app/incidents")
    assert answer.status == 200
    assert numbers(answer) == [world.search_slow, world.checkout_down]
    assert "1\N{EN DASH}2 of 2 open incidents" in answer.text()
    # The filters are a GET form; the one POST form acts on the ticked incidents, for those who may.
    assert action_forms(answer) == ([] if role == "viewer" else ["/app/incidents/bulk"])
    boxes = answer.dom().find_all("input", name="incident")
    assert [b.attrs.get("value") for b in boxes] == ([] if role == "viewer" else numbers(answer))
    new_link = [a for a in answer.dom().find_all("a") if a.attrs.get("href") == "/app/incidents/new"]
    assert bool(new_link) == (role != "viewer")


FILTER_CASES = (
    ("severity=SEV1", ["checkout_down"]),
    ("severity=SEV1&severity=sev3", ["search_slow", "checkout_down"]),
    ("status=resolved", ["old_outage"]),
    ("status=resolved&status=new", ["search_slow", "checkout_down", "old_outage"]),
    ("urgency=high", ["checkout_down"]),
    ("urgency=low", ["search_slow"]),
    ("team_name=payments", ["checkout_down"]),
    ("status=resolved&created_after=2026-11-19&created_before=2026-11-19", ["old_outage"]),
    ("status=resolved&created_after=2026-11-20", []),
    ("created_before=2026-11-21", []),
    ("team_name=&severity=", ["search_slow", "checkout_down"]),  # blank fields are no filter
)


def test_the_filters_mean_what_the_api_filters_mean(signed_in: Browser, world: World, client: Any, org: Org) -> None:
    browser = signed_in("viewer")
    for query, expected in FILTER_CASES:
        answer = browser.get(f"/app/incidents?{query}")
        assert answer.status == 200, query
        assert numbers(answer) == [getattr(world, name) for name in expected], query
        # The same query on the API lists the same incidents (the form's days are whole UTC days).
        api_query = query.replace("created_after=2026-11-19", "created_after=2026-11-19T00:00:00Z")
        api_query = api_query.replace("created_before=2026-11-19", "created_before=2026-11-19T23:59:59.999Z")
        api_query = api_query.replace("created_after=2026-11-20", "created_after=2026-11-20T00:00:00Z")
        api_query = api_query.replace("created_before=2026-11-21", "created_before=2026-11-21T23:59:59.999Z")
        api_query = api_query.replace("team_name=&severity=", "")
        listed = api_get(client, org, f"/api/v1/incidents?{api_query}")["items"]
        assert [i["incident_number"] for i in listed] == numbers(answer), query
        if not expected:
            assert "No incidents match these filters." in answer.text()


def test_the_assignee_filter_and_the_form_shows_what_is_in_use(
    signed_in: Browser, world: World, people: dict[str, Person], org: Org
) -> None:
    from chalicelib.incident import commands
    from tests.service.test_incident_service import principal

    commands.update_incident(
        organization_id=org.organization_id,
        incident_number=world.checkout_down,
        changes={"assigned_to": people["responder"].email},
        now=NOW,
        principal=principal(org),
    )
    answer = signed_in("owner").get(f"/app/incidents?assigned_to={people['responder'].email}&severity=SEV1")
    assert numbers(answer) == [world.checkout_down]
    dom = answer.dom()
    assert "Filters (2 in use)" in dom.find("details", id="filters").find("summary").text()
    chosen = [o for o in dom.find("select", name="assigned_to").find_all("option") if "selected" in o.attrs]
    assert [o.attrs["value"] for o in chosen] == [people["responder"].email]
    ticked = [i.attrs["value"] for i in dom.find_all("input", type="checkbox") if "checked" in i.attrs]
    assert ticked == ["SEV1"]


BAD_FILTERS = (
    ("status=bogus", "'bogus' is not a status in this organization's workflow."),
    ("severity=SEV9", "Severity must be one of SEV0, SEV1, SEV2, SEV3, SEV4"),
    ("created_after=2026-11-22&created_before=2026-11-20", "must not be earlier than created_after"),
    ("created_after=2026-02-30", "must be a day of the calendar, as YYYY-MM-DD"),
    ("offset=-1", "Page: Input should be greater than or equal to 0"),  # named in words, not "offset"
    ("assigned_to=not-an-email", "must be an email address"),
)


def test_a_bad_filter_is_refused_with_the_apis_words_and_a_400(signed_in: Browser, world: World) -> None:
    browser = signed_in("responder")
    for query, message in BAD_FILTERS:
        answer = browser.get(f"/app/incidents?{query}")
        assert answer.status == 400, query
        assert message in answer.text(), query
        assert answer.dom().find_all("div", cls="problem"), query
        assert numbers(answer) == [], query


def test_pages_of_25_with_newer_and_older_links_that_keep_the_filters(
    signed_in: Browser, org: Org, people: dict[str, Person]
) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    svc = services.create_service(organization_id=org.organization_id, name="Batch", now=NOW)
    created = [
        service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(title=f"Job {n}", service_keys=[svc.service_key], severity="SEV4"),
            now=NOW + timedelta(minutes=n),
            actor="seed",
            settings=get_settings(),
        ).incident_number
        for n in range(30)
    ]
    browser = signed_in("viewer")
    first = browser.get("/app/incidents?severity=SEV4")
    assert numbers(first) == list(reversed(created))[:25]
    pager = {a.text(): a.attrs["href"] for a in first.dom().find("nav", **{"aria-label": "Pages"}).find_all("a")}
    assert pager == {"Older": "/app/incidents?severity=SEV4&offset=25"}
    second = browser.get(pager["Older"])
    assert numbers(second) == list(reversed(created))[25:]
    assert "26\N{EN DASH}30 of 30 open incidents" in second.text()
    pager = {a.text(): a.attrs["href"] for a in second.dom().find("nav", **{"aria-label": "Pages"}).find_all("a")}
    assert pager == {"Newer": "/app/incidents?severity=SEV4"}


def test_no_open_incidents_reads_well(signed_in: Browser, org: Org) -> None:
    answer = signed_in("viewer").get("/app/incidents")
    assert answer.status == 200
    assert "No open incidents. Good." in answer.text()
    assert answer.dom().find_all("table") == []


# ---------------------------------------------------------------- opening an incident


@pytest.mark.parametrize("role", ROLES)
def test_the_new_incident_page_renders_for_every_role(signed_in: Browser, world: World, role: str) -> None:
    answer = signed_in(role).get("/app/incidents/new")
    assert answer.status == 200
    if role == "viewer":
        assert action_forms(answer) == []
        assert "can read incidents but not open them" in answer.text()
    else:
        assert action_forms(answer) == ["/app/incidents/new"]


def test_opening_an_incident_then_its_page_and_the_api_agrees(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    browser = signed_in("responder")
    browser.get("/app/incidents/new")
    form_key = browser.get("/app/incidents/new").dom().find("input", name="form_key").attrs["value"]
    fields = [
        ("title", "Login broken"),
        ("service_ids", world.search_key),
        ("service_ids", world.checkout_key),
        ("severity", "SEV2"),
        ("description", "Users see a 500."),
        ("form_key", form_key),
    ]
    answer = browser.post("/app/incidents/new", fields)
    assert answer.status == 303
    number = answer.location.removeprefix("/app/incidents/").split("?")[0]
    assert answer.location == f"/app/incidents/{number}?done=incident_created"
    assert "Incident created." in browser.follow(answer).text()
    again = browser.post("/app/incidents/new", fields)  # the same form sent twice: one incident
    assert again.status == 303 and again.location == answer.location
    listed = api_get(client, org, "/api/v1/incidents?limit=100")
    assert [i["incident_number"] for i in listed["items"] if i["title"] == "Login broken"] == [number]
    created = next(i for i in listed["items"] if i["incident_number"] == number)
    assert (created["severity"], created["description"]) == ("SEV2", "Users see a 500.")
    assert created["service_keys"] == [world.search_key, world.checkout_key]


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ([("title", "No service")], 400, "at least 1 item"),  # at the Services input
        ([("title", ""), ("service_ids", "svc_aaaaaaaaaa")], 400, "at least 1 character"),  # at Title
        ([("title", "Bad sev"), ("service_ids", "SERVICE"), ("severity", "SEV7")], 400, "Severity must be one of"),
        ([("title", "Gone"), ("service_ids", "svc_zzzzzzzzzz")], 400, "not active services"),
    ],
)
def test_a_bad_new_incident_is_refused_on_the_form(
    signed_in: Browser, world: World, client: Any, org: Org, fields: list[tuple[str, str]], status: int, message: str
) -> None:
    browser = signed_in("admin")
    browser.get("/app/incidents/new")
    answer = browser.post("/app/incidents/new", fields)
    assert answer.status == status
    assert message in answer.text()
    assert answer.text().count(message) == 1  # said once
    assert answer.dom().find("input", name="title").attrs.get("value") == dict(fields)["title"]
    assert api_get(client, org, "/api/v1/incidents")["total"] == 2


def test_a_viewer_cannot_open_an_incident_and_forms_need_their_token(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    fields = {"title": "Forged", "service_ids": world.search_key}
    viewer = signed_in("viewer")
    viewer.get("/app/incidents")
    assert viewer.post("/app/incidents/new", fields).status == 403
    owner = signed_in("owner")
    owner.get("/app/incidents/new")
    assert owner.post("/app/incidents/new", fields, csrf="-").status == 403
    assert owner.post("/app/incidents/new", fields, csrf="bad").status == 403
    assert api_get(client, org, "/api/v1/incidents")["total"] == 2
