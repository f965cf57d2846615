"""When an incident is resolved (by hand, by its workflow, or by its alerts), its alerts that are
still triggered resolve with it, as PagerDuty's do; a later event with their key is a new alert."""

from __future__ import annotations

from chalicelib import clock
from chalicelib.alert.listing import triggered_alerts
from chalicelib.alert.repository import resolve_actions
from chalicelib.alert.tables import TRIGGERED, AlertRecord
from chalicelib.incident.workflow import DONE_CATEGORIES
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings
from chalicelib.store import ConditionFailed, conditional


@handles("incident.status_changed")
def resolve_alerts_of_closed_incident(message: Message, settings: Settings) -> None:
    payload = message.payload
    if payload.get("category") not in DONE_CATEGORIES:
        return
    now = clock.now()
    for alert in triggered_alerts(
        organization_id=message.organization_id, incident_number=str(payload["incident_number"])
    ):
        try:
            with conditional():  # a redelivered message, or a resolve event that got there first
                alert.update(actions=resolve_actions(now), condition=AlertRecord.status == TRIGGERED)
        except ConditionFailed:
            continue
