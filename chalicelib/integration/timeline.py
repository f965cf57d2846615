"""The timeline entry of an alert that lands on an incident it did not open (a dedup hit or a
grouped alert), written by the events worker so the delivery stays at a few round trips.
Not every event of a storm: see `worth_an_entry`."""

from __future__ import annotations

from datetime import datetime

from chalicelib import clock
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.queue.messages import Message, publish

ALERT_RECEIVED = "incident.alert_received"
# Every event of the first few has a timeline entry, then one in a hundred: a storm of repeats
# adds a handful of entries, and the alert's count (and last_received_at) keeps the rest.
EVERY_EVENT_UP_TO = 5
THEN_EVERY = 100


def worth_an_entry(count: int) -> bool:
    """Whether the `count`-th event of an alert (or alert of an incident) gets a timeline entry."""
    return count <= EVERY_EVENT_UP_TO or count % THEN_EVERY == 0


def publish_alert_entry(
    origin: AlertOrigin,
    number: str,
    alert: NormalizedAlert,
    now: datetime,
    *,
    grouped: bool = False,
    count: int | None = None,
) -> None:
    """`count`: how many events (or grouped alerts) so far; None for a note, which always gets one."""
    if count is not None and not worth_an_entry(count):
        return
    heading = "Alert grouped into this incident" if grouped else "Alert received"
    if count is not None:
        heading += f" ({count} events so far)" if count > EVERY_EVENT_UP_TO else ""
    publish(
        Message(
            ALERT_RECEIVED,
            origin.organization_id,
            {
                "incident_number": number,
                "title": f"{heading}: {alert.title if grouped else alert.summary}"[:200],
                "description": alert.description[:2000] if alert.description else None,
                "user": origin.principal.actor,
                "received_at": clock.isoformat(now),
                "action": alert.action,
            },
        )
    )
