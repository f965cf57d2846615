"""/api/v1/schedules and the public calendar feed through the Chalice test client."""

from __future__ import annotations

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.directory import users
from chalicelib.settings import get_settings
from tests.api.test_directory_services import error_of
from tests.conftest import NOW
from tests.kit.api import call

SCHEDULE_FIELDS = {
    "id",
    "name",
    "team_id",
    "time_zone",
    "layers",
    "overrides",
    "version",
    "created_at",
    "updated_at",
    "handoff_notice_lead_minutes",  # added by issue 14 (handoff notices); the spec's fields stay
    "coverage_gaps",  # added by issue 29 (coverage warnings)
}
LAYER_FIELDS = {
    "layer_id",
    "name",
    "members",
    "rotation",
    "rotation_hours",
    "handoff_time",
    "start",
    "end",
    "restrictions",
}


@pytest.fixture
def setup(client, org):
    clock.freeze(NOW)
    oid = org.organization_id
    people = {
        name: users.create_user(organization_id=oid, name=name.title(), email=f"{name}@example.com", now=NOW).user_id
        for name in ("alice", "bob", "carol")
    }
    _, read_key = apikeys.create_api_key(
        organization_id=oid,
        name="reader",
        kind="service_account",
        scopes=["oncall:read"],
        now=NOW,
        settings=get_settings(),
    )
    return org.owner_key, read_key, people


def schedule_body(people, **changes):
    body = {
        "name": "Payments primary",
        "time_zone": "Europe/Berlin",
        "layers": [
            {
                "name": "Weekly",
                "members": [people["alice"], people["bob"]],
                "rotation": "weekly",
                "handoff_time": "09:00",
                "start": "2026-11-16T09:00:00+01:00",
            },
            {
                "layer_id": "lyr_day",
                "name": "Business hours",
                "members": [people["carol"]],
                "rotation": "daily",
                "handoff_time": "09:00",
                "start": "2026-11-16T08:00:00Z",
                "restrictions": [{"kind": "daily", "start": "09:00", "end": "17:00"}],
            },
        ],
    }
    body.update(changes)
    return body


def test_schedule_lifecycle(client, setup):
    key, _, people = setup
    status, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    assert status == 201, created
    schedule = created["data"]
    assert set(schedule) == SCHEDULE_FIELDS
    assert (schedule["name"], schedule["time_zone"], schedule["team_id"], schedule["version"]) == (
        "Payments primary",
        "Europe/Berlin",
        None,
        1,
    )
    weekly, daily = schedule["layers"]
    assert set(weekly) == LAYER_FIELDS
    assert weekly["layer_id"].startswith("lyr_") and daily["layer_id"] == "lyr_day"
    assert weekly["start"] == "2026-11-16T08:00:00Z"  # answered in UTC
    assert daily["restrictions"] == [
        {"kind": "daily", "start": "09:00", "end": "17:00", "start_day": None, "end_day": None}
    ]
    assert (schedule["overrides"], schedule["created_at"], schedule["updated_at"]) == ([], "2026-11-22T12:00:00Z", None)

    item = f"/api/v1/schedules/{schedule['id']}"
    assert call(client, "GET", item, key)[1]["data"] == schedule
    status, listed = call(client, "GET", "/api/v1/schedules?limit=10", key)
    assert status == 200
    assert (listed["data"]["items"], listed["data"]["total"], listed["data"]["has_more"]) == ([schedule], 1, False)

    status, patched = call(client, "PATCH", item, key, {"name": "Renamed", "version": 1})
    assert status == 200
    assert patched["data"] == {**schedule, "name": "Renamed", "version": 2, "updated_at": "2026-11-22T12:00:00Z"}
    status, stale = call(client, "PATCH", item, key, {"name": "Again", "version": 1})
    assert status == 409
    assert error_of(stale)["details"] == {"expected_version": 1, "current_version": 2}
    status, relayered = call(client, "PATCH", item, key, {"layers": schedule_body(people)["layers"][1:]})
    assert status == 200 and [layer["layer_id"] for layer in relayered["data"]["layers"]] == ["lyr_day"]

    status, deleted = call(client, "DELETE", item, key)
    assert (status, deleted["data"]) == (200, {"id": schedule["id"], "deleted": True})
    for method in ("GET", "DELETE"):
        status, missing = call(client, method, item, key)
        assert (status, error_of(missing)["code"]) == (404, "NOT_FOUND")
    assert call(client, "PATCH", item, key, {"name": "x"})[0] == 404
    assert call(client, "GET", "/api/v1/schedules/..%2Fetc", key)[0] == 404


