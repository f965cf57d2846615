"""Helpers of the event log's API tests: read an integration's log through the API."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from tests.api.test_webhooks_api import api
from tests.conftest import Org


def events_path(hook: dict[str, Any]) -> str:
    return f"/api/v1/integrations/{hook['id']}/events"


def listed(client: Any, org: Org, hook: dict[str, Any], key: str | None = None, **query: Any) -> dict[str, Any]:
    """The list's page (items, next_cursor)."""
    text = urlencode(query, doseq=True)
    response = api(client, "get", events_path(hook) + (f"?{text}" if text else ""), key or org.owner_key)
    assert response.status_code == 200, response.body
    return dict(response.json["data"])


def outcomes(client: Any, org: Org, hook: dict[str, Any], **query: Any) -> list[str]:
    return [item["outcome"] for item in listed(client, org, hook, limit=100, **query)["items"]]


def detail(client: Any, org: Org, hook: dict[str, Any], event_id: str, key: str | None = None) -> dict[str, Any]:
    response = api(client, "get", f"{events_path(hook)}/{event_id}", key or org.owner_key)
    assert response.status_code == 200, response.body
    return dict(response.json["data"])


def newest(client: Any, org: Org, hook: dict[str, Any]) -> dict[str, Any]:
    """The newest event of the integration, in full."""
    items = listed(client, org, hook, limit=1)["items"]
    assert items, "the log is empty"
    return detail(client, org, hook, items[0]["id"])


def replay(client: Any, org: Org, hook: dict[str, Any], event_id: str, key: str | None = None) -> Any:
    return api(client, "post", f"{events_path(hook)}/{event_id}/replay", key or org.owner_key)


def never_shows(record: dict[str, Any], *secrets: str) -> None:
    text = json.dumps(record)
    for secret in secrets:
        assert secret not in text, secret
