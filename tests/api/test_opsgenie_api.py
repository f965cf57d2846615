"""The Opsgenie Alert API drop-in through the app: create (priorities, tags, details, the service),
alias dedup, the alert actions by id, alias and tiny id, the alert as Opsgenie shows it, and what
each request became."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.catalog.service import Service
from tests.api.opsgenie_support import accepted, act, alert, create, genie, request_status
from tests.api.test_webhooks_api import api, drain_events, event_types, incident, integrate

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org

CREATE = {
    "message": "Disk / is 97% full on db-1",
    "alias": "db-1/disk",
    "description": "Free space below 3 GiB",
    "responders": [{"type": "team", "name": "DBA"}, {"type": "user", "id": "u-1"}],
    "visibleTo": [{"type": "team", "name": "SRE"}],
    "actions": ["Restart"],
    "tags": ["env:prod", "database"],
    "details": {"host": "db-1", "free_gb": "3"},
    "entity": "db-1",
    "source": "nagios",
    "priority": "P2",
    "user": "ana",
    "note": "Paged from the runbook",
}


@pytest.fixture
def key(client: Any, org: Org, services: list[Service]) -> str:
    """An Opsgenie integration's key; its default service is SER-00001."""
    return str(integrate(client, org, "opsgenie", default_service=services[0].service_key)["routing_key"])


def incident_of(client: Any, org: Org, alert_id: str) -> dict[str, Any]:
    response = api(client, "get", f"/api/v1/alerts/{alert_id}", org.owner_key)
    assert response.status_code == 200, response.body
    return incident(client, org, response.json["data"]["incident_number"])


def test_create_opens_an_incident_and_shows_the_alert_as_opsgenie_does(client: Any, org: Org, key: str) -> None:
    status = create(client, key, CREATE)
    assert (status["action"], status["isSuccess"], status["status"]) == ("Create", True, "Created alert")
    assert (status["alias"], status["processedAt"]) == ("db-1/disk", "2026-11-22T12:00:00.000Z")
    opened = incident_of(client, org, status["alertId"])
    assert (opened["title"], opened["severity"], opened["status"]) == ("Disk / is 97% full on db-1", "SEV1", "new")
    assert opened["details"] == {"host": "db-1", "free_gb": "3"}
    seen = alert(client, key, status["alertId"])
    assert seen == {
        "id": status["alertId"],
        "tinyId": "1",
        "alias": "db-1/disk",
        "message": "Disk / is 97% full on db-1",
        "status": "open",
        "acknowledged": False,
        "isSeen": False,
        "tags": ["env:prod", "database"],
        "snoozed": False,
        "count": 1,
        "lastOccurredAt": "2026-11-22T12:00:00.000Z",
        "createdAt": "2026-11-22T12:00:00.000Z",
        "updatedAt": "2026-11-22T12:00:00.000Z",
        "source": "nagios",
        "owner": "",
        "priority": "P2",
        "responders": [{"type": "team", "id": "DBA"}, {"type": "user", "id": "u-1"}],
        "integration": {"id": status["integrationId"], "name": "opsgenie", "type": "API"},
        "report": {"ackTime": None, "closeTime": None, "acknowledgedBy": None, "closedBy": None},
        "actions": ["Restart"],
        "entity": "db-1",
        "description": "Free space below 3 GiB",
        "details": {"host": "db-1", "free_gb": "3"},
    }
    listed = api(client, "get", f"/api/v1/alerts/{status['alertId']}", org.owner_key).json["data"]
    assert listed["labels"] == {
        "env": "prod",
        "database": "true",
        "priority": "P2",
        "entity": "db-1",
        "source": "nagios",
    }
    assert listed["integration"]["type"] == "opsgenie"
    drain_events()
    timeline = incident(client, org, opened["incident_number"])["timeline"]
    [note] = [entry for entry in timeline if entry["event_type"] == "comment"]
    assert (note["description"], note["user"]) == ("Paged from the runbook", "ana")


@pytest.mark.parametrize(
    ("priority", "severity"),
    [("P1", "SEV0"), ("P2", "SEV1"), ("P3", "SEV2"), ("P4", "SEV3"), ("P5", "SEV4"), (None, "SEV2")],
)
def test_priorities_page_as_their_severity(
    client: Any, org: Org, key: str, priority: str | None, severity: str
) -> None:
    body = {"message": f"priority {priority}"} | ({"priority": priority} if priority else {})
    status = create(client, key, body)
    assert incident_of(client, org, status["alertId"])["severity"] == severity
    assert alert(client, key, status["alertId"])["priority"] == (priority or "P3")


