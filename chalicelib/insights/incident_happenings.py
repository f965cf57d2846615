"""What an incident record has added to the rollups: used by the consumers (one happening per
message) and by the rebuild (every happening of each record, from the record alone)."""

from __future__ import annotations

from datetime import datetime

from chalicelib import clock
from chalicelib.directory.users import find_user_by_email
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.urgency import urgency_of
from chalicelib.insights import rollups
from chalicelib.insights.rollups import Happening, IncidentFacts


def facts_of(incident: IncidentRecord) -> IncidentFacts:
    return IncidentFacts(
        incident_number=incident.incident_number,
        created_at=incident.created_at,
        severity=incident.severity,
        urgency=urgency_of(incident),
        service_keys=tuple(str(key) for key in incident.service_keys or ()),
        team_id=incident.team_id,
    )


def acknowledger_id(incident: IncidentRecord) -> str | None:
    """The person who acknowledged: acknowledging assigns the caller, so the assignee when the
    emails agree, else the directory's user with that email (None for an integration or a key)."""
    by = incident.acknowledged_by
    if not by:
        return None
    if incident.assigned_user_id and (incident.assigned_email or "").lower() == by.lower():
        return incident.assigned_user_id
    return _user_id_by_email(incident.organization_id, by)


def resolver_id(incident: IncidentRecord, email: str | None = None) -> str | None:
    """The person who resolved: `email` as the resolve message named it (the record may have been
    reopened since, which clears it), else the record's."""
    email = email or incident.resolved_by_email
    return _user_id_by_email(incident.organization_id, email) if email else None


def _user_id_by_email(organization_id: str, email: str) -> str | None:
    if "@" not in email:
        return None
    user = find_user_by_email(organization_id=organization_id, email=email)
    return user.user_id if user is not None else None


def acknowledged(incident: IncidentRecord) -> Happening | None:
    if incident.acknowledged_at is None:
        return None
    within = bool((incident.sla or {}).get("acknowledge_met"))
    return rollups.acknowledged(
        incident.organization_id,
        facts_of(incident),
        acknowledged_at=incident.acknowledged_at,
        within_sla=within,
        person=acknowledger_id(incident),
    )


def resolved(
    incident: IncidentRecord, resolved_at: datetime, *, sign: int = 1, resolved_by: str | None = None
) -> Happening:
    """A resolution, or (sign -1) its undoing by a reopen. The undoing names no person: the reopen
    cleared who resolved, so their resolved count stays; the incident's own figures are undone."""
    person = resolver_id(incident, resolved_by) if sign > 0 else None
    return rollups.resolved(
        incident.organization_id, facts_of(incident), resolved_at=resolved_at, person=person, sign=sign
    )


def escalated(incident: IncidentRecord) -> Happening:
    return rollups.escalated(incident.organization_id, facts_of(incident))


def was_escalated(incident: IncidentRecord) -> bool:
    """From the record alone (the rebuild): its escalation moved past its first level."""
    state = incident.escalation or {}
    return int(state.get("level_index", 0) or 0) > 0 or int(state.get("repeats_done", 0) or 0) > 0


def all_of(incident: IncidentRecord) -> list[Happening]:
    """Every happening the record shows (the rebuild's view; resolutions undone by a reopen are gone)."""
    found = [rollups.opened(incident.organization_id, facts_of(incident))]
    ack = acknowledged(incident)
    if ack is not None:
        found.append(ack)
    if incident.resolved_at is not None:
        found.append(resolved(incident, incident.resolved_at))
    if was_escalated(incident):
        found.append(escalated(incident))
    return found


def parse_time(value: object) -> datetime | None:
    return clock.parse(str(value)) if value else None
