"""Hostile and careless request input over HTTP: deeply nested JSON, bodies on operations that
take none, repeated query parameters. Every one is a 400 in the route family's shape, never a 500."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from chalicelib.api import lazy
from chalicelib.api.operation import Operation
from chalicelib.json_body import MAX_DEPTH
from tests.conftest import Org

# ~2 KB that the standard library's parser cannot read without hitting the recursion limit.
DEEP = "[" * 1000 + "]" * 1000
JUST_TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)


def auth(org: Org) -> dict[str, str]:
    return {"Authorization": f"Bearer {org.owner_key}", "Content-Type": "application/json"}


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def send(client: Any, method: str, path: str, headers: dict[str, str], body: str) -> Any:
    return client.http.request(method=method, path=path, headers=headers, body=body.encode())


def json_body_operations() -> list[Operation]:
    return [op for op in lazy.documented_operations() if op.body is not None and not op.raw]


def bodiless_operations() -> list[Operation]:
    return [op for op in lazy.documented_operations() if op.body is None and not op.raw and op.method != "GET"]


def assert_body_refused(response: Any, what: str) -> dict[str, Any]:
    assert response.status_code == 400, (what, response.status_code, response.body[:300])
    error: dict[str, Any] = json.loads(response.body)["error"]
    assert error["code"] == "VALIDATION_ERROR", what
    assert [f["field"] for f in error["details"]["fields"]] == ["body"], what
    return error


def test_every_json_body_operation_refuses_deep_nesting_with_a_400(client: Any, org: Org) -> None:
    operations = json_body_operations()
    assert len(operations) >= 37
    for op in operations:
        for body in (DEEP, '{"name": ' + DEEP + "}", JUST_TOO_DEEP):
            error = assert_body_refused(send(client, op.method, concrete(op.path), auth(org), body), op.operation_id)
            assert f"deeper than {MAX_DEPTH} levels" in error["details"]["fields"][0]["message"]


def test_nesting_up_to_the_limit_reaches_the_model(client: Any, org: Org) -> None:
    body = '{"title": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    response = send(client, "POST", "/api/v1/incidents", auth(org), body)
    assert response.status_code == 400
    fields = json.loads(response.body)["error"]["details"]["fields"]
    assert "title" in [f["field"] for f in fields]  # past the reader: the model refuses the array


@pytest.mark.parametrize("body", ["NaN", '{"title": Infinity}', '{"title": "\\ud800"}'])
def test_what_is_not_json_or_not_text_is_refused(client: Any, org: Org, body: str) -> None:
    assert_body_refused(send(client, "POST", "/api/v1/incidents", auth(org), body), body)


@pytest.mark.usefixtures("local_routes")
def test_the_local_sinks_survive_deep_nesting(client: Any) -> None:
    slack = client.http.post(
        "/local/slack/api/chat.postMessage",
        headers={"Authorization": "Bearer xoxb-1", "Content-Type": "application/json"},
        body=DEEP,
    )
    assert (slack.status_code, json.loads(slack.body)) == (200, {"ok": False, "error": "invalid_json"})
    sink = client.http.post("/local/webhook-sink/demo", headers={"Content-Type": "application/json"}, body=DEEP)
    assert sink.status_code == 204  # the sink keeps any body; it only reads facts from JSON ones


def test_webhook_routes_refuse_deep_nesting_as_invalid_payload(client: Any) -> None:
    response = client.http.post("/v2/enqueue", headers={"Content-Type": "application/json"}, body=DEEP)
    assert response.status_code == 400
    assert json.loads(response.body)["status"] == "invalid event"


# --- operations that take no body ----------------------------------------------------------------


@pytest.mark.parametrize("body", ["{nope", "[]", '{"a": 1}', '"text"', "0", DEEP])
def test_every_bodiless_operation_refuses_a_body(client: Any, org: Org, body: str) -> None:
    operations = bodiless_operations()
    assert {"acknowledgeIncident", "escalateIncident"} <= {op.operation_id for op in operations}
    for op in operations:
        response = send(client, op.method, concrete(op.path), auth(org), body)
        error = assert_body_refused(response, op.operation_id)
        assert "takes no body" in error["details"]["fields"][0]["message"]


@pytest.mark.parametrize("body", ["", "{}", " { } ", "null"])
def test_a_bodiless_operation_accepts_no_body_or_an_empty_object(client: Any, org: Org, body: str) -> None:
    response = send(client, "POST", "/api/v1/incidents/INC-2026-0001/acknowledge", auth(org), body)
    assert response.status_code == 404  # past the body check: the incident does not exist


# --- query parameters -----------------------------------------------------------------------------


def test_a_scalar_query_parameter_given_twice_is_refused_by_name(client: Any, org: Org) -> None:
    response = client.http.get("/api/v1/incidents?limit=1&limit=2", headers=auth(org))
    assert response.status_code == 400
    error = json.loads(response.body)["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["fields"] == [{"field": "limit", "message": "given more than once"}]


def test_list_query_parameters_stay_repeatable(client: Any, org: Org) -> None:
    response = client.http.get("/api/v1/incidents?status=new&status=resolved&severity=SEV1", headers=auth(org))
    assert response.status_code == 200, response.body


@pytest.mark.usefixtures("local_routes")
def test_raw_routes_refuse_repeated_scalars_too(client: Any) -> None:
    outbox = client.http.get("/local/outbox?limit=1&limit=2")
    assert outbox.status_code == 400
    assert json.loads(outbox.body)["error"]["details"]["fields"][0]["field"] == "limit"
    sink = client.http.post("/local/webhook-sink/demo?fail=500&fail=502", body="{}")
    assert sink.status_code == 400
    assert json.loads(sink.body)["error"]["details"]["fields"][0]["field"] == "fail"


# --- PATCH with a null version ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "change"),
    [
        ("/api/v1/escalation-policies/x1", {"name": "Primary"}),
        ("/api/v1/postmortems/x1", {"summary": "Checkout"}),
        ("/api/v1/schedules/x1", {"name": "Primary"}),
        ("/api/v1/webhook-subscriptions/x1", {"enabled": True}),
    ],
)
def test_a_null_version_is_a_400_on_the_field(client: Any, org: Org, path: str, change: dict[str, Any]) -> None:
    response = send(client, "PATCH", path, auth(org), json.dumps({**change, "version": None}))
    assert response.status_code == 400, response.body
    error = json.loads(response.body)["error"]
    assert error["details"]["fields"] == [{"field": "version", "message": "must not be null"}]


# --- text: control and bidi characters ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/services", {"name": "Checkout\u202eyaP"}, "name"),
        ("/api/v1/teams", {"name": "Pay\x00ments"}, "name"),
        ("/api/v1/incidents", {"title": "Disk full\u2066", "service_ids": ["svc_0123456789"]}, "title"),
        ("/api/v1/status-pages", {"name": "Acme\nStatus", "slug": "acme"}, "name"),
    ],
)
def test_control_and_bidi_characters_are_refused_naming_the_field(
    client: Any, org: Org, path: str, body: dict[str, Any], field: str
) -> None:
    response = send(client, "POST", path, auth(org), json.dumps(body))
    assert response.status_code == 400, response.body
    error = json.loads(response.body)["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in [problem["field"] for problem in error["details"]["fields"]]


def test_multi_line_text_keeps_its_lines_with_crlf_made_lf(client: Any, org: Org) -> None:
    body = {"name": "Payments", "description": "Owns checkout.\r\nPager: #payments \U0001f468\u200d\U0001f4bb"}
    response = send(client, "POST", "/api/v1/teams", auth(org), json.dumps(body))
    assert response.status_code == 201, response.body
    assert (
        json.loads(response.body)["data"]["description"]
        == "Owns checkout.\nPager: #payments \U0001f468\u200d\U0001f4bb"
    )


# --- date-times -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start", [-1, 1790000000, "2026-11-22T12:00:00", "1969-12-31T23:59:59Z", "2101-01-01T00:00:00Z"]
)
def test_a_maintenance_window_needs_an_rfc_3339_start_in_a_plausible_year(client: Any, org: Org, start: Any) -> None:
    page = json.loads(send(client, "POST", "/api/v1/status-pages", auth(org), '{"name": "Acme", "slug": "acme"}').body)
    body = {"title": "DB upgrade", "scheduled_start": start, "scheduled_end": "2026-11-22T14:00:00Z"}
    path = f"/api/v1/status-pages/{page['data']['id']}/maintenance"
    response = send(client, "POST", path, auth(org), json.dumps(body))
    assert response.status_code == 400, response.body
    assert json.loads(response.body)["error"]["details"]["fields"][0]["field"] == "scheduled_start"
