"""A Tocsin alert as Opsgenie's Alert API shows one (pure): its record, its Opsgenie record (when
the drop-in created it) and its incident.

- status: closed once the alert is resolved (or its incident is), else open; acknowledged and
  isSeen: its incident is acknowledged; owner: who acknowledged it;
- priority: the alert's severity as a priority (SEV0 P1 ... SEV4 P5), so a severity an event rule
  changed shows as it pages;
- tags, entity, source, actions, responders: as the create sent them; an alert made by another
  source shows its labels as tags (`name:value`, or the name of a `true` label) and no tiny id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from chalicelib.alert.tables import RESOLVED, AlertRecord
from chalicelib.incident.tables import IncidentRecord
from chalicelib.opsgenie.models import (
    OpsgenieAlertIntegrationV1,
    OpsgenieAlertReportV1,
    OpsgenieAlertV1,
    OpsgenieResponderV1,
)
from chalicelib.opsgenie.tables import OpsgenieAlertRecord
from chalicelib.severity import opsgenie_priority

OPSGENIE_INTEGRATION_TYPE = "API"  # what Opsgenie calls an API integration's alerts' integration


def _millis(start: datetime, end: datetime | None) -> int | None:
    return int((end - start).total_seconds() * 1000) if end is not None else None


def tags_of(labels: Mapping[str, str]) -> list[str]:
    """An alert's labels as Opsgenie tags: the name of a `true` label, else `name:value`."""
    return [name if value == "true" else f"{name}:{value}" for name, value in labels.items()]


def details_of(details: Mapping[str, Any] | None) -> dict[str, str]:
    """Details as Opsgenie's map of strings: text as it is, anything else as compact JSON."""
    return {
        str(key): value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), default=str)
        for key, value in (details or {}).items()
    }


def responders_of(record: OpsgenieAlertRecord | None) -> list[OpsgenieResponderV1]:
    responders = list(record.responders or []) if record is not None else []
    shown = []
    for responder in responders:
        named = responder.get("id") or responder.get("name") or responder.get("username")
        if named:
            shown.append(OpsgenieResponderV1(type=responder["type"], id=named))
    return shown


def alert_view(
    alert: AlertRecord, record: OpsgenieAlertRecord | None, incident: IncidentRecord | None
) -> OpsgenieAlertV1:
    resolved_at = alert.resolved_at or (incident.resolved_at if incident is not None else None)
    acknowledged_at = incident.acknowledged_at if incident is not None else None
    moments = [alert.last_received_at, resolved_at, incident.updated_at if incident is not None else None]
    integration_type = alert.integration_type
    return OpsgenieAlertV1(
        id=alert.alert_id,
        tiny_id=str(int(record.tiny_id)) if record is not None else "",
        alias=(record.alias if record is not None and record.alias else None) or alert.dedup_key or "",
        message=alert.title,
        status="closed" if alert.status == RESOLVED or resolved_at is not None else "open",
        acknowledged=acknowledged_at is not None,
        is_seen=acknowledged_at is not None,
        tags=list(record.tags or []) if record is not None else tags_of(alert.labels or {}),
        snoozed=False,
        count=int(alert.event_count),
        last_occurred_at=alert.last_received_at,
        created_at=alert.first_received_at,
        updated_at=max(moment for moment in moments if moment is not None),
        source=(record.source if record is not None else None) or "",
        owner=(incident.acknowledged_by if incident is not None else None) or "",
        priority=opsgenie_priority(alert.severity),
        responders=responders_of(record),
        integration=OpsgenieAlertIntegrationV1(
            id=alert.integration_id or alert.origin_id,
            name=alert.integration_name,
            type=OPSGENIE_INTEGRATION_TYPE if integration_type == "opsgenie" else integration_type,
        ),
        report=OpsgenieAlertReportV1(
            ack_time=_millis(alert.first_received_at, acknowledged_at),
            close_time=_millis(alert.first_received_at, resolved_at),
            acknowledged_by=incident.acknowledged_by if incident is not None else None,
            closed_by=incident.resolved_by_name if incident is not None and resolved_at is not None else None,
        ),
        actions=list(record.actions or []) if record is not None else [],
        entity=(record.entity if record is not None else None) or "",
        description=alert.description or "",
        details=details_of(alert.details),
    )
