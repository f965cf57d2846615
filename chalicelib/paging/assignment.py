"""Paging an incident's new assignee (docs/PAGING.md).

`incident.assigned` (published by chalicelib.incident.commands after the write: the API's PATCH
with `assigned_to`, the console's assign action) becomes one page of that person through their
own notification rules at the incident's urgency, as an escalation level pages them
(chalicelib.paging.reach, through the `notification.deliver` consumer). Its timeline entry says
who assigned them: "Paged Ana Lima by sms (assigned by Bob)". The later steps of their rules go
out only while the incident is still theirs, unacknowledged and unresolved.

Nobody is paged when the incident was unassigned, when people assign themselves, when the on-call
auto-assignment assigned the primary on call (level 1 of the escalation pages them already), when
the incident is resolved by the time the message is handled, or when it was assigned to someone
else meanwhile (that assignment pages them). Reassigning to the same person publishes nothing.

Once per assignment: the page's delivery id names the assignment (the incident's version after
the write) and the notification worker claims it before sending, so a redelivered message pages
nobody twice.
"""

from __future__ import annotations

from typing import Any

from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.paging import escalation_runs
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings

INCIDENT_ASSIGNED = "incident.assigned"


def assignee_to_page(payload: dict[str, Any]) -> str | None:
    """The user id the assignment should page, or None (unassigned, self-assigned, automatic)."""
    assignee = payload.get("assigned_user_id")
    if not isinstance(assignee, str) or not assignee or not payload.get("assignment"):
        return None
    if payload.get("assigned_by_system") or payload.get("assigned_by_user_id") == assignee:
        return None
    return assignee


def page_delivery_id(organization_id: str, incident_number: str, assignment: str, user_id: str) -> str:
    return f"{organization_id}#{incident_number}#assigned#{assignment}#{user_id}"


@handles(INCIDENT_ASSIGNED, first=True)
def on_incident_assigned(message: Message, settings: Settings) -> None:
    payload = message.payload
    assignee = assignee_to_page(payload)
    if assignee is None:
        return
    number = str(payload["incident_number"])
    try:
        incident = repository.get_incident(message.organization_id, number)
    except NotFound:
        return
    if escalation_runs.is_done(incident) or incident.assigned_user_id != assignee:
        return
    by = str(payload.get("assigned_by") or "someone")
    page = {
        "incident_number": number,
        "user_id": assignee,
        "level": None,
        "delivery_id": page_delivery_id(message.organization_id, number, str(payload["assignment"]), assignee),
        "reason": f"Assigned to you by {by}",
        "run_token": None,  # not an escalation's: acknowledging, resolving or reassigning stops its steps
        "actor": by,
        "note": f"assigned by {by}",
        "assigned_to": assignee,
    }
    publish(Message(escalation_runs.DELIVER_NOTIFICATION, message.organization_id, page))
