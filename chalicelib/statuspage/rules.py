"""Pure status-page rules: status order, effective and overall status, allowed moves, ids, slugs.

Decisions (documented in the OpenAPI descriptions too):
- Severity order, worst first: major_outage > partial_outage > degraded_performance >
  under_maintenance > unknown > operational. `unknown` outranks only `operational`: a page can
  not claim "all operational" about a component it knows nothing of.
- A component affected by an in-progress maintenance window shows `under_maintenance` unless
  its own status is worse (an outage during maintenance is still an outage).
- Overall status = the worst effective component status; a page without components is operational.
- Public incidents: any move between active statuses; a resolved incident is reopened by an
  update with an active status; resolving stamps resolved_at, reopening clears it. An update
  keeping the current status is allowed (it is just a new message).
- Maintenance: scheduled -> in_progress -> completed; scheduled | in_progress -> cancelled;
  completed and cancelled are final (no move, no reschedule). A disallowed move is a 400
  TRANSITION_NOT_ALLOWED, as for internal incidents.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from chalicelib.errors import TransitionNotAllowed, ValidationFailed

ComponentStatus = Literal[
    "operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance", "unknown"
]
IncidentStatus = Literal["investigating", "identified", "monitoring", "resolved"]
Impact = Literal["none", "minor", "major", "critical"]
MaintenanceStatus = Literal["scheduled", "in_progress", "completed", "cancelled"]

# Worst first; the index is the rank (lower = worse).
COMPONENT_STATUS_ORDER: tuple[ComponentStatus, ...] = (
    "major_outage",
    "partial_outage",
    "degraded_performance",
    "under_maintenance",
    "unknown",
    "operational",
)
INCIDENT_STATUSES: tuple[IncidentStatus, ...] = ("investigating", "identified", "monitoring", "resolved")
ACTIVE_INCIDENT_STATUSES = frozenset({"investigating", "identified", "monitoring"})
MAINTENANCE_MOVES: dict[str, frozenset[str]] = {
    "scheduled": frozenset({"in_progress", "cancelled"}),
    "in_progress": frozenset({"completed", "cancelled"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
}
OPEN_MAINTENANCE_STATUSES = frozenset({"scheduled", "in_progress"})

SLUG_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
# Slugs that would collide with the page's own sub-paths or read as reserved words.
RESERVED_SLUGS = frozenset({"api", "static", "assets", "admin", "status"})
ID_PATTERN = re.compile(r"^[a-z]{3,4}_[0-9a-f]{24}$")


_last_millis = 0
_id_lock = threading.Lock()


def new_id(prefix: str, now: datetime | None = None) -> str:
    """`<prefix>_` + 12 hex digits of milliseconds + 12 random hex digits: random, and sorting by id
    sorts by creation time, so a descending Query on ids lists newest first. Within a process the
    time part strictly increases, so items made in one millisecond keep their creation order."""
    global _last_millis
    millis = int((now.timestamp() if now else time.time()) * 1000)
    with _id_lock:
        millis = _last_millis = max(millis, _last_millis + 1)
    return f"{prefix}_{millis:012x}{os.urandom(6).hex()}"


def is_id(value: str, prefix: str) -> bool:
    return value.startswith(prefix + "_") and ID_PATTERN.match(value) is not None


def check_slug(slug: str) -> str:
    if not SLUG_PATTERN.match(slug):
        raise ValidationFailed.for_field(
            "slug", "1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit"
        )
    if slug in RESERVED_SLUGS:
        raise ValidationFailed.for_field("slug", "this slug is reserved")
    return slug


def rank(status: str) -> int:
    return COMPONENT_STATUS_ORDER.index(status)


def worst(statuses: Iterable[str]) -> ComponentStatus:
    """The worst of the statuses; operational when there are none."""
    found = [s for s in statuses]
    if not found:
        return "operational"
    return COMPONENT_STATUS_ORDER[min(rank(s) for s in found)]


def effective_component_status(own: str, *, in_maintenance: bool) -> ComponentStatus:
    return worst([own, "under_maintenance"]) if in_maintenance else worst([own])


def incident_is_active(status: str) -> bool:
    return status in ACTIVE_INCIDENT_STATUSES


def resolved_at_after(status: str, *, current: datetime | None, now: datetime) -> datetime | None:
    """resolved_at once an incident moves to `status`: stamped on resolving (kept when already
    resolved), cleared when an update reopens it."""
    if status == "resolved":
        return current or now
    return None


def check_maintenance_move(current: str, target: str) -> None:
    if target not in MAINTENANCE_MOVES.get(current, frozenset()):
        raise TransitionNotAllowed(
            f"A maintenance window cannot move from {current} to {target}.",
            details={"from": current, "to": target, "allowed": sorted(MAINTENANCE_MOVES.get(current, ()))},
        )


def check_reschedulable(current: str) -> None:
    """Only an open window (scheduled or in progress) can change its times."""
    if current not in OPEN_MAINTENANCE_STATUSES:
        raise TransitionNotAllowed(
            f"A {current} maintenance window cannot be rescheduled.", details={"status": current}
        )


def check_window(start: datetime, end: datetime) -> None:
    if end <= start:
        raise ValidationFailed.for_field("scheduled_end", "must be after scheduled_start")


def due_maintenance_status(status: str, *, start: datetime, end: datetime, now: datetime) -> str:
    """Where the scheduler moves a window at `now`. A scheduled window whose end has also passed
    (the scheduler was down through it) goes straight to completed."""
    if status == "scheduled" and now >= end:
        return "completed"
    if status == "scheduled" and now >= start:
        return "in_progress"
    if status == "in_progress" and now >= end:
        return "completed"
    return status


def next_due_at(status: str, *, start: datetime, end: datetime) -> datetime | None:
    """When the scheduler next has to look at a window; None once it is final."""
    if status == "scheduled":
        return start
    if status == "in_progress":
        return end
    return None
