"""Heartbeats in the console: every role reads the list with each one's status; owners and admins
(integrations:write) create one (its ping URL shown once, with a curl example), pause and resume,
make a new URL and delete, through the heartbeat service, checked through the API and the ping URL."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.console.pages.heartbeats import duration
from chalicelib.heartbeat import overdue
from chalicelib.heartbeat import service as heartbeats
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world

HTTPS = {"X-Forwarded-Proto": "https"}


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _api(client: Any, org: Org) -> list[dict[str, Any]]:
    answer = client.http.get("/api/v1/heartbeats", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200
    return list(json.loads(answer.body)["data"]["items"])


def _ping(client: Any, url: str) -> int:
    return int(client.http.get(url.removeprefix("http://127.0.0.1:8000"), headers=HTTPS).status_code)


def _heartbeat(org: Org, world: World, name: str) -> heartbeats.IssuedHeartbeat:
    return heartbeats.create_heartbeat(
        organization_id=org.organization_id,
        name=name,
        service_ref=world.service_key,
        interval_seconds=300,
        grace_seconds=60,
        now=NOW,
        settings=get_settings(),
    )


def test_durations_read_in_the_largest_whole_unit() -> None:
    assert [duration(s) for s in (0, 45, 60, 5400, 3600, 86400, 172800)] == [
        "none",
        "45 s",
        "1 min",
        "90 min",
        "1 h",
        "1 day",
        "2 days",
    ]


@pytest.mark.parametrize("role", ROLES)
def test_the_heartbeats_page_renders_for_every_role(
    role: str, world: World, org: Org, signed_in: Callable[[str], ConsoleClient]
) -> None:
    down = _heartbeat(org, world, "nightly backup")
    waiting = _heartbeat(org, world, "queue consumer")
    overdue.check_overdue(now=NOW + timedelta(minutes=6), settings=get_settings())  # both late: both go down
    heartbeats.update_heartbeat(
        organization_id=org.organization_id, heartbeat_id=waiting.record.heartbeat_id, now=NOW, enabled=False
    )
    [beat] = [b for b in heartbeats.list_heartbeats(organization_id=org.organization_id) if b.name == "nightly backup"]
    answer = signed_in(role).get("/app/heartbeats")
    assert answer.status == 200 and len(answer.dom().find_all("h1")) == 1
    text = answer.text()
    assert "nightly backup" in text and "down" in text and "5 min" in text and "Payments API" in text
    assert answer.dom().find("a", href=f"/app/incidents/{beat.incident_number}")
    assert down.ping_url not in answer.body  # never shown again
    forms = action_forms(answer)
    if role in ("owner", "admin"):
        down_id = down.record.heartbeat_id
        assert {f"/app/heartbeats/{down_id}/{a}" for a in ("pause", "regenerate", "delete")} <= set(forms)
        assert f"/app/heartbeats/{waiting.record.heartbeat_id}/resume" in forms
        assert "/app/heartbeats" in forms
    else:
        assert forms == []


def test_creating_a_heartbeat_shows_its_ping_url_once(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    as_owner.get("/app/heartbeats")
    answer = as_owner.post(
        "/app/heartbeats",
        {
            "form": "create",
            "name": "nightly backup",
            "service": world.service_key,
            "interval_seconds": "86400",
            "grace_seconds": "1800",
            "description": "The 02:00 dump",
        },
    )
    assert answer.status == 200
    url = answer.dom().find("p", id="ping-url").text()
    assert url.startswith("http") and "/heartbeats/hb_" in url
    assert f"curl -fsS --retry 3 {url}" in answer.dom().find("p", id="ping-example").text()
    [created] = _api(client, org)
    assert (created["name"], created["interval_seconds"], created["grace_seconds"]) == ("nightly backup", 86400, 1800)
    assert created["status"] == "waiting"
    assert _ping(client, url) == 200
    assert url not in as_owner.get("/app/heartbeats").body


def test_a_bad_heartbeat_is_refused_next_to_its_fields(
    world: World, org: Org, client: Any, as_owner: ConsoleClient
) -> None:
    as_owner.get("/app/heartbeats")
    answer = as_owner.post(
        "/app/heartbeats",
        {"form": "create", "name": "too often", "service": world.service_key, "interval_seconds": "30"},
    )
    assert answer.status == 400
    dom = answer.dom()
    assert dom.find("input", id="f-interval_seconds").attrs.get("aria-invalid") == "true"
    assert dom.find("input", id="f-name").attrs.get("value") == "too often"
    unknown = as_owner.post(
        "/app/heartbeats", {"form": "create", "name": "x", "service": "SER-99999", "interval_seconds": "60"}
    )
    assert unknown.status == 400
    assert _api(client, org) == []


def test_pause_resume_regenerate_and_delete(world: World, org: Org, client: Any, as_owner: ConsoleClient) -> None:
    issued = _heartbeat(org, world, "nightly backup")
    heartbeat_id = issued.record.heartbeat_id
    as_owner.get("/app/heartbeats")
    paused = as_owner.post(f"/app/heartbeats/{heartbeat_id}/pause")
    assert "Heartbeat paused" in as_owner.follow(paused).text()
    assert _api(client, org)[0]["status"] == "paused"
    resumed = as_owner.post(f"/app/heartbeats/{heartbeat_id}/resume")
    assert "Heartbeat resumed" in as_owner.follow(resumed).text()
    assert _api(client, org)[0]["status"] == "waiting"

    asked = as_owner.post(f"/app/heartbeats/{heartbeat_id}/regenerate")
    assert asked.status == 200 and "Make a new ping URL" in asked.text()
    assert _ping(client, issued.ping_url) == 200  # not yet: nothing changed
    fresh = as_owner.post(f"/app/heartbeats/{heartbeat_id}/regenerate", CONFIRMED)
    new_url = fresh.dom().find("p", id="ping-url").text()
    assert new_url != issued.ping_url and "The previous URL has stopped working" in fresh.text()
    assert _ping(client, issued.ping_url) == 404 and _ping(client, new_url) == 200

    as_owner.get("/app/heartbeats")
    assert "Delete this heartbeat?" in as_owner.post(f"/app/heartbeats/{heartbeat_id}/delete").text()
    deleted = as_owner.post(f"/app/heartbeats/{heartbeat_id}/delete", CONFIRMED)
    assert "Heartbeat deleted" in as_owner.follow(deleted).text()
    assert _api(client, org) == [] and _ping(client, new_url) == 404
    assert as_owner.post(f"/app/heartbeats/{heartbeat_id}/pause").status == 404


@pytest.mark.parametrize("role", ("responder", "viewer"))
def test_people_without_integrations_write_cannot_change_heartbeats(
    role: str, world: World, org: Org, client: Any, signed_in: Callable[[str], ConsoleClient]
) -> None:
    issued = _heartbeat(org, world, "nightly backup")
    browser = signed_in(role)
    browser.get("/app/heartbeats")
    answers = [
        browser.post("/app/heartbeats", {"name": "x", "service": world.service_key, "interval_seconds": "60"}),
        browser.post(f"/app/heartbeats/{issued.record.heartbeat_id}/pause"),
        browser.post(f"/app/heartbeats/{issued.record.heartbeat_id}/delete", CONFIRMED),
    ]
    assert [a.status for a in answers] == [403, 403, 403]
    assert [b["status"] for b in _api(client, org)] == ["waiting"]
