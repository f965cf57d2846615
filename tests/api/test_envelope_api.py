"""The success and error envelopes, request ids, validation errors, 404 and 405, over HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import clock
from tests.conftest import Org

VERIFY = "/api/v1/auth/verify"
KEYS = "/api/v1/api-keys"


def auth(org: Org, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {org.owner_key}", **extra}


def post_keys(client: Any, org: Org, body: bytes | str) -> tuple[int, Any]:
    response = client.http.post(KEYS, headers=auth(org, **{"Content-Type": "application/json"}), body=body)
    return response.status_code, json.loads(response.body)


def assert_error_envelope(document: Any, code: str) -> None:
    assert set(document) == {"success", "error", "meta"}
    assert document["success"] is False
    assert document["error"]["code"] == code
    assert isinstance(document["error"]["message"], str) and document["error"]["message"]
    assert set(document["meta"]) == {"request_id", "timestamp"}


def test_success_envelope_shape(client: Any, org: Org) -> None:
    response = client.http.get(VERIFY, headers=auth(org))
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    document = json.loads(response.body)
    assert set(document) == {"success", "data", "meta"}
    assert document["success"] is True
    assert document["data"]["valid"] is True
    assert set(document["meta"]) == {"request_id", "timestamp"}
    assert document["meta"]["request_id"] == response.headers["X-Request-Id"]
    timestamp = document["meta"]["timestamp"]
    assert timestamp.endswith("Z")
    assert abs((clock.parse(timestamp) - clock.now()).total_seconds()) < 60


def test_timestamp_follows_the_clock(client: Any, org: Org) -> None:
    from tests.conftest import NOW

    with clock.frozen(NOW):
        document = json.loads(client.http.get(VERIFY, headers=auth(org)).body)
    assert document["meta"]["timestamp"] == "2026-11-22T12:00:00.000Z"


def test_client_request_id_is_echoed(client: Any, org: Org) -> None:
    for offered in ("trace-123", "x" * 128, "a:b/c=d!~"):
        response = client.http.get(VERIFY, headers=auth(org, **{"X-Request-Id": offered}))
        assert response.headers["X-Request-Id"] == offered
        assert json.loads(response.body)["meta"]["request_id"] == offered
    # On errors too.
    response = client.http.get(VERIFY, headers={"X-Request-Id": "trace-401"})
    assert response.status_code == 401
    assert response.headers["X-Request-Id"] == "trace-401"
    assert json.loads(response.body)["meta"]["request_id"] == "trace-401"


def test_invalid_request_id_is_replaced(client: Any, org: Org) -> None:
    for offered in ("x" * 129, "has space", ""):
        response = client.http.get(VERIFY, headers=auth(org, **{"X-Request-Id": offered}))
        echoed = response.headers["X-Request-Id"]
        assert echoed != offered
        assert echoed.startswith("req_")
        assert json.loads(response.body)["meta"]["request_id"] == echoed


def test_each_request_gets_its_own_id(client: Any, org: Org) -> None:
    ids = {client.http.get(VERIFY, headers=auth(org)).headers["X-Request-Id"] for _ in range(3)}
    assert len(ids) == 3


def test_error_envelope_shape(client: Any, org: Org) -> None:
    response = client.http.get(VERIFY)
    assert response.status_code == 401
    assert response.headers["Content-Type"] == "application/json"
    document = json.loads(response.body)
    assert_error_envelope(document, "UNAUTHORIZED")
    assert document["meta"]["request_id"] == response.headers["X-Request-Id"]


UNREADABLE_BODIES: dict[str, bytes] = {
    "malformed": b"{not json",
    "trailing-comma": b'{"name": "x", "scopes": ["admin"],}',
    "not-utf8": b"\xff\xfe\x00",
    "empty": b"",
    "array": b"[]",
    "string": b'"a string"',
    "number": b"42",
    "null": b"null",
}


def test_unreadable_bodies_are_400(client: Any, org: Org) -> None:
    # One test, many cases: each test pays for a fresh moto account.
    for case, body in UNREADABLE_BODIES.items():
        status, document = post_keys(client, org, body)
        assert status == 400, case
        assert_error_envelope(document, "VALIDATION_ERROR")
        assert document["error"]["details"]["fields"][0]["field"] == "body", case


def test_unknown_fields_are_rejected(client: Any, org: Org) -> None:
    status, document = post_keys(client, org, json.dumps({"name": "x", "scopes": ["admin"], "expires": "never"}))
    assert status == 400
    assert_error_envelope(document, "VALIDATION_ERROR")
    assert document["error"]["details"]["fields"] == [{"field": "expires", "message": "unknown field"}]


def test_wrong_types_list_every_field(client: Any, org: Org) -> None:
    status, document = post_keys(client, org, json.dumps({"name": 5, "scopes": "admin", "kind": "robot"}))
    assert status == 400
    assert_error_envelope(document, "VALIDATION_ERROR")
    fields = {f["field"] for f in document["error"]["details"]["fields"]}
    assert fields == {"name", "scopes", "kind"}
    for entry in document["error"]["details"]["fields"]:
        assert set(entry) == {"field", "message"}


def test_missing_required_fields(client: Any, org: Org) -> None:
    status, document = post_keys(client, org, "{}")
    assert status == 400
    fields = {f["field"] for f in document["error"]["details"]["fields"]}
    assert fields == {"name", "scopes"}


def test_validation_happens_after_authentication(client: Any, org: Org) -> None:
    response = client.http.post(KEYS, headers={"Content-Type": "application/json"}, body=b"{not json")
    assert response.status_code == 401


def test_unknown_query_parameter_is_400(client: Any, org: Org) -> None:
    response = client.http.get(f"{VERIFY}?verbose=1", headers=auth(org))
    assert response.status_code == 400
    document = json.loads(response.body)
    assert_error_envelope(document, "VALIDATION_ERROR")
    assert document["error"]["details"]["fields"] == [{"field": "verbose", "message": "unknown query parameter"}]

    response = client.http.get(f"{KEYS}?limit=5&sort=name", headers=auth(org))
    assert response.status_code == 400
    assert json.loads(response.body)["error"]["details"]["fields"] == [{"field": "sort", "message": "unknown field"}]


def test_invalid_query_values_are_400(client: Any, org: Org) -> None:
    for query in ("limit=0", "limit=101", "limit=ten", "offset=-1"):
        response = client.http.get(f"{KEYS}?{query}", headers=auth(org))
        assert response.status_code == 400, query
        document = json.loads(response.body)
        assert_error_envelope(document, "VALIDATION_ERROR")
        assert document["error"]["details"]["fields"][0]["field"] == query.split("=")[0]


def test_method_not_allowed_is_enveloped(client: Any, org: Org) -> None:
    response = client.http.put(VERIFY, headers=auth(org))
    assert response.status_code == 405
    document = json.loads(response.body)
    assert_error_envelope(document, "METHOD_NOT_ALLOWED")
    assert response.headers["Allow"] == "GET"
    assert document["meta"]["request_id"] == response.headers["X-Request-Id"]


def test_unknown_route_is_an_enveloped_404(client: Any) -> None:
    for method in ("get", "post", "put", "delete", "patch"):
        response = getattr(client.http, method)("/nope", headers={"X-Request-Id": "trace-404"})
        assert response.status_code == 404, method
        document = json.loads(response.body)
        assert_error_envelope(document, "NOT_FOUND")
        assert "/nope" in document["error"]["message"]
        assert response.headers["X-Request-Id"] == "trace-404"


def _api_gateway_event(method: str, path: str, resource: str, path_parameters: dict[str, str]) -> dict[str, Any]:
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {"Host": "example.execute-api.us-east-1.amazonaws.com"},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": path_parameters,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/api{path}",
            "stage": "api",
            "requestId": "abc",
            "identity": {"sourceIp": "203.0.113.9"},
        },
        "body": None,
        "isBase64Encoded": False,
    }


def test_unknown_multi_segment_route_on_api_gateway_is_an_enveloped_404(aws_env: None) -> None:
    """API Gateway sends the greedy parameter as `proxy` (not `proxy+`); the catch-all must still answer 404."""
    from app import app

    event = _api_gateway_event("GET", "/api/v1/nope/deeper", "/{proxy+}", {"proxy": "api/v1/nope/deeper"})
    response = app(event, None)
    assert response["statusCode"] == 404
    document = json.loads(response["body"])
    assert_error_envelope(document, "NOT_FOUND")
    assert "/api/v1/nope/deeper" in document["error"]["message"]


def test_unexpected_exception_is_an_enveloped_500_without_internals(
    client: Any, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.incident import workflow_settings as incident_settings

    def explode(**_: Any) -> Any:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(incident_settings, "incident_settings", explode)
    response = client.http.get(VERIFY, headers=auth(org))
    assert response.status_code == 500
    document = json.loads(response.body)
    assert_error_envelope(document, "INTERNAL_ERROR")
    assert "secret internal detail" not in response.body.decode()
    assert "Traceback" not in response.body.decode()
    assert response.headers["X-RateLimit-Category"] == "api_key"
