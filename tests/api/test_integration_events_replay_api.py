"""Replaying a refused event: after the configuration is fixed it becomes exactly what a fresh
delivery of the same body and headers would; only refused events, each once; never past a
signature; the gate's checks as of now; integrations:write."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.catalog import service as catalog
from chalicelib.catalog.service import Service
from chalicelib.integration import signing
from chalicelib.settings import get_settings
from tests.api.event_log_support import detail, listed, newest, replay
from tests.api.test_webhooks_api import api, incident, integrate, post, reconfigure

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org, make_org

SEARCH = {"title": "Search nodes down", "service_id": "SER-00003", "dedup_key": "es", "team": "search"}


def without_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without what differs between two deliveries: the incident's and alert's ids."""
    kept = dict(answer)
    kept["incident"] = {k: v for k, v in (answer.get("incident") or {}).items() if k not in ("id", "url")}
    kept["alert"] = {k: v for k, v in (answer.get("alert") or {}).items() if k != "id"}
    return kept


def conflict(response: Any, reason: str) -> None:
    assert response.status_code == 409, response.body
    assert reason in response.json["error"]["message"], response.json


def test_a_refused_event_replayed_after_the_fix_is_a_fresh_delivery(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook, twin = integrate(client, org, "custom"), integrate(client, org, "custom")
    assert post(client, hook["routing_key"], SEARCH, {"User-Agent": "es-monitor/2"}).status_code == 400
    refused = newest(client, org, hook)
    assert (refused["outcome"], refused["replayable"]) == ("refused", True)

    search = catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)  # the fix: SER-00003
    with clock.frozen(NOW + timedelta(minutes=5)):
        replayed = replay(client, org, hook, refused["id"])
        fresh = post(client, twin["routing_key"], SEARCH, {"User-Agent": "es-monitor/2"})
    assert replayed.status_code == 201, replayed.body
    new = replayed.json["data"]
    assert (new["outcome"], new["status"], new["replay_of"], new["replayable"]) == (
        "created",
        201,
        refused["id"],
        False,
    )
    assert new["received_at"] == "2026-11-22T12:05:00Z" and new["headers"]["user-agent"] == "es-monitor/2"
    assert fresh.status_code == new["status"] == 201
    assert without_ids(new["response"]) == without_ids(fresh.json)  # the same answer a fresh delivery got
    assert (
        new["warnings"]
        == fresh.json["warnings"]
        == ["'team' is not part of the custom webhook payload; kept in details."]
    )
    assert incident(client, org, new["incident_number"])["service_keys"] == [search.service_key]
    assert detail(client, org, hook, refused["id"])["replayed_as"] == new["id"]
    # It went through the same ingest: the same body again deduplicates onto the replay's alert.
    with clock.frozen(NOW + timedelta(minutes=6)):
        again = post(client, hook["routing_key"], SEARCH)
    assert again.status_code == 200 and again.json["incident"]["id"] == new["incident_number"]
    assert [item["outcome"] for item in listed(client, org, hook)["items"]] == ["deduplicated", "created", "refused"]


def test_only_refused_events_each_once_and_a_chain_of_replays(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom")
    assert post(client, hook["routing_key"], SEARCH).status_code == 400
    first = newest(client, org, hook)
    with clock.frozen(NOW + timedelta(minutes=1)):
        still = replay(client, org, hook, first["id"])  # not fixed yet: refused again, recorded
    assert still.status_code == 201 and still.json["data"]["outcome"] == "refused"
    second = still.json["data"]
    assert (second["replay_of"], second["error_code"], second["replayable"]) == (first["id"], "INVALID_PAYLOAD", True)
    conflict(replay(client, org, hook, first["id"]), f"replayed already, as {second['id']}")
    catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)
    with clock.frozen(NOW + timedelta(minutes=2)):
        third = replay(client, org, hook, second["id"]).json["data"]
    assert (third["outcome"], third["replay_of"]) == ("created", second["id"])
    conflict(replay(client, org, hook, second["id"]), "replayed already")
    conflict(replay(client, org, hook, third["id"]), "Only refused events can be replayed: this one was created")

    reconfigure(RATE_LIMIT_WEBHOOK="1")
    with clock.frozen(NOW + timedelta(minutes=3)):
        assert [post(client, hook["routing_key"], SEARCH).status_code for _ in range(2)] == [200, 429]
    limited = newest(client, org, hook)
    assert (limited["outcome"], limited["replayable"]) == ("rate_limited", False)
    conflict(replay(client, org, hook, limited["id"]), "this one was rate limited")