def test_bad_requests_are_400(client, setup):
    key, _, people = setup
    cases = [
        (schedule_body(people, time_zone="Mars/Olympus"), "time_zone"),
        (schedule_body(people, colour="red"), "colour"),
        (schedule_body(people, layers=[]), "layers"),
        (
            {
                **schedule_body(people),
                "layers": [{**schedule_body(people)["layers"][0], "start": "2026-11-16T09:00:00"}],
            },
            "layers.0.start",
        ),
        (
            {**schedule_body(people), "layers": [{**schedule_body(people)["layers"][0], "handoff_time": "9am"}]},
            "layers.0.handoff_time",
        ),
        (
            {**schedule_body(people), "layers": [{**schedule_body(people)["layers"][0], "members": ["usr_ghost"]}]},
            "layers.0.members.0",
        ),
        (schedule_body(people, team_id="team-ghost"), "team_id"),
    ]
    for body, field in cases:
        status, document = call(client, "POST", "/api/v1/schedules", key, body)
        assert status == 400, (field, document)
        error = error_of(document)
        assert error["code"] == "VALIDATION_ERROR"
        assert field in {item["field"] for item in error["details"]["fields"]}, (field, error)
    assert call(client, "POST", "/api/v1/schedules", key, "{not json")[0] == 400
    status, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    item = f"/api/v1/schedules/{created['data']['id']}"
    for body in ({}, {"version": 1}, {"name": None}, {"layers": None}):
        assert call(client, "PATCH", item, key, body)[0] == 400, body
    assert call(client, "PATCH", item, key, {"team_id": None})[0] == 200
    assert call(client, "GET", "/api/v1/schedules?colour=red", key)[0] == 400


def test_credentials_and_scopes(client, setup, org):
    key, read_key, people = setup
    status, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    item = f"/api/v1/schedules/{created['data']['id']}"
    reads = [("GET", "/api/v1/schedules"), ("GET", item), ("GET", item + "/shifts"), ("GET", item + "/ical-url")]
    writes = [
        ("POST", "/api/v1/schedules"),
        ("PATCH", item),
        ("DELETE", item),
        ("POST", item + "/overrides"),
        ("DELETE", item + "/overrides/ovr_1"),
        ("POST", item + "/ical-url"),
    ]
    for method, path in reads + writes:
        status, document = call(client, method, path, None, {})
        assert (status, error_of(document)["code"]) == (401, "UNAUTHORIZED"), (method, path)
        status, document = call(client, method, path, org.readonly_key, {})
        assert status == 403, (method, path)
        expected = "oncall:read" if (method, path) in reads else "oncall:write"
        assert error_of(document)["details"]["required_scope"] == expected
    for method, path in reads:
        assert call(client, method, path, read_key)[0] == 200, (method, path)
    for method, path in writes:
        status, document = call(client, method, path, read_key, {})
        assert (status, error_of(document)["details"]["required_scope"]) == (403, "oncall:write"), (method, path)


def test_overrides_and_shifts(client, setup):
    key, _, people = setup
    _, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    item = f"/api/v1/schedules/{created['data']['id']}"
    window = "since=2026-11-22T11:00:00Z&until=2026-11-22T18:00:00%2B01:00"
    status, shifts = call(client, "GET", f"{item}/shifts?{window}", key)
    assert status == 200
    assert shifts["data"]["since"] == "2026-11-22T11:00:00Z" and shifts["data"]["until"] == "2026-11-22T17:00:00Z"
    assert shifts["data"]["shifts"] == [
        {
            "user": {"id": people["carol"], "name": "Carol", "email": "carol@example.com"},
            "start": "2026-11-22T11:00:00Z",
            "end": "2026-11-22T16:00:00Z",
            "source": "layer",
            "layer_id": "lyr_day",
            "layer_name": "Business hours",
            "override_id": None,
        },
        {
            "user": {"id": people["alice"], "name": "Alice", "email": "alice@example.com"},
            "start": "2026-11-22T16:00:00Z",
            "end": "2026-11-22T17:00:00Z",
            "source": "layer",
            "layer_id": created["data"]["layers"][0]["layer_id"],
            "layer_name": "Weekly",
            "override_id": None,
        },
    ]

    override = {"user_id": people["bob"], "start": "2026-11-22T12:00:00Z", "end": "2026-11-22T13:00:00Z"}
    status, added = call(client, "POST", f"{item}/overrides", key, override)
    assert status == 201
    override_id = added["data"]["override_id"]
    assert added["data"] == {**override, "override_id": override_id}
    _, shifts = call(client, "GET", f"{item}/shifts?{window}", key)
    assert [(s["user"]["name"], s["source"], s["override_id"]) for s in shifts["data"]["shifts"]] == [
        ("Carol", "layer", None),
        ("Bob", "override", override_id),
        ("Carol", "layer", None),
        ("Alice", "layer", None),
    ]
    assert call(client, "GET", item, key)[1]["data"]["version"] == 2

    status, removed = call(client, "DELETE", f"{item}/overrides/{override_id}", key)
    assert (status, removed["data"]["overrides"], removed["data"]["version"]) == (200, [], 3)
    assert call(client, "DELETE", f"{item}/overrides/{override_id}", key)[0] == 404

    bad_overrides = [
        {**override, "user_id": "usr_ghost"},
        {**override, "end": override["start"]},
        {**override, "start": "2026-11-22T12:00:00"},
        {**override, "extra": 1},
    ]
    for body in bad_overrides:
        assert call(client, "POST", f"{item}/overrides", key, body)[0] == 400, body
    assert call(client, "POST", "/api/v1/schedules/sch_missing/overrides", key, override)[0] == 404

    status, default = call(client, "GET", f"{item}/shifts", key)
    assert status == 200
    assert (default["data"]["since"], default["data"]["until"]) == ("2026-11-22T12:00:00Z", "2026-11-29T12:00:00Z")
    for query in (
        "since=2026-11-22T12:00:00Z&until=2026-11-22T12:00:00Z",
        "since=2026-11-01T00:00:00Z&until=2027-03-01T00:00:00Z",
        "since=yesterday",
        "since=2026-11-22T12:00:00",
        "from=2026-11-22T12:00:00Z",
    ):
        status, document = call(client, "GET", f"{item}/shifts?{query}", key)
        assert (status, error_of(document)["code"]) == (400, "VALIDATION_ERROR"), query
    assert call(client, "GET", "/api/v1/schedules/sch_missing/shifts", key)[0] == 404


