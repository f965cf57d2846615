"""/api/v1/external-refs, the import ledger: record (idempotent, last write wins), list with
filters and pages, forget; the admin scope; one organization never sees another's entries."""

from __future__ import annotations

from typing import Any

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.externalref.service import ref_id_of
from chalicelib.settings import get_settings
from tests.api.test_webhooks_api import api
from tests.conftest import NOW, Org, make_org

BASE = "/api/v1/external-refs"
FIELDS = {"id", "kind", "vendor", "external_id", "tocsin_id", "recorded_at"}


def record(client: Any, key: str, **fields: str) -> Any:
    body = {"kind": "service", "vendor": "pagerduty", "external_id": "PABC123", "tocsin_id": "SER-00001", **fields}
    return api(client, "post", BASE, key, body)


def test_record_is_idempotent_and_the_last_write_wins(client: Any, org: Org) -> None:
    clock.freeze(NOW)
    first = record(client, org.owner_key)
    assert first.status_code == 200, first.body
    entry = first.json["data"]
    assert set(entry) == FIELDS
    assert entry["id"] == ref_id_of("service", "pagerduty", "PABC123")
    assert entry["recorded_at"].startswith("2026-11-22T12:00:00")
    again = record(client, org.owner_key, tocsin_id="SER-00002").json["data"]
    assert again["id"] == entry["id"] and again["tocsin_id"] == "SER-00002"
    listed = api(client, "get", BASE, org.owner_key).json["data"]
    assert listed["total"] == 1 and listed["items"][0]["tocsin_id"] == "SER-00002"


def test_list_filters_sorts_and_pages(client: Any, org: Org) -> None:
    for kind, vendor, external_id, tocsin_id in (
        ("user", "opsgenie", "u-2", "user-b"),
        ("service", "pagerduty", "P2", "SER-00002"),
        ("service", "pagerduty", "P1", "SER-00001"),
        ("user", "pagerduty", "PU1", "user-a"),
        ("schedule", "pagerduty", "id with spaces / and #", "sched-1"),
    ):
        assert (
            record(
                client, org.owner_key, kind=kind, vendor=vendor, external_id=external_id, tocsin_id=tocsin_id
            ).status_code
            == 200
        )
    everything = api(client, "get", BASE, org.owner_key).json["data"]["items"]
    assert [(e["kind"], e["vendor"], e["external_id"]) for e in everything] == [
        ("schedule", "pagerduty", "id with spaces / and #"),
        ("service", "pagerduty", "P1"),
        ("service", "pagerduty", "P2"),
        ("user", "opsgenie", "u-2"),
        ("user", "pagerduty", "PU1"),
    ]
    users = api(client, "get", f"{BASE}?kind=user", org.owner_key).json["data"]["items"]
    assert [e["external_id"] for e in users] == ["u-2", "PU1"]
    opsgenie = api(client, "get", f"{BASE}?vendor=opsgenie", org.owner_key).json["data"]["items"]
    assert [e["tocsin_id"] for e in opsgenie] == ["user-b"]
    of_one = api(client, "get", f"{BASE}?tocsin_id=SER-00001", org.owner_key).json["data"]["items"]
    assert [e["external_id"] for e in of_one] == ["P1"]
    page = api(client, "get", f"{BASE}?limit=2&offset=2", org.owner_key).json["data"]
    assert [e["external_id"] for e in page["items"]] == ["P2", "u-2"]
    assert page["total"] == 5 and page["has_more"] is True and page["next_offset"] == 4


def test_delete_and_not_found(client: Any, org: Org) -> None:
    entry = record(client, org.owner_key).json["data"]
    deleted = api(client, "delete", f"{BASE}/{entry['id']}", org.owner_key)
    assert deleted.status_code == 200 and deleted.json["data"] == {"id": entry["id"], "deleted": True}
    assert api(client, "get", BASE, org.owner_key).json["data"]["items"] == []
    missing = api(client, "delete", f"{BASE}/{entry['id']}", org.owner_key)
    assert missing.status_code == 404 and missing.json["error"]["code"] == "NOT_FOUND"


def test_validation(client: Any, org: Org) -> None:
    for fields, field in (
        ({"kind": "Service"}, "kind"),
        ({"kind": ""}, "kind"),
        ({"vendor": "Pager Duty"}, "vendor"),
        ({"external_id": ""}, "external_id"),
        ({"external_id": "x" * 257}, "external_id"),
        ({"tocsin_id": ""}, "tocsin_id"),
        ({"tocsin_id": "two\nlines"}, "tocsin_id"),
    ):
        response = record(client, org.owner_key, **fields)
        assert response.status_code == 400, (fields, response.body)
        assert field in [f["field"] for f in response.json["error"]["details"]["fields"]], response.json
    unknown = api(
        client,
        "post",
        BASE,
        org.owner_key,
        {"kind": "user", "vendor": "x", "external_id": "1", "tocsin_id": "u", "extra": 1},
    )
    assert unknown.status_code == 400
    assert api(client, "get", f"{BASE}?kind=NOPE", org.owner_key).status_code == 400


def test_admin_scope_and_isolation(client: Any, org: Org) -> None:
    entry = record(client, org.owner_key).json["data"]
    _, writer = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="writer",
        kind="service_account",
        scopes=["services:write", "services:read", "integrations:write"],
        now=NOW,
        settings=get_settings(),
    )
    for method, path, body in (
        ("get", BASE, None),
        ("post", BASE, {"kind": "user", "vendor": "x", "external_id": "1", "tocsin_id": "u"}),
        ("delete", f"{BASE}/{entry['id']}", None),
    ):
        refused = api(client, method, path, writer, body)
        assert refused.status_code == 403, (method, refused.body)
        assert refused.json["error"]["details"]["required_scope"] == "admin"
    assert api(client, "get", BASE, None).status_code == 401
    other = make_org("Other")
    assert api(client, "get", BASE, other.owner_key).json["data"]["items"] == []
    assert api(client, "delete", f"{BASE}/{entry['id']}", other.owner_key).status_code == 404
    assert api(client, "get", BASE, org.owner_key).json["data"]["total"] == 1