def test_a_replay_never_bypasses_a_signature(client: Any, org: Org, services: list[Service]) -> None:
    signed = integrate(client, org, "custom", signing=True)
    body = json.dumps(SEARCH)
    headers = signing.signed_headers(signed["signing_secret"], int(NOW.timestamp()), body)
    assert post(client, signed["routing_key"], body).status_code == 401  # unsigned: refused for it
    with clock.frozen(NOW + timedelta(seconds=10)):
        assert post(client, signed["routing_key"], body, headers).status_code == 400  # signed, no such service
    valid, forged = (detail(client, org, signed, item["id"]) for item in listed(client, org, signed)["items"])
    assert (forged["signature"], forged["replayable"]) == ("invalid", False)
    conflict(replay(client, org, signed, forged["id"]), "refused for its signature")
    catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)
    # Its signature was checked when it came: replayed minutes later, past the signature's window.
    with clock.frozen(NOW + timedelta(minutes=30)):
        replayed = replay(client, org, signed, valid["id"])
    assert replayed.status_code == 201 and replayed.json["data"]["outcome"] == "created"
    assert replayed.json["data"]["signature"] == "valid"

    locked = integrate(client, org, "custom", signing=True, ip_allowlist=["203.0.113.0/24"])
    locked_headers = signing.signed_headers(locked["signing_secret"], int(NOW.timestamp()), body)
    assert post(client, locked["routing_key"], body, locked_headers).status_code == 403  # before the check
    unchecked = newest(client, org, locked)
    assert (unchecked["error_code"], unchecked["signature"]) == ("IP_NOT_ALLOWED", None)
    conflict(replay(client, org, locked, unchecked["id"]), "was never checked")


def test_the_gate_as_of_now_and_what_cannot_be_replayed(client: Any, org: Org, services: list[Service]) -> None:
    default = {"default_service": services[0].service_key}
    locked = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24"], **default)
    assert post(client, locked["routing_key"], SEARCH).status_code == 403
    first = newest(client, org, locked)
    with clock.frozen(NOW + timedelta(minutes=1)):
        again = replay(client, org, locked, first["id"])  # the address is still not allowed
    assert again.status_code == 201
    assert (again.json["data"]["error_code"], again.json["data"]["source_address"]) == ("IP_NOT_ALLOWED", "127.0.0.1")

    plain = integrate(client, org, "custom", **default)
    assert post(client, plain["routing_key"], "x" * (20 * 1024)).status_code == 400
    conflict(replay(client, org, plain, newest(client, org, plain)["id"]), "not kept whole")
    with clock.frozen(NOW + timedelta(seconds=10)):
        assert post(client, plain["routing_key"], {"dedup_key": "no title"}).status_code == 400
    no_title = newest(client, org, plain)
    assert api(client, "delete", f"/api/v1/integrations/{plain['id']}", org.owner_key).status_code == 200
    conflict(replay(client, org, plain, no_title["id"]), "revoked")


def test_a_pagerduty_event_is_replayed_through_its_own_route(client: Any, org: Org, services: list[Service]) -> None:
    pagerduty = integrate(client, org, "pagerduty")
    event = {
        "routing_key": pagerduty["routing_key"],
        "event_action": "trigger",
        "dedup_key": "cpu",
        "payload": {
            "summary": "CPU high",
            "source": "db-1",
            "severity": "critical",
            "custom_details": {"service_id": "SER-00003"},
        },
    }
    assert post(client, "/v2/enqueue", event).status_code == 400
    refused = newest(client, org, pagerduty)
    assert refused["body"].count(pagerduty["routing_key"]) == 0
    catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)
    with clock.frozen(NOW + timedelta(minutes=1)):
        replayed = replay(client, org, pagerduty, refused["id"]).json["data"]
    assert (replayed["outcome"], replayed["status"], replayed["operation_id"]) == (
        "created",
        202,
        "enqueuePagerDutyEvent",
    )
    assert replayed["response"] == {"status": "success", "message": "Event processed", "dedup_key": "cpu"}


def test_replaying_needs_integrations_write(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom")
    assert post(client, hook["routing_key"], SEARCH).status_code == 400
    refused = newest(client, org, hook)
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=["integrations:read"],
        now=NOW,
        settings=get_settings(),
    )
    assert detail(client, org, hook, refused["id"], key=reader)["replayable"] is True  # it may read it
    assert replay(client, org, hook, refused["id"], key=reader).status_code == 403
    assert replay(client, org, hook, refused["id"], key=make_org("Other").owner_key).status_code == 404
    assert replay(client, org, hook, "20261122120000.d042").status_code == 404
    assert newest(client, org, hook)["id"] == refused["id"]  # nothing was replayed


def test_a_replay_that_failed_on_our_side_leaves_the_event_replayable(
    client: Any, org: Org, services: list[Service], monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.api.routes import webhooks

    hook = integrate(client, org, "custom")
    assert post(client, hook["routing_key"], SEARCH).status_code == 400
    refused = newest(client, org, hook)
    catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("DynamoDB had a bad minute")

    monkeypatch.setattr(webhooks, "ingest", broken)
    with clock.frozen(NOW + timedelta(minutes=1)):
        failed = replay(client, org, hook, refused["id"]).json["data"]
    assert (failed["outcome"], failed["status"], failed["error_code"], failed["replayable"]) == (
        "failed",
        500,
        "INTERNAL_ERROR",
        False,
    )
    assert (
        detail(client, org, hook, refused["id"])["replayed_as"],
        detail(client, org, hook, refused["id"])["replayable"],
    ) == (None, True)
    monkeypatch.undo()
    with clock.frozen(NOW + timedelta(minutes=2)):
        again = replay(client, org, hook, refused["id"]).json["data"]
    assert (again["outcome"], again["replay_of"]) == ("created", refused["id"])