def test_calendar_feed_needs_no_bearer(client, setup):
    key, _, people = setup
    _, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    item = f"/api/v1/schedules/{created['data']['id']}"
    status, urls = call(client, "GET", f"{item}/ical-url", key)
    assert status == 200
    url = urls["data"]["url"]
    assert url.startswith("http://127.0.0.1:8000/calendars/") and url.endswith(".ics")
    assert urls["data"]["webcal_url"] == "webcal://" + url.removeprefix("http://")

    path = url.removeprefix("http://127.0.0.1:8000")
    response = client.http.get(path)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/calendar; charset=utf-8"
    assert response.headers["X-RateLimit-Category"] == "anonymous"
    text = response.body.decode()
    assert text.startswith("BEGIN:VCALENDAR\r\n") and "SUMMARY:On call: Carol" in text
    assert client.http.get(path.removesuffix(".ics")).status_code == 200  # the suffix is optional
    own = client.http.get(f"{path}?person={people['alice']}")  # one member's own calendar
    assert own.status_code == 200
    own_text = own.body.decode()
    assert "SUMMARY:On call: Alice" in own_text
    assert "On call: Carol" not in own_text and "On call: Bob" not in own_text

    missing = client.http.get("/calendars/not-a-real-token-at-all-0123456789.ics")
    assert missing.status_code == 404
    assert missing.headers["Content-Type"] == "application/json"
    assert b'"NOT_FOUND"' in missing.body

    status, rotated = call(client, "POST", f"{item}/ical-url", key)
    assert status == 200 and rotated["data"]["url"] != url
    assert client.http.get(path).status_code == 404
    assert client.http.get(rotated["data"]["url"].removeprefix("http://127.0.0.1:8000")).status_code == 200
    assert call(client, "GET", "/api/v1/schedules/sch_missing/ical-url", key)[0] == 404


def test_deleting_a_schedule_in_use_is_409(client, setup):
    key, _, people = setup
    _, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    schedule_id = created["data"]["id"]
    policy = {"name": "P", "levels": [{"targets": [{"kind": "schedule", "id": schedule_id}], "delay_minutes": 5}]}
    status, made = call(client, "POST", "/api/v1/escalation-policies", key, policy)
    assert status == 201
    status, document = call(client, "DELETE", f"/api/v1/schedules/{schedule_id}", key)
    assert (status, error_of(document)["code"]) == (409, "CONFLICT")
    assert error_of(document)["details"] == {"policy_ids": [made["data"]["id"]]}
    assert "escalation policies (P)" in error_of(document)["message"]


def test_handoff_notice_lead_minutes(client, setup):
    key, _, people = setup
    status, created = call(client, "POST", "/api/v1/schedules", key, schedule_body(people))
    assert (status, created["data"]["handoff_notice_lead_minutes"]) == (201, 0)  # the default
    item = f"/api/v1/schedules/{created['data']['id']}"

    status, led = call(client, "POST", "/api/v1/schedules", key, schedule_body(people, handoff_notice_lead_minutes=30))
    assert (status, led["data"]["handoff_notice_lead_minutes"]) == (201, 30)

    status, patched = call(client, "PATCH", item, key, {"handoff_notice_lead_minutes": 1440, "version": 1})
    assert (status, patched["data"]["handoff_notice_lead_minutes"], patched["data"]["version"]) == (200, 1440, 2)
    status, got = call(client, "GET", item, key)
    assert got["data"]["handoff_notice_lead_minutes"] == 1440
    assert got["data"]["name"] == created["data"]["name"]  # nothing else changed

    for bad in (-1, 1441, "soon", "30", 1.5, True, [5], None):
        status, document = call(
            client, "POST", "/api/v1/schedules", key, schedule_body(people, handoff_notice_lead_minutes=bad)
        )
        assert status == 400, (bad, document)
        error = error_of(document)
        assert error["code"] == "VALIDATION_ERROR"
        assert {f["field"] for f in error["details"]["fields"]} == {"handoff_notice_lead_minutes"}, (bad, error)
        status, document = call(client, "PATCH", item, key, {"handoff_notice_lead_minutes": bad})
        assert status == 400, (bad, document)
    assert call(client, "GET", item, key)[1]["data"]["handoff_notice_lead_minutes"] == 1440
