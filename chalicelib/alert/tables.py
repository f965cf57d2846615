"""Alert records and the group slots that point a service's alert group at its open incident.

An alert is keyed by <organization_id>#<alert_id>. Three sparse-free indexes serve the lists,
each sorted by `received_sort` (<first_received_at ISO>#<alert_id>, newest first when read
backwards): by organization, by service (<organization_id>#<service_key>) and by incident
(<organization_id>#<incident_number>, absent on alerts no incident took).
A webhook delivery never Queries this table: it reads and writes alerts by key only.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

TRIGGERED = "triggered"
RESOLVED = "resolved"
SUPPRESSED = "suppressed"
ALERT_STATUSES = (TRIGGERED, RESOLVED, SUPPRESSED)


def alert_partition(organization_id: str, alert_id: str) -> str:
    return f"{organization_id}#{alert_id}"


def service_ref(organization_id: str, service_key: str) -> str:
    return f"{organization_id}#{service_key}"


def incident_ref(organization_id: str, incident_number: str) -> str:
    return f"{organization_id}#{incident_number}"


@aws.register_model
class AlertRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "alerts"

    alert_key = UnicodeAttribute(hash_key=True)
    alert_id = UnicodeAttribute()
    organization_id = UnicodeAttribute()
    # The integration's id, or the heartbeat's (for a heartbeat: integration_id is absent).
    origin_id = UnicodeAttribute()
    integration_id = UnicodeAttribute(null=True)
    integration_name = UnicodeAttribute()
    integration_type = UnicodeAttribute()
    source = UnicodeAttribute()
    dedup_key = UnicodeAttribute(null=True)
    title = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    source_url = UnicodeAttribute(null=True)
    severity = UnicodeAttribute()
    service_key = UnicodeAttribute()
    service_id = UnicodeAttribute()
    status = UnicodeAttribute()  # triggered | resolved | suppressed
    # Why it was suppressed: {"kind": "maintenance", "window_id"} or {"kind": "event_rule", "rule_id"}.
    suppressed_by = JSONAttribute(null=True)
    incident_number = UnicodeAttribute(null=True)
    grouped = UnicodeAttribute(null=True)  # "joined" when grouping added it to an incident it did not open
    first_received_at = UTCDateTimeAttribute()
    last_received_at = UTCDateTimeAttribute()
    resolved_at = UTCDateTimeAttribute(null=True)
    event_count = NumberAttribute(default=1)  # the API's `count`: events received for this alert
    labels = JSONAttribute(default=dict)
    # What the delivery carried beyond the mapped fields (bounded by the parser: 32 keys, 16 KiB).
    details = JSONAttribute(null=True)
    runbook_url = UnicodeAttribute(null=True)
    rule_notes = JSONAttribute(null=True)  # notes of the event rules that matched, and their ids
    received_sort = UnicodeAttribute()
    service_ref = UnicodeAttribute()
    incident_ref = UnicodeAttribute(null=True)
    expires_at = TTLAttribute(null=True)

    by_organization: GlobalSecondaryIndex[AlertRecord] = global_index(
        "organization-index", "organization_id", "received_sort"
    )
    by_service: GlobalSecondaryIndex[AlertRecord] = global_index("service-index", "service_ref", "received_sort")
    by_incident: GlobalSecondaryIndex[AlertRecord] = global_index("incident-index", "incident_ref", "received_sort")


@aws.register_model
class AlertGroupRecord(TocsinModel):
    """A service's alert group: the incident new alerts of the group join, and until when."""

    class Meta(TocsinModel.Meta):
        table_name = "alert-groups"

    group_id = UnicodeAttribute(hash_key=True)  # <organization_id>#<service_key>#<group key>
    incident_number = UnicodeAttribute()
    opened_at = UTCDateTimeAttribute()
    window_ends_at = UTCDateTimeAttribute(null=True)  # None: joins while the incident is open
    expires_at = TTLAttribute(null=True)
