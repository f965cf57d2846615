"""Helpers of the Opsgenie drop-in's API tests: requests with a GenieKey, Opsgenie's answers checked
exactly, and the request status a 202 names."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.api.test_webhooks_api import HTTPS

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def genie(
    client: Any,
    method: str,
    path: str,
    key: str | None,
    body: Any = None,
    *,
    https: bool = True,
    authorization: str | None = None,
) -> Any:
    """One request to the drop-in with `Authorization: GenieKey <key>` (or `authorization` as given)."""
    headers = {"Content-Type": "application/json", **(HTTPS if https else {})}
    if authorization is not None:
        headers["Authorization"] = authorization
    elif key is not None:
        headers["Authorization"] = f"GenieKey {key}"
    raw = body if body is None or isinstance(body, str | bytes) else json.dumps(body)
    response = client.http.request(method.upper(), path, headers=headers, body=raw or b"")
    try:
        response.json = json.loads(response.body) if response.body else None
    except ValueError:
        response.json = None
    return response


def accepted(response: Any, result: str = "Request will be processed") -> str:
    """Opsgenie's 202, exactly; returns its requestId."""
    assert response.status_code == 202, response.body
    assert response.headers["Content-Type"] == "application/json"
    assert set(response.json) == {"result", "took", "requestId"}, response.json
    assert response.json["result"] == result
    assert isinstance(response.json["took"], float) and response.json["took"] >= 0
    assert UUID.fullmatch(response.json["requestId"]), response.json
    return str(response.json["requestId"])


def refused(response: Any, status: int) -> dict[str, Any]:
    """Opsgenie's error body, exactly: message, took, requestId (and errors for invalid fields)."""
    assert response.status_code == status, (response.status_code, response.body)
    assert response.headers["Content-Type"] == "application/json"
    document = dict(response.json)
    assert set(document) - {"errors"} == {"message", "took", "requestId"}, document
    assert isinstance(document["message"], str) and document["message"]
    assert isinstance(document["took"], float)
    assert UUID.fullmatch(document["requestId"])
    return document


def request_status(client: Any, key: str, request_id: str) -> dict[str, Any]:
    response = genie(client, "get", f"/v2/alerts/requests/{request_id}", key)
    assert response.status_code == 200, response.body
    assert set(response.json) == {"data", "took", "requestId"}
    data = dict(response.json["data"])
    assert set(data) == {
        "success",
        "action",
        "processedAt",
        "integrationId",
        "isSuccess",
        "status",
        "alertId",
        "alias",
    }
    assert data["success"] is data["isSuccess"]
    return data


def create(client: Any, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create an alert; the status of its request (its alertId)."""
    return request_status(client, key, accepted(genie(client, "post", "/v2/alerts", key, body)))


def alert(client: Any, key: str, identifier: str, identifier_type: str | None = None) -> dict[str, Any]:
    query = f"?identifierType={identifier_type}" if identifier_type else ""
    response = genie(client, "get", f"/v2/alerts/{identifier}{query}", key)
    assert response.status_code == 200, response.body
    assert set(response.json) == {"data", "took", "requestId"}
    return dict(response.json["data"])


def act(client: Any, key: str, identifier: str, action: str, body: Any = None, identifier_type: str = "") -> Any:
    query = f"?identifierType={identifier_type}" if identifier_type else ""
    return genie(client, "post", f"/v2/alerts/{identifier}/{action}{query}", key, body)
