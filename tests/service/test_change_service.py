"""Change events on moto: one change per content under racing retries, the claim's window for
untimed changes, expired items treated as absent, and service resolution."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.catalog import service as catalog
from chalicelib.catalog.service import Service
from chalicelib.change import rules, service
from chalicelib.change.rules import parse_change_event
from chalicelib.change.tables import ChangeClaimRecord, ChangeEventRecord
from chalicelib.errors import InvalidPayload
from tests.conftest import NOW, Org
from tests.kit import factories as make

KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def web(org: Org) -> Service:
    return make.service(org, "Web")


def event(summary: str = "Deployed web 9", **payload: Any) -> rules.ChangeEvent:
    return parse_change_event(json.dumps({"routing_key": KEY, "payload": {"summary": summary, **payload}}))


def record(org: Org, web: Service, change: rules.ChangeEvent, now: Any = NOW) -> service.RecordedChange:
    return service.record_change(
        organization_id=org.organization_id,
        integration_id="int_1",
        default_service_key=web.service_key,
        event=change,
        now=now,
    )


def stored(org: Org, web: Service, now: Any = NOW) -> list[ChangeEventRecord]:
    return service.changes_of_service(
        organization_id=org.organization_id, service_key=web.service_key, since=None, until=None, now=now
    )


def test_racing_retries_record_one_change(org: Org, web: Service) -> None:
    change = event(timestamp="2026-11-22T11:00:00Z")
    barrier = threading.Barrier(6)

    def deliver(_: int) -> service.RecordedChange:
        barrier.wait()
        return record(org, web, change)

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(deliver, range(6)))
    assert sorted(r.duplicate for r in results) == [False] + [True] * 5
    assert len({r.change_id for r in results}) == 1
    [item] = stored(org, web)
    assert (item.change_id, item.summary, item.service_id) == (results[0].change_id, "Deployed web 9", web.service_id)
    assert item.expires_at == NOW + rules.RETENTION


def test_an_untimed_claim_holds_for_its_window_only(org: Org, web: Service) -> None:
    change = event()
    assert not record(org, web, change).duplicate
    assert record(org, web, change, NOW + rules.UNTIMED_RETRY_WINDOW - timedelta(seconds=1)).duplicate
    later = NOW + rules.UNTIMED_RETRY_WINDOW + timedelta(seconds=1)
    assert not record(org, web, change, later).duplicate  # the expired claim counts as absent (moto keeps it)
    assert [item.timestamp for item in stored(org, web, later)] == [later, NOW]
    claim = ChangeClaimRecord.get(f"{org.organization_id}#claim#{change.fingerprint}", "claim")
    assert claim.expires_at == later + rules.UNTIMED_RETRY_WINDOW


def test_expired_changes_are_not_read(org: Org, web: Service) -> None:
    record(org, web, event(timestamp="2026-11-22T11:00:00Z"))
    assert len(stored(org, web, NOW + rules.RETENTION - timedelta(seconds=1))) == 1
    assert stored(org, web, NOW + rules.RETENTION) == []
    page = service.list_changes(
        organization_id=org.organization_id,
        service_ref=None,
        since=None,
        until=None,
        limit=20,
        offset=0,
        now=NOW + rules.RETENTION,
    )
    assert page.total == 0


def test_an_inactive_service_is_refused(org: Org, web: Service) -> None:
    catalog.update_service(organization_id=org.organization_id, service_ref=web.service_key, now=NOW, is_active=False)
    with pytest.raises(InvalidPayload) as refused:
        record(org, web, event())
    assert refused.value.details == ["The routing key's integration has no active default service"]
    with pytest.raises(InvalidPayload):
        record(org, web, event(custom_details={"service_id": web.service_id}))
    assert stored(org, web) == []
