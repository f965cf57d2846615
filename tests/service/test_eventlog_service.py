"""The event log on moto: one write per request with its TTL, the bound kept under a flood, the
list's filters and pages, reads kept to the caller's organization, and the replay claim."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.eventlog import replay, service, slots
from chalicelib.eventlog.outcome import Outcome
from chalicelib.eventlog.tables import IntegrationEventRecord
from chalicelib.integration import admin
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org


@pytest.fixture
def integration_id(org: Org) -> str:
    issued = admin.create_integration(
        organization_id=org.organization_id, integration_type="custom", name="c", now=NOW, settings=get_settings()
    )
    return issued.integration.integration_id


def received(
    org: Org, integration_id: str, *, at: Any = NOW, body: bytes = b'{"title": "Disk full"}'
) -> service.Received:
    return service.Received(
        integration_id=integration_id,
        organization_id=org.organization_id,
        operation_id="deliverWebhook",
        method="POST",
        route="/webhooks/{routing_key}",
        source_address="203.0.113.9",
        headers={"User-Agent": "curl/8", "Authorization": "Bearer secret"},
        body=body,
        received_at=at,
    )


def answer(kind: str = "created", status: int = 201, **fields: Any) -> service.Answer:
    return service.Answer(status=status, body={"success": True}, outcome=Outcome(kind, **fields))


def all_items(integration_id: str) -> list[IntegrationEventRecord]:
    return list(IntegrationEventRecord.query(integration_id))


def test_one_write_with_its_ttl(org: Org, integration_id: str) -> None:
    slot = slots.slot_for(NOW, hits=1, rate_limited=False, window_seconds=60)
    written = service.record(received(org, integration_id), answer(incident_number="INC-2026-0001"), slot)
    [stored] = all_items(integration_id)
    assert stored.event_id == written.event_id == "20261122120000.d001"
    assert stored.expires_at == NOW + timedelta(days=30) == stored.received_at + slots.RETENTION
    assert (stored.outcome, stored.status, stored.incident_number, stored.request_count) == (
        "created",
        201,
        "INC-2026-0001",
        1,
    )
    assert stored.headers == {"user-agent": "curl/8", "authorization": "present"}
    ttl = aws.client("dynamodb").describe_time_to_live(TableName=IntegrationEventRecord.Meta.table_name)
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "expires_at"


def test_a_flood_keeps_the_bound(org: Org, integration_id: str) -> None:
    """250 deliveries and 60 refusals at the door in one minute: 30 + 1 + 6 records."""
    for hits in range(1, 251):
        at = NOW + timedelta(seconds=hits * 59 // 250)
        slot = slots.slot_for(at, hits=hits if hits <= 100 else None, rate_limited=hits > 100, window_seconds=60)
        said = answer("rate_limited", 429) if hits > 100 else answer(incident_number=f"INC-{hits}")
        service.record(received(org, integration_id, at=at), said, slot)
    for second in range(60):
        at = NOW + timedelta(seconds=second)
        slot = slots.slot_for(at, hits=None, rate_limited=False, window_seconds=60)
        service.record(received(org, integration_id, at=at), answer("refused", 403, error_code="IP_NOT_ALLOWED"), slot)
    stored = all_items(integration_id)
    assert len(stored) == slots.DELIVERY_SLOTS + 1 + 60 // slots.DOOR_SECONDS
    [shared] = [item for item in stored if item.event_id.endswith(".x")]
    assert int(shared.request_count) == 250 - slots.DELIVERY_SLOTS
    assert (shared.outcome, shared.incident_number) == ("rate_limited", None)  # the latest, nothing stale
    door = [item for item in stored if item.event_id.endswith(".r")]
    assert {int(item.request_count) for item in door} == {slots.DOOR_SECONDS}


def test_the_list_newest_first_with_filters_and_pages(org: Org, integration_id: str) -> None:
    kinds = ["created", "refused", "deduplicated", "refused", "suppressed", "refused", "created"]
    for minute, kind in enumerate(kinds):
        at = NOW + timedelta(minutes=minute)
        slot = slots.slot_for(at, hits=1, rate_limited=False, window_seconds=60)
        service.record(received(org, integration_id, at=at), answer(kind), slot)
    later = NOW + timedelta(hours=1)

    def listed(**query: Any) -> service.EventPage:
        return service.list_events(
            organization_id=org.organization_id, integration_id=integration_id, now=later, **query
        )

    everything = listed(limit=100)
    assert [item.outcome for item in everything.items] == kinds[::-1]
    assert everything.next_cursor is None
    refused = listed(outcomes=["refused"])
    assert [item.received_at for item in refused.items] == [NOW + timedelta(minutes=m) for m in (5, 3, 1)]
    assert [i.outcome for i in listed(outcomes=["created", "suppressed"]).items] == ["created", "suppressed", "created"]
    ranged = listed(since=NOW + timedelta(minutes=2), until=NOW + timedelta(minutes=4))
    assert [item.outcome for item in ranged.items] == ["suppressed", "refused", "deduplicated"]

    pages: list[str] = []
    cursor = None
    while True:
        page = listed(limit=3, cursor=cursor)
        pages.extend(item.outcome for item in page.items)
        assert len(page.items) <= 3
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == kinds[::-1]
    within = listed(limit=1, since=NOW + timedelta(minutes=2), until=NOW + timedelta(minutes=4))
    assert listed(limit=5, since=NOW + timedelta(minutes=2), cursor=within.next_cursor).items[0].outcome == "refused"

    expired = service.list_events(
        organization_id=org.organization_id, integration_id=integration_id, now=NOW + timedelta(days=31)
    )
    assert expired.items == []  # past the TTL, not yet deleted: left out
    with pytest.raises(ValidationFailed):
        listed(cursor="not-a-cursor")


def test_reads_are_kept_to_the_organization(org: Org, integration_id: str) -> None:
    slot = slots.slot_for(NOW, hits=1, rate_limited=False, window_seconds=60)
    service.record(received(org, integration_id), answer(), slot)
    found = service.get_event(
        organization_id=org.organization_id, integration_id=integration_id, event_id=slot.event_id, now=NOW
    )
    assert found.event.event_id == slot.event_id and found.integration.integration_id == integration_id
    other = make_org("Other")
    with pytest.raises(NotFound):
        service.get_event(
            organization_id=other.organization_id, integration_id=integration_id, event_id=slot.event_id, now=NOW
        )
    with pytest.raises(NotFound):
        service.list_events(organization_id=other.organization_id, integration_id=integration_id, now=NOW)
    for missing in ("20261122120000.d002", "../../etc"):
        with pytest.raises(NotFound):
            service.get_event(
                organization_id=org.organization_id, integration_id=integration_id, event_id=missing, now=NOW
            )
    with pytest.raises(NotFound):  # expired
        service.get_event(
            organization_id=org.organization_id,
            integration_id=integration_id,
            event_id=slot.event_id,
            now=NOW + timedelta(days=30),
        )


def test_a_replay_is_claimed_once(org: Org, integration_id: str) -> None:
    slot = slots.slot_for(NOW, hits=1, rate_limited=False, window_seconds=60)
    event = service.record(received(org, integration_id), answer("refused", 400, error_code="INVALID_PAYLOAD"), slot)
    again = IntegrationEventRecord.get(integration_id, slot.event_id)
    assert replay.claim(event, NOW) is True
    assert replay.claim(again, NOW + timedelta(seconds=30)) is False  # held
    replay.release(event)
    assert replay.claim(again, NOW + timedelta(seconds=31)) is True  # released: taken again
    assert replay.claim(event, NOW + timedelta(seconds=120)) is True  # the holder died: its lease ran out
    replay.settle(event, "20261122120300.p0123abcd")
    stored = IntegrationEventRecord.get(integration_id, slot.event_id)
    assert (stored.replayed_as, stored.replay_started_at) == ("20261122120300.p0123abcd", None)
    assert replay.claim(stored, NOW + timedelta(hours=1)) is False  # replayed: never again
    assert "replayed already" in (replay.why_not(stored, integration_state="active", signature_required=False) or "")
