"""Maintenance windows in the console: every role reads them by state; owners and admins
(services:write) schedule, end and delete them through the maintenance service, checked through
the API; a viewer sees no form and a forged POST is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.maintenance import service as windows
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _api_windows(client: Any, org: Org) -> list[dict[str, Any]]:
    answer = client.http.get("/api/v1/maintenance-windows", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200
    return list(json.loads(answer.body)["data"]["items"])


def _window(org: Org, world: World, *, start_hours: int, end_hours: int, description: str) -> str:
    created = windows.create_window(
        organization_id=org.organization_id,
        service_refs=[world.service_key],
        start=NOW + timedelta(hours=start_hours),
        end=NOW + timedelta(hours=end_hours),
        now=NOW,
        description=description,
    )
    return created.window_id


@pytest.mark.parametrize("role", ROLES)
def test_the_maintenance_page_renders_for_every_role(
    role: str, world: World, org: Org, signed_in: Callable[[str], ConsoleClient]
) -> None:
    ongoing = _window(org, world, start_hours=-1, end_hours=2, description="Database upgrade")
    future = _window(org, world, start_hours=24, end_hours=26, description="Network work")
    answer = signed_in(role).get("/app/maintenance")
    assert answer.status == 200
    assert len(answer.dom().find_all("h1")) == 1
    text = answer.text()
    assert "Database upgrade" in text and "Network work" in text and "Payments API" in text
    assert text.index("Database upgrade") < text.index("Network work")  # ongoing before scheduled
    forms = action_forms(answer)
    if role in ("owner", "admin"):
        assert set(forms) == {
            "/app/maintenance",
            f"/app/maintenance/{ongoing}/end",
            f"/app/maintenance/{future}/delete",
        }
    else:
        assert forms == []


def test_scheduling_a_window_creates_it_with_utc_times(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    as_owner.get("/app/maintenance")
    fields = [
        ("form", "create"),
        ("form_key", "k-1"),
        ("service_ids", world.service_key),
        ("service_ids", world.bare_service_key),
        ("start", "2026-11-23T22:00"),
        ("end", "2026-11-24T01:30"),
        ("description", "Database upgrade"),
    ]
    answer = as_owner.post("/app/maintenance", fields)
    assert answer.status == 303
    page = as_owner.follow(answer)
    assert "Maintenance window scheduled" in page.text() and "Database upgrade" in page.text()
    as_owner.post("/app/maintenance", fields)  # a double click: the form key makes it one window
    [created] = _api_windows(client, org)
    assert created["start"] == "2026-11-23T22:00:00Z" and created["end"] == "2026-11-24T01:30:00Z"
    assert [s["service_key"] for s in created["services"]] == [world.service_key, world.bare_service_key]
    assert created["state"] == "future" and created["created_by"]


def test_a_bad_window_is_refused_next_to_its_fields(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    as_owner.get("/app/maintenance")
    answer = as_owner.post(
        "/app/maintenance",
        {"form": "create", "start": "2026-11-23T22:00", "end": "2026-11-23T21:00", "description": "Backwards"},
    )
    assert answer.status == 400
    dom = answer.dom()
    assert dom.find("fieldset").find_all("p", cls="field-error")  # no service ticked
    assert dom.find("input", id="f-start").attrs.get("value") == "2026-11-23T22:00"  # kept as typed
    assert "Backwards" in dom.find("textarea", id="f-description").text()
    answer = as_owner.post(
        "/app/maintenance",
        {"form": "create", "service_ids": world.service_key, "start": "2026-11-23T22:00", "end": "2026-11-23T21:00"},
    )
    assert answer.status == 400
    assert answer.dom().find("input", id="f-end").attrs.get("aria-invalid") == "true"
    assert _api_windows(client, org) == []


def test_ending_an_ongoing_window_asks_first_then_ends_it(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    ongoing = _window(org, world, start_hours=-1, end_hours=2, description="Database upgrade")
    as_owner.get("/app/maintenance")
    asked = as_owner.post(f"/app/maintenance/{ongoing}/end")
    assert asked.status == 200 and "End this maintenance window now?" in asked.text()
    assert _api_windows(client, org)[0]["state"] == "ongoing"
    done = as_owner.post(f"/app/maintenance/{ongoing}/end", CONFIRMED)
    assert done.status == 303
    assert "Its services page again from now" in as_owner.follow(done).text()
    [ended] = _api_windows(client, org)
    assert ended["state"] == "past" and ended["ended_early_at"] is not None


def test_deleting_a_future_window_and_an_unknown_one(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    future = _window(org, world, start_hours=24, end_hours=26, description="Network work")
    as_owner.get("/app/maintenance")
    asked = as_owner.post(f"/app/maintenance/{future}/delete")
    assert "Delete this maintenance window?" in asked.text()
    done = as_owner.post(f"/app/maintenance/{future}/delete", CONFIRMED)
    assert "Maintenance window deleted" in as_owner.follow(done).text()
    assert _api_windows(client, org) == []
    missing = as_owner.post("/app/maintenance/mw_0000000000000000/delete", CONFIRMED)
    assert missing.status == 404


@pytest.mark.parametrize("role", ("responder", "viewer"))
def test_people_without_services_write_cannot_change_maintenance(
    role: str, world: World, org: Org, client: Any, signed_in: Callable[[str], ConsoleClient]
) -> None:
    ongoing = _window(org, world, start_hours=-1, end_hours=2, description="Database upgrade")
    browser = signed_in(role)
    browser.get("/app/maintenance")
    created = browser.post(
        "/app/maintenance", {"service_ids": world.service_key, "start": "2026-11-23T22:00", "end": "2026-11-24T01:00"}
    )
    ended = browser.post(f"/app/maintenance/{ongoing}/end", CONFIRMED)
    assert created.status == ended.status == 403
    assert [w["state"] for w in _api_windows(client, org)] == ["ongoing"]
