"""The event log's items: one per recorded request, in its integration's partition.

A table of its own rather than items in `integrations`: that table is keyed by the routing key's
hash with no sort key (the gate's one GetItem), its organization index projects every attribute,
and it has no TTL. Here the partition is the integration and the sort key its time-ordered event
id (chalicelib.eventlog.slots), so the newest events are one Query read backwards, and a flood's
writes never contend with the gate's reads.
"""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class IntegrationEventRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "integration-events"

    integration_id = UnicodeAttribute(hash_key=True)
    event_id = UnicodeAttribute(range_key=True)  # <yyyymmddHHMMSS UTC>.<slot>
    organization_id = UnicodeAttribute()
    received_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()  # 30 days after received_at
    # Requests this record stands for: 1, or more on a shared slot (past the minute's bound).
    request_count = NumberAttribute(default=1)

    # The request: which route (its template: never the routing key), from where, what it carried.
    operation_id = UnicodeAttribute()
    method = UnicodeAttribute()
    route = UnicodeAttribute()
    source_address = UnicodeAttribute()
    headers = JSONAttribute()  # name -> value; secrets and signatures as present/valid/invalid
    signature = UnicodeAttribute(null=True)  # valid | invalid; absent: none was checked
    body = UnicodeAttribute(null=True)  # the first 16 KiB, as text
    body_size = NumberAttribute()  # bytes received
    truncated = BooleanAttribute()
    body_whole = BooleanAttribute()  # the body is exactly what was received (whole, UTF-8)

    # What became of it.
    status = NumberAttribute()  # the HTTP status answered
    outcome = UnicodeAttribute()  # chalicelib.eventlog.outcome.OUTCOMES
    action = UnicodeAttribute(null=True)  # trigger, resolve, acknowledge, note, ...
    title = UnicodeAttribute(null=True)
    message = UnicodeAttribute(null=True)
    error_code = UnicodeAttribute(null=True)
    warnings = ListAttribute(of=UnicodeAttribute, null=True)
    incident_number = UnicodeAttribute(null=True)
    alert_id = UnicodeAttribute(null=True)
    suppressed_by = JSONAttribute(null=True)  # {kind: maintenance, window_id} | {kind: event_rule, rule_ids}
    rule_ids = ListAttribute(of=UnicodeAttribute, null=True)  # the event rules that dropped it
    response = JSONAttribute(null=True)  # the answer's body (bounded)

    # Replays: a new event names the one it replays; the replayed one names its replay.
    replay_of = UnicodeAttribute(null=True)
    replayed_as = UnicodeAttribute(null=True)
    replay_started_at = UTCDateTimeAttribute(null=True)  # the claim of a replay in progress
