"""Exports through the API: each kind's columns and rows against values computed by hand, pages
followed through their Link headers (no row lost or repeated), the formats, and every refusal in
the API envelope (bad or long range, unknown kind, bad cursor, a filter the kind lacks, scope)."""

from __future__ import annotations

import csv
import io
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.exports.columns import COLUMNS
from tests.conftest import NOW, Org
from tests.kit import factories
from tests.kit.api import call

SINCE = NOW - timedelta(days=7)
RANGE = {"since": clock.isoformat(SINCE), "until": clock.isoformat(NOW + timedelta(days=1))}


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]  # names in lower case
    body: bytes


def get(client: Any, path: str, key: str | None, headers: dict[str, str] | None = None) -> Answer:
    sent = {"Authorization": f"Bearer {key}"} if key else {}
    response = client.http.get(path, headers={**sent, **(headers or {})})
    return Answer(response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.body)


def export_path(kind: str, **params: Any) -> str:
    return f"/api/v1/exports/{kind}?{urllib.parse.urlencode({**RANGE, **params})}"


def csv_rows(response: Any) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.reader(io.StringIO(response.body.decode(), newline=""))
    header, *rows = list(reader)
    return header, [dict(zip(header, row, strict=True)) for row in rows]


def next_path(response: Any) -> str | None:
    link = response.headers.get("link")
    if not link:
        return None
    url = link.split(";")[0].strip("<> ")
    parsed = urllib.parse.urlsplit(url)
    return f"{parsed.path}?{parsed.query}"


def all_pages(client: Any, path: str, key: str | None) -> tuple[list[dict[str, str]], int]:
    rows: list[dict[str, str]] = []
    pages = 0
    following: str | None = path
    while following is not None:
        response = get(client, following, key)
        assert response.status_code == 200, response.body
        rows.extend(csv_rows(response)[1])
        pages += 1
        following = next_path(response)
    return rows, pages


def error(response: Any) -> dict[str, Any]:
    document = json.loads(response.body)
    assert document["success"] is False
    error_part: dict[str, Any] = document["error"]
    return error_part


def test_incidents_csv_has_the_documented_columns_and_the_rows_computed_by_hand(client: Any, org: Org) -> None:
    web = factories.service(org, "Web")
    opened_at = NOW - timedelta(days=2)
    first = factories.incident(org, web, title='=HYPERLINK("x")', severity="SEV1", now=opened_at)
    factories.incident(org, web, title="Old one", now=SINCE - timedelta(seconds=1))  # before the range
    with clock.frozen(opened_at + timedelta(minutes=5)):
        acked = call(client, "POST", f"/api/v1/incidents/{first.incident_number}/acknowledge", org.owner_key)
        assert acked.status == 200, acked.body
    with clock.frozen(opened_at + timedelta(hours=1)):
        resolved = call(
            client, "POST", f"/api/v1/incidents/{first.incident_number}/status", org.owner_key, {"status": "resolved"}
        )
        assert resolved.status == 200, resolved.body

    response = get(client, export_path("incidents"), org.owner_key)
    assert response.status_code == 200, response.body
    assert response.headers["content-type"].startswith("text/csv")
    assert "link" not in response.headers
    header, rows = csv_rows(response)
    assert header == [column.name for column in COLUMNS["incidents"]]
    [row] = rows
    assert row["incident_number"] == first.incident_number
    assert row["title"] == '\'=HYPERLINK("x")'  # the formula is shown, never evaluated
    assert (row["severity"], row["status_category"], row["service_keys"]) == ("SEV1", "resolved", web.service_key)
    assert row["created_at"] == clock.isoformat(opened_at)
    assert row["acknowledged_at"] == clock.isoformat(opened_at + timedelta(minutes=5))
    assert row["resolved_at"] == clock.isoformat(opened_at + timedelta(hours=1))
    assert (row["seconds_to_acknowledge"], row["seconds_to_resolve"]) == ("300", "3600")
    assert (row["alert_count"], row["source_integration_id"]) == ("0", "")


def test_pages_follow_their_links_without_losing_or_repeating_a_row(client: Any, org: Org) -> None:
    web, pay = factories.service(org, "Web"), factories.service(org, "Pay")
    made = [
        factories.incident(org, web if n % 3 else pay, title=f"Incident {n}", now=SINCE + timedelta(hours=n))
        for n in range(11)
    ]
    rows, pages = all_pages(client, export_path("incidents", limit=3), org.owner_key)
    assert [row["incident_number"] for row in rows] == [incident.incident_number for incident in made]
    assert pages >= 4
    web_only, _ = all_pages(client, export_path("incidents", limit=2, service=web.service_key), org.owner_key)
    assert [row["title"] for row in web_only] == [f"Incident {n}" for n in range(11) if n % 3]


