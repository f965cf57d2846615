"""An incident's detail shows `recent_changes`: the changes recorded on its services in the hour
before it opened, newest first, at most 20; none of another service's or organization's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib import clock
from chalicelib.catalog.service import Service
from tests.api.test_change_events_api import accepted, change, pagerduty, send
from tests.api.test_webhooks_api import api, incident

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org, make_org


def at(delta: timedelta) -> str:
    return clock.isoformat(NOW + delta)


def open_incident(client: Any, org: Org, *service_keys: str) -> str:
    response = api(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {"title": "Checkout down", "service_ids": list(service_keys)},
    )
    assert response.status_code == 201, response.body
    return str(response.json["data"]["incident_number"])


def summaries(detail: dict[str, Any]) -> list[str]:
    return [item["summary"] for item in detail["recent_changes"]]


def test_changes_in_the_hour_before_opening(client: Any, org: Org, services: list[Service]) -> None:
    web, pay = services
    key = pagerduty(client, org, web)
    for summary, delta in (
        ("61 min before", timedelta(minutes=-61)),
        ("exactly an hour before", timedelta(hours=-1)),
        ("59 min before", timedelta(minutes=-59)),
        ("at opening", timedelta(0)),
        ("1 min after", timedelta(minutes=1)),
    ):
        accepted(send(client, change(key, summary, timestamp=at(delta))))
    accepted(
        send(
            client,
            change(key, "on Pay", timestamp=at(timedelta(minutes=-5)), custom_details={"service_id": "SER-00002"}),
        )
    )

    number = open_incident(client, org, web.service_key)
    detail = incident(client, org, number)
    assert summaries(detail) == ["at opening", "59 min before", "exactly an hour before"]
    first = detail["recent_changes"][0]
    assert set(first) == {"id", "summary", "source", "timestamp", "links", "service_id", "service_key"}
    assert first | {"id": None} == {
        "id": None,
        "summary": "at opening",
        "source": "deploy-pipeline",
        "timestamp": "2026-11-22T12:00:00.000Z",
        "links": [{"href": "https://ci.example.org/builds/142", "text": "Build 142"}],
        "service_id": "SER-00001",
        "service_key": web.service_key,
    }
    # An incident on both services sees both services' changes, merged newest first.
    both = incident(client, org, open_incident(client, org, pay.service_key, web.service_key))
    assert summaries(both) == ["at opening", "on Pay", "59 min before", "exactly an hour before"]
    # An incident on Pay alone sees only Pay's.
    assert summaries(incident(client, org, open_incident(client, org, pay.service_key))) == ["on Pay"]


def test_an_incident_opened_later_sees_nothing_older_than_its_hour(
    client: Any, org: Org, services: list[Service]
) -> None:
    key = pagerduty(client, org, services[0])
    accepted(send(client, change(key, "deploy", timestamp=at(timedelta(minutes=-10)))))
    with clock.frozen(NOW + timedelta(hours=2)):
        number = open_incident(client, org, services[0].service_key)
        assert incident(client, org, number)["recent_changes"] == []
    with clock.frozen(NOW + timedelta(minutes=20)):
        number = open_incident(client, org, services[0].service_key)
        assert summaries(incident(client, org, number)) == ["deploy"]


def test_at_most_twenty_newest_first(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    for minute in range(25):
        accepted(send(client, change(key, f"change {minute:02d}", timestamp=at(timedelta(minutes=-minute)))))
    detail = incident(client, org, open_incident(client, org, services[0].service_key))
    assert summaries(detail) == [f"change {minute:02d}" for minute in range(20)]


def test_another_organization_s_changes_never_show(client: Any, org: Org, services: list[Service]) -> None:
    from chalicelib.catalog import service as catalog

    other = make_org("Other")
    # The other organization's service even has the same svc_ key.
    twin = catalog.create_service(
        organization_id=other.organization_id, name="Twin", service_key=services[0].service_key, now=NOW
    )
    assert twin.service_key == services[0].service_key
    their_key = pagerduty(client, other, twin)
    accepted(send(client, change(their_key, "theirs", timestamp=at(timedelta(minutes=-5)))))
    detail = incident(client, org, open_incident(client, org, services[0].service_key))
    assert detail["recent_changes"] == []
    theirs = api(
        client, "post", "/api/v1/incidents", other.owner_key, {"title": "x", "service_ids": [twin.service_key]}
    )
    assert theirs.status_code == 201, theirs.body
    their_detail = api(client, "get", f"/api/v1/incidents/{theirs.json['data']['incident_number']}", other.owner_key)
    assert summaries(their_detail.json["data"]) == ["theirs"]


def test_the_detail_documents_recent_changes(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    detail = schemas["IncidentDetailV1"]["properties"]["recent_changes"]
    assert "hour before it opened" in detail["description"]
