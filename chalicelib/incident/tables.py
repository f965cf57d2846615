"""Incidents and their timelines share one partition: get-with-timeline is a single Query.

Partition `incident_key` = <organization_id>#<incident_number>. Sort key:
- `~INCIDENT` for the incident itself ('~' sorts after every `TL#...`, so a descending
  Query returns the incident first, then the newest timeline entries);
- `TL#<created_at ISO>#<entry id>` for timeline entries. The entries of a version-checked change
  are timed after the incident's `timeline_at`, so newest first is commit order.
Only incident items carry `list_key` (<organization_id>#open or #closed), making the
list index sparse: the default list reads open incidents only, however long the history.

`organization-time-index` (organization_id, created_sort) reads an organization's history by time
(the exports, chalicelib.exports). Incident items have both attributes since they were first
written. The timeline entries of a notification (paged, notification_failed: `NOTIFICATION_EVENTS`)
carry them too, with created_sort `~N#<created_at ISO>#<incident_number>#<entry id>`: '~' sorts
after every digit, so a time range of incidents never meets a notification, and a range of
notifications is its own prefix. Other timeline entries have neither and stay out of the index.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

INCIDENT_SORT_KEY = "~INCIDENT"
TIMELINE_PREFIX = "TL#"
NOTIFICATION_SORT_PREFIX = "~N#"
NOTIFICATION_EVENTS = frozenset({"paged", "notification_failed"})  # chalicelib.incident.workflow's names


def incident_partition(organization_id: str, incident_number: str) -> str:
    return f"{organization_id}#{incident_number}"


def list_partition(organization_id: str, is_open: bool) -> str:
    return f"{organization_id}#{'open' if is_open else 'closed'}"


def notification_sort(created_at_iso: str, incident_number: str, entry_id: str) -> str:
    return f"{NOTIFICATION_SORT_PREFIX}{created_at_iso}#{incident_number}#{entry_id}"


@aws.register_model
class IncidentRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "incidents"

    incident_key = UnicodeAttribute(hash_key=True)
    item_key = UnicodeAttribute(range_key=True, default=INCIDENT_SORT_KEY)

    organization_id = UnicodeAttribute()
    incident_number = UnicodeAttribute()
    title = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    status = UnicodeAttribute()
    status_category = UnicodeAttribute()
    severity = UnicodeAttribute()
    # "high" or "low" (chalicelib.incident.urgency); absent on incidents stored before the field.
    urgency = UnicodeAttribute(null=True)
    urgency_rule = JSONAttribute(null=True)  # the service's rule when the incident opened
    service_keys = ListAttribute(of=UnicodeAttribute, default=list)
    team_id = UnicodeAttribute(null=True)
    team_name = UnicodeAttribute(null=True)
    assigned_user_id = UnicodeAttribute(null=True)
    assigned_name = UnicodeAttribute(null=True)
    assigned_email = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute(null=True)
    acknowledged_at = UTCDateTimeAttribute(null=True)
    acknowledged_by = UnicodeAttribute(null=True)
    resolved_at = UTCDateTimeAttribute(null=True)
    resolved_by_email = UnicodeAttribute(null=True)
    resolved_by_name = UnicodeAttribute(null=True)
    sla = JSONAttribute(null=True)  # due times and met/breached outcomes
    escalation = JSONAttribute(null=True)  # policy snapshot, level and token (on-call issue)
    # The last paging decision: who the escalation reached, or nobody and why (incident/paging_status.py).
    paging = JSONAttribute(null=True)
    source = JSONAttribute(null=True)  # inbound webhook origin: integration, type, dedup key
    alert_count = NumberAttribute(null=True)  # alerts received for this incident (dedup hits included)
    last_alert_at = UTCDateTimeAttribute(null=True)
    last_alert_summary = UnicodeAttribute(null=True)
    # Alerts of this incident still triggered: the last one to resolve resolves the incident.
    open_alerts = NumberAttribute(null=True)
    list_key = UnicodeAttribute(null=True)
    created_sort = UnicodeAttribute(null=True)
    # The time of the newest entry a version-checked commit wrote: the next one is timed after it
    # (chalicelib.incident.repository.commit), so the timeline lists changes in commit order.
    timeline_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()

    # created_sort: <created_at ISO>#<incident_number>
    by_list: GlobalSecondaryIndex[IncidentRecord] = global_index("list-index", "list_key", "created_sort")
    by_organization_time: GlobalSecondaryIndex[IncidentRecord] = global_index(
        "organization-time-index", "organization_id", "created_sort"
    )


@aws.register_model
class TimelineRecord(TocsinModel):
    """A timeline entry; same table and partition as its incident (see module docstring)."""

    class Meta(TocsinModel.Meta):
        table_name = "incidents"
        provisioned_by = "IncidentRecord"  # the table (and its index) is created from IncidentRecord

    incident_key = UnicodeAttribute(hash_key=True)
    item_key = UnicodeAttribute(range_key=True)
    event_type = UnicodeAttribute()
    title = UnicodeAttribute(null=True)
    description = UnicodeAttribute(null=True)
    user = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    details = JSONAttribute(null=True)
    entry_number = NumberAttribute(null=True)
    # Set on notification entries only (NOTIFICATION_EVENTS): the organization-time-index's keys.
    organization_id = UnicodeAttribute(null=True)
    created_sort = UnicodeAttribute(null=True)

    # The same index as IncidentRecord.by_organization_time, read as timeline entries (`~N#` sorts).
    notifications_by_time: GlobalSecondaryIndex[TimelineRecord] = global_index(
        "organization-time-index", "organization_id", "created_sort"
    )
