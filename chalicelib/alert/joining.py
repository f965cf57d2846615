"""Writes that put a new alert in place: its record, the dedup claim that points at it, and for
a grouped alert the incident it joins or the group slot of the incident it opens.

Each set is one transaction, so an alert is never recorded without its claim or counted on an
incident it is not attached to. Labels let the pipeline tell which condition lost a race.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist

from chalicelib.alert.tables import AlertGroupRecord, AlertRecord
from chalicelib.incident.tables import INCIDENT_SORT_KEY, IncidentRecord, incident_partition, list_partition
from chalicelib.store import Transaction

ALERT_LABEL = "alert"
GROUP_LABEL = "group"
INCIDENT_LABEL = "incident"
GROUP_LIFETIME = timedelta(days=30)


def group_id(organization_id: str, service_key: str, group_key: str) -> str:
    return f"{organization_id}#{service_key}#{group_key}"


def read_group(slot_id: str) -> AlertGroupRecord | None:
    try:
        return AlertGroupRecord.get(slot_id, consistent_read=True)
    except DoesNotExist:
        return None


def put_alert(transaction: Transaction, record: AlertRecord) -> None:
    transaction.put(ALERT_LABEL, record, AlertRecord.alert_key.does_not_exist())


def claim_group(
    transaction: Transaction,
    *,
    slot_id: str,
    previous: AlertGroupRecord | None,
    incident_number: str,
    now: datetime,
    window_ends_at: datetime | None,
) -> None:
    """Point the group at a new incident, if nobody pointed it elsewhere since `previous` was read."""
    unchanged: Any = (
        AlertGroupRecord.group_id.does_not_exist()
        if previous is None
        else AlertGroupRecord.incident_number == previous.incident_number
    )
    transaction.put(
        GROUP_LABEL,
        AlertGroupRecord(
            slot_id,
            incident_number=incident_number,
            opened_at=now,
            window_ends_at=window_ends_at,
            expires_at=(window_ends_at or now) + GROUP_LIFETIME,
        ),
        unchanged,
    )


def count_on_incident(
    transaction: Transaction, *, organization_id: str, incident_number: str, now: datetime, summary: str
) -> None:
    """One more alert (triggered) on an incident that must still be open."""
    incident = _counter_target(organization_id, incident_number)
    transaction.update(
        INCIDENT_LABEL,
        incident,
        actions=[
            IncidentRecord.alert_count.add(1),
            IncidentRecord.open_alerts.add(1),
            IncidentRecord.last_alert_at.set(now),
            IncidentRecord.last_alert_summary.set(summary[:500]),
            IncidentRecord.updated_at.set(now),
        ],
        condition=IncidentRecord.list_key == list_partition(organization_id, is_open=True),
        check_version=False,
    )


def release_from_incident(transaction: Transaction, *, organization_id: str, incident_number: str) -> None:
    """One triggered alert fewer on an incident (it resolved)."""
    incident = _counter_target(organization_id, incident_number)
    transaction.update(
        INCIDENT_LABEL,
        incident,
        actions=[IncidentRecord.open_alerts.add(-1)],
        condition=IncidentRecord.incident_key.exists(),
        check_version=False,
    )


def _counter_target(organization_id: str, incident_number: str) -> IncidentRecord:
    incident = IncidentRecord(incident_partition(organization_id, incident_number), INCIDENT_SORT_KEY)
    incident.version = 0  # any number: PynamoDB then adds 1 to the stored version (see Transaction.update)
    return incident
