"""/api/v1/maintenance-windows through the Chalice test client: every operation, the answer shape
(service_ids and services with names, state from now), and every error path (400 naming the bad
service, 401, 403 by scope, 404, 409), delete of an ongoing window ending it, Idempotency-Key."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.catalog import service as services
from chalicelib.maintenance.in_effect import window_in_effect
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.kit.api import call

BASE = "/api/v1/maintenance-windows"
HOUR = timedelta(hours=1)
FIELDS = {
    "id",
    "description",
    "start",
    "end",
    "state",
    "service_ids",
    "services",
    "ended_early_at",
    "created_by",
    "created_at",
    "updated_at",
    "version",
}


def stamp(moment: Any) -> str:
    return str(clock.isoformat(moment).replace(".000Z", "Z"))


@pytest.fixture(autouse=True)
def frozen() -> None:
    clock.freeze(NOW)  # the aws_env fixture unfreezes


@pytest.fixture
def svc(org: Org) -> dict[str, Any]:
    oid = org.organization_id
    return {
        "db": services.create_service(organization_id=oid, name="Database", now=NOW),
        "web": services.create_service(organization_id=oid, name="Web", now=NOW),
    }


def key_with(org: Org, *scopes: str) -> str:
    _, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="-".join(scopes),
        kind="service_account",
        scopes=list(scopes),
        now=NOW,
        settings=get_settings(),
    )
    return key


def fields_of(document: dict[str, Any]) -> list[str]:
    assert document["success"] is False
    return [f["field"] for f in document["error"]["details"]["fields"]]


def create(client: Any, org: Org, **body: Any) -> dict[str, Any]:
    status, document = call(client, "POST", BASE, org.owner_key, body)
    assert status == 201, document
    return dict(document["data"])


def times(start: Any, end: Any) -> dict[str, str]:
    return {"start": stamp(start), "end": stamp(end)}


# --- lifecycle -------------------------------------------------------------------------------------


def test_lifecycle_and_answer_shape(client: Any, org: Org, svc: dict[str, Any]) -> None:
    db, web = svc["db"], svc["web"]
    created = create(
        client,
        org,
        service_ids=[db.service_id, web.service_key],
        start="2026-11-22T15:00:00+02:00",  # 13:00Z
        end="2026-11-22T15:00:00Z",
        description="Disk swap",
    )
    assert set(created) == FIELDS
    assert created == {
        **created,
        "description": "Disk swap",
        "start": "2026-11-22T13:00:00Z",
        "end": "2026-11-22T15:00:00Z",
        "state": "future",
        "service_ids": [db.service_id, web.service_id],
        "services": [
            {"service_id": db.service_id, "service_key": db.service_key, "name": "Database"},
            {"service_id": web.service_id, "service_key": web.service_key, "name": "Web"},
        ],
        "ended_early_at": None,
        "created_at": "2026-11-22T12:00:00Z",
        "updated_at": None,
        "version": 1,
    }
    assert created["id"].startswith("mw_") and created["created_by"]
    item = f"{BASE}/{created['id']}"
    status, got = call(client, "GET", item, org.owner_key)
    assert (status, got["data"]) == (200, created)

    status, patched = call(
        client,
        "PATCH",
        item,
        org.owner_key,
        {"description": None, "service_ids": [web.service_id], "end": "2026-11-22T16:00:00Z", "version": 1},
    )
    assert status == 200, patched
    assert {k: patched["data"][k] for k in ("description", "service_ids", "end", "version", "updated_at")} == {
        "description": None,
        "service_ids": [web.service_id],
        "end": "2026-11-22T16:00:00Z",
        "version": 2,
        "updated_at": "2026-11-22T12:00:00Z",
    }

    clock.freeze(NOW + 2 * HOUR)  # 14:00Z: ongoing
    status, got = call(client, "GET", item, org.owner_key)
    assert got["data"]["state"] == "ongoing"
    assert window_in_effect(organization_id=org.organization_id, service_key=web.service_key, now=NOW + 2 * HOUR)

    status, removed = call(client, "DELETE", item, org.owner_key)
    assert status == 200
    assert removed["data"]["id"] == created["id"] and removed["data"]["outcome"] == "ended"
    window = removed["data"]["window"]
    assert (window["state"], window["end"], window["ended_early_at"]) == ("past", "2026-11-22T14:00:00Z", window["end"])
    assert (
        window_in_effect(organization_id=org.organization_id, service_key=web.service_key, now=NOW + 2 * HOUR) is None
    )
    status, again = call(client, "DELETE", item, org.owner_key)
    assert (status, again["data"]) == (200, removed["data"])  # a retry answers the same
    assert call(client, "GET", item, org.owner_key)[1]["data"]["state"] == "past"


def test_delete_of_a_future_window_deletes_it(client: Any, org: Org, svc: dict[str, Any]) -> None:
    created = create(client, org, service_ids=[svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR))
    item = f"{BASE}/{created['id']}"
    status, removed = call(client, "DELETE", item, org.owner_key)
    assert (status, removed["data"]) == (200, {"id": created["id"], "outcome": "deleted", "window": None})
    assert call(client, "GET", item, org.owner_key)[0] == 404
    assert call(client, "DELETE", item, org.owner_key)[0] == 404


def test_a_start_in_the_past_means_now(client: Any, org: Org, svc: dict[str, Any]) -> None:
    created = create(client, org, service_ids=[svc["db"].service_key], **times(NOW - HOUR, NOW + HOUR))
    assert (created["start"], created["state"]) == ("2026-11-22T12:00:00Z", "ongoing")


def test_list_order_filters_and_pages(client: Any, org: Org, svc: dict[str, Any]) -> None:
    db, web = svc["db"], svc["web"]
    past = create(client, org, service_ids=[db.service_id], **times(NOW, NOW + HOUR))
    ongoing = create(client, org, service_ids=[web.service_id], **times(NOW, NOW + 4 * HOUR))
    future = create(client, org, service_ids=[db.service_id, web.service_id], **times(NOW + 3 * HOUR, NOW + 5 * HOUR))
    clock.freeze(NOW + 2 * HOUR)

    def ids(query: str) -> list[str]:
        status, document = call(client, "GET", BASE + query, org.owner_key)
        assert status == 200, document
        return [w["id"] for w in document["data"]["items"]]

    assert ids("") == [ongoing["id"], future["id"], past["id"]]
    assert ids(f"?service_id={db.service_id}") == [future["id"], past["id"]]
    assert ids(f"?service_id={web.service_key}&state=ongoing") == [ongoing["id"]]
    assert ids("?state=future") == [future["id"]]
    assert ids("?state=past") == [past["id"]]
    assert ids("?state=open") == [ongoing["id"], future["id"]]
    assert ids("?service_id=SER-09999") == []
    status, page = call(client, "GET", BASE + "?limit=2&offset=1", org.owner_key)
    assert status == 200
    assert {k: v for k, v in page["data"].items() if k != "items"} == {
        "total": 3,
        "has_more": False,
        "next_offset": None,
    }
    assert [w["id"] for w in page["data"]["items"]] == [future["id"], past["id"]]
    _, page = call(client, "GET", BASE + "?limit=1", org.owner_key)
    assert (page["data"]["has_more"], page["data"]["next_offset"]) == (True, 1)
    assert page["data"]["items"][0]["services"][0]["name"] == "Web"
    # Another organization sees none of them.
    assert call(client, "GET", BASE, make_org("Other").owner_key)[1]["data"]["items"] == []


def test_idempotency_key_replays_the_create(client: Any, org: Org, svc: dict[str, Any]) -> None:
    body = {"service_ids": [svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR)}
    headers = {"Idempotency-Key": "mw-create-1"}
    first = call(client, "POST", BASE, org.owner_key, body, headers=headers)
    again = call(client, "POST", BASE, org.owner_key, body, headers=headers)
    assert first[0] == again[0] == 201 and first[1]["data"] == again[1]["data"]
    assert call(client, "GET", BASE, org.owner_key)[1]["data"]["total"] == 1
    status, reused = call(client, "POST", BASE, org.owner_key, {**body, "description": "other"}, headers=headers)
    assert (status, reused["error"]["code"]) == (409, "IDEMPOTENCY_KEY_REUSED")


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"service_ids": []}, "service_ids"),
        ({"service_ids": ["database"]}, "service_ids.0"),
        ({"start": "2026-11-22T13:00:00"}, "start"),
        ({"end": "tomorrow"}, "end"),
        ({"end": "2026-11-22T12:30:00Z"}, "end"),  # before start
        ({"start": "2026-11-22T10:00:00Z", "end": "2026-11-22T11:00:00Z"}, "end"),  # in the past
        ({"end": "2027-03-01T13:00:00Z"}, "end"),  # longer than 90 days
        ({"description": "a\u0000b"}, "description"),
        ({"extra": True}, "extra"),
    ],
)
def test_create_refuses_bad_input(
    client: Any, org: Org, svc: dict[str, Any], change: dict[str, Any], field: str
) -> None:
    body = {"service_ids": [svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR), **change}
    status, document = call(client, "POST", BASE, org.owner_key, body)
    assert status == 400, document
    assert field in fields_of(document)


def test_create_names_the_services_that_do_not_exist(client: Any, org: Org, svc: dict[str, Any]) -> None:
    other = make_org("Other")
    foreign = services.create_service(organization_id=other.organization_id, name="Theirs", now=NOW)
    body = {"service_ids": [svc["db"].service_id, foreign.service_key, "SER-00077"], **times(NOW, NOW + HOUR)}
    status, document = call(client, "POST", BASE, org.owner_key, body)
    assert (status, document["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert fields_of(document) == ["service_ids.1", "service_ids.2"]
    assert foreign.service_key in document["error"]["message"] and "SER-00077" in document["error"]["message"]
    assert call(client, "GET", BASE, org.owner_key)[1]["data"]["total"] == 0


def test_malformed_bodies_and_queries(client: Any, org: Org) -> None:
    assert call(client, "POST", BASE, org.owner_key, "{not json")[0] == 400
    assert call(client, "GET", BASE + "?state=done", org.owner_key)[0] == 400
    assert call(client, "GET", BASE + "?service_id=database", org.owner_key)[0] == 400
    assert call(client, "GET", BASE + "?limit=0", org.owner_key)[0] == 400


def test_patch_errors(client: Any, org: Org, svc: dict[str, Any]) -> None:
    created = create(client, org, service_ids=[svc["db"].service_id], **times(NOW, NOW + 2 * HOUR))
    item = f"{BASE}/{created['id']}"
    assert call(client, "PATCH", item, org.owner_key, {})[0] == 400
    assert call(client, "PATCH", item, org.owner_key, {"version": 1})[0] == 400
    assert call(client, "PATCH", item, org.owner_key, {"end": None})[0] == 400
    status, document = call(client, "PATCH", item, org.owner_key, {"service_ids": ["SER-00042"]})
    assert (status, fields_of(document)) == (400, ["service_ids.0"])
    status, document = call(client, "PATCH", item, org.owner_key, {"start": stamp(NOW + HOUR)})
    assert (status, document["error"]["code"]) == (409, "CONFLICT")  # it has started
    status, document = call(client, "PATCH", item, org.owner_key, {"end": stamp(NOW - HOUR)})
    assert (status, fields_of(document)) == (400, ["end"])
    status, document = call(client, "PATCH", item, org.owner_key, {"description": "x", "version": 7})
    assert status == 409 and document["error"]["details"] == {"expected_version": 7, "current_version": 1}
    assert call(client, "PATCH", f"{BASE}/mw_{'0' * 32}", org.owner_key, {"description": "x"})[0] == 404
    assert call(client, "PATCH", f"{BASE}/nonsense", org.owner_key, {"description": "x"})[0] == 404
    clock.freeze(NOW + 3 * HOUR)  # past
    status, document = call(client, "PATCH", item, org.owner_key, {"description": "late"})
    assert (status, document["error"]["code"]) == (409, "CONFLICT")
    status, document = call(client, "DELETE", item, org.owner_key)
    assert (status, document["error"]["code"]) == (409, "CONFLICT")


def test_unknown_windows_are_404(client: Any, org: Org, svc: dict[str, Any]) -> None:
    created = create(client, org, service_ids=[svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR))
    other = make_org("Other")
    for path in (f"{BASE}/{created['id']}", f"{BASE}/mw_{'f' * 32}", f"{BASE}/whs_123"):
        key = other.owner_key if path.endswith(created["id"]) else org.owner_key
        assert call(client, "GET", path, key)[0] == 404
        assert call(client, "DELETE", path, key)[0] == 404


def test_scopes(client: Any, org: Org, svc: dict[str, Any]) -> None:
    created = create(client, org, service_ids=[svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR))
    item = f"{BASE}/{created['id']}"
    reader = key_with(org, "services:read")
    assert call(client, "GET", BASE, reader)[0] == 200
    assert call(client, "GET", item, reader)[0] == 200
    body = {"service_ids": [svc["db"].service_id], **times(NOW + HOUR, NOW + 2 * HOUR)}
    for method, path, sent in (("POST", BASE, body), ("PATCH", item, {"description": "x"}), ("DELETE", item, None)):
        status, document = call(client, method, path, reader, sent)
        assert (status, document["error"]["details"]) == (403, {"required_scope": "services:write"})
    for method, path in (("GET", BASE), ("GET", item)):
        status, document = call(client, method, path, org.readonly_key)
        assert (status, document["error"]["details"]) == (403, {"required_scope": "services:read"})
        assert call(client, method, path, None)[0] == 401
    assert call(client, "GET", item, org.owner_key)[1]["data"]["version"] == 1  # nothing changed
