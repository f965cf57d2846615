"""When an incident's escalation would page nobody: say so and why, and page the organization's
fallback contacts instead (docs/PAGING.md).

Decided when escalation begins (the service has no escalation policy, or level 1 reaches nobody
now) and at every later level that reaches nobody (a timer, a manual escalate). The decision is
stored on the incident (`paging`, read by chalicelib.incident.paging_status) in the same
version-checked commit as the escalation state, with a `nobody_to_page` timeline entry that says
why and names the fallback contacts paged. A redelivered message finds the escalation moved on
and decides nothing again; each fallback page has a delivery id (the level's sequence and the
person) that the notification worker claims once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.directory.users import User
from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.incident.paging_status import record
from chalicelib.incident.tables import IncidentRecord, TimelineRecord
from chalicelib.incident.workflow import EVENT_NOBODY_TO_PAGE
from chalicelib.paging.fallback import PagingSettings, paging_settings
from chalicelib.paging.on_call import LevelReach

# The sequence of fallback pages decided without a policy (a policy's levels count from 1).
NO_POLICY_SEQUENCE = 0


def person_name(user: User) -> str:
    return user.name or user.email or user.user_id


@dataclass(frozen=True)
class Decision:
    """What the escalation decided about one level (or about a service without a policy)."""

    paging: dict[str, Any]  # IncidentRecord.paging
    entries: list[TimelineRecord]
    fallback: list[User]  # to page after the commit
    reason: str | None = None


def level_reason(policy_name: str, level: int, reach: LevelReach) -> str:
    misses = "; ".join(reach.misses) or "it has no targets"
    return f"Level {level} of escalation policy {policy_name} reaches nobody now: {misses}."


def reached(level: int) -> Decision:
    return Decision(record("paging", level=level), [], [])


def nobody_to_page(incident: IncidentRecord, *, now: datetime, level: int | None, reason: str) -> Decision:
    """The decision when nobody is reached: the organization's active fallback contacts, or nobody."""
    try:
        settings = paging_settings(organization_id=incident.organization_id)
    except NotFound:  # no organization item (records made outside the API): nobody to fall back on
        settings = PagingSettings([])
    fallback = settings.active_contacts
    at_level = f" at level {level}" if level is not None else ""
    if fallback:
        names = [person_name(user) for user in fallback]
        title = f"Nobody to page{at_level}: paging the fallback contacts {', '.join(names)}"
        stored = record("fallback", reason=reason, level=level, fallback_contacts=names)
        description = reason
    else:
        title = f"Nobody to page{at_level}"
        stored = record("nobody", reason=reason, level=level)
        missing = (
            "The organization's fallback contacts are all deactivated."
            if settings.fallback_contacts
            else "The organization has no fallback contacts (PUT /api/v1/settings/paging)."
        )
        description = f"{reason} {missing}"
    entry = repository.timeline_entry(
        incident,
        event_type=EVENT_NOBODY_TO_PAGE,
        now=now,
        user="escalation",
        title=title,
        description=description,
        details={"reason": reason, "level": level, "fallback_contacts": [user.user_id for user in fallback]},
    )
    return Decision(stored, [entry], fallback, reason)


def fallback_reason(reason: str) -> str:
    """What a fallback contact's page says (the notification's message)."""
    return f"You are a fallback contact: nobody else can be paged. {reason}"
