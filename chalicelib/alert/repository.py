"""Reading and changing one alert by its key (never a Query: this runs on every delivery)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.alert.tables import (
    RESOLVED,
    SUPPRESSED,
    TRIGGERED,
    AlertRecord,
    alert_partition,
    incident_ref,
    service_ref,
)
from chalicelib.store import ConditionFailed, conditional

ALERT_LIFETIME = timedelta(days=180)
LABELS_MAX = 50


def new_alert_id() -> str:
    return f"alr_{uuid.uuid4().hex}"


def labels_of(metadata: Mapping[str, str]) -> dict[str, str]:
    """An alert's labels: its reference metadata, with the `labels.` prefix some sources put on
    their label keys (Alertmanager) taken off, so `labels.env` names the same thing for every source."""
    labels: dict[str, str] = {}
    for key, value in metadata.items():
        name = key.removeprefix("labels.") or key
        if name not in labels and len(labels) < LABELS_MAX:
            labels[name] = value
    return labels


@dataclass(frozen=True)
class AlertDraft:
    """Everything a new alert record says, before it has an id and an incident."""

    organization_id: str
    origin_id: str
    integration_id: str | None
    integration_name: str
    integration_type: str
    source: str
    dedup_key: str | None
    title: str
    description: str | None
    source_url: str | None
    severity: str
    service_key: str
    service_id: str
    labels: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    runbook_url: str | None = None
    suppressed_by: Mapping[str, Any] | None = None
    rule_notes: Mapping[str, Any] | None = None


def build_record(
    draft: AlertDraft, *, alert_id: str, now: datetime, incident_number: str | None, grouped: bool
) -> AlertRecord:
    """The record of a new alert: suppressed when the draft says why, else triggered."""
    organization_id = draft.organization_id
    return AlertRecord(
        alert_partition(organization_id, alert_id),
        alert_id=alert_id,
        organization_id=organization_id,
        origin_id=draft.origin_id,
        integration_id=draft.integration_id,
        integration_name=draft.integration_name,
        integration_type=draft.integration_type,
        source=draft.source,
        dedup_key=draft.dedup_key,
        title=draft.title,
        description=draft.description,
        source_url=draft.source_url,
        severity=draft.severity,
        service_key=draft.service_key,
        service_id=draft.service_id,
        status=SUPPRESSED if draft.suppressed_by else TRIGGERED,
        suppressed_by=dict(draft.suppressed_by) if draft.suppressed_by else None,
        incident_number=incident_number,
        grouped="joined" if grouped else None,
        first_received_at=now,
        last_received_at=now,
        event_count=1,
        labels=dict(draft.labels),
        details=dict(draft.details) or None,
        runbook_url=draft.runbook_url,
        rule_notes=dict(draft.rule_notes) if draft.rule_notes else None,
        received_sort=f"{clock.isoformat(now)}#{alert_id}",
        service_ref=service_ref(organization_id, draft.service_key),
        incident_ref=incident_ref(organization_id, incident_number) if incident_number else None,
        expires_at=now + ALERT_LIFETIME,
    )


def get_alert(organization_id: str, alert_id: str) -> AlertRecord | None:
    try:
        return AlertRecord.get(alert_partition(organization_id, alert_id))
    except DoesNotExist:
        return None


def count_occurrence(organization_id: str, alert_id: str, *, status: str, now: datetime) -> AlertRecord | None:
    """One more event for an alert still in `status` (one UpdateItem); None when it is not (any more)."""
    try:
        with conditional():
            response = AlertRecord._get_connection().update_item(
                alert_partition(organization_id, alert_id),
                actions=[
                    AlertRecord.event_count.add(1),
                    AlertRecord.last_received_at.set(now),
                    AlertRecord.expires_at.set(now + ALERT_LIFETIME),
                ],
                condition=AlertRecord.status == status,
                return_values="ALL_NEW",
            )
    except ConditionFailed:
        return None
    return AlertRecord.from_raw_data(response["Attributes"])


def withdraw_occurrence(organization_id: str, alert_id: str, *, now: datetime) -> None:
    """Take back an event counted on a triggered alert whose incident turned out to be closed,
    and resolve that alert (its incident's resolution had not reached it yet)."""
    try:
        with conditional():
            AlertRecord._get_connection().update_item(
                alert_partition(organization_id, alert_id),
                actions=[
                    AlertRecord.event_count.add(-1),
                    AlertRecord.status.set(RESOLVED),
                    AlertRecord.resolved_at.set(now),
                ],
                condition=AlertRecord.status == TRIGGERED,
            )
    except ConditionFailed:
        return


def resolve_actions(now: datetime) -> list[Any]:
    return [AlertRecord.status.set(RESOLVED), AlertRecord.resolved_at.set(now), AlertRecord.last_received_at.set(now)]
