"""The one call the alert pipeline makes: is this service in maintenance now?

It runs on every inbound alert, so it is one Query on the small `maintenance-services` table:
the service's memberships whose window ends after `now` (the key condition), of which those
that started at or before `now` (a filter). Windows are half-open: in effect from their start,
included, to their end, excluded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.maintenance import rules
from chalicelib.maintenance.tables import MaintenanceMembershipRecord


@dataclass(frozen=True)
class WindowInEffect:
    window_id: str
    description: str | None
    end_at: datetime
    # Added after the interface was fixed: defaulted, so code that builds one with three fields works.
    start_at: datetime | None = None


def window_in_effect(*, organization_id: str, service_key: str, now: datetime) -> WindowInEffect | None:
    """The window that keeps the service in maintenance at `now`, or None. When several overlap,
    the one that ends last: the service stays in maintenance until then."""
    found = MaintenanceMembershipRecord.query(
        rules.membership_partition(organization_id, service_key),
        MaintenanceMembershipRecord.end_and_window > rules.ending_after(now),
        filter_condition=MaintenanceMembershipRecord.starts_at <= now,
    )
    latest: MaintenanceMembershipRecord | None = None
    for membership in found:  # ascending by end: the last one ends last
        latest = membership
    if latest is None:
        return None
    return WindowInEffect(
        window_id=latest.window_id,
        description=latest.description,
        end_at=latest.ends_at,
        start_at=latest.starts_at,
    )
