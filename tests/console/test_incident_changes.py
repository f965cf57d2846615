"""The incident page's "Recent changes": the changes on its services in the hour before it opened,
as the API's incident detail lists them (summary, source, time, links); none, no section."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.change import service as changes
from chalicelib.change.rules import parse_change_event
from tests.conftest import NOW, Org
from tests.console.conftest import ConsoleClient, Person
from tests.console.incident_data import World, incident_via_api, seed


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    clock.freeze(NOW)
    return seed(org, people)


def _change(org: Org, service_key: str, summary: str, at: Any, links: list[dict[str, str]]) -> None:
    body = {
        "routing_key": "0123456789abcdef0123456789abcdef",
        "payload": {"summary": summary, "source": "ci", "timestamp": at.isoformat()},
        "links": links,
    }
    changes.record_change(
        organization_id=org.organization_id,
        integration_id="int_1",
        default_service_key=service_key,
        event=parse_change_event(json.dumps(body)),
        now=NOW,
    )


def test_the_changes_before_an_incident_show_on_its_page(
    world: World, org: Org, client: Any, signed_in: Callable[[str], ConsoleClient]
) -> None:
    opened = NOW - timedelta(hours=2)
    link = {"href": "https://ci.example.org/builds/142", "text": "Build 142"}
    _change(org, world.checkout_key, "Deployed checkout 1.4.2", opened - timedelta(minutes=10), [link])
    _change(org, world.checkout_key, "Deployed checkout 1.4.1", opened - timedelta(hours=3), [])
    _change(org, world.search_key, "Reindexed search", opened - timedelta(minutes=5), [])
    answer = signed_in("viewer").get(f"/app/incidents/{world.checkout_down}")
    assert answer.status == 200
    section = answer.dom().find("section", **{"aria-labelledby": "h-changes"})
    text = section.text()
    assert "Deployed checkout 1.4.2" in text and "ci" in text and "22 Nov 2026, 09:50 UTC" in text
    assert "Deployed checkout 1.4.1" not in text and "Reindexed search" not in text
    assert section.find("a", href=link["href"]).text() == "Build 142"
    shown = [c["summary"] for c in incident_via_api(client, org, world.checkout_down)["recent_changes"]]
    assert shown == ["Deployed checkout 1.4.2"]  # the same list as the API's


def test_no_recent_changes_no_section(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    answer = signed_in("viewer").get(f"/app/incidents/{world.search_slow}")
    assert answer.status == 200 and "Recent changes" not in answer.text()
