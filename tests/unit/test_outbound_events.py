"""Outbound events, pure: which events a domain message means, their ids, bodies and sync status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.outbound import events
from chalicelib.outbound.events import PlannedEvent, plan_events, sync_status

MESSAGE_ID = "5b1f0c2e9d8a4f7c"
OCCURRED_AT = "2026-11-22T12:00:00.000Z"
INCIDENT = {"incident_number": "INC-2026-0007", "title": "Checkout down", "status": "investigating"}


def plan(message_type: str, **payload: Any) -> list[PlannedEvent]:
    return plan_events(
        message_type=message_type,
        message_id=MESSAGE_ID,
        occurred_at=OCCURRED_AT,
        payload={"incident_number": "INC-2026-0007", **payload},
    )


def types(planned: list[PlannedEvent]) -> list[str]:
    return [event.event_type for event in planned]


def test_the_ten_event_types():
    assert events.EVENT_TYPES == (
        "incident.triggered",
        "incident.acknowledged",
        "incident.escalated",
        "incident.status_changed",
        "incident.resolved",
        "incident.reopened",
        "incident.annotated",
        "incident.assigned",
        "postmortem.published",
        "status_page.incident_updated",
    )


def test_event_id_is_stable_per_message_and_type_and_differs_otherwise():
    first = events.event_id(MESSAGE_ID, "incident.triggered")
    assert first == events.event_id(MESSAGE_ID, "incident.triggered")
    assert first.startswith("evt_") and len(first) == 36
    assert first != events.event_id(MESSAGE_ID, "incident.resolved")
    assert first != events.event_id("another-message", "incident.triggered")


def test_created_is_triggered():
    (event,) = plan("incident.created")
    assert event.event_type == "incident.triggered"
    assert event.incident_number == "INC-2026-0007"
    assert event.occurred_at == OCCURRED_AT
    assert event.delivery_key == f"{OCCURRED_AT}#{event.event_id}"
    assert event.data == {}


def test_a_move_between_open_statuses_is_only_status_changed():
    planned = plan(
        "incident.status_changed",
        previous_status="investigating",
        status="identified",
        previous_category="active",
        category="active",
    )
    assert types(planned) == ["incident.status_changed"]
    assert planned[0].data == {"previous_status": "investigating", "status": "identified"}


@pytest.mark.parametrize(
    ("previous", "previous_category", "status", "category", "expected"),
    [
        ("monitoring", "active", "resolved", "resolved", ["incident.status_changed", "incident.resolved"]),
        ("new", "triggered", "closed", "closed", ["incident.status_changed", "incident.resolved"]),
        ("resolved", "resolved", "investigating", "active", ["incident.status_changed", "incident.reopened"]),
        ("closed", "closed", "new", "triggered", ["incident.status_changed", "incident.reopened"]),
        ("resolved", "resolved", "closed", "closed", ["incident.status_changed"]),  # done to done
    ],
)
def test_resolved_and_reopened_come_from_the_categories(previous, previous_category, status, category, expected):
    planned = plan(
        "incident.status_changed",
        previous_status=previous,
        status=status,
        previous_category=previous_category,
        category=category,
    )
    assert types(planned) == expected
    for event in planned:
        assert event.data == {"previous_status": previous, "status": status}
        assert (event.status, event.category) == (status, category)
    assert len({event.event_id for event in planned}) == len(planned)


def test_a_status_message_without_categories_is_only_status_changed():
    assert types(plan("incident.status_changed", previous_status="new", status="resolved")) == [
        "incident.status_changed"
    ]


def test_acknowledge_that_moved_the_status_also_says_status_changed():
    planned = plan("incident.acknowledged", previous_status="new", status="investigating")
    assert types(planned) == ["incident.acknowledged", "incident.status_changed"]
    assert planned[1].data == {"previous_status": "new", "status": "investigating"}
    assert types(plan("incident.acknowledged", previous_status="monitoring", status="monitoring")) == [
        "incident.acknowledged"
    ]
    assert types(plan("incident.acknowledged")) == ["incident.acknowledged"]


def test_per_type_data():
    (assigned,) = plan("incident.assigned", assigned_to={"name": "Ana", "email": "ana@acme.test"})
    assert assigned.data == {"assigned_to": {"name": "Ana", "email": "ana@acme.test"}}
    (annotated,) = plan("incident.annotated", comment="Rolled back")
    assert annotated.data == {"comment": "Rolled back"}
    (escalated,) = plan("incident.escalated", level=2, reason="timeout")
    assert escalated.data == {"level": 2}


def test_postmortem_and_status_page_events_carry_what_their_producers_presented():
    (published,) = plan_events(
        message_type="postmortem.published",
        message_id=MESSAGE_ID,
        occurred_at=OCCURRED_AT,
        payload={"postmortem": {"postmortem_id": "PM-2026-0001"}, "incident_number": "INC-2026-0007"},
    )
    assert published.data == {"postmortem": {"postmortem_id": "PM-2026-0001"}, "incident_number": "INC-2026-0007"}
    assert not published.is_incident_event
    page = {"page_id": "sp_1", "name": "Acme", "slug": "acme", "url": "https://status.acme.test"}
    (updated,) = plan_events(
        message_type="status_page.incident_updated",
        message_id=MESSAGE_ID,
        occurred_at=OCCURRED_AT,
        payload={"status_page": page, "incident": {"id": "pi_1", "status": "monitoring"}},
    )
    assert updated.data == {"status_page": page, "incident": {"id": "pi_1", "status": "monitoring"}}
    assert updated.incident_number is None


def test_messages_no_event_follows():
    assert plan("incident.alert_received") == []
    assert plan("escalation.timer") == []
    assert plan_events(message_type="incident.created", message_id="m", occurred_at=OCCURRED_AT, payload={}) == []


def test_the_cause_is_carried_for_loop_prevention():
    (event,) = plan("incident.created", source_integration_id="int_42")
    assert event.source_integration_id == "int_42"
    assert plan("incident.created")[0].source_integration_id is None


@pytest.mark.parametrize(
    ("status", "category", "expected"),
    [
        ("new", "triggered", "investigating"),
        ("investigating", "active", "investigating"),
        ("identified", "active", "identified"),
        ("monitoring", "active", "monitoring"),
        ("resolved", "resolved", "resolved"),
        ("closed", "closed", "resolved"),
        ("mitigating", "active", "investigating"),  # an organization's own open status
        ("wont_fix", "resolved", "resolved"),  # an organization's own done status
        ("monitoring", None, "monitoring"),  # no longer in the workflow: counts as open
        ("archived", None, "investigating"),
    ],
)
def test_sync_status(status, category, expected):
    assert sync_status(status, category) == expected


def test_subscribes_to():
    assert events.subscribes_to({"*"}, "incident.resolved")
    assert events.subscribes_to({"incident.resolved"}, "incident.resolved")
    assert not events.subscribes_to({"incident.triggered"}, "incident.resolved")


def document(event: PlannedEvent, *, sync: bool, incident: dict[str, Any] | None = INCIDENT, category: str = "active"):
    return events.event_document(
        event,
        organization_id="org-1",
        organization_name="Acme",
        incident=incident,
        incident_category=category,
        include_sync_status=sync,
    )


def test_document_shape():
    (event,) = plan("incident.created")
    assert document(event, sync=False) == {
        "id": event.event_id,
        "type": "incident.triggered",
        "occurred_at": OCCURRED_AT,
        "organization": {"id": "org-1", "name": "Acme"},
        "data": {"incident": INCIDENT},
    }


def test_sync_status_only_for_sync_targets_and_from_the_status_the_event_reports():
    (triggered,) = plan("incident.created")
    assert "sync_status" not in document(triggered, sync=False)["data"]
    assert document(triggered, sync=True)["data"]["sync_status"] == "investigating"
    # The incident moved on since (it reads "investigating" now); the event reports its own move.
    _, resolved = plan(
        "incident.status_changed",
        previous_status="monitoring",
        status="resolved",
        previous_category="active",
        category="resolved",
    )
    data = document(resolved, sync=True)["data"]
    assert data["sync_status"] == "resolved"
    assert (data["previous_status"], data["status"]) == ("monitoring", "resolved")
    assert data["incident"] == INCIDENT


def test_a_status_event_without_category_uses_the_incidents_when_it_still_has_that_status():
    (changed,) = plan("incident.status_changed", previous_status="monitoring", status="done")
    incident = {**INCIDENT, "status": "done"}
    assert document(changed, sync=True, incident=incident, category="resolved")["data"]["sync_status"] == "resolved"


def test_postmortem_document_has_no_incident_key():
    (published,) = plan_events(
        message_type="postmortem.published",
        message_id=MESSAGE_ID,
        occurred_at=OCCURRED_AT,
        payload={"postmortem": {"postmortem_id": "PM-2026-0001"}, "incident_number": "INC-2026-0007"},
    )
    data = document(published, sync=True, incident=None)["data"]
    assert set(data) == {"postmortem", "incident_number"}


def test_body_is_compact_json_of_the_document():
    (event,) = plan("incident.annotated", comment="Caf\u00e9 is back \u2615")
    body = events.event_body(document(event, sync=False))
    assert body.startswith('{"id":"evt_') and '", "' not in body and '": ' not in body
    assert "Caf\u00e9 is back \u2615" in body  # UTF-8 as is, not \u-escaped: what is signed is what is read
    assert json.loads(body) == document(event, sync=False)
    assert body == events.event_body(document(event, sync=False))


RESPONDER = events.responder_fields(
    service=("svc_0123456789", "Checkout"),
    labels=(("env", "prod"), ("job", "api")),
    console_url="https://tocsin.example/app/incidents/INC-2026-0001",
    source_url="https://alertmanager.example/#/alerts",
    runbook_url=None,
)


def test_responder_fields_are_added_to_incident_events_and_remove_nothing():
    assert RESPONDER == {
        "service": {"service_key": "svc_0123456789", "name": "Checkout"},
        "labels": {"env": "prod", "job": "api"},
        "links": {
            "console": "https://tocsin.example/app/incidents/INC-2026-0001",
            "source": "https://alertmanager.example/#/alerts",
            "runbook": None,
        },
    }
    _, resolved = plan(
        "incident.status_changed",
        previous_status="monitoring",
        status="resolved",
        previous_category="active",
        category="resolved",
    )
    plain = document(resolved, sync=True)
    with_responder = events.event_document(
        resolved,
        organization_id="org-1",
        organization_name="Acme",
        incident=INCIDENT,
        incident_category="active",
        include_sync_status=True,
        responder=RESPONDER,
    )
    # Every field the event had is still there, with the same value; the new ones come after the incident.
    assert {key: with_responder["data"][key] for key in plain["data"]} == plain["data"]
    assert list(with_responder["data"]) == [
        "incident",
        "service",
        "labels",
        "links",
        "previous_status",
        "status",
        "sync_status",
    ]
    assert events.responder_fields(
        service=None, labels=(), console_url="https://x/app/incidents/INC-1", source_url=None, runbook_url=None
    ) == {
        "service": None,
        "labels": {},
        "links": {"console": "https://x/app/incidents/INC-1", "source": None, "runbook": None},
    }


def test_events_about_no_incident_carry_no_responder_fields():
    (published,) = plan_events(
        message_type="postmortem.published",
        message_id=MESSAGE_ID,
        occurred_at=OCCURRED_AT,
        payload={"postmortem": {"id": "pm-1"}, "incident_number": "INC-2026-0001"},
    )
    data = events.event_document(
        published,
        organization_id="org-1",
        organization_name="Acme",
        incident=None,
        incident_category=None,
        include_sync_status=False,
        responder=RESPONDER,
    )["data"]
    assert set(data) == {"postmortem", "incident_number"}
