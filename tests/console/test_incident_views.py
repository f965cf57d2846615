"""A responder's phone: "Assigned to me", the opt-in refresh, acknowledging or resolving several
incidents at once (a line per incident: done, already, refused and why), and the menu every page
carries as a disclosure that opens without script."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.incident import commands, repository
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.console.conftest import ROLES, ConsoleClient, Person
from tests.console.incident_data import World, incident_via_api, seed

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return seed(org, people)


def numbers(answer: Any) -> list[str]:
    return [
        a.text().split()[0] for a in answer.dom().find_all("a") if "/app/incidents/INC-" in str(a.attrs.get("href"))
    ]


def acknowledge_as(org: Org, person: Person, number: str) -> None:
    from chalicelib.auth.principal import Principal

    principal = Principal(
        organization_id=org.organization_id,
        credential_kind="session",
        scopes=ROLE_SCOPES[person.role],
        user_id=person.user_id,
        role=person.role,
        email=person.email,
        name=person.name,
        display_name=person.email,
    )
    commands.acknowledge(organization_id=org.organization_id, incident_number=number, principal=principal, now=NOW)


def test_assigned_to_me_lists_only_mine_and_its_links_keep_the_view(
    signed_in: Browser, org: Org, people: dict[str, Person], world: World
) -> None:
    acknowledge_as(org, people["responder"], world.checkout_down)  # acknowledging assigns the acknowledger
    mine = signed_in("responder").get("/app/incidents?assigned=me")
    assert mine.status == 200 and mine.dom().find("h1").text() == "Assigned to me"
    assert numbers(mine) == [world.checkout_down]
    current = [
        a for a in mine.dom().find("nav", **{"aria-label": "Incident views"}).find_all("a") if "aria-current" in a.attrs
    ]
    assert [a.text() for a in current] == ["Assigned to me"]
    refresh = [a for a in mine.dom().find_all("a") if a.text() == "Refresh every 30 seconds"]
    assert refresh and "assigned=me" in str(refresh[0].attrs["href"]) and "refresh=30" in str(refresh[0].attrs["href"])
    other = signed_in("admin").get("/app/incidents?assigned=me")
    assert numbers(other) == [] and "No open incidents are assigned to you." in other.text()
    everyone = signed_in("admin").get("/app/incidents")
    assert numbers(everyone) == [world.search_slow, world.checkout_down]


def test_the_refresh_is_opt_in_and_kept_by_the_list_links(signed_in: Browser, world: World) -> None:
    browser = signed_in("viewer")
    plain = browser.get("/app/incidents")
    assert plain.dom().find_all("meta", **{"http-equiv": "refresh"}) == []
    watching = browser.get("/app/incidents?refresh=30&severity=SEV1")
    (meta,) = watching.dom().find_all("meta", **{"http-equiv": "refresh"})
    assert meta.attrs["content"] == "30"
    assert numbers(watching) == [world.checkout_down]
    assert "Refreshing every 30 seconds." in watching.text()
    (stop,) = [a for a in watching.dom().find_all("a") if a.text() == "Stop refreshing"]
    assert stop.attrs["href"] == "/app/incidents?severity=SEV1"
    odd = browser.get("/app/incidents?refresh=1")  # only the offered periods: no hammering
    assert odd.dom().find_all("meta", **{"http-equiv": "refresh"}) == []


@pytest.mark.parametrize("role", ["owner", "admin", "responder"])
def test_acknowledging_two_with_one_already_resolved(
    role: str, signed_in: Browser, client: Any, org: Org, world: World
) -> None:
    browser = signed_in(role)
    browser.get("/app/incidents")
    answer = browser.post(
        "/app/incidents/bulk",
        [
            ("action", "acknowledge"),
            ("incident", world.checkout_down),
            ("incident", world.old_outage),
            ("back", "/app/incidents?assigned=me"),
        ],
    )
    assert answer.status == 200
    assert answer.dom().find("h1").text() == "Acknowledged 1 of 2"
    rows = {row.find("span", cls="number").text(): row.text() for row in answer.dom().find("tbody").find_all("tr")}
    assert "Done acknowledged" in rows[world.checkout_down]
    assert "Already already resolved: nothing to do" in rows[world.old_outage]
    assert incident_via_api(client, org, world.checkout_down)["acknowledged_at"] is not None
    assert incident_via_api(client, org, world.old_outage)["acknowledged_at"] is None
    (back,) = [a for a in answer.dom().find_all("a") if a.text() == "Back to the list"]
    assert back.attrs["href"] == "/app/incidents?assigned=me"
    again = browser.post("/app/incidents/bulk", [("action", "acknowledge"), ("incident", world.checkout_down)])
    assert "Already already acknowledged" in again.text() and again.dom().find("h1").text() == "Acknowledged 0 of 1"


def test_resolving_several_says_why_one_is_refused(signed_in: Browser, client: Any, org: Org, world: World) -> None:
    browser = signed_in("responder")
    browser.get("/app/incidents")
    answer = browser.post(
        "/app/incidents/bulk",
        [
            ("action", "resolve"),
            ("incident", world.checkout_down),
            ("incident", world.search_slow),
            ("incident", "INC-2026-999999"),
            ("incident", "drop table"),
        ],
    )
    assert answer.status == 200 and answer.dom().find("h1").text() == "Resolved 2 of 4"
    text = answer.text()
    assert "Refused Incident INC-2026-999999 was not found" in text or "INC-2026-999999 Refused" in text
    assert "not an incident number" in text
    assert incident_via_api(client, org, world.checkout_down)["status"] == "resolved"
    assert incident_via_api(client, org, world.search_slow)["status"] == "resolved"
    timeline = repository.get_with_timeline(org.organization_id, world.search_slow).timeline
    assert any(
        "responder@acme.test" in (entry.title or "") or entry.user == "responder@acme.test" for entry in timeline
    )


def test_nothing_ticked_is_named_on_the_list(signed_in: Browser, world: World) -> None:
    browser = signed_in("responder")
    browser.get("/app/incidents")
    answer = browser.post("/app/incidents/bulk", [("action", "acknowledge")])
    assert answer.status == 400 and answer.dom().find("h1").text() == "Incidents"
    assert "Incidents to act on: tick at least one incident" in answer.dom().find(cls="problem").text()
    bogus = browser.post("/app/incidents/bulk", [("action", "delete"), ("incident", world.search_slow)])
    assert bogus.status == 400 and "Action: must be acknowledge or resolve" in bogus.text()


def test_a_viewer_forged_post_and_a_missing_token_are_refused(
    signed_in: Browser, client: Any, org: Org, world: World
) -> None:
    viewer = signed_in("viewer")
    viewer.get("/app/incidents")
    fields = [("action", "resolve"), ("incident", world.checkout_down)]
    assert viewer.post("/app/incidents/bulk", fields).status == 403
    responder = signed_in("responder")
    responder.get("/app/incidents")
    assert responder.post("/app/incidents/bulk", fields, csrf="-").status == 403
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_another_organizations_incident_is_not_touched(signed_in: Browser, world: World, aws_env: None) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    other = make_org("Other")
    theirs_service = services.create_service(organization_id=other.organization_id, name="Theirs", now=NOW)
    theirs = service.create_incident(
        organization_id=other.organization_id,
        request=service.NewIncident(title="Theirs", service_keys=[theirs_service.service_key], severity="SEV3"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    ).incident_number
    browser = signed_in("owner")
    browser.get("/app/incidents")
    answer = browser.post("/app/incidents/bulk", [("action", "resolve"), ("incident", theirs)])
    assert answer.dom().find("h1").text() == "Resolved 0 of 1"
    assert repository.get_incident(other.organization_id, theirs).status == "new"


@pytest.mark.parametrize("role", ROLES)
def test_every_page_carries_the_whole_menu_in_a_disclosure(role: str, signed_in: Browser, world: World) -> None:
    page = signed_in(role).get("/app/incidents").dom()
    (menu,) = page.find_all("details", cls="menu-phone")
    assert menu.find("summary").text().startswith("Menu")
    phone = [a.text() for a in menu.find("nav").find_all("a")]
    wide = [a.text() for a in page.find("nav", cls="menu-wide").find_all("a")]
    assert phone == wide and len(phone) == (18 if role in ("owner", "admin") else 17)
    assert {"People", "Teams", "Incidents", "Event rules", "Insights"} <= set(phone)
    assert ("Settings" in phone) == (role in ("owner", "admin"))
    current = [a.text() for a in menu.find_all("a") if a.attrs.get("aria-current") == "page"]
    assert current == ["Incidents"] and "· Incidents" in menu.find("summary").text()
