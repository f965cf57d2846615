"""Heartbeats: one item per heartbeat, keyed by its id (the ping URL carries the id and a secret
whose keyed hash only is stored, so a ping is one GetItem and one conditional UpdateItem).

Listing goes through `organization-index`. The overdue step finds the heartbeats whose ping is due
through the SPARSE `due-index`: only an enabled heartbeat awaiting a ping (waiting for its first
ping, or up) carries `due_shard` + `due_at`; a paused or down one carries neither, so the step's
one Query reads only what may be overdue, however many heartbeats exist (never a Scan).

`version` belongs to the people who edit a heartbeat (PATCH, regenerate): pings and the overdue
step write with `store.update_unversioned_if`, so an editor's version is not outdated by them.
"""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    NumberSetAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

# One partition of the due index holds every awaited heartbeat; the step reads only the due ones.
DUE_SHARD = "due"


@aws.register_model
class HeartbeatRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "heartbeats"

    heartbeat_id = UnicodeAttribute(hash_key=True)  # hb_<hex>
    organization_id = UnicodeAttribute()
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    service_key = UnicodeAttribute()
    interval_seconds = NumberAttribute()
    grace_seconds = NumberAttribute()
    enabled = BooleanAttribute()
    secret_hash = UnicodeAttribute()  # keyed hash of the ping URL's secret (heartbeat.rules.hash_secret)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute(null=True)
    updated_at = UTCDateTimeAttribute(null=True)
    # The state the rules move (chalicelib.heartbeat.rules.Beat).
    state = UnicodeAttribute()  # waiting | up | down
    window_started_at = UTCDateTimeAttribute()  # the last ping, or when the wait began (creation, resume)
    last_ping_at = UTCDateTimeAttribute(null=True)
    down_since = UTCDateTimeAttribute(null=True)
    outages = NumberAttribute(default=0)  # outages opened so far; outage n's alert dedup key is "outage-<n>"
    incident_number = UnicodeAttribute(null=True)  # the open outage's incident
    # Outages a ping (or the overdue step) ended whose resolve has not been confirmed yet: the next
    # ping retries them, so a crash between the write and the resolve leaves no incident open.
    unresolved_outages = NumberSetAttribute(null=True)
    # The due index (sparse; see the module docstring).
    due_shard = UnicodeAttribute(null=True)
    due_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()

    by_organization: GlobalSecondaryIndex[HeartbeatRecord] = global_index(
        "organization-index", "organization_id", "heartbeat_id"
    )
    by_due_time: GlobalSecondaryIndex[HeartbeatRecord] = global_index(
        "due-index", "due_shard", "due_at", range_type=UTCDateTimeAttribute, keys_only=True
    )