def test_the_service_is_named_by_details_or_a_tag(client: Any, org: Org, key: str) -> None:
    by_details = create(client, key, {"message": "a", "details": {"service_id": "SER-00002"}})
    by_tag = create(client, key, {"message": "b", "tags": ["service_id:SER-00002"]})
    by_default = create(client, key, {"message": "c"})
    services_of = [
        api(client, "get", f"/api/v1/alerts/{s['alertId']}", org.owner_key).json["data"]["service_id"]
        for s in (by_details, by_tag, by_default)
    ]
    assert services_of == ["SER-00002", "SER-00002", "SER-00001"]


def test_the_same_alias_counts_up_on_the_open_alert(client: Any, org: Org, key: str) -> None:
    first = create(client, key, CREATE)
    again = create(client, key, CREATE | {"message": "Disk / is 98% full on db-1"})
    assert again["alertId"] == first["alertId"]
    assert (again["isSuccess"], again["status"]) == (True, "Alert deduplicated: count 2")
    seen = alert(client, key, "db-1%2Fdisk", "alias")
    assert (seen["count"], seen["tinyId"], seen["message"]) == (2, "1", "Disk / is 97% full on db-1")
    listed = api(client, "get", "/api/v1/incidents", org.owner_key).json["data"]["items"]
    assert len(listed) == 1
    drain_events()
    timeline = incident(client, org, listed[0]["incident_number"])["timeline"]
    assert [entry["description"] for entry in timeline if entry["event_type"] == "comment"] == [
        "Paged from the runbook"  # a note comes with the alert it opens, not with every repeat
    ]


def test_creates_without_an_alias_are_each_a_new_alert_with_an_alias_of_their_own(
    client: Any, org: Org, key: str
) -> None:
    first, second = create(client, key, {"message": "m"}), create(client, key, {"message": "m"})
    assert first["alertId"] != second["alertId"]
    assert first["alias"] != second["alias"]
    assert alert(client, key, first["alias"], "alias")["id"] == first["alertId"]
    assert [alert(client, key, s["alertId"])["tinyId"] for s in (first, second)] == ["1", "2"]


def test_acknowledge_then_close_by_alias(client: Any, org: Org, key: str) -> None:
    created = create(client, key, CREATE)
    acknowledged = act(client, key, "db-1%2Fdisk", "acknowledge", {"user": "bo", "note": "on it"}, "alias")
    status = request_status(client, key, accepted(acknowledged))
    assert (status["action"], status["isSuccess"], status["status"]) == ("Acknowledge", True, "Acknowledged alert")
    assert (status["alertId"], status["alias"]) == (created["alertId"], "db-1/disk")
    seen = alert(client, key, created["alertId"])
    assert (seen["acknowledged"], seen["isSeen"], seen["owner"], seen["status"]) == (True, True, "bo", "open")
    assert seen["report"] == {"ackTime": 0, "closeTime": None, "acknowledgedBy": "bo", "closedBy": None}
    closed = request_status(client, key, accepted(act(client, key, "db-1%2Fdisk", "close", {}, "alias")))
    assert (closed["action"], closed["isSuccess"], closed["status"]) == ("Close", True, "Closed alert")
    seen = alert(client, key, created["alertId"])
    assert seen["status"] == "closed" and seen["report"]["closeTime"] == 0
    assert seen["report"]["closedBy"] == "opsgenie (opsgenie)"
    detail = incident_of(client, org, created["alertId"])
    assert (detail["status"], detail["acknowledged_at"]) == ("resolved", "2026-11-22T12:00:00.000Z")
    drain_events()
    timeline = incident(client, org, detail["incident_number"])["timeline"]
    assert "Acknowledged by bo via opsgenie (opsgenie)" in [entry["title"] for entry in timeline]
    assert "on it" in [entry["description"] for entry in timeline if entry["event_type"] == "comment"]
    assert "status_changed" in event_types(incident(client, org, detail["incident_number"]))


