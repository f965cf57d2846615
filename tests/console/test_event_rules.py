"""Event rules in the console: the organization's list and an integration's, each rule in words;
owners and admins (integrations:write) add rules from up to three condition rows and the actions,
move them and delete them, through the event rule service, checked through the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.catalog.service import get_service
from chalicelib.eventrule import service as rules
from chalicelib.eventrule.rules import Actions
from chalicelib.integration import admin
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


@pytest.fixture
def integration_id(org: Org, world: World) -> str:
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="alertmanager",
        name="Prometheus",
        now=NOW,
        settings=get_settings(),
    )
    return issued.integration.integration_id


def _api(client: Any, org: Org, path: str = "/api/v1/event-rules") -> list[dict[str, Any]]:
    answer = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200, answer.body
    return list(json.loads(answer.body)["data"]["items"])


def _rule(org: Org, note: str, integration_id: str | None = None, **actions: Any) -> str:
    placed = rules.create_rule(
        organization_id=org.organization_id,
        integration_id=integration_id,
        now=NOW,
        conditions=[("labels.env", "equals", "staging")],
        actions=Actions(note=note, **actions),
    )
    return placed.rule.rule_id


@pytest.mark.parametrize("role", ROLES)
def test_the_rules_pages_render_for_every_role(
    role: str, world: World, org: Org, integration_id: str, signed_in: Callable[[str], ConsoleClient]
) -> None:
    first = _rule(org, "staging is quiet", suppress=True)
    second = _rule(org, "then louder", severity="SEV1")
    routed = _rule(org, "to payments", integration_id, route_to_service=world.service_key)
    browser = signed_in(role)
    listing = browser.get("/app/event-rules")
    per_integration = browser.get(f"/app/integrations/{integration_id}/event-rules")
    assert listing.status == per_integration.status == 200
    text = listing.text()
    assert "If labels.env equals “staging” → suppress, note: staging is quiet" in text
    assert text.index("staging is quiet") < text.index("then louder")
    payments = get_service(organization_id=org.organization_id, service_ref=world.service_key)
    assert f"route to Payments API ({payments.service_id}), note: to payments" in per_integration.text()
    assert "to payments" not in text
    integrations = browser.get("/app/integrations")
    assert integrations.dom().find("a", href=f"/app/integrations/{integration_id}/event-rules")
    if role in ("owner", "admin"):
        assert set(action_forms(listing)) == {
            "/app/event-rules",
            f"/app/event-rules/{first}/move",
            f"/app/event-rules/{first}/delete",
            f"/app/event-rules/{second}/move",
            f"/app/event-rules/{second}/delete",
        }
        assert f"/app/integrations/{integration_id}/event-rules/{routed}/delete" in action_forms(per_integration)
    else:
        assert action_forms(listing) == action_forms(per_integration) == []


def test_adding_a_rule_from_the_form(world: World, org: Org, client: Any, as_owner: ConsoleClient) -> None:
    as_owner.get("/app/event-rules")
    payments = get_service(organization_id=org.organization_id, service_ref=world.service_key)
    answer = as_owner.post(
        "/app/event-rules",
        {
            "form": "add",
            "cond_field_0": "label",
            "cond_label_0": "env",
            "cond_op_0": "equals",
            "cond_value_0": "staging",
            "cond_field_1": "",
            "cond_field_2": "title",
            "cond_op_2": "matches",
            "cond_value_2": "(?i)disk",
            "severity": "SEV2",
            "route_to_service": payments.service_id,
            "note": "staging disks",
            "continue": "on",
            "description": "Disk alerts of staging go to payments",
        },
    )
    assert answer.status == 303
    page = as_owner.follow(answer)
    assert "Rule added" in page.text()
    assert "If labels.env equals “staging” and title matches “(?i)disk” → severity SEV2" in page.text()
    [added] = _api(client, org)
    assert added["conditions"] == [
        {"field": "labels.env", "op": "equals", "value": "staging"},
        {"field": "title", "op": "matches", "value": "(?i)disk"},
    ]
    assert added["actions"]["route_to_service_key"] == world.service_key and added["continue"] is True


def test_exists_and_a_catch_all(org: Org, client: Any, as_owner: ConsoleClient, integration_id: str) -> None:
    as_owner.get(f"/app/integrations/{integration_id}/event-rules")
    here = f"/app/integrations/{integration_id}/event-rules"
    exists = as_owner.post(
        here, {"form": "add", "cond_field_0": "label", "cond_label_0": "team", "cond_op_0": "exists", "drop": "on"}
    )
    assert exists.status == 303
    catch_all = as_owner.post(here, {"form": "add", "suppress": "on"})
    assert catch_all.status == 303
    text = as_owner.follow(catch_all).text()
    assert "If labels.team exists → drop" in text and "Every alert → suppress" in text
    assert len(_api(client, org, f"/api/v1/integrations/{integration_id}/event-rules")) == 2
    assert _api(client, org) == []


def test_bad_rules_are_refused_next_to_their_fields(org: Org, client: Any, as_owner: ConsoleClient) -> None:
    as_owner.get("/app/event-rules")
    bad_pattern = as_owner.post(
        "/app/event-rules",
        {"form": "add", "cond_field_1": "title", "cond_op_1": "matches", "cond_value_1": "(a)\\1", "suppress": "on"},
    )
    assert bad_pattern.status == 400
    assert "The rule was not added: see the marked fields." in bad_pattern.text()
    dom = bad_pattern.dom()
    assert dom.find("input", id="f-cond_value_1").attrs.get("aria-invalid") == "true"
    assert dom.find("input", id="f-cond_value_1").attrs.get("value") == "(a)\\1"
    condition_only = {"form": "add", "cond_field_0": "source", "cond_op_0": "equals", "cond_value_0": "x"}
    no_action = as_owner.post("/app/event-rules", condition_only)
    assert no_action.status == 400 and "must take at least one action" in no_action.text()
    drop_and_more = as_owner.post("/app/event-rules", {"form": "add", "drop": "on", "severity": "SEV1"})
    assert drop_and_more.status == 400
    assert drop_and_more.dom().find("input", id="f-drop").attrs.get("aria-invalid") == "true"
    no_value = as_owner.post("/app/event-rules", {"form": "add", "cond_field_0": "title", "cond_op_0": "equals"})
    assert no_value.dom().find("input", id="f-cond_value_0").attrs.get("aria-invalid") == "true"
    assert _api(client, org) == []


def test_moving_and_deleting_rules(org: Org, client: Any, as_owner: ConsoleClient) -> None:
    first, second = _rule(org, "first", suppress=True), _rule(org, "second", suppress=True)
    as_owner.get("/app/event-rules")
    moved = as_owner.post(f"/app/event-rules/{second}/move", {"direction": "up"})
    assert "Rule moved" in as_owner.follow(moved).text()
    assert [r["id"] for r in _api(client, org)] == [second, first]
    assert as_owner.post(f"/app/event-rules/{second}/move", {"direction": "up"}).status == 400  # already first
    assert as_owner.post(f"/app/event-rules/{second}/move", {"direction": "sideways"}).status == 400
    assert [r["id"] for r in _api(client, org)] == [second, first]

    asked = as_owner.post(f"/app/event-rules/{first}/delete")
    assert asked.status == 200 and "Delete this event rule?" in asked.text()
    deleted = as_owner.post(f"/app/event-rules/{first}/delete", CONFIRMED)
    assert "Rule deleted" in as_owner.follow(deleted).text()
    assert [r["id"] for r in _api(client, org)] == [second]
    assert as_owner.post(f"/app/event-rules/{first}/delete", CONFIRMED).status == 404


def test_an_unknown_integration_has_no_rules_page(world: World, as_owner: ConsoleClient) -> None:
    assert as_owner.get("/app/integrations/int_nope/event-rules").status == 404


@pytest.mark.parametrize("role", ("responder", "viewer"))
def test_people_without_integrations_write_cannot_change_rules(
    role: str, world: World, org: Org, client: Any, integration_id: str, signed_in: Callable[[str], ConsoleClient]
) -> None:
    rule_id = _rule(org, "quiet", suppress=True)
    browser = signed_in(role)
    browser.get("/app/event-rules")
    answers = [
        browser.post("/app/event-rules", {"form": "add", "suppress": "on"}),
        browser.post(f"/app/integrations/{integration_id}/event-rules", {"form": "add", "suppress": "on"}),
        browser.post(f"/app/event-rules/{rule_id}/move", {"direction": "down"}),
        browser.post(f"/app/event-rules/{rule_id}/delete", CONFIRMED),
    ]
    assert [a.status for a in answers] == [403] * 4
    assert [r["id"] for r in _api(client, org)] == [rule_id]
