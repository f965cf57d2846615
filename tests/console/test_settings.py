"""Organization settings in the console: owners and admins only (others get 403 on the page and
every form); the default time zone, the incident workflow (rename, add, remove statuses, their
moves), SLA targets per severity and the fallback contacts, each read back through the API; a
refused form keeps what was sent and names the problem at its row."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Org
from tests.console.conftest import ConsoleClient, Person, action_forms
from tests.kit.console import form_values, problems_at, replaced

MANAGERS = ("owner", "admin")
OTHERS = ("responder", "viewer")
FORMS = ("/app/settings/time-zone", "/app/settings/workflow", "/app/settings/sla", "/app/settings/fallback")


def api(client: Any, org: Org, path: str) -> Any:
    answer = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200, answer.body
    return json.loads(answer.body)["data"]


@pytest.mark.parametrize("role", MANAGERS)
def test_managers_get_every_settings_form_and_the_menu_item(
    role: str, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    page = browser.get("/app/settings")
    assert page.status == 200 and page.dom().find("h1").text() == "Settings"
    assert sorted(action_forms(page)) == sorted(FORMS)
    links = {str(a.attrs.get("href")) for a in page.dom().find("main").find_all("a")}
    assert {"/app/integrations", "/app/api-keys"} <= links
    assert any(a.attrs.get("href") == "/app/settings" for a in page.dom().find("header").find_all("a"))


@pytest.mark.parametrize("role", OTHERS)
def test_others_are_refused_the_page_and_every_form(
    role: str, signed_in: Callable[[str], ConsoleClient], client: Any, org: Org
) -> None:
    browser = signed_in(role)
    incidents = browser.get("/app/incidents")
    assert not any(a.attrs.get("href") == "/app/settings" for a in incidents.dom().find("header").find_all("a"))
    assert browser.get("/app/settings").status == 403
    before = api(client, org, "/api/v1/settings/workflow")
    assert browser.post("/app/settings/time-zone", {"form": "zone", "time_zone": "Asia/Tokyo"}).status == 403
    assert browser.post("/app/settings/workflow", {"form": "workflow", "rows": "1"}).status == 403
    assert browser.post("/app/settings/sla", {"form": "sla", "sla_SEV1_ack": "1"}).status == 403
    assert browser.post("/app/settings/fallback", {"form": "fallback"}).status == 403
    assert api(client, org, "/api/v1/settings/organization")["time_zone"] != "Asia/Tokyo"
    assert api(client, org, "/api/v1/settings/workflow") == before


def test_forms_without_the_csrf_token_change_nothing(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org
) -> None:
    browser = signed_in("owner")
    browser.get("/app/settings")
    assert browser.post("/app/settings/time-zone", {"form": "zone", "time_zone": "Asia/Tokyo"}, csrf="-").status == 403
    assert browser.post("/app/settings/sla", {"form": "sla", "sla_SEV1_ack": "1"}, csrf="bad").status == 403
    assert api(client, org, "/api/v1/settings/organization")["time_zone"] != "Asia/Tokyo"


def test_the_default_time_zone(signed_in: Callable[[str], ConsoleClient], client: Any, org: Org) -> None:
    browser = signed_in("admin")
    browser.get("/app/settings")
    saved = browser.post("/app/settings/time-zone", {"form": "zone", "time_zone": "Europe/Paris"})
    assert saved.status == 303 and saved.location == "/app/settings?done=settings_zone_saved"
    assert api(client, org, "/api/v1/settings/organization")["time_zone"] == "Europe/Paris"
    refused = browser.post("/app/settings/time-zone", {"form": "zone", "time_zone": "Mars/Olympus"})
    assert refused.status == 400 and len(problems_at(refused, "time_zone")) == 1
    assert api(client, org, "/api/v1/settings/organization")["time_zone"] == "Europe/Paris"


def test_renaming_adding_and_removing_statuses(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org
) -> None:
    browser = signed_in("owner")
    page = browser.get("/app/settings")
    sent = form_values(page, "/settings/workflow")
    # Rows: new, investigating, identified, monitoring, resolved, closed, then two blank ones.
    assert ("status_2_name", "identified") in sent and ("initial", "0") in sent
    changes: dict[str, str | list[str]] = {
        "status_2_name": "found",  # renamed: its moves stay
        "status_3_remove": "on",  # monitoring goes, with the moves to and from it
        "status_6_name": "waiting_on_vendor",
        "status_6_category": "active",
        "moves_6": ["1", "4"],  # waiting -> investigating, resolved
        "moves_1": ["2", "3", "4", "6"],  # investigating -> found, (monitoring), resolved, waiting
    }
    saved = browser.post("/app/settings/workflow", replaced(sent, **changes))
    assert saved.status == 303, saved.text()
    workflow = api(client, org, "/api/v1/settings/workflow")
    names = [status["name"] for status in workflow["statuses"]]
    assert names == ["new", "investigating", "found", "resolved", "closed", "waiting_on_vendor"]
    assert workflow["moves"]["investigating"] == ["found", "resolved", "waiting_on_vendor"]
    assert workflow["moves"]["found"] == ["investigating", "resolved"]
    assert workflow["moves"]["waiting_on_vendor"] == ["investigating", "resolved"]
    assert workflow["initial_status"] == "new"
    again = browser.get("/app/settings")
    assert ("status_5_name", "waiting_on_vendor") in form_values(again, "/settings/workflow")


def test_a_workflow_that_strands_a_status_is_refused_at_its_row(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org
) -> None:
    browser = signed_in("owner")
    before = api(client, org, "/api/v1/settings/workflow")
    sent = form_values(browser.get("/app/settings"), "/settings/workflow")
    badly_named = browser.post(
        "/app/settings/workflow", replaced(sent, status_6_name="limbo", status_7_name="Bad Name")
    )
    assert badly_named.status == 400
    assert problems_at(badly_named, "status_7_name") == ["must be 1 to 40 lowercase letters, digits or underscores"]
    kept = form_values(badly_named, "/settings/workflow")
    assert ("status_6_name", "limbo") in kept and ("status_7_name", "Bad Name") in kept  # as sent
    stranded = browser.post("/app/settings/workflow", replaced(sent, status_6_name="limbo"))
    assert stranded.status == 400
    unreachable = problems_at(stranded, "status_6_name")
    assert len(unreachable) == 1 and "cannot be reached from 'new'" in unreachable[0]
    for refused in (badly_named, stranded):
        assert "statuses." not in refused.dom().find(cls="problem").text()  # never the API's paths
    assert api(client, org, "/api/v1/settings/workflow") == before


def test_sla_targets_per_severity(signed_in: Callable[[str], ConsoleClient], client: Any, org: Org) -> None:
    browser = signed_in("admin")
    sent = form_values(browser.get("/app/settings"), "/settings/sla")
    saved = browser.post("/app/settings/sla", replaced(sent, sla_SEV1_ack="10", sla_SEV1_resolve="120"))
    assert saved.status == 303
    sla = api(client, org, "/api/v1/settings/sla")["per_severity"]
    assert sla["SEV1"] == {"acknowledge_within_minutes": 10, "resolve_within_minutes": 120}
    page = browser.follow(saved)
    assert "SLA targets saved" in page.text() and "10 minutes" in page.text()
    refused = browser.post("/app/settings/sla", replaced(sent, sla_SEV2_ack="500", sla_SEV2_resolve="60"))
    assert refused.status == 400
    shown = problems_at(refused, "sla_SEV2_ack")
    assert shown == ["the acknowledge target must not exceed the resolve target"]
    assert ("sla_SEV2_ack", "500") in form_values(refused, "/settings/sla")
    assert api(client, org, "/api/v1/settings/sla")["per_severity"]["SEV1"]["acknowledge_within_minutes"] == 10


def test_fallback_contacts_offer_only_people_who_can_respond(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("owner")
    page = browser.get("/app/settings")
    offered = {str(e.attrs.get("value")) for e in page.dom().find_all("input", name="fallback_contacts")}
    assert people["viewer"].user_id not in offered
    assert {people[r].user_id for r in ("owner", "admin", "responder")} <= offered
    sent = form_values(page, "/settings/fallback")
    chosen = [people["responder"].user_id, people["admin"].user_id]
    saved = browser.post("/app/settings/fallback", replaced(sent, fallback_contacts=chosen))
    assert saved.status == 303
    contacts = api(client, org, "/api/v1/settings/paging")["fallback_contacts"]
    assert [c["user_id"] for c in contacts] == chosen
    cleared = browser.post("/app/settings/fallback", replaced(sent, fallback_contacts=[]))
    assert cleared.status == 303 and api(client, org, "/api/v1/settings/paging")["fallback_contacts"] == []
    unknown = browser.post("/app/settings/fallback", replaced(sent, fallback_contacts=["nobody-here"]))
    assert unknown.status == 400 and len(problems_at(unknown, "fallback_contacts")) == 1