def test_close_by_tiny_id_and_a_closed_alert_stays_closed(client: Any, org: Org, key: str) -> None:
    created = create(client, key, {"message": "m", "alias": "a1"})
    tiny = alert(client, key, created["alertId"])["tinyId"]
    assert request_status(client, key, accepted(act(client, key, tiny, "close", None, "tiny")))["status"] == (
        "Closed alert"
    )
    again = request_status(client, key, accepted(act(client, key, tiny, "close", None, "tiny")))
    assert (again["isSuccess"], again["status"]) == (True, "Alert is already closed")
    late = request_status(client, key, accepted(act(client, key, created["alertId"], "acknowledge")))
    assert (late["isSuccess"], late["status"]) == (True, "Alert is closed: nothing to acknowledge")
    # The alias's next create is a new alert, with a new tiny id.
    reopened = create(client, key, {"message": "m", "alias": "a1"})
    assert reopened["alertId"] != created["alertId"]
    assert alert(client, key, "a1", "alias") == alert(client, key, reopened["alertId"])
    assert alert(client, key, "2", "tiny")["id"] == reopened["alertId"]


def test_a_note_by_id_is_a_comment_on_the_incident(client: Any, org: Org, key: str) -> None:
    created = create(client, key, {"message": "m"})
    noted = act(client, key, created["alertId"], "notes", {"note": "Rebooted db-1", "user": "cy", "source": "cli"})
    status = request_status(client, key, accepted(noted))
    assert (status["action"], status["isSuccess"], status["status"]) == ("AddNote", True, "Added note")
    drain_events()
    timeline = incident_of(client, org, created["alertId"])["timeline"]
    [comment] = [entry for entry in timeline if entry["event_type"] == "comment"]
    assert (comment["description"], comment["user"]) == ("Rebooted db-1", "cy")


def test_closing_one_of_two_grouped_alerts_leaves_the_incident_open(client: Any, org: Org, key: str) -> None:
    grouping = {"alert_grouping": {"type": "time", "window_minutes": 10}}
    assert api(client, "patch", "/api/v1/services/SER-00001", org.owner_key, grouping).status_code == 200
    first = create(client, key, {"message": "one", "alias": "one"})
    second = create(client, key, {"message": "two", "alias": "two"})
    assert second["status"].startswith("Created alert, grouped into incident ")
    closed = request_status(client, key, accepted(act(client, key, "one", "close", None, "alias")))
    assert closed["status"] == "Closed alert; alert resolved; 1 other alert of the incident still triggered"
    assert incident_of(client, org, first["alertId"])["status"] == "new"
    assert alert(client, key, "two", "alias")["status"] == "open"


def test_an_alert_from_another_source_is_shown_with_its_labels_as_tags(
    client: Any, org: Org, key: str, services: list[Service]
) -> None:
    from tests.api.test_webhooks_api import post

    other = integrate(client, org, "custom", default_service=services[0].service_key)
    body = {"title": "From elsewhere", "service_id": "SER-00001", "metadata": {"env": "prod"}, "dedup_key": "x"}
    delivered = post(client, other["routing_key"], body)
    assert delivered.status_code == 201, delivered.body
    alert_id = delivered.json["alert"]["id"]
    seen = alert(client, key, alert_id)
    assert (seen["tinyId"], seen["tags"], seen["alias"], seen["source"]) == ("", ["env:prod"], "x", "")
    assert seen["integration"] == {"id": other["id"], "name": "custom", "type": "custom"}
    acknowledged = request_status(client, key, accepted(act(client, key, alert_id, "acknowledge")))
    assert acknowledged["status"] == "Acknowledged alert"
    assert alert(client, key, alert_id)["acknowledged"] is True
    # Its alias is its own integration's: this key's aliases do not name it.
    assert genie(client, "get", "/v2/alerts/x?identifierType=alias", key).status_code == 404


def test_an_event_rule_that_drops_the_alert_is_what_the_request_became(client: Any, org: Org, key: str) -> None:
    rule = {"conditions": [{"field": "labels.env", "op": "equals", "value": "test"}], "actions": {"drop": True}}
    made = api(client, "post", "/api/v1/event-rules", org.owner_key, rule)
    assert made.status_code == 201, made.body
    status = create(client, key, {"message": "noise", "tags": ["env:test"]})
    assert status["isSuccess"] is True and status["alertId"] == ""
    assert status["status"].startswith("Nothing was created: dropped by event rule ")
