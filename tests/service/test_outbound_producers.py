"""postmortem.published and status_page.incident_updated: their producers publish after the write,
and the fan-out turns them into the documented event bodies."""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from the fan-out tests are redefined as parameters)
import json
from typing import Any

from chalicelib import clock
from chalicelib.outbound import fanout
from chalicelib.postmortem import service as postmortems
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents as public_incidents
from chalicelib.statuspage import pages, structure
from chalicelib.statuspage.repository import item_id
from tests.conftest import NOW, Org
from tests.service.outbound_fakes import Receiver, RecordingSqs, subscribe
from tests.service.test_outbound_fanout import create_incident, deliveries, receiver, sqs, svc  # noqa: F401  (fixtures)


def only(sqs: RecordingSqs, message_type: str) -> Message:
    (message,) = [message for message, _, _ in sqs.take(message_type)]
    return message


def fanned_body(message: Message, subscription_id: str) -> dict[str, Any]:
    with clock.frozen(NOW):
        fanout.fan_out(message, now=NOW, settings=get_settings())
    (record,) = deliveries(subscription_id)
    body: dict[str, Any] = json.loads(record.body)
    return body


def test_publishing_a_postmortem_emits_one_event(org: Org, receiver: Receiver, sqs: RecordingSqs, svc: Any) -> None:
    subscription = subscribe(org, receiver.url(), event_types=["postmortem.published"])
    number = create_incident(org, svc)
    record = postmortems.create_postmortem(
        organization_id=org.organization_id,
        incident_number=number,
        level="standard",
        content={"summary": "Checkout <b>failed</b>"},
        response_timeline_overrides={},
        now=NOW,
        actor="tester",
    )
    for status in ("in_review", "draft", "in_review"):
        postmortems.update_postmortem(
            organization_id=org.organization_id, postmortem_id=record.postmortem_id, changes={"status": status}, now=NOW
        )
    assert sqs.take("postmortem.published") == []  # only publishing is news
    postmortems.update_postmortem(
        organization_id=org.organization_id,
        postmortem_id=record.postmortem_id,
        changes={"status": "published"},
        now=NOW,
    )
    message = only(sqs, "postmortem.published")
    # A repeated "published" (a retried PATCH) is no move and no second event.
    postmortems.update_postmortem(
        organization_id=org.organization_id,
        postmortem_id=record.postmortem_id,
        changes={"status": "published"},
        now=NOW,
    )
    assert sqs.take("postmortem.published") == []

    body = fanned_body(message, subscription.record.subscription_id)
    assert body["type"] == "postmortem.published"
    assert body["data"]["incident_number"] == number
    postmortem = body["data"]["postmortem"]
    assert (postmortem["postmortem_number"], postmortem["status"]) == (record.postmortem_number, "published")
    assert postmortem["summary"] == "Checkout <b>failed</b>"


def test_a_public_incident_and_its_updates_emit_events(org: Org, receiver: Receiver, sqs: RecordingSqs) -> None:
    subscription = subscribe(org, receiver.url(), event_types=["status_page.incident_updated"])
    page = pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Web", now=NOW)
    component = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="Site", status="operational", now=NOW
    )
    component_id = item_id(component)
    opened = public_incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="Slow site",
        status="investigating",
        impact="minor",
        body="Looking into it.",
        component_ids=[component_id],
        incident_number=None,
        now=NOW,
        settings=get_settings(),
    )
    created = only(sqs, "status_page.incident_updated")
    public_incidents.add_update(
        page_id=page.page_id,
        incident_id=item_id(opened),
        status="resolved",
        body="Fixed.",
        now=NOW,
        settings=get_settings(),
    )
    resolved = only(sqs, "status_page.incident_updated")
    assert created.payload["incident"]["status"] == "investigating"
    body = fanned_body(resolved, subscription.record.subscription_id)
    assert body["type"] == "status_page.incident_updated"
    assert body["data"]["status_page"] == {
        "page_id": page.page_id,
        "name": "Acme",
        "slug": "acme",
        "url": pages.public_url("acme", settings=get_settings()),
    }
    incident = body["data"]["incident"]
    assert incident["status"] == "resolved" and incident["resolved_at"] is not None
    assert [update["body"] for update in incident["updates"]] == ["Fixed.", "Looking into it."]
    assert incident["affected_components"] == [{"component_id": component_id, "name": "Site"}]
