"""Exports over HTTP on the local stack: incidents made through the API come back as CSV pages
followed through their Link headers, as NDJSON by Accept, and through a download link that needs
no key (the public base URL the stack prints is the link's)."""

from __future__ import annotations

import csv
import io
import json
import time
from datetime import UTC, datetime, timedelta

import requests

from tests.e2e.conftest import LocalStack


def test_exports_over_http(stack: LocalStack) -> None:
    service_key = stack.demo["services"][0]["service_key"]
    since = datetime.now(UTC) - timedelta(minutes=5)
    titles = [f"Export e2e {n}" for n in range(3)]
    numbers = []
    for title in titles:
        created = stack.post("/api/v1/incidents", json={"title": title, "service_ids": [service_key]})
        assert created.status_code == 201, created.text
        numbers.append(created.json()["data"]["incident_number"])
    _wait_until_assigned(stack, numbers)
    window = {"since": since.isoformat(), "until": (datetime.now(UTC) + timedelta(minutes=5)).isoformat()}

    rows: list[dict[str, str]] = []
    url: str | None = stack.base_url + "/api/v1/exports/incidents"
    params: dict[str, str] | None = {**window, "limit": "1"}
    pages = 0
    while url is not None:
        page = stack.session.get(url, params=params, headers=stack.headers(), timeout=30)
        assert page.status_code == 200, page.text
        assert page.headers["Content-Type"].startswith("text/csv")
        rows.extend(csv.DictReader(io.StringIO(page.text, newline="")))
        url, params, pages = page.links.get("next", {}).get("url"), None, pages + 1
    mine = [row for row in rows if row["title"] in titles]
    assert [row["incident_number"] for row in mine] == numbers and pages >= 3

    ndjson = stack.get(
        "/api/v1/exports/incidents", params=window, headers={**stack.headers(), "Accept": "application/x-ndjson"}
    )
    assert ndjson.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in ndjson.text.splitlines()]
    assert [line["incident_number"] for line in lines if line["title"] in titles] == numbers

    link = stack.post("/api/v1/exports/incidents/links", json={**window, "format": "ndjson"})
    assert link.status_code == 201, link.text
    downloaded = requests.get(link.json()["data"]["url"], timeout=30)  # no key
    assert downloaded.status_code == 200 and downloaded.text == ndjson.text
    assert requests.get(link.json()["data"]["url"][:-2] + "xx", timeout=30).status_code == 404


def _wait_until_assigned(stack: LocalStack, numbers: list[str]) -> None:
    """The escalation worker assigns a new incident to the person on call a moment after it is
    made; the exports below are compared with each other, so they must read settled incidents
    (a download taken after that assignment differed from the NDJSON read before it)."""
    deadline = time.monotonic() + 60  # a guard against a worker that never assigns, not a speed check
    for number in numbers:
        while stack.get(f"/api/v1/incidents/{number}").json()["data"].get("assigned_to") is None:
            assert time.monotonic() < deadline, f"{number} was never assigned"
            time.sleep(0.2)
