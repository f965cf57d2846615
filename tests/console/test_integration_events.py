"""An integration's event log in the console: every role reads the list (filtered by outcome, paged)
and an event's headers and body (escaped); owners and admins replay a refused event after asking
first; another organization's integration is a 404."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.catalog import service as catalog
from chalicelib.eventlog import service as eventlog
from chalicelib.eventlog import slots
from chalicelib.eventlog.outcome import Outcome
from chalicelib.integration import admin
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


@pytest.fixture
def hook(org: Org, world: World) -> dict[str, str]:
    """A custom integration without a default service."""
    issued = admin.create_integration(
        organization_id=org.organization_id, integration_type="custom", name="Hooks", now=NOW, settings=get_settings()
    )
    return {"id": issued.integration.integration_id, "routing_key": issued.routing_key}


def deliver(client: Any, hook: dict[str, str], body: dict[str, Any]) -> int:
    headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https", "User-Agent": "monitor/1"}
    answer = client.http.post(f"/webhooks/{hook['routing_key']}", headers=headers, body=json.dumps(body))
    return int(answer.status_code)


def events_of(hook: dict[str, str]) -> list[Any]:
    return list(eventlog.IntegrationEventRecord.query(hook["id"], scan_index_forward=False))


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_the_log_and_only_writers_may_replay(
    role: str, client: Any, world: World, hook: dict[str, str], signed_in: Callable[[str], ConsoleClient]
) -> None:
    assert deliver(client, hook, {"title": SCRIPT}) == 400  # no service: refused
    refused = events_of(hook)[0]
    browser = signed_in(role)
    integrations = browser.get("/app/integrations")
    assert integrations.dom().find("a", href=f"/app/integrations/{hook['id']}/events")
    listing = browser.get(f"/app/integrations/{hook['id']}/events")
    assert listing.status == 200
    assert "refused" in listing.text() and "No service for this alert" in listing.text()
    assert listing.dom().find("a", href=f"/app/integrations/{hook['id']}/events/{refused.event_id}")
    page = browser.get(f"/app/integrations/{hook['id']}/events/{refused.event_id}")
    assert page.status == 200
    assert SCRIPT not in page.body and "&lt;script&gt;" in page.body  # escaped, in a <pre>
    assert SCRIPT in " ".join(pre.text() for pre in page.dom().find_all("pre"))
    assert "monitor/1" in page.text() and "INVALID_PAYLOAD" in page.text()
    replay = f"/app/integrations/{hook['id']}/events/{refused.event_id}/replay"
    if role in ("owner", "admin"):
        assert action_forms(page) == [replay]
    else:
        assert action_forms(page) == [] and action_forms(listing) == []
        assert "Owners and admins can replay it." in page.text()
        assert browser.post(replay, CONFIRMED).status == 403
        assert len(events_of(hook)) == 1  # nothing replayed


def test_an_owner_replays_a_refused_event_after_asking(
    client: Any, org: Org, world: World, hook: dict[str, str], signed_in: Callable[[str], ConsoleClient]
) -> None:
    retired = catalog.create_service(organization_id=org.organization_id, name="Retired", now=NOW)
    catalog.update_service(
        organization_id=org.organization_id, service_ref=retired.service_id, now=NOW, is_active=False
    )
    assert deliver(client, hook, {"title": "Disk full", "service_id": retired.service_id}) == 400
    refused = events_of(hook)[0]
    catalog.update_service(organization_id=org.organization_id, service_ref=retired.service_id, now=NOW, is_active=True)
    browser = signed_in("owner")
    here = f"/app/integrations/{hook['id']}/events"
    browser.get(f"{here}/{refused.event_id}")
    asked = browser.post(f"{here}/{refused.event_id}/replay")
    assert asked.status == 200 and "Replay this event?" in asked.text()
    assert len(events_of(hook)) == 1  # asking changed nothing
    done = browser.post(f"{here}/{refused.event_id}/replay", CONFIRMED)
    assert done.status == 303
    replayed = events_of(hook)[0]
    assert done.location.startswith(f"{here}/{replayed.event_id}")
    shown = browser.follow(done)
    assert "Event replayed" in shown.text() and "created" in shown.text()
    assert shown.dom().find("a", href=f"{here}/{refused.event_id}")  # "Replay of"
    assert (replayed.outcome, replayed.replay_of) == ("created", refused.event_id)
    # Again: 409 on the event's page, with the reason.
    again = browser.post(f"{here}/{refused.event_id}/replay", CONFIRMED)
    assert again.status == 409 and "replayed already" in again.text()


def test_the_outcome_filter_and_the_pages(
    org: Org, world: World, hook: dict[str, str], signed_in: Callable[[str], ConsoleClient]
) -> None:
    for minute in range(30):
        at = NOW - timedelta(minutes=minute)
        kind = "refused" if minute % 3 == 0 else "created"
        received = eventlog.Received(
            integration_id=hook["id"],
            organization_id=org.organization_id,
            operation_id="deliverWebhook",
            method="POST",
            route="/webhooks/{routing_key}",
            source_address="203.0.113.9",
            headers={},
            body=b"{}",
            received_at=at,
        )
        outcome = Outcome(kind, title=f"alert {minute}", error_code="INVALID_PAYLOAD" if kind == "refused" else None)
        eventlog.record(
            received,
            eventlog.Answer(400 if kind == "refused" else 201, None, outcome),
            slots.slot_for(at, hits=1, rate_limited=False, window_seconds=60),
        )
    browser = signed_in("viewer")
    here = f"/app/integrations/{hook['id']}/events"
    first = browser.get(here)
    rows = first.dom().find("tbody").find_all("tr")
    assert len(rows) == 25 and "alert 0" in rows[0].text() and "alert 24" in rows[-1].text()
    [older] = [link for link in first.dom().find_all("a") if link.text() == "Older"]
    second = browser.get(str(older.attrs["href"]))
    assert [row.text().count("alert 2") for row in second.dom().find("tbody").find_all("tr")] == [1] * 5
    assert [link for link in second.dom().find_all("a") if link.text() == "Newest"]
    assert not [link for link in second.dom().find_all("a") if link.text() == "Older"]
    filtered = browser.get(f"{here}?outcome=refused")
    assert len(filtered.dom().find("tbody").find_all("tr")) == 10
    assert "created" not in filtered.dom().find("tbody").text()
    assert "checked" in filtered.dom().find("input", value="refused").attrs


def test_another_organizations_integration_is_not_found(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    other = make_org("Other")
    theirs = admin.create_integration(
        organization_id=other.organization_id, integration_type="custom", name="x", now=NOW, settings=get_settings()
    )
    browser = signed_in("owner")
    here = f"/app/integrations/{theirs.integration.integration_id}/events"
    assert browser.get(here).status == 404
    assert browser.get(f"{here}/20261122120000.d001").status == 404
