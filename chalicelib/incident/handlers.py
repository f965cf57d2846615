"""Consumers of incident messages on the events queue."""

from __future__ import annotations

from chalicelib import clock
from chalicelib.incident.tables import TIMELINE_PREFIX, TimelineRecord, incident_partition
from chalicelib.incident.workflow import EVENT_ALERT_RECEIVED
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.store import put_if_absent


@handles("incident.alert_received")
def write_alert_entry(message: Message) -> None:
    """The timeline entry of a deduplicated alert. Keyed by the message id, so a redelivered
    message writes nothing twice."""
    payload = message.payload
    received_at = clock.parse(str(payload["received_at"]))
    entry = TimelineRecord(
        incident_partition(message.organization_id, str(payload["incident_number"])),
        f"{TIMELINE_PREFIX}{clock.isoformat(received_at)}#{message.message_id}",
        event_type=EVENT_ALERT_RECEIVED,
        title=payload.get("title"),
        description=payload.get("description"),
        user=payload.get("user"),
        created_at=received_at,
    )
    put_if_absent(entry)  # False for a redelivery: the entry is there already
