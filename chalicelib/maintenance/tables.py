"""Maintenance windows and the per-service items the alert pipeline reads.

Two small tables that hold nothing but maintenance items:
- `maintenance-windows`: one item per window in its organization's partition (list and get).
- `maintenance-services`: one membership item per (service, window) whose end is still ahead,
  in the partition `<organization_id>#<service_key>`, sorted by the window's end. "Is this
  service in maintenance now?" is then one key-condition Query (windows ending after now) with
  a filter on the start, run on every inbound alert; the table never grows with alerts.

A window and its memberships are written in one transaction, with the window's version checked,
so they never disagree. Memberships carry what the pipeline shows (id, times, description), so
the Query answers alone; they expire (TTL) a day after their window ends, and ending a window
early deletes them.
"""

from __future__ import annotations

from pynamodb.attributes import (
    ListAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class MaintenanceWindowRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "maintenance-windows"

    organization_id = UnicodeAttribute(hash_key=True)
    window_id = UnicodeAttribute(range_key=True)  # mw_<hex>
    service_keys = ListAttribute[UnicodeAttribute](of=UnicodeAttribute)  # svc_ keys, in the order given, no repeats
    starts_at = UTCDateTimeAttribute()
    ends_at = UTCDateTimeAttribute()
    description = UnicodeAttribute(null=True)
    # Set when a DELETE ended the window while it was ongoing (ends_at became that instant).
    ended_early_at = UTCDateTimeAttribute(null=True)
    created_by = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()


@aws.register_model
class MaintenanceMembershipRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "maintenance-services"

    service_partition = UnicodeAttribute(hash_key=True)  # <organization_id>#<service_key>
    end_and_window = UnicodeAttribute(range_key=True)  # rules.membership_sort_key(ends_at, window_id)
    window_id = UnicodeAttribute()
    starts_at = UTCDateTimeAttribute()
    ends_at = UTCDateTimeAttribute()
    description = UnicodeAttribute(null=True)
    expires_at = TTLAttribute()  # a day after the window ends: garbage, never read as absent-or-not
