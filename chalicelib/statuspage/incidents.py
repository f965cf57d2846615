"""Public incidents: what customers read about an outage, with updates and affected components.

An incident is one item (`INC#<id>`); its updates are a JSON list on it, so adding one is a
read-modify-write conditional on the version. Active incidents carry `active_key` (the sparse
active index the summary reads). An optional link to an internal incident is kept for the
operators and never shown publicly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.update import Action

from chalicelib.errors import ValidationFailed
from chalicelib.incident.tables import INCIDENT_SORT_KEY, IncidentRecord, incident_partition
from chalicelib.settings import Settings
from chalicelib.statuspage import history, incident_templates, rules
from chalicelib.statuspage.announcements import announce_incident, incident_change
from chalicelib.statuspage.repository import (
    Structure,
    get_item,
    item_id,
    require_structure,
    save_or_retry,
)
from chalicelib.statuspage.structure import check_components
from chalicelib.statuspage.tables import INCIDENT_PREFIX, StatusPageItem
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled, retry_on_conflict


def _check_internal_incident(organization_id: str, incident_number: str) -> None:
    try:
        IncidentRecord.get(
            incident_partition(organization_id, incident_number), INCIDENT_SORT_KEY, attributes_to_get=["item_key"]
        )
    except DoesNotExist:
        raise ValidationFailed.for_field("incident_number", "no such incident in this organization") from None


def _required(given: dict[str, Any], field: str, template_id: str | None) -> str:
    value = given.get(field)
    if not isinstance(value, str):
        problem = "required: neither the request nor its template gives one" if template_id else "required"
        raise ValidationFailed.for_field(field, problem)
    return value


def _update_entry(status: str, body: str, now: datetime) -> dict[str, Any]:
    return {"status": status, "body": body, "published_at": now.astimezone(UTC).isoformat()}


def _apply_status(item: StatusPageItem, status: str, now: datetime) -> None:
    item.status = status
    item.resolved_at = rules.resolved_at_after(status, current=item.resolved_at, now=now)
    item.active_key = item.item_key if rules.incident_is_active(status) else None
    item.updated_at = now


def _write(item: StatusPageItem, statuses: dict[str, str], structure: Structure | None, now: datetime) -> None:
    """Save the incident, and with it (one transaction) the component statuses the update sets and
    their history items."""
    changed = [c for c in structure.components if statuses.get(item_id(c), c.status) != c.status] if structure else []
    if not changed:
        save_or_retry(item)
        return
    tx = Transaction()
    tx.put("incident", item)  # conditional on its version (or its absence)
    for component in changed:
        new_status = statuses[item_id(component)]
        actions: list[Action] = [StatusPageItem.status.set(new_status), StatusPageItem.updated_at.set(now)]
        tx.update(item_id(component), component, actions)  # conditional on the version read
        change = history.status_change(
            item.page_id, item_id(component), previous=component.status, status=new_status, now=now
        )
        tx.put(f"history-{item_id(component)}", change)  # a new item: conditional on its absence
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if cancelled.retryable:
            raise RetryableConflict() from None
        raise


def create_incident(
    *,
    organization_id: str,
    page_id: str,
    now: datetime,
    title: str | None = None,
    status: str | None = None,
    impact: str | None = None,
    body: str | None = None,
    component_ids: list[str] | None = None,
    incident_number: str | None = None,
    component_statuses: dict[str, str] | None = None,
    template_id: str | None = None,
    settings: Settings,
) -> StatusPageItem:
    """Open an incident with its first update; `component_statuses` sets those components' statuses
    in the same transaction. `template_id` fills title, body, status, impact and component statuses
    left out (chalicelib.statuspage.incident_templates); then status defaults to investigating and
    impact to minor."""
    structure = require_structure(page_id)
    given = incident_templates.filled_from(
        page_id=page_id,
        template_id=template_id,
        names=incident_templates.FOR_INCIDENT,
        components=structure.component_names(),
        title=title,
        body=body,
        status=status,
        impact=impact,
        component_statuses=component_statuses,
    )
    title, body = _required(given, "title", template_id), _required(given, "body", template_id)
    status, impact = given["status"] or "investigating", given["impact"] or "minor"
    statuses: dict[str, str] = given["component_statuses"] or {}
    affected = check_components(structure, component_ids or [])
    check_components(structure, list(statuses), field="component_statuses")
    if incident_number is not None:
        _check_internal_incident(organization_id, incident_number)
    incident_key = INCIDENT_PREFIX + rules.new_id("inc", now)

    def attempt() -> StatusPageItem:
        current = require_structure(page_id) if statuses else None
        item = StatusPageItem(
            page_id,
            incident_key,
            name=title,
            impact=impact,
            started_at=now,
            incident_number=incident_number,
            updates=[_update_entry(status, body, now)],
            component_ids=affected,
            created_at=now,
        )
        _apply_status(item, status, now)
        _write(item, statuses, current, now)
        return item

    item = retry_on_conflict(attempt, what="public incident")
    # After the write: outbound webhook subscriptions and the page's subscribers hear of it.
    announce_incident(page_id, item, change="created", now=now, settings=settings)
    return item


def get_incident(*, page_id: str, incident_id: str) -> StatusPageItem:
    return get_item(page_id, INCIDENT_PREFIX, incident_id, "inc", "Public incident")


def add_update(
    *,
    page_id: str,
    incident_id: str,
    now: datetime,
    status: str | None = None,
    body: str | None = None,
    impact: str | None = None,
    component_ids: list[str] | None = None,
    component_statuses: dict[str, str] | None = None,
    template_id: str | None = None,
    settings: Settings,
) -> StatusPageItem:
    """Post an update; it moves the incident to `status` (any move is allowed, see rules) and may
    replace the affected components and set component statuses (one transaction). `template_id`
    fills body, status, impact and component statuses left out."""
    needs_structure = template_id is not None or component_ids is not None or bool(component_statuses)
    structure = require_structure(page_id) if needs_structure else None
    given = incident_templates.filled_from(
        page_id=page_id,
        template_id=template_id,
        names=incident_templates.FOR_UPDATE,
        components=structure.component_names() if structure else (),
        body=body,
        status=status,
        impact=impact,
        component_statuses=component_statuses,
    )
    new_status, text = _required(given, "status", template_id), _required(given, "body", template_id)
    impact = given["impact"]
    statuses: dict[str, str] = given["component_statuses"] or {}
    affected: list[str] | None = None
    if structure is not None:
        affected = check_components(structure, component_ids) if component_ids is not None else None
        check_components(structure, list(statuses), field="component_statuses")

    previous: list[str] = []  # the status the winning attempt moved from

    def attempt() -> StatusPageItem:
        item = get_incident(page_id=page_id, incident_id=incident_id)
        previous[:] = [item.status or ""]
        current = require_structure(page_id) if statuses else None
        item.updates = [*(item.updates or []), _update_entry(new_status, text, now)]
        if impact is not None:
            item.impact = impact
        if affected is not None:
            item.component_ids = affected
        _apply_status(item, new_status, now)
        _write(item, statuses, current, now)
        return item

    item = retry_on_conflict(attempt, what="public incident")
    announce_incident(page_id, item, change=incident_change(previous[0], new_status), now=now, settings=settings)
    return item


def list_incidents(*, page_id: str) -> list[StatusPageItem]:
    """Newest first; one Query on the page's incidents."""
    return list(
        StatusPageItem.query(page_id, StatusPageItem.item_key.startswith(INCIDENT_PREFIX), scan_index_forward=False)
    )
