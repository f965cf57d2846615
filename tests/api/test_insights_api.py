"""GET /api/v1/insights/incidents through the API: a known history (opened, acknowledged and
resolved at chosen offsets, in and out of Paris working hours) against figures worked out by
hand; filters, grouping, intervals, zones; every error path in the envelope."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from chalicelib import clock
from chalicelib.incident import repository
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.kit.api import call
from tests.service.insights_history import acknowledge, feed_rollups, move

MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
PARIS_DAYS = "since=2026-11-16T00:00:00%2B01:00&until=2026-11-18T00:00:00%2B01:00&time_zone=Europe/Paris"


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def history(org: Org) -> dict[str, Any]:
    """Four incidents (UTC; Paris is UTC+1 in November):
    1. A, SEV1, Mon 08:00 (09:00 Paris, working): acknowledged after 60 s, resolved after 600 s;
    2. A, SEV2, Mon 20:00 (21:00 Paris, evening): acknowledged after 300 s, resolved after 3600 s;
    3. B, SEV2, Tue 02:00 (03:00 Paris, night): acknowledged after 120 s, still open;
    4. B, SEV3, Tue 10:00 (11:00 Paris, working): untouched."""
    ana = make.person(org, "Ana")
    a = make.service(org, "Checkout")
    b = make.service(org, "Search")
    plan = [
        (a, "SEV1", MONDAY + timedelta(hours=8), 60, 600),
        (a, "SEV2", MONDAY + timedelta(hours=20), 300, 3600),
        (b, "SEV2", MONDAY + timedelta(days=1, hours=2), 120, None),
        (b, "SEV3", MONDAY + timedelta(days=1, hours=10), None, None),
    ]
    numbers = []
    for service, severity, at, ack_after, resolve_after in plan:
        made = make.incident(org, service, severity=severity, now=at)
        numbers.append(made.incident_number)
        if ack_after is not None:
            acknowledge(org.organization_id, made.incident_number, ana, at + timedelta(seconds=ack_after))
        if resolve_after is not None:
            move(org.organization_id, made.incident_number, "resolved", ana, at + timedelta(seconds=resolve_after))
    feed_rollups()
    in_sla = [
        bool((repository.get_incident(org.organization_id, number).sla or {}).get("acknowledge_met"))
        for number in numbers
    ]
    return {"a": a, "b": b, "in_sla": in_sla, "ana": ana}


def get(client: Any, key: str, query: str) -> Any:
    return call(client, "GET", f"/api/v1/insights/incidents?{query}", key)


def test_daily_figures_in_paris_match_the_hand_worked_values(client: Any, org: Org, history: dict) -> None:
    status, document = get(client, org.owner_key, PARIS_DAYS)
    assert status == 200, document
    data = document["data"]
    assert (data["time_zone"], data["interval"], data["group_by"]) == ("Europe/Paris", "day", "none")
    assert (data["since"], data["until"]) == ("2026-11-15T23:00:00.000Z", "2026-11-17T23:00:00.000Z")
    [group] = data["groups"]
    assert group["group"] is None
    monday, tuesday = group["buckets"]
    assert (monday["start"], monday["end"]) == ("2026-11-16T00:00:00+01:00", "2026-11-17T00:00:00+01:00")
    assert (monday["count"], monday["acknowledged"], monday["resolved"], monday["escalated"]) == (2, 2, 2, 0)
    assert monday["opened_outside_working_hours"] == 1
    assert monday["mtta_seconds"] == {"mean": 180.0, "p50": 60.0, "p90": 300.0}
    assert monday["mttr_seconds"] == {"mean": 2100.0, "p50": 600.0, "p90": 3600.0}
    assert (tuesday["count"], tuesday["acknowledged"], tuesday["resolved"]) == (2, 1, 0)
    assert tuesday["opened_outside_working_hours"] == 1
    assert tuesday["mtta_seconds"] == {"mean": 120.0, "p50": 120.0, "p90": 120.0}
    assert tuesday["mttr_seconds"] == {"mean": None, "p50": None, "p90": None}
    totals = data["totals"]
    assert (totals["count"], totals["acknowledged"], totals["resolved"], totals["opened_outside_working_hours"]) == (
        4, 3, 2, 2,
    )  # fmt: skip
    assert totals["mtta_seconds"] == {"mean": 160.0, "p50": 120.0, "p90": 300.0}
    within = sum(history["in_sla"])
    assert totals["acknowledged_within_sla"] == within
    assert totals["acknowledged_within_sla_share"] == round(within / 4, 4)
    assert group["totals"] == totals


def test_a_utc_week_puts_every_incident_in_one_bucket(client: Any, org: Org, history: dict) -> None:
    status, document = get(client, org.owner_key, "since=2026-11-16T00:00:00Z&until=2026-11-23T00:00:00Z&interval=week")
    assert status == 200, document
    [bucket] = document["data"]["groups"][0]["buckets"]
    assert (bucket["start"], bucket["count"], bucket["acknowledged"]) == ("2026-11-16T00:00:00+00:00", 4, 3)
    # In UTC, 20:00 and 02:00 are outside working hours; 08:00 is before nine too.
    assert bucket["opened_outside_working_hours"] == 3


def test_group_by_service_and_a_severity_filter_read_the_combined_items(client: Any, org: Org, history: dict) -> None:
    a, b = history["a"], history["b"]
    status, document = get(client, org.owner_key, PARIS_DAYS + "&group_by=service")
    assert status == 200, document
    groups = {g["group"]["id"]: g for g in document["data"]["groups"]}
    assert set(groups) == {a.service_key, b.service_key}
    assert groups[a.service_key]["group"] == {"kind": "service", "id": a.service_key, "name": "Checkout"}
    assert [bucket["count"] for bucket in groups[a.service_key]["buckets"]] == [2, 0]
    assert [bucket["count"] for bucket in groups[b.service_key]["buckets"]] == [0, 2]
    status, document = get(client, org.owner_key, PARIS_DAYS + "&group_by=service&severities=sev2")
    assert status == 200, document
    counts = {g["group"]["id"]: g["totals"]["count"] for g in document["data"]["groups"]}
    assert counts == {a.service_key: 1, b.service_key: 1}
    query = urlencode({"service_ids": b.service_key, "urgency": "high"})
    status, document = get(client, org.owner_key, f"{PARIS_DAYS}&{query}&group_by=severity")
    assert status == 200, document
    by_severity = {g["group"]["id"]: g["totals"]["count"] for g in document["data"]["groups"]}
    assert sum(by_severity.values()) <= 2 and set(by_severity) <= {"SEV2", "SEV3"}


def test_month_interval_and_an_empty_range(client: Any, org: Org, history: dict) -> None:
    months = "since=2026-10-01T00:00:00Z&until=2026-12-01T00:00:00Z&interval=month"
    status, document = get(client, org.owner_key, months)
    assert status == 200, document
    buckets = document["data"]["groups"][0]["buckets"]
    assert [(bucket["start"][:10], bucket["count"]) for bucket in buckets] == [("2026-10-01", 0), ("2026-11-01", 4)]
    status, document = get(client, org.owner_key, "since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z")
    assert status == 200 and document["data"]["totals"]["count"] == 0


def test_a_reopened_incident_counts_its_standing_resolution(client: Any, org: Org) -> None:
    ana = make.person(org, "Ana")
    made = make.incident(org, now=MONDAY + timedelta(hours=10))
    number = made.incident_number
    move(org.organization_id, number, "resolved", ana, MONDAY + timedelta(hours=10, minutes=5))
    move(org.organization_id, number, "investigating", ana, MONDAY + timedelta(hours=10, minutes=6))
    move(org.organization_id, number, "resolved", ana, MONDAY + timedelta(hours=10, minutes=20))
    feed_rollups(times=2)
    status, document = get(client, org.owner_key, "since=2026-11-16T00:00:00Z&until=2026-11-17T00:00:00Z")
    assert status == 200
    totals = document["data"]["totals"]
    assert (totals["resolved"], totals["mttr_seconds"]["mean"]) == (1, 1200.0)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("since=2026-11-18T00:00:00Z&until=2026-11-16T00:00:00Z", "since"),
        ("since=2026-11-16T00:00:00Z&until=2026-11-16T00:00:00Z", "since"),
        ("since=2024-01-01T00:00:00Z&until=2026-01-01T00:00:00Z", "since"),
        ("group_by=person", "group_by"),
        ("interval=hour", "interval"),
        ("time_zone=Mars/Olympus_Mons", "time_zone"),
        ("severities=SEV9", "severities"),
        ("service_ids=svc_nope", "service_ids"),
        ("since=yesterday", "since"),
        ("surprise=1", "surprise"),
    ],
)
def test_bad_requests_answer_400_naming_the_field(client: Any, org: Org, query: str, field: str) -> None:
    reply = get(client, org.owner_key, query)
    assert reply.status == 400, reply.json
    assert reply.json["success"] is False and reply.json["error"]["code"] == "VALIDATION_ERROR"
    assert field in reply.fields


def test_a_key_without_insights_read_is_refused_and_every_role_may_read(client: Any, org: Org) -> None:
    reply = get(client, org.readonly_key, "")
    assert reply.status == 403 and reply.json["error"]["code"] == "FORBIDDEN"
    assert get(client, make.api_key(org, "insights:read"), "").status == 200
    assert call(client, "GET", "/api/v1/insights/incidents").status == 401


def test_an_admin_sets_the_bands_and_the_figures_follow(client: Any, org: Org, history: dict) -> None:
    status, document = call(client, "GET", "/api/v1/insights/settings", org.owner_key)
    assert status == 200 and document["data"]["bands"]["working_start_hour"] == 9
    # Working hours 08:00-22:00 every day: in Paris only Tuesday's 03:00 incident is outside them.
    bands = {"working_start_hour": 8, "working_end_hour": 22, "working_days": [0, 1, 2, 3, 4, 5, 6]}
    status, document = call(client, "PUT", "/api/v1/insights/settings", org.owner_key, {"bands": bands})
    assert status == 200, document
    assert document["data"]["bands"] == {**bands, "sleep_start_hour": 23, "sleep_end_hour": 7}
    status, document = get(client, org.owner_key, PARIS_DAYS)
    assert document["data"]["totals"]["opened_outside_working_hours"] == 1
    reply = call(client, "PUT", "/api/v1/insights/settings", org.owner_key, {"bands": {"sleep_end_hour": 30}})
    assert reply.status == 400 and "sleep_end_hour" in reply.fields
    # JSON true/false is not an hour, nor a day (the contract sweep sent false and it was taken as 0).
    for bands in ({"sleep_end_hour": False}, {"working_start_hour": True}, {"working_days": [False, 1]}):
        reply = call(client, "PUT", "/api/v1/insights/settings", org.owner_key, {"bands": bands})
        assert reply.status == 400, bands
    reply = call(client, "PUT", "/api/v1/insights/settings", make.api_key(org, "insights:read"), {"bands": {}})
    assert reply.status == 403