def test_alerts_as_ndjson_by_accept_header_and_by_format(client: Any, org: Org) -> None:
    web = factories.service(org, "Web")
    origin = factories.integration(org, web, integration_type="custom", name="Shop")
    with clock.frozen(NOW - timedelta(hours=3)):
        first = factories.alert(origin, "db1", title="Disk full", now=NOW - timedelta(hours=3))
    factories.alert(origin, "db1", title="Disk full", now=NOW - timedelta(hours=2))  # a repeat of db1
    factories.alert(origin, "api", title="+1 errors", severity="SEV4", now=NOW - timedelta(hours=1))
    by_accept = get(client, export_path("alerts"), org.owner_key, {"Accept": "application/x-ndjson"})
    by_format = get(client, export_path("alerts", format="ndjson"), org.owner_key, {"Accept": "text/csv"})
    for response in (by_accept, by_format):
        assert response.status_code == 200, response.body
        assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in by_accept.body.decode().splitlines()]
    assert by_accept.body == by_format.body
    assert [list(line) for line in lines] == [[column.name for column in COLUMNS["alerts"]]] * 2
    db1, api_alert = lines
    assert db1["alert_id"] == first.alert.alert_id
    assert (db1["event_count"], db1["dedup_key"], db1["title"], db1["status"]) == (2, "db1", "Disk full", "triggered")
    assert db1["first_received_at"] == clock.isoformat(NOW - timedelta(hours=3))
    assert db1["last_received_at"] == clock.isoformat(NOW - timedelta(hours=2))
    assert (db1["integration_name"], db1["service_key"], db1["grouped"]) == ("Shop", web.service_key, False)
    assert api_alert["title"] == "+1 errors"  # NDJSON carries text as it is
    assert api_alert["severity"] == "SEV4"
    only_sev4 = get(client, export_path("alerts", format="ndjson", severity="SEV4"), org.owner_key)
    assert [json.loads(line)["dedup_key"] for line in only_sev4.body.decode().splitlines()] == ["api"]


def test_notifications_are_the_pages_of_the_timelines_one_row_per_channel(client: Any, org: Org) -> None:
    from chalicelib.incident import repository

    incident = factories.incident(org, title="Checkout down", now=NOW - timedelta(hours=5))
    record = repository.get_incident(org.organization_id, incident.incident_number)
    person = {"user_id": "usr_ada", "name": "Ada", "email": "ada@example.com"}
    paged_at, failed_at = NOW - timedelta(hours=4), NOW - timedelta(hours=3)
    paged = repository.timeline_entry(
        record,
        event_type="paged",
        now=paged_at,
        title="Paged Ada by email, sms",
        details={"recipient": person, "channels": ["email", "sms"], "urgency": "high"},
    )
    repository.add_entries(record, [paged])
    record = repository.get_incident(org.organization_id, incident.incident_number)
    failed = repository.timeline_entry(
        record,
        event_type="notification_failed",
        now=failed_at,
        title="Voice notification to Ada failed",
        details={"recipient": person, "channel": "voice", "error_code": "DELIVERY_FAILED"},
    )
    comment = repository.timeline_entry(record, event_type="comment", now=failed_at, title="not a notification")
    repository.add_entries(record, [failed, comment])

    response = get(client, export_path("notifications"), org.owner_key)
    header, rows = csv_rows(response)
    assert header == [column.name for column in COLUMNS["notifications"]]
    picked = [(r["sent_at"], r["outcome"], r["channel"], r["recipient_user_id"], r["error_code"]) for r in rows]
    assert picked == [
        (clock.isoformat(paged_at), "sent", "email", "usr_ada", ""),
        (clock.isoformat(paged_at), "sent", "sms", "usr_ada", ""),
        (clock.isoformat(failed_at), "failed", "voice", "usr_ada", "DELIVERY_FAILED"),
    ]
    assert {row["incident_number"] for row in rows} == {incident.incident_number}
    only_voice, _ = all_pages(client, export_path("notifications", channel="voice"), org.owner_key)
    assert [row["outcome"] for row in only_voice] == ["failed"]
    # No incident is ever a notification, and no notification an incident.
    incidents, _ = all_pages(client, export_path("incidents"), org.owner_key)
    assert [row["incident_number"] for row in incidents] == [incident.incident_number]


