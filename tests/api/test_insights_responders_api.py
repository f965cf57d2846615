"""GET /api/v1/insights/responders: pages at chosen hours of a person's own zone (New York), a
schedule with an override, an acknowledgement, against figures worked out by hand."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.directory.users import update_user
from chalicelib.oncall.service import add_override
from chalicelib.paging.reach import PAGE_SENT
from chalicelib.queue.messages import Message, publish
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.kit.api import call
from tests.service.insights_history import acknowledge, feed_rollups

MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
WEEK = "since=2026-11-16T00:00:00Z&until=2026-11-23T00:00:00Z"


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


def page(org: Org, user_id: str, delivery: str, at: datetime, channels: list[str], urgency: str, **more: Any) -> None:
    payload = {"delivery_id": delivery, "incident_number": "INC-2026-0001", "user_id": user_id,
               "channels": channels, "urgency": urgency, "sent_at": clock.isoformat(at), **more}  # fmt: skip
    publish(Message(PAGE_SENT, org.organization_id, payload))


@pytest.fixture
def load(org: Org) -> dict[str, Any]:
    ana = make.person(org, "Ana")
    bo = make.person(org, "Bo")
    update_user(organization_id=org.organization_id, user_id=ana.user_id, now=NOW, time_zone="America/New_York")
    # New York is UTC-5 in November.
    page(org, ana.user_id, "d1", MONDAY + timedelta(hours=14), ["sms", "voice"], "high")  # Mon 09:00: working
    page(org, ana.user_id, "d2", MONDAY + timedelta(days=1, hours=8), ["sms"], "high", failed_channels=["email"])
    page(org, ana.user_id, "d3", MONDAY + timedelta(days=1, hours=23, minutes=30), ["email"], "low")  # 18:30
    made = make.incident(org, now=MONDAY + timedelta(hours=14))
    acknowledge(org.organization_id, made.incident_number, ana, MONDAY + timedelta(hours=14, minutes=3))
    # Bo is on call from Monday 09:00 UTC on; Ana overrides all of Saturday (UTC).
    schedule = make.schedule(org, bo, start=MONDAY + timedelta(hours=9))
    add_override(
        organization_id=org.organization_id,
        schedule_id=schedule.schedule_id,
        user_id=ana.user_id,
        start=MONDAY + timedelta(days=5),
        end=MONDAY + timedelta(days=6),
        now=NOW,
    )
    feed_rollups(times=2)  # a redelivered page counts once
    return {"ana": ana, "bo": bo}


def test_pages_interruptions_and_hours_on_call_match_the_hand_worked_values(client: Any, org: Org, load: dict) -> None:
    status, document = call(client, "GET", f"/api/v1/insights/responders?{WEEK}", org.owner_key)
    assert status == 200, document
    people = {person["user"]["name"]: person for person in document["data"]["people"]}
    assert list(people) == ["Ana", "Bo"]
    ana, bo = people["Ana"], people["Bo"]
    assert ana["user"]["time_zone"] == "America/New_York"
    assert ana["pages"] == {
        "total": 3,
        "by_channel": {"email": 1, "slack": 0, "sms": 2, "voice": 1},
        "by_urgency": {"high": 2, "low": 1},
    }
    assert ana["interruptions"] == {"working": 1, "evening": 1, "sleep": 1}
    assert (ana["acknowledged"], ana["resolved"]) == (1, 0)
    # Saturday 00:00-24:00 UTC is Friday 19:00 to Saturday 19:00 in New York.
    assert ana["on_call_hours"] == {"total": 24.0, "working": 0.0, "off_hours": 5.0, "weekend": 19.0}
    # Monday 09:00 UTC to the next Monday, less Saturday: 45 working, 66 off-hours, Sunday's 24.
    assert bo["on_call_hours"] == {"total": 135.0, "working": 45.0, "off_hours": 66.0, "weekend": 24.0}
    assert bo["pages"]["total"] == 0 and bo["interruptions"] == {"working": 0, "evening": 0, "sleep": 0}
    assert document["data"]["bands"]["working_days"] == [0, 1, 2, 3, 4]


def test_filters_by_person_and_team(client: Any, org: Org, load: dict) -> None:
    ana = load["ana"]
    status, document = call(client, "GET", f"/api/v1/insights/responders?{WEEK}&user_ids={ana.user_id}", org.owner_key)
    assert status == 200 and [p["user"]["id"] for p in document["data"]["people"]] == [ana.user_id]
    reply = call(client, "GET", f"/api/v1/insights/responders?{WEEK}&team_ids=tem_missing", org.owner_key)
    assert reply.status == 400 and "team_ids" in reply.fields


@pytest.mark.parametrize(
    ("query", "field"),
    [("since=2026-11-20T00:00:00Z&until=2026-11-19T00:00:00Z", "since"), ("time_zone=Nowhere/City", "time_zone")],
)
def test_bad_requests_answer_400(client: Any, org: Org, query: str, field: str) -> None:
    reply = call(client, "GET", f"/api/v1/insights/responders?{query}", org.owner_key)
    assert reply.status == 400 and reply.json["error"]["code"] == "VALIDATION_ERROR" and field in reply.fields


def test_responders_need_insights_read(client: Any, org: Org) -> None:
    reply = call(client, "GET", "/api/v1/insights/responders", org.readonly_key)
    assert reply.status == 403 and reply.json["error"]["code"] == "FORBIDDEN"
