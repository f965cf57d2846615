"""Issue 26 (item 3): every request to an integration is in its event log with what became of it.

Every outcome of a delivery (created, deduplicated, grouped, suppressed by a maintenance window
and by an event rule, dropped, refused with its code, rate limited), on every inbound path
(the webhook URL and its older forms, PagerDuty Events and change events, SNS), refusals at the
door too; a routing key naming no integration is in no log. Secrets never show. The list's filters
and pages; a failing log write changes no answer; only the organization's own integrations.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.catalog import service as catalog
from chalicelib.catalog.service import Service
from chalicelib.eventlog import service as eventlog
from chalicelib.eventrule import evaluate as evaluation
from chalicelib.integration import signing
from tests.api.event_log_support import detail, events_path, listed, never_shows, newest, outcomes
from tests.api.test_webhooks_api import UNKNOWN_KEY, api, integrate, post, reconfigure

# Fixtures of the webhook test modules, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.api.test_webhooks_cloudwatch_api import SUBSCRIBE_URL, TOPIC, FakeSns
from tests.api.test_webhooks_cloudwatch_api import deliver as deliver_sns
from tests.api.test_webhooks_cloudwatch_api import fake_sns as fake_sns
from tests.api.test_webhooks_cloudwatch_api import key as key
from tests.api.test_webhooks_cloudwatch_api import signed as sns_signed
from tests.conftest import NOW, Org, make_org


def iso(moment: Any) -> str:
    return str(moment.isoformat().replace("+00:00", "Z"))


def created(response: Any, status: int = 201) -> Any:
    assert response.status_code == status, response.body
    return response.json["data"]


def test_every_outcome_of_a_delivery_is_recorded(client: Any, org: Org, services: list[Service]) -> None:
    search = catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    rules = f"/api/v1/integrations/{hook['id']}/event-rules"
    drop = {"conditions": [{"field": "title", "op": "contains", "value": "Watchdog"}], "actions": {"drop": True}}
    quiet = {"conditions": [{"field": "title", "op": "contains", "value": "staging"}], "actions": {"suppress": True}}
    dropping, quieting = (created(api(client, "post", rules, org.owner_key, body)) for body in (drop, quiet))
    window = created(
        api(
            client,
            "post",
            "/api/v1/maintenance-windows",
            org.owner_key,
            {"service_ids": [search.service_id], "start": iso(NOW), "end": iso(NOW + timedelta(hours=1))},
        )
    )
    grouping = {"alert_grouping": {"type": "time", "window_minutes": 15}}
    assert api(client, "patch", "/api/v1/services/SER-00002", org.owner_key, grouping).status_code == 200

    sent = [
        ({"title": "Disk full", "dedup_key": "disk", "team": "db"}, 201),
        ({"title": "Disk full", "dedup_key": "disk"}, 200),
        ({"title": "Card auth failing", "service_id": "SER-00002", "dedup_key": "a"}, 201),
        ({"title": "Card auth slow", "service_id": "SER-00002", "dedup_key": "b"}, 200),
        ({"title": "Reindexing", "service_id": search.service_id, "dedup_key": "r"}, 202),
        ({"title": "Disk full on staging", "dedup_key": "s"}, 202),
        ({"title": "Watchdog", "dedup_key": "w"}, 202),
        ({"dedup_key": "no title"}, 400),
    ]
    answers = []
    for second, (body, status) in enumerate(sent):
        with clock.frozen(NOW + timedelta(seconds=second)):
            answers.append(post(client, hook["routing_key"], body))
        assert answers[-1].status_code == status, answers[-1].body
    expected = ["created", "deduplicated", "created", "grouped", "suppressed", "suppressed", "dropped", "refused"]
    assert outcomes(client, org, hook) == expected[::-1]

    items = listed(client, org, hook, limit=100)["items"][::-1]
    records = [detail(client, org, hook, item["id"]) for item in items]
    first, repeat, opened, grouped, maintenance, by_rule, dropped, refused = records
    assert (first["status"], first["incident_number"], first["alert_id"]) == (
        201,
        answers[0].json["incident"]["id"],
        answers[0].json["alert"]["id"],
    )
    assert first["warnings"] == answers[0].json["warnings"] != []
    assert first["response"] == answers[0].json and first["title"] == "Disk full" and first["action"] == "trigger"
    assert (repeat["incident_number"], repeat["status"]) == (first["incident_number"], 200)
    assert grouped["incident_number"] == opened["incident_number"] == answers[3].json["incident"]["id"]
    assert maintenance["suppressed_by"] == {"kind": "maintenance", "window_id": window["id"]}
    assert by_rule["suppressed_by"] == {"kind": "event_rule", "rule_ids": [quieting["id"]]}
    assert (dropped["rule_ids"], dropped["status"], dropped["alert_id"]) == ([dropping["id"]], 202, None)
    assert (refused["error_code"], refused["status"]) == ("INVALID_PAYLOAD", 400)
    assert refused["message"] == answers[-1].json["error"]["message"] == refused["summary"]
    assert [item["summary"] for item in items[:2]] == ["Disk full", "Disk full"]


def test_the_answer_and_the_log_carry_the_parsers_the_services_and_the_rules_warnings(
    client: Any, org: Org, services: list[Service], monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    rules = f"/api/v1/integrations/{hook['id']}/event-rules"
    quiet = {"conditions": [{"field": "title", "op": "contains", "value": "Disk"}], "actions": {"suppress": True}}
    created(api(client, "post", rules, org.owner_key, quiet))
    monkeypatch.setattr(evaluation, "EVALUATION_BUDGET_SECONDS", -1.0)  # every evaluation is already late

    body = {"title": "Disk full", "service_id": "SER-09999", "dedup_key": "d", "team": "db"}
    answer = post(client, hook["routing_key"], body)
    assert answer.status_code == 201, answer.body  # the rule never ran: kept and paged, not suppressed
    parsed, routed, skipped = answer.json["warnings"]
    assert "'team'" in parsed
    assert routed == "Unknown or inactive service 'SER-09999'; routed to the integration's default service 'Web'."
    assert skipped == evaluation.over_budget_warning(-1.0)
    record = newest(client, org, hook)
    assert (record["outcome"], record["warnings"]) == ("created", [parsed, routed, skipped])
    assert record["response"]["warnings"] == [parsed, routed, skipped]


def test_rate_limited_requests_share_one_record_a_minute(client: Any, org: Org, services: list[Service]) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    statuses = [post(client, hook["routing_key"], {"title": f"t{n}"}).status_code for n in range(5)]
    assert statuses == [201, 201, 429, 429, 429]
    items = listed(client, org, hook)["items"]
    assert [(item["outcome"], item["count"]) for item in items] == [("rate_limited", 3), ("created", 1), ("created", 1)]
    limited = detail(client, org, hook, items[0]["id"])
    assert (limited["status"], limited["error_code"], limited["summary"]) == (429, "RATE_LIMITED", limited["message"])


def test_refusals_at_the_door_are_recorded_and_an_unknown_key_nowhere(
    client: Any, org: Org, services: list[Service]
) -> None:
    default = {"default_service": services[0].service_key}
    signed = integrate(client, org, "custom", signing=True, **default)
    locked = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24"], **default)
    plain = integrate(client, org, "custom", **default)
    body = {"title": "Disk full"}
    assert post(client, signed["routing_key"], body).status_code == 401
    assert post(client, locked["routing_key"], body).status_code == 403
    assert post(client, plain["routing_key"], "x" * (256 * 1024 + 1)).status_code == 413
    with clock.frozen(NOW + timedelta(seconds=10)):
        assert post(client, plain["routing_key"], body, https=False).status_code == 403
    regenerated = api(client, "post", f"/api/v1/integrations/{plain['id']}/regenerate", org.owner_key)
    with clock.frozen(NOW + timedelta(seconds=20)):
        assert post(client, plain["routing_key"], body).status_code == 404  # the superseded key
    assert regenerated.status_code == 200 and api(
        client, "delete", f"/api/v1/integrations/{plain['id']}", org.owner_key
    )
    with clock.frozen(NOW + timedelta(seconds=30)):
        assert post(client, regenerated.json["data"]["routing_key"], body).status_code == 410
    assert post(client, UNKNOWN_KEY, body).status_code == 404

    forged = newest(client, org, signed)
    assert (forged["error_code"], forged["signature"], forged["status"]) == ("INVALID_SIGNATURE", "invalid", 401)
    assert newest(client, org, locked)["error_code"] == "IP_NOT_ALLOWED"
    codes = [detail(client, org, plain, item["id"]) for item in listed(client, org, plain)["items"]]
    assert [(c["error_code"], c["status"]) for c in codes] == [
        ("WEBHOOK_REVOKED", 410),
        ("ROUTE_NOT_FOUND", 404),
        ("HTTPS_REQUIRED", 403),
        ("PAYLOAD_TOO_LARGE", 413),
    ]
    too_large = codes[-1]
    assert too_large["truncated"] is True and too_large["body_size"] == 256 * 1024 + 1
    assert len(too_large["body"]) == 16 * 1024
    for hook in (signed, locked, plain):  # the unknown key's request is in none of the logs
        assert all(item["route"] == "/webhooks/{routing_key}" for item in listed(client, org, hook)["items"])
    assert sum(len(listed(client, org, h)["items"]) for h in (signed, locked, plain)) == 6


def test_the_other_inbound_paths(client: Any, org: Org, services: list[Service]) -> None:
    custom = integrate(client, org, "custom", default_service=services[0].service_key)
    key = custom["routing_key"]
    assert post(client, f"/webhooks/custom/{key}", {"title": "Older URL"}).status_code == 201
    with clock.frozen(NOW + timedelta(seconds=1)):
        legacy = {"Authorization": f"Bearer {key}", "User-Agent": "legacy-monitor/1.0"}
        assert post(client, "/v1/incidents", {"title": "Legacy path"}, legacy).status_code == 201
    older, oldest = (detail(client, org, custom, i["id"]) for i in listed(client, org, custom)["items"])
    assert (oldest["route"], oldest["operation_id"]) == ("/webhooks/custom/{routing_key}", "deliverCustomWebhook")
    assert (older["route"], older["headers"]["authorization"]) == ("/v1/incidents", "present")
    assert older["headers"]["user-agent"] == "legacy-monitor/1.0"
    never_shows(older, key)

    pagerduty = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    pd_key = pagerduty["routing_key"]
    event = {
        "routing_key": pd_key,
        "event_action": "trigger",
        "payload": {
            "summary": "CPU high",
            "source": "db-1",
            "severity": "critical",
            "custom_details": {"service_id": "SER-09999"},
        },
    }
    assert post(client, "/v2/enqueue", event).status_code == 202
    with clock.frozen(NOW + timedelta(seconds=1)):
        change = {"routing_key": pd_key, "payload": {"summary": "Deployed v2", "source": "ci"}}
        assert post(client, "/v2/change/enqueue", change).status_code == 202
        assert post(client, "/v2/change/enqueue", change).status_code == 202
    records = [detail(client, org, pagerduty, i["id"]) for i in listed(client, org, pagerduty)["items"]]
    assert [(r["operation_id"], r["outcome"]) for r in records] == [
        ("enqueuePagerDutyChangeEvent", "deduplicated"),
        ("enqueuePagerDutyChangeEvent", "created"),
        ("enqueuePagerDutyEvent", "created"),
    ]
    triggered = records[-1]
    assert triggered["warnings"] == [  # PagerDuty's answer has none; the log keeps them
        "Unknown or inactive service 'SER-09999'; routed to the integration's default service 'Web'."
    ]
    assert triggered["body"].startswith('{"routing_key": "' + pd_key[:6] + "*" * 26 + '"')
    assert records[1]["title"] == "Deployed v2" and records[1]["action"] == "change"
    for record in records:
        never_shows(record, pd_key)


def test_an_sns_subscription_confirmation_and_a_forged_one(
    client: Any, org: Org, services: list[Service], key: Any, fake_sns: FakeSns
) -> None:
    hook = integrate(client, org, "cloudwatch", default_service=services[0].service_key)
    confirmation = {
        "Type": "SubscriptionConfirmation",
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "Token": "abc",
        "TopicArn": TOPIC,
        "Message": f"You have chosen to subscribe to the topic {TOPIC}.",
        "SubscribeURL": SUBSCRIBE_URL,
        "Timestamp": "2026-11-22T11:50:00.000Z",
    }
    assert deliver_sns(client, hook["routing_key"], sns_signed(key, confirmation)).status_code == 200
    with clock.frozen(NOW + timedelta(seconds=1)):
        forged = sns_signed(key, confirmation) | {"Token": "other"}
        assert deliver_sns(client, hook["routing_key"], forged).status_code == 401
    forgery, confirmed = (detail(client, org, hook, item["id"]) for item in listed(client, org, hook)["items"])
    assert (confirmed["outcome"], confirmed["action"], confirmed["message"]) == (
        "accepted",
        "confirm_subscription",
        "subscription confirmed",
    )
    assert confirmed["headers"]["x-amz-sns-message-type"] == "SubscriptionConfirmation"
    assert (forgery["outcome"], forgery["error_code"], forgery["signature"]) == (
        "refused",
        "INVALID_SIGNATURE",
        "invalid",
    )
    assert fake_sns.confirmed == [SUBSCRIBE_URL]


def test_secrets_and_signatures_never_show(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True, default_service=services[0].service_key)
    body = json.dumps({"title": "Signed alert"})
    headers = signing.signed_headers(hook["signing_secret"], int(NOW.timestamp()), body)
    assert (
        post(client, hook["routing_key"], body, {**headers, "X-Api-Key": "k-123", "X-Request-Id": "d-1"}).status_code
        == 201
    )
    record = newest(client, org, hook)
    assert record["signature"] == "valid"
    assert record["headers"]["x-service-signature"] == "valid"
    assert record["headers"]["x-api-key"] == "present"
    assert record["headers"]["x-request-id"] == "d-1"  # the sender's own delivery id
    assert record["headers"]["x-service-timestamp"] == headers["X-Service-Timestamp"]
    never_shows(record, hook["signing_secret"], hook["routing_key"], headers["X-Service-Signature"], "k-123")


def test_the_list_filters_and_pages(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    bodies = [{"title": "a"}, {"dedup_key": "x"}, {"title": "b"}, {"dedup_key": "y"}, {"title": "c"}]
    for minute, body in enumerate(bodies):
        with clock.frozen(NOW + timedelta(minutes=minute)):
            post(client, hook["routing_key"], body)
    assert outcomes(client, org, hook) == ["created", "refused", "created", "refused", "created"]
    assert outcomes(client, org, hook, outcome="refused") == ["refused", "refused"]
    assert outcomes(client, org, hook, outcome=["refused", "created"]) == [
        "created",
        "refused",
        "created",
        "refused",
        "created",
    ]
    ranged = {"since": iso(NOW + timedelta(minutes=1)), "until": iso(NOW + timedelta(minutes=3))}
    assert outcomes(client, org, hook, **ranged) == ["refused", "created", "refused"]
    assert outcomes(client, org, hook, outcome="created", **ranged) == ["created"]
    seen, cursor, pages = [], None, 0
    while True:
        page = listed(client, org, hook, limit=2, **({"cursor": cursor} if cursor else {}))
        seen += [item["summary"] for item in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert (seen[0], seen[2], seen[4], pages) == ("c", "b", "a", 3)
    for query in (
        "outcome=maybe",
        "cursor=zzz",
        f"since={iso(NOW)}&until={iso(NOW - timedelta(minutes=1))}",
        "limit=0",
    ):
        refused = api(client, "get", f"{events_path(hook)}?{query}", org.owner_key)
        assert refused.status_code == 400, (query, refused.body)


def test_a_failing_log_write_changes_no_answer(
    client: Any, org: Org, services: list[Service], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    with clock.frozen(NOW + timedelta(minutes=1)):
        logged = [post(client, hook["routing_key"], body) for body in ({"title": "one"}, {"dedup_key": "none"})]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the event log table is down")

    monkeypatch.setattr(eventlog, "record", broken)
    with clock.frozen(NOW + timedelta(minutes=2)), caplog.at_level(logging.ERROR):
        unlogged = [post(client, hook["routing_key"], body) for body in ({"title": "one"}, {"dedup_key": "none"})]
    assert [r.status_code for r in unlogged] == [r.status_code for r in logged] == [201, 400]
    assert unlogged[1].json == logged[1].json
    assert {k: v for k, v in unlogged[0].json.items() if k not in ("incident", "alert")} == {
        k: v for k, v in logged[0].json.items() if k not in ("incident", "alert")
    }
    assert "could not record a request" in caplog.text
    monkeypatch.undo()
    assert len(listed(client, org, hook)["items"]) == 2  # only the first two


def test_only_the_organizations_own_integrations_with_the_read_scope(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    post(client, hook["routing_key"], {"title": "one"})
    [item] = listed(client, org, hook)["items"]
    other = make_org("Other")
    for path in (events_path(hook), f"{events_path(hook)}/{item['id']}"):
        assert api(client, "get", path, other.owner_key).status_code == 404
        assert api(client, "get", path, org.readonly_key).status_code == 403  # incidents:read only
        assert api(client, "get", path, None).status_code == 401
    assert api(client, "get", f"{events_path(hook)}/20261122120000.d099", org.owner_key).status_code == 404
    assert api(client, "get", "/api/v1/integrations/nope/events", org.owner_key).status_code == 404
