"""A page goes out only while its incident still wants it (docs/SECURITY.md, "Pages only while wanted").

Every page a worker sends (an escalation level's page, the acknowledge-SLA notice, each later
step of a person's notification rules, on every channel) is claimed, by its delivery id, in one
transaction with a ConditionCheck on the incident item (chalicelib/delivery/claims.py `Guard`):
the claim is taken only while the incident is as the worker's consistent read found it:
- not resolved or closed;
- not acknowledged: for every later rule step, and for an escalation's page decided while the
  incident was unacknowledged (a level escalated by hand after an acknowledge still pages);
- the same escalation (the stored state unchanged), for an escalation's page or step;
- still assigned to the person, for an assignee's page (`assigned_to`).
A resolve or acknowledge that commits before the claim makes it fail: the worker reads again
and skips the page. One that commits after it finds the page claimed, that is, already on its
way: the claim is the moment a page goes out.

A skipped page is logged; when it had been decided while the incident wanted it (an escalation's
page, the SLA notice, or a rule step that lost the race with the change), the timeline says so:
"Page to Ana Lima skipped: incident resolved", written once, with the delivery marked skipped
(never over a page that went out). A rule step that simply finds the incident acknowledged or
resolved when it comes due is how acknowledging stops the steps: logged only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from chalicelib.delivery.claims import Done, Guard, GuardFailed
from chalicelib.directory.users import get_user
from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.incident.tables import INCIDENT_SORT_KEY, IncidentRecord
from chalicelib.incident.workflow import DONE_CATEGORIES, EVENT_PAGE_SKIPPED
from chalicelib.notification import deliveries
from chalicelib.paging import escalation_runs
from chalicelib.store import RetryableConflict, TransactionCancelled, retry_on_conflict

logger = logging.getLogger("tocsin.paging")
T = TypeVar("T")
# Reads and claims per page before SQS retries the message (a claim fails only when the
# incident changed between the read and the claim).
CLAIM_ATTEMPTS = 6


def _acknowledged_is_fine(payload: dict[str, Any], *, step: bool) -> bool:
    """An acknowledge stops every later step and an escalation's page decided before it; a page
    decided on an acknowledged incident (escalated by hand) or outside an escalation (an
    assignee's) is not stopped by it."""
    if step:
        return False
    return payload.get("run_token") is None or bool(payload.get("acknowledged"))


def why_not_wanted(incident: IncidentRecord, payload: dict[str, Any], *, step: bool) -> str | None:
    """None while the incident wants this page; else why not, in words for the timeline."""
    if escalation_runs.is_done(incident):
        return f"incident {incident.status}"
    assigned_to = payload.get("assigned_to")
    if assigned_to is not None and incident.assigned_user_id != assigned_to:
        return "incident reassigned"
    if incident.acknowledged_at is not None and not _acknowledged_is_fine(payload, step=step):
        return "incident acknowledged"
    run_token = payload.get("run_token")
    if run_token is None:
        return None
    state = escalation_runs.state_of(incident)
    if state is None or state.run_token != run_token:
        return "escalation replaced"
    if step and state.stopped:
        return "escalation stopped"
    return None


def guard_of(incident: IncidentRecord, payload: dict[str, Any], *, step: bool) -> Guard:
    """The condition the claim is taken under: the incident still as `why_not_wanted` found it."""
    condition = ~IncidentRecord.status_category.is_in(*sorted(DONE_CATEGORIES))
    if not _acknowledged_is_fine(payload, step=step):
        condition = condition & IncidentRecord.acknowledged_at.does_not_exist()
    if payload.get("run_token") is not None:
        condition = condition & (IncidentRecord.escalation == incident.escalation)
    if payload.get("assigned_to") is not None:
        condition = condition & (IncidentRecord.assigned_user_id == payload["assigned_to"])
    return Guard(IncidentRecord, incident.incident_key, INCIDENT_SORT_KEY, condition)


def send_while_wanted(
    *,
    organization_id: str,
    incident_number: str,
    delivery_id: str,
    payload: dict[str, Any],
    now: datetime,
    step: bool,
    work: Callable[[IncidentRecord], T],
    settle: Callable[[T], bool],
) -> Done[T] | None:
    """Read the incident, and while it wants the page claim the delivery under the guard and run
    `work` with what was read; a claim that finds the incident changed reads it again. None when
    the page was skipped (recorded), sent already, or is being sent by another worker. NotFound
    when the incident is gone; Conflict (SQS retries) when it kept changing."""
    raced = False

    def attempt() -> Done[T] | None:
        nonlocal raced
        incident = repository.get_incident(organization_id, incident_number)
        why = why_not_wanted(incident, payload, step=step)
        if why is not None:
            skipped(incident, payload, delivery_id, why, now, on_timeline=raced or not step)
            return None
        try:
            return deliveries.once(
                delivery_id, now, lambda: work(incident), settle, guard=guard_of(incident, payload, step=step)
            )
        except GuardFailed:
            raced = True
            repository.forget(incident)
            raise RetryableConflict() from None

    return retry_on_conflict(attempt, what="page", attempts=CLAIM_ATTEMPTS)


def _name(organization_id: str, user_id: str) -> str:
    try:
        user = get_user(organization_id=organization_id, user_id=user_id)
    except NotFound:
        return user_id
    return user.name or user.email or user.user_id


def skipped(
    incident: IncidentRecord, payload: dict[str, Any], delivery_id: str, why: str, now: datetime, *, on_timeline: bool
) -> None:
    """Log the skip and, `on_timeline`, say it on the incident's timeline once (the delivery is
    marked skipped in the same write, which fails when the page was claimed or recorded already)."""
    user_id = str(payload.get("user_id") or "")
    where = {"incident_number": incident.incident_number, "user_id": user_id, "delivery_id": delivery_id}
    logger.info("page skipped", extra={**where, "reason": why})
    if not on_timeline:
        return
    name = _name(incident.organization_id, user_id)
    entry = repository.timeline_entry(
        incident,
        event_type=EVENT_PAGE_SKIPPED,
        now=now,
        user=str(payload.get("actor") or "escalation"),
        title=f"Page to {name} skipped: {why}",
        description=str(payload.get("reason") or "") or None,
        details={"recipient": {"user_id": user_id, "name": name}, "level": payload.get("level"), "reason": why},
    )
    try:
        repository.add_entries(incident, [entry], also=lambda tx: deliveries.mark_skipped_in(tx, delivery_id, now))
    except TransactionCancelled as cancelled:
        if "delivery" not in cancelled.failed:
            raise  # contention: the message is retried, and the skip recorded then