def test_shifts_split_hours_in_the_persons_zone(client: Any, org: Org) -> None:
    from chalicelib.directory.users import update_user

    ada = factories.person(org, "Ada")
    bob = factories.person(org, "Bob")
    update_user(organization_id=org.organization_id, user_id=bob.user_id, time_zone="America/New_York", now=NOW)
    # Daily handoffs at 09:00 UTC from Friday 20 Nov 2026: Ada, Bob, Ada...
    start = NOW.replace(day=20, hour=9)
    factories.schedule(org, ada, bob, rotation="daily", start=start, now=start)
    since, until = start, start + timedelta(days=2)
    window = {"since": clock.isoformat(since), "until": clock.isoformat(until)}
    path = f"/api/v1/exports/shifts?{urllib.parse.urlencode(window)}"
    response = get(client, path, org.owner_key)
    assert response.status_code == 200, response.body
    header, rows = csv_rows(response)
    assert header == [column.name for column in COLUMNS["shifts"]]
    assert [(r["user_id"], r["start"], r["end"], r["time_zone"]) for r in rows] == [
        (ada.user_id, clock.isoformat(start), clock.isoformat(start + timedelta(days=1)), "UTC"),
        (bob.user_id, clock.isoformat(start + timedelta(days=1)), clock.isoformat(until), "America/New_York"),
    ]
    # Ada, UTC: Fri 09:00-18:00 working, Fri 18:00-Sat 00:00 off (6 h), Sat 00:00-09:00 weekend (9 h).
    assert (rows[0]["hours"], rows[0]["off_hours"], rows[0]["weekend_hours"]) == ("24.0", "6.0", "9.0")
    # Bob, New York (UTC-5): Sat 04:00 to Sun 04:00 local, all weekend.
    assert (rows[1]["hours"], rows[1]["off_hours"], rows[1]["weekend_hours"]) == ("24.0", "0.0", "24.0")
    only_bob, _ = all_pages(client, f"{path}&user={bob.user_id}", org.owner_key)
    assert [row["user_name"] for row in only_bob] == ["Bob"]


@pytest.mark.parametrize(
    ("path", "status", "code", "field"),
    [
        ("/api/v1/exports/incidents", 400, "VALIDATION_ERROR", "since"),
        (export_path("incidents", until=clock.isoformat(SINCE)), 400, "VALIDATION_ERROR", "until"),
        (
            export_path("incidents", until=clock.isoformat(SINCE + timedelta(days=367))),
            400,
            "VALIDATION_ERROR",
            "until",
        ),
        (export_path("incidents", since="yesterday"), 400, "VALIDATION_ERROR", "since"),
        (export_path("incidents", cursor="x1.bogus.sig"), 400, "VALIDATION_ERROR", "cursor"),
        (export_path("incidents", channel="email"), 400, "VALIDATION_ERROR", "channel"),
        (export_path("shifts", severity="SEV1"), 400, "VALIDATION_ERROR", "severity"),
        (export_path("incidents", severity="SEV9"), 400, "VALIDATION_ERROR", "severity"),
        (export_path("incidents", limit=5001), 400, "VALIDATION_ERROR", "limit"),
        (export_path("incidents", colour="red"), 400, "VALIDATION_ERROR", "colour"),
        (export_path("postmortems"), 404, "NOT_FOUND", None),
    ],
)
def test_refusals_in_the_envelope(client: Any, org: Org, path: str, status: int, code: str, field: str | None) -> None:
    response = get(client, path, org.owner_key)
    assert response.status_code == status, response.body
    found = error(response)
    assert found["code"] == code
    if field is not None:
        assert field in [problem["field"] for problem in found["details"]["fields"]]


def test_a_cursor_only_continues_its_own_request(client: Any, org: Org) -> None:
    web = factories.service(org, "Web")
    for n in range(3):
        factories.incident(org, web, now=SINCE + timedelta(hours=n))
    first = get(client, export_path("incidents", limit=1), org.owner_key)
    cursor = urllib.parse.parse_qs(urllib.parse.urlsplit(first.headers["link"].split(";")[0].strip("<>")).query)[
        "cursor"
    ][0]
    assert first.headers["x-next-cursor"] == cursor
    assert get(client, export_path("incidents", limit=1, cursor=cursor), org.owner_key).status_code == 200
    for other in (
        export_path("incidents", limit=1, cursor=cursor, severity="SEV1"),  # another filter
        export_path("alerts", limit=1, cursor=cursor),  # another kind
        export_path("incidents", cursor=cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")),  # changed
    ):
        assert error(get(client, other, org.owner_key))["details"]["fields"][0]["field"] == "cursor"
    stranger = factories.organization("Other")
    assert get(client, export_path("incidents", cursor=cursor), stranger.owner_key).status_code == 400


def test_the_scope_is_exports_read(client: Any, org: Org) -> None:
    incidents_only = factories.api_key(org, "incidents:read")
    refused = get(client, export_path("incidents"), incidents_only)
    assert refused.status_code == 403
    assert error(refused)["details"] == {"required_scope": "exports:read"}
    assert get(client, export_path("incidents"), factories.api_key(org, "exports:read")).status_code == 200
    assert get(client, export_path("incidents"), org.readonly_key).status_code == 403  # incidents:read only
    assert get(client, export_path("incidents"), None).status_code == 401
