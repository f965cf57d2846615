"""The timeline entry of an alert that lands on an incident it did not open (a dedup hit or a
grouped alert), written by the events worker so the delivery stays at a few round trips."""

from __future__ import annotations

from datetime import datetime

from chalicelib import clock
from chalicelib.integration.alert import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.queue.messages import Message, publish

ALERT_RECEIVED = "incident.alert_received"


def publish_alert_entry(
    origin: AlertOrigin, number: str, alert: NormalizedAlert, now: datetime, *, grouped: bool = False
) -> None:
    heading = "Alert grouped into this incident" if grouped else "Alert received"
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
